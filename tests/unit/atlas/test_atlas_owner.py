"""Issue 25, item 1: an atlas belongs to the model, weights, seed and preprocessing that built it;
`OpenedAtlas.not_of` says what differs from a loaded model, and nothing when it is the same."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image

from inspector.core import load_model
from inspector.core.atlas import run_atlas
from inspector.core.atlas.pictures import open_atlas


@pytest.fixture(scope="module")
def demo_atlas(tmp_path_factory):
    root = tmp_path_factory.mktemp("owner")
    data = root / "data"
    data.mkdir()
    rng = np.random.default_rng(3)
    for i in range(3):
        Image.fromarray(rng.integers(0, 256, (40, 40, 3), dtype=np.uint8)).save(data / f"{i}.png")
    run_atlas(load_model("demo"), data, "conv1", 2, root / "atlas", batch=3)
    return open_atlas(root / "atlas")


def test_the_model_that_built_an_atlas_owns_it(demo_atlas):
    assert demo_atlas.built["model"] == "demo" and demo_atlas.built["weights"] == "bundled"
    assert demo_atlas.not_of(load_model("demo")) is None


def test_another_model_or_other_random_weights_do_not(demo_atlas, tmp_path):
    seeded = load_model("resnet18", weights="random", seed=4)
    why = demo_atlas.not_of(seeded)
    assert why.startswith("it was built on demo (bundled weights") and "not on the loaded resnet18 (random weights, seed 4" in why
    assert why.endswith("(model, weights, preprocessing differ)") and "input 64 px" in why and "input 224 px" in why
    # a resnet18 atlas (written as `job_of` does) and the same resnet18 with another seed: the seed differs
    opened = open_atlas(_copy(demo_atlas, tmp_path, {"model": "resnet18", "weights": "random", "seed": 5}, seeded))
    assert opened.not_of(seeded) == ("it was built on resnet18 (random weights, seed 5), not on the loaded "
                                     "resnet18 (random weights, seed 4) (seed differs)")
    assert open_atlas(_copy(demo_atlas, tmp_path / "b", {"model": "resnet18", "weights": "random", "seed": 4},
                            seeded)).not_of(seeded) is None


def test_an_atlas_without_its_job_file_is_judged_by_its_model_name(demo_atlas, tmp_path):
    out = tmp_path / "bare"
    out.mkdir()
    (out / "atlas.json").write_text(json.dumps(demo_atlas.atlas))
    opened = open_atlas(out)
    assert opened.not_of(load_model("demo")) is None
    assert opened.not_of(load_model("resnet18", weights="random", seed=0)) == (
        "it was built on demo, not on the loaded resnet18 (random weights, seed 0) (model differs)")


def _copy(opened, out, arguments, loaded):
    from inspector.core.inputs.files import input_preprocess

    out.mkdir(parents=True, exist_ok=True)
    (out / "atlas.json").write_text(json.dumps(opened.atlas))
    prep = input_preprocess(loaded.preprocess, loaded.input_shape).to_dict()
    (out / "atlas.job.json").write_text(json.dumps({"key": "k", "arguments": {**arguments, "preprocess": prep}}))
    return out
