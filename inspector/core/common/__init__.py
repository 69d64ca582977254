"""What every part of the engine uses: its exceptions, each message written for the person using the tool
(`errors`), the checks of what the public API is given (`arguments`), the capture keys every part names a capture
by (`keys`: `LAYER:SITE`), and Ctrl-C said once (`interrupts`)."""
