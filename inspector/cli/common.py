"""What every command that loads a model shares: the seed argument, loading with a download bar,
and the note that says which seed random weights were made with."""

from __future__ import annotations

import sys

from inspector.core.sources.seeds import check_seed


def seed(args) -> int | None:
    return check_seed(args.seed, "--seed", text=True)


def seed_note(seed: int) -> str:
    return f"random weights, seed {seed} (--seed {seed} gives them again)"


def load(args):
    from inspector.core import load_model  # torch: loaded when a command runs, so the app launches without it

    def progress(done: int, total: int) -> None:
        if total:
            end = "\n" if done >= total else ""
            print(f"\rdownloading weights: {done / total:6.1%}", end=end, file=sys.stderr, flush=True)

    return load_model(args.model, args.weights, trust=args.trust, progress=progress, seed=seed(args))
