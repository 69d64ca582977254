"""Whose atlas this is: an atlas belongs to the model, weights (and seed) and preprocessing it was
built with — what its job key holds. `not_of` says, in words, why an atlas is not the loaded
model's, so its pictures are never offered as that model's channels."""

from __future__ import annotations

import json

from ..inputs.files import input_preprocess


def made_by(arguments: dict, atlas: dict) -> dict:
    """What built the atlas, from its job file's arguments (atlas.json's model name when the job file is gone)."""
    return {"model": arguments.get("model", atlas.get("model")), "weights": arguments.get("weights"),
            "seed": arguments.get("seed"), "preprocess": arguments.get("preprocess")}


def not_of(built: dict, model) -> str | None:
    """None when `model` (a ModelInfo or LoadedModel) is what built the atlas; else what differs, as
    "built on demo (bundled weights), not resnet18 (random weights, seed 0)". What the atlas does not
    record (an atlas made by hand) is not held against it, but the model always must match."""
    if model is None:
        return "no model is loaded"
    differs = []
    if built.get("model") != model.source:
        differs.append("model")
    if built.get("weights") is not None and built["weights"] != model.weights:
        differs.append("weights")
    if built.get("seed") is not None and built["seed"] != model.seed:
        differs.append("seed")
    prep = input_preprocess(model.preprocess, model.input_shape).to_dict()
    if built.get("preprocess") is not None and _plain(built["preprocess"]) != _plain(prep):
        differs.append("preprocessing")
    if not differs:
        return None
    ours = {"model": model.source, "weights": model.weights, "seed": model.seed, "preprocess": prep}
    return (f"it was built on {_described(built, differs)}, not on the loaded {_described(ours, differs)} "
            f"({', '.join(differs)} differ{'s' if len(differs) == 1 else ''})")


def _described(side: dict, differs: list[str]) -> str:
    parts = [f"{side['weights']} weights"] if side.get("weights") else []
    if side.get("seed") is not None:
        parts.append(f"seed {side['seed']}")
    if "preprocessing" in differs and side.get("preprocess"):
        p = side["preprocess"]
        parts.append(f"input {p.get('crop') or p.get('size')} px, mean {_short(p.get('mean'))}")
    return f"{side['model']}" + (f" ({', '.join(parts)})" if parts else "")


def _short(values) -> str:
    return "(" + ", ".join(f"{v:.3g}" for v in values or ()) + ")"


def _plain(preprocess: dict) -> str:
    return json.dumps({k: v for k, v in preprocess.items() if v is not None}, sort_keys=True)
