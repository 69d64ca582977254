"""The app's docks and bars: the edits panel, the folder bar and the live bar. Like views, they
draw what they are given and say what the user did with signals."""
