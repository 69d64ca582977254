"""The app's views: widgets that draw what they are given (a capture, a comparison, an atlas, the
module tree) and say what the user did with signals. They never hold the state or the worker."""
