"""`network-inspector`: the app with no arguments; headless commands otherwise.

`dispatch` builds the parser and runs the command asked for; each command is one module
(`layers`, `capture`, `attribute`, `diff`, `atlas`, `bench`, `sweep`, `samples`, `serve`, ...) with
`add_parser(sub)` and `run(args)`; `common` holds the model arguments, loading and the seed note.
Engine imports happen inside the commands, so the app starts without them."""

from .dispatch import main

__all__ = ["main"]
