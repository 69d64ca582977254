"""`--engine URL`: a command run on a remote engine (`network-inspector serve`), its files written here.

The paths a command names (`--model file.py:Name`, `--weights`, `--input`, `--against`) are the server's, inside its
`--data-root`; what it writes (`--out`, `--manifest`, `--json FILE`) is written on this machine, the same bytes a
local run writes (same seed, CPU on both ends). The token: `--token-file FILE`, else the
NETWORK_INSPECTOR_TOKEN variable, else the token file a server on this machine made.
"""

from __future__ import annotations

import argparse

from inspector.core.common.errors import SpecError


def add(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--engine", default=None, metavar="URL",
                        help="run on a remote engine (ws://HOST:PORT or wss://..., from `network-inspector serve`; "
                             "through an ssh tunnel: ws://127.0.0.1:PORT): paths are the server's, files are "
                             "written here")
    parser.add_argument("--token-file", default=None, metavar="FILE",
                        help="with --engine: the server's token (default: $NETWORK_INSPECTOR_TOKEN, else the "
                             "token file `serve` made on this machine)")


def check(args, *not_remote: tuple[str, object]) -> None:
    """SpecError for what a remote engine does not take: `not_remote` are (flag, value) pairs set on the
    command line; --token-file needs --engine."""
    if args.engine is None:
        if args.token_file is not None:
            raise SpecError("--token-file is the remote engine's token: add --engine URL.")
        return
    if not args.engine.startswith(("ws://", "wss://")):
        raise SpecError(f"--engine is the address serve printed, ws://HOST:PORT or wss://HOST:PORT, not "
                        f"{args.engine!r}.")
    for flag, value in not_remote:
        if value not in (None, False, [], ""):
            raise SpecError(f"{flag} runs on this machine only: leave it out with --engine, or run without --engine.")


def connect(args):
    """The client of `--engine`, connected (EngineError, one line, when it cannot be)."""
    from inspector.remote.client import EngineClient

    return EngineClient(args.engine, token_file=args.token_file, timeout=600.0)


def load(args, engine):
    """The model arguments loaded on the remote engine: its ModelInfo (the server decides what it trusts)."""
    from inspector.core.records.requests import ModelRequest

    from . import common

    return engine.call("load", ModelRequest(args.model, args.weights, bool(args.trust), common.seed(args)))
