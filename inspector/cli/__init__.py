"""`network-inspector`: the app with no arguments; headless commands otherwise (one module per
command family: `commands` parses, dispatches and runs the rest, `atlas`, `diff`, `capture_folder`; `common` loads
models for them). Engine imports happen inside the commands, so the app starts without them."""

from .commands import main

__all__ = ["main"]
