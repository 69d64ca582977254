"""`network-inspector`: the parser of every command, and the dispatch to the one asked for.

Each command lives in its own module with `add_parser(sub)` and `run(args)`. Errors are printed
as one clear line (a traceback only with --debug) and exit non-zero.
"""

from __future__ import annotations

import argparse
import signal
import sys

from inspector.core.common.errors import InspectorError
from inspector.core.common.interrupts import InterruptOnce, interrupted

from . import atlas, attribute, bench, capture, common, concepts, diff, evaluate, graph, layers, samples, serve, sweep

#: The commands in the order `--help` lists them.
COMMANDS = {module.__name__.rsplit(".", 1)[1]: module
            for module in (layers, capture, attribute, bench, sweep, samples, diff, atlas, graph, concepts, evaluate,
                           serve)}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="network-inspector",
        description="See inside a PyTorch network. With no command, opens the desktop app.",
        epilog=common.CODE_WARNING,
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    parser.add_argument("--engine", dest="app_engine", metavar="URL",
                        help="open the app on a remote engine: ws://HOST:PORT (or wss://) of `network-inspector "
                             "serve`")
    parser.add_argument("--token-file", dest="app_token_file", metavar="FILE",
                        help="with --engine: the file holding the server's token (default: "
                             "$NETWORK_INSPECTOR_TOKEN, else the default token file)")
    parser.add_argument("--self-test", action="store_true",
                        help="check this install offline and exit (0: all passed); --self-test --json FILE "
                             "also writes a report")
    sub = parser.add_subparsers(dest="command")
    for module in COMMANDS.values():
        module.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if "--self-test" in args_list[: _first_command(args_list)]:
        from inspector.selftest import main as self_test

        return self_test(args_list)
    parser = build_parser()
    args = parser.parse_args(argv)
    from inspector.core.engine.allocator import keep_freed_memory

    keep_freed_memory()
    if args.command is None:
        problem = _app_engine_problem(args)
        if problem:
            print(f"error: {problem}", file=sys.stderr)
            return 2
        return _launch_app(parser, args.app_engine, args.app_token_file)
    if args.app_engine or args.app_token_file:
        print("error: --engine and --token-file before a command open the app on that engine; a command that runs "
              "on one takes its own after its name (capture --engine URL).", file=sys.stderr)
        return 2

    guard = InterruptOnce()
    try:
        if getattr(args, "target", None) is not None:  # every command's --target, said before torch is imported
            from inspector.core.target.text import parse_target

            parse_target(args.target)
        code = COMMANDS[args.command].run(args)
        guard.deliver()
    except InspectorError as exc:
        if args.debug:
            raise
        if guard.swallowed:  # a Ctrl-C Python swallowed came first: that is what stopped the command
            print("interrupted", file=sys.stderr)
            code = 130
        else:
            print(f"error: {exc}", file=sys.stderr)
            code = 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        code = 130
    except Exception as exc:
        if not interrupted(exc):
            raise
        print("interrupted", file=sys.stderr)  # Ctrl-C inside an import's class creation, wrapped by Python
        code = 130
    finally:
        # As the program (no argv given), Ctrl-C is ignored from here on: the shutdown (atexit callbacks
        # of Ray, torch, tqdm) is not interrupted halfway, which printed "Exception ignored in atexit
        # callback". Called from Python, the caller's handler comes back.
        guard.restore(signal.SIG_IGN if argv is None else None)
    return code


def _first_command(args: list[str]) -> int:
    """Index of the first subcommand in `args` (len(args) when there is none)."""
    return next((i for i, a in enumerate(args) if a in COMMANDS), len(args))


def _app_engine_problem(args) -> str:
    """One line when the app's --engine or --token-file cannot be used ("" when they can)."""
    from pathlib import Path

    if args.app_token_file and not args.app_engine:
        return "--token-file names the token of a remote engine: give --engine URL too."
    if args.app_engine and not args.app_engine.startswith(("ws://", "wss://")):
        return f"--engine takes ws://HOST:PORT or wss://HOST:PORT, not {args.app_engine!r}."
    if args.app_token_file and not Path(args.app_token_file).expanduser().is_file():
        return f"--token-file {args.app_token_file}: no such file."
    return ""


def _launch_app(parser: argparse.ArgumentParser, engine: str | None = None, token_file: str | None = None) -> int:
    try:
        from inspector.gui.app import run_app
    except ImportError:
        parser.print_help()
        return 0
    return run_app(engine=engine, token_file=token_file)
