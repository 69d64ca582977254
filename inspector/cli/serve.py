"""`network-inspector serve`: the engine as a WebSocket server, for a client on this machine or (through an ssh
tunnel, or TLS) another one. Safe by default: 127.0.0.1, a token, files only inside the data root, no trust."""

from __future__ import annotations

import asyncio
import os
import sys


def add_parser(sub) -> None:
    p = sub.add_parser("serve", help="serve the engine over WebSockets (run it where the GPU is)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1); any other than a loopback address needs "
                        "--tls-cert and --tls-key")
    p.add_argument("--port", type=int, default=8765, help="port to listen on (default 8765; 0 picks a free one, "
                                                          "printed)")
    p.add_argument("--token-file", metavar="FILE",
                   help="where the token is kept (made on first start, mode 0600); default "
                        "$XDG_CONFIG_HOME/network-inspector/token, else ~/.config/network-inspector/token")
    p.add_argument("--data-root", metavar="DIR",
                   help="the folder every file a client names must be in, links followed (model files, weights, "
                        "inputs); relative paths are read from it. Default: the folder the server starts in")
    p.add_argument("--trust", action="store_true",
                   help="let clients load models that run code (file.py:Name, TorchScript, .pt2, pickles); without "
                        "it a client's trust is ignored")
    p.add_argument("--device", default="cpu", help="the device models are loaded on: auto | cpu | cuda | cuda:N | mps")
    p.add_argument("--tls-cert", metavar="FILE", help="TLS certificate (PEM): serve wss:// (with --tls-key)")
    p.add_argument("--tls-key", metavar="FILE", help="TLS private key (PEM) of --tls-cert")
    p.add_argument("--max-message", type=float, default=64, metavar="MIB",
                   help="the largest message frame a client may send, in MiB (default 64)")
    p.add_argument("--rate", type=float, default=50, metavar="N",
                   help="requests a second per connection (default 50); more get an error event each")
    p.add_argument("--max-connections", type=int, default=8, metavar="N", help="clients at once (default 8)")
    p.add_argument("--ray", metavar="ADDRESS",
                   help="build the atlases clients start on this Ray cluster (HOST:PORT of its head, or auto), as "
                        "`atlas --ray` does; checked when the server starts. Needs the ray extra")


def run(args) -> int:
    from inspector.core.engine.allocator import one_malloc_arena
    one_malloc_arena()  # first: the engine thread keeps what a run freed for the next one

    from dataclasses import replace

    from inspector.remote.config import ServerConfig
    from inspector.remote.data_root import DataRoot
    from inspector.remote.limits import MIB, Limits
    from inspector.remote.server import EngineServer
    from inspector.remote.tokens import server_token

    if args.ray:  # a cluster that does not answer is said now, not at a client's first build
        from inspector.core.folder_jobs import check_address

        check_address(args.ray)
    root = DataRoot(args.data_root or os.getcwd())
    token, token_file = server_token(args.token_file)
    limits = Limits(int(args.max_message * MIB), args.rate, args.max_connections)
    config = ServerConfig(token, token_file.resolve(), root, args.host, args.port, args.trust, args.device, limits,
                          args.tls_cert, args.tls_key, root_is_default=args.data_root is None, ray=args.ray)
    from inspector.core.sources.devices import resolve_device  # torch: after what needs none is checked

    server = EngineServer(replace(config, device=str(resolve_device(args.device))))
    os.chdir(root.folder)  # a relative path a client names is read from the data root
    asyncio.run(server.serve(lambda line: print(line, flush=True)))
    print("stopped", file=sys.stderr, flush=True)
    return 0
