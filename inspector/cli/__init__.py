"""`network-inspector`: the app with no arguments; headless commands otherwise (one module per
command family: `main` parses and dispatches, `atlas`, `diff`, `capture_folder`; `common` loads
models for them). Engine imports happen inside the commands, so the app starts without them."""

from .main import main

__all__ = ["main"]
