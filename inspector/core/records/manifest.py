"""What every written output says about the run it came from: the model's source, its weights, the
seed of random weights and the input. One definition for `capture` (one input, a folder, a replayed
session), the app's export and `export_npz`'s defaults; each adds what it knows besides."""

from __future__ import annotations

#: The fields that name what ran, in the order every manifest lists them.
SOURCE_FIELDS = ("model", "weights", "seed", "input")


def run_manifest(model: str | None = None, weights: str | None = None, seed: int | None = None,
                 input: str | None = None, **more) -> dict:
    """`{"model", "weights", "seed", "input", **more}`: the source fields first, then the rest."""
    return {"model": model, "weights": weights, "seed": seed, "input": input, **more}
