"""`network-inspector samples`: the bundled sample inputs."""

from __future__ import annotations


def add_parser(sub) -> None:
    sub.add_parser("samples", help="list the bundled sample inputs")


def run(args) -> int:
    from inspector.core import list_samples

    for name in list_samples():
        print(f"sample:{name}")
    return 0
