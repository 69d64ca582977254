"""`demo-shuffled`: the demo's twin trained by `inspector.demo.train --shuffle-labels` on the same images with
their labels permuted once. It loads wherever `demo` does, it is the same network, it learned nothing (chance on
fresh shapes, where the demo is near perfect), and its seeds are recorded, so that training makes it again."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from safetensors import safe_open
from safetensors.torch import load_file

from inspector.core import capture, load_input, load_model
from inspector.core.sources.refs import DEMO_NAMES, parse_source
from inspector.demo.evaluate import accuracy
from inspector.demo.model import DemoNet, default_weights_path, load_demo, shuffled_weights_path
from inspector.demo.shapes import CLASSES, make_batch
from inspector.demo.train import LABEL_SEED_OFFSET, shuffled, train

TEST_SEED = 4242  # never used by inspector.demo.train (it uses 1000+s, 2000+s and 3000+s)


@pytest.fixture(scope="module")
def fresh():
    return make_batch(512, TEST_SEED)


def test_it_is_bundled_small_and_the_demos_network():
    path = shuffled_weights_path()
    assert path.is_file() and path.with_suffix(".json").is_file()
    assert path.stat().st_size <= 1.1 * default_weights_path().stat().st_size
    ours, theirs = load_file(str(path)), load_file(str(default_weights_path()))
    assert {k: v.shape for k, v in ours.items()} == {k: v.shape for k, v in theirs.items()}
    assert not all(torch.equal(ours[k], theirs[k]) for k in ours)  # trained on its own labels
    bundle = load_demo(path)
    demo = load_demo()
    assert isinstance(bundle.model, DemoNet) and not bundle.model.training
    assert (bundle.labels, bundle.mean, bundle.std, bundle.input_size) == (demo.labels, demo.mean, demo.std, 64)


def test_its_seeds_are_recorded_in_the_weights_and_beside_them():
    meta = json.loads(shuffled_weights_path().with_suffix(".json").read_text(encoding="utf-8"))
    recipe = meta["train"]
    assert recipe["shuffle_labels"] is True and recipe["label_seed"] == LABEL_SEED_OFFSET + recipe["seed"]
    assert meta["architecture"] == "inspector.demo.model:DemoNet" and meta["classes"] == list(CLASSES)
    with safe_open(str(shuffled_weights_path()), "pt") as weights:
        said = weights.metadata()
    assert {k: json.loads(v) for k, v in said.items() if k != "format"} == \
        {k: v for k, v in recipe.items() if k != "val_accuracy"}


def test_it_learned_nothing_where_the_demo_learned_the_shapes(fresh):
    images, labels = fresh
    twin, demo = load_demo(shuffled_weights_path()), load_demo()
    chance = 1 / len(CLASSES)
    assert accuracy(demo.model, images, labels, demo.mean, demo.std) >= 0.9
    ours = accuracy(twin.model, images, labels, twin.mean, twin.std)
    # 512 images at chance (1/8): a standard deviation of sqrt(p (1 - p) / n) = 0.0146; 4 of them either side
    assert abs(ours - chance) < 4 * np.sqrt(chance * (1 - chance) / len(labels)), ours


def test_it_loads_as_a_model_source_wherever_demo_does():
    assert "demo-shuffled" in DEMO_NAMES and parse_source("demo-shuffled").kind == "demo"
    loaded = load_model("demo-shuffled")
    assert (loaded.source, loaded.weights, loaded.labels, loaded.input_shape) == ("demo-shuffled", "bundled",
                                                                                  list(CLASSES), (1, 3, 64, 64))
    x = load_input("sample:star", loaded.preprocess, loaded.input_shape)
    with torch.no_grad():
        expected = load_demo(shuffled_weights_path()).model(x).numpy()
    result = capture(loaded, x, layers="fc", sites="output")
    np.testing.assert_allclose(result["fc:output"], expected, rtol=1e-5, atol=1e-6)


def test_the_label_shuffle_is_a_seeded_permutation():
    labels = np.arange(64) % len(CLASSES)
    once, again, other = shuffled(labels, 0), shuffled(labels, 0), shuffled(labels, 1)
    assert np.array_equal(once, again) and not np.array_equal(once, other)
    assert np.array_equal(np.bincount(once), np.bincount(labels))  # the same class counts
    assert np.array_equal(once, np.random.default_rng(LABEL_SEED_OFFSET).permutation(labels))
    assert (once != labels).mean() > 0.5


def test_training_it_again_with_the_same_seed_gives_the_same_weights(tmp_path):
    """The recipe at a tiny size, twice: the same bytes; what the bundled weights' metadata records is what
    `python -m inspector.demo.train --shuffle-labels` needs to make them again."""
    for run in ("one", "two"):
        train(1, 3, tmp_path / run, 16, 8, 8, 3e-3, shuffle_labels=True)
    one, two = (load_file(str(tmp_path / run / "demo-shuffled.safetensors")) for run in ("one", "two"))
    assert one.keys() == two.keys() and all(torch.equal(one[k], two[k]) for k in one)
    meta = json.loads((tmp_path / "one" / "demo-shuffled.json").read_text(encoding="utf-8"))
    assert meta["train"] == {**json.loads((tmp_path / "two" / "demo-shuffled.json").read_text())["train"]}
    assert meta["train"]["seed"] == 3 and meta["train"]["label_seed"] == 3003
    assert not (tmp_path / "one" / "demo.safetensors").exists()  # the demo's own weights are never overwritten
