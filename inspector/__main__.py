"""`python -m inspector`: the app (or a headless command when given one).

Also the entry point of the PyInstaller bundle (packaging/network-inspector.spec), so it
must work frozen: `multiprocessing.freeze_support()` comes first, and a windowed build
(no console: sys.stdout / sys.stderr are None) gets os.devnull writers instead.
"""

import multiprocessing
import os
import signal
import sys


def _ensure_streams() -> None:
    """A windowed (console-less) process has no stdio; printing must not crash it."""
    for name, mode in (("stdin", "r"), ("stdout", "w"), ("stderr", "w")):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, mode, encoding="utf-8"))
            setattr(sys, f"__{name}__", getattr(sys, name))


def entry() -> int:
    multiprocessing.freeze_support()
    _ensure_streams()
    # Loading the commands imports torch and numpy for seconds: a Ctrl-C then raises once, and a second one
    # while the first unwinds is ignored (it landed in this handler and printed a second traceback).
    from inspector.core.common.interrupts import InterruptOnce, interrupted

    guard = InterruptOnce()
    try:
        from inspector.cli import main

        guard.deliver()
        guard.restore()  # the command (or the app) says what Ctrl-C does from here
        return main()
    except BaseException as exc:  # Ctrl-C before a command took over (while Python modules load)
        if not interrupted(exc):
            guard.restore()  # (a second restore changes nothing)
            raise
        guard.restore(signal.SIG_IGN)
        print("interrupted", file=sys.stderr)
        return 130


def quiet_exit(code: int) -> None:
    """End the process once `code` is known: the atexit callbacks run (Ray's shutdown, tqdm, ...), the
    streams are flushed, and the interpreter's own teardown is skipped — where triton's bindings (imported
    by torch) printed ~60 lines of "nanobind: leaked ..." that are not the user's business."""
    import atexit
    import logging

    atexit._run_exitfuncs()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code if isinstance(code, int) else 1)


def run() -> None:
    """The `network-inspector` command."""
    quiet_exit(entry())


if __name__ == "__main__":
    run()
