"""Concepts learned over a folder against the truth: a planted non-negative mixture (concepts_planted.py), the
fit's figures computed again by hand (PCA by torch.linalg.svd on the same samples), the top images by brute
force, the seed, Ctrl-C and resume, and the memory bound."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from concepts_planted import PLANTED, best_match_cosines, planted_images

from inspector.core import load_input, load_model
from inspector.core.concepts import ConceptError, learn_concepts, load_dictionary, page_path
from inspector.core.common.errors import RunCancelled
from inspector.core.inputs.files import list_images

pytestmark = pytest.mark.numeric
MODEL = f"{Path(__file__).with_name('concepts_planted.py')}:Planted"


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    root = tmp_path_factory.mktemp("planted")
    data = planted_images(root / "data", 40)
    loaded = load_model(MODEL, trust=True, seed=0)
    record = learn_concepts(loaded, data, "mix", root / "nmf", k=3)
    return loaded, data, root, record


def layer_samples(loaded, path, layer="mix") -> np.ndarray:
    """(positions, C) float64 samples of one image, by a plain forward hook."""
    seen = {}
    module = dict(loaded.module.named_modules())[layer]
    handle = module.register_forward_hook(lambda m, a, o: seen.setdefault("x", o.detach()))
    with torch.no_grad():
        loaded.module(load_input(path, loaded.preprocess, loaded.input_shape))
    handle.remove()
    x = seen["x"][0]
    return x.reshape(x.shape[0], -1).T.double().numpy()


def test_nmf_recovers_the_planted_directions_and_explains_the_variance(planted):
    _, _, root, record = planted
    found = load_dictionary(root / "nmf")
    assert found.method == "nmf" and found.layout == "NCHW" and tuple(found.components.shape) == (3, 8)
    assert min(best_match_cosines(found.components)) > 0.95
    assert record["fit"]["variance_explained"] > 0.9
    assert record["fit"]["never_active"] == []
    assert (root / "nmf" / "thumbnails" / "mix" / "0_0.png").is_file() and page_path(root / "nmf", 2).is_file()
    on_disk = json.loads((root / "nmf" / "concepts.json").read_text())
    assert on_disk["fit"] == record["fit"] and len(on_disk["data"]["files"]) == 40
    assert len(on_disk["data"]["held_out"]) == 8 and not (root / "nmf" / "concepts.cache").exists()


def test_the_fit_figures_equal_a_computation_by_hand(planted):
    """PCA by SVD of the training samples (captured again), the dictionary's variance explained, sparsity and
    relative error on the held-out samples, from the record's own split."""
    loaded, data, root, record = planted
    files = list_images(data)
    held = set(record["data"]["held_out"])
    train = np.concatenate([layer_samples(loaded, p) for p in files.files if files.relative(p) not in held])
    test = np.concatenate([layer_samples(loaded, p) for p in files.files if files.relative(p) in held])
    mean = train.mean(0)
    _, _, vt = torch.linalg.svd(torch.from_numpy(train - mean), full_matrices=False)
    v = vt[:3].T.numpy()
    centred = test - mean
    tss = ((test - test.mean(0)) ** 2).sum()
    pca = 1 - ((centred - centred @ v @ v.T) ** 2).sum() / tss
    assert record["fit"]["pca_variance_explained"] == pytest.approx(pca, abs=1e-6)
    found = load_dictionary(root / "nmf")
    coef = found.coefficients(torch.from_numpy(test).float()).double().numpy()
    rebuilt = coef @ found.components.double().numpy()
    assert record["fit"]["variance_explained"] == pytest.approx(1 - ((test - rebuilt) ** 2).sum() / tss, abs=1e-5)
    assert record["fit"]["relative_error"] == pytest.approx(
        np.sqrt(((test - rebuilt) ** 2).sum() / (test ** 2).sum()), abs=1e-5)
    active = (coef > 1e-6 * coef.max(1, keepdims=True)) & (coef > 0)
    assert record["fit"]["sparsity"] == pytest.approx(active.sum(1).mean(), abs=1e-9)
    assert record["fit"]["samples"] == test.shape[0] and record["fit"]["train_samples"] == train.shape[0]


def test_top_images_equal_brute_force(planted):
    loaded, data, root, record = planted
    found = load_dictionary(root / "nmf")
    files = list_images(data)
    best = {}
    for p in files.files:
        coef = found.coefficients(torch.from_numpy(layer_samples(loaded, p)).float())
        score, pos = coef.max(0)
        best[files.relative(p)] = (score.numpy(), pos.numpy())
    for c, concept in enumerate(record["concepts"]):
        ranked = sorted(best, key=lambda name: (-best[name][0][c], name))[:9]
        assert [e["image"] for e in concept["top"]] == ranked
        for e in concept["top"]:
            score, pos = best[e["image"]]
            assert e["score"] == pytest.approx(float(score[c]), rel=1e-5)
            assert (e["y"], e["x"]) == divmod(int(pos[c]), 8)


def test_tokens_nlc_give_the_same_dictionary_as_the_same_samples_in_nchw(planted, tmp_path):
    """`tokens` is `mix` as (batch, tokens, channels): the same samples in the same order, so the same dictionary;
    it is applied to the layer's output in its own layout."""
    loaded, data, root, record = planted
    tokens = learn_concepts(loaded, data, "tokens", tmp_path / "tokens", k=3, pictures=False)
    found = load_dictionary(tmp_path / "tokens")
    assert found.layout == "NLC" and tokens["layout"] == "NLC"
    assert torch.equal(found.components, load_dictionary(root / "nmf").components)
    assert tokens["fit"] == record["fit"]
    x = torch.rand(2, 64, 8)
    assert found.coefficients(x).shape == (2, 64, 3)
    assert [e["image"] for e in tokens["concepts"][0]["top"]] == [e["image"] for e in record["concepts"][0]["top"]]


def test_a_finished_folder_is_found_done_and_another_jobs_refused(planted):
    loaded, data, root, record = planted
    said = []
    assert learn_concepts(loaded, data, "mix", root / "nmf", k=3, progress=lambda *a: said.append(a)) == record
    assert said == []  # nothing ran again
    with pytest.raises(ConceptError, match=r"holds the concepts of a different job \(model .*layer mix, nmf K=3"):
        learn_concepts(loaded, data, "mix", root / "nmf", k=4)
    assert load_dictionary(root / "nmf").k == 3


def test_a_signed_layer_is_refused_for_nmf_naming_sae(planted, tmp_path):
    loaded, data, _, _ = planted
    with pytest.raises(ConceptError, match=r"negative values .*with the sparse autoencoder \(method sae\)\.$"):
        learn_concepts(loaded, data, "signed", tmp_path / "out", k=3)
    assert list((tmp_path / "out").iterdir()) == []


def test_the_same_seed_gives_the_same_dictionary(planted, tmp_path):
    loaded, data, root, _ = planted
    learn_concepts(loaded, data, "mix", tmp_path / "again", k=3, pictures=False)
    assert torch.equal(load_dictionary(tmp_path / "again").components, load_dictionary(root / "nmf").components)
    learn_concepts(loaded, data, "mix", tmp_path / "other", k=3, seed=1, pictures=False)
    assert not torch.equal(load_dictionary(tmp_path / "other").components, load_dictionary(root / "nmf").components)


@pytest.mark.parametrize("stop_at", [("pass", 16), ("fit", 7)])
def test_cancelled_then_resumed_equals_uninterrupted(planted, tmp_path, stop_at):
    """Stopped in the activation pass or in the fit (MiniBatchNMF's state saved and put back): the resumed run's
    dictionary and record are the uninterrupted run's, exactly."""
    loaded, data, root, record = planted
    seen = {}

    def progress(stage, done, total):
        seen["at"] = (stage, done)

    with pytest.raises(RunCancelled, match="resume"):
        learn_concepts(loaded, data, "mix", tmp_path / "out", k=3, progress=progress, batch=4,
                       cancel=lambda: seen.get("at") == stop_at)
    assert (tmp_path / "out" / "concepts.partial.npz").is_file() and not (tmp_path / "out" / "concepts.json").exists()
    stages = []
    resumed = learn_concepts(loaded, data, "mix", tmp_path / "out", k=3, batch=4,
                             progress=lambda stage, done, total: stages.append((stage, done)))
    assert stages[0] == stop_at  # it went on from there
    whole = learn_concepts(loaded, data, "mix", tmp_path / "whole", k=3, batch=4)
    assert torch.equal(load_dictionary(tmp_path / "out").components, load_dictionary(tmp_path / "whole").components)
    assert resumed["fit"] == whole["fit"] and resumed["concepts"] == whole["concepts"]


def test_sae_cancelled_in_the_fit_then_resumed_equals_uninterrupted(planted, tmp_path):
    """The autoencoder's weights and Adam's moments saved and put back: the same weights, exactly."""
    loaded, data, _, _ = planted
    options = dict(method="sae", k=3, sparsity=2, pictures=False)
    seen = {}
    with pytest.raises(RunCancelled, match="after 100 of 320 fitting steps"):
        learn_concepts(loaded, data, "mix", tmp_path / "out", progress=lambda *a: seen.update(at=a[:2]),
                       cancel=lambda: seen.get("at") == ("fit", 100), **options)
    learn_concepts(loaded, data, "mix", tmp_path / "out", **options)
    learn_concepts(loaded, data, "mix", tmp_path / "whole", **options)
    resumed, whole = load_dictionary(tmp_path / "out"), load_dictionary(tmp_path / "whole")
    for name in ("components", "encoder_weight", "encoder_bias", "pre_bias"):
        assert torch.equal(getattr(resumed, name), getattr(whole, name))


def test_no_held_out_images_measures_the_training_samples_and_says_so(planted, tmp_path):
    loaded, data, _, _ = planted
    record = learn_concepts(loaded, data, "mix", tmp_path / "all", k=3, held_out=0.0, pictures=False)
    assert record["data"]["held_out"] == [] and record["fit"]["measured_on"] == "training (no held-out images)"
    assert record["fit"]["samples"] == record["fit"]["train_samples"] == 40 * 64


def test_a_small_memory_bound_takes_smaller_batches_and_still_fits(planted, tmp_path):
    loaded, data, _, record = planted
    small = learn_concepts(loaded, data, "mix", tmp_path / "small", k=3, max_memory_mb=0.05, pictures=False)
    assert record["batch"] == {"images": 16, "samples": 1024}
    assert small["batch"] == {"images": 3, "samples": 192}  # 0.05 MB / (8 copies x 4 bytes x 8 channels), in blocks
    assert min(best_match_cosines(load_dictionary(tmp_path / "small").components)) > 0.95


def test_sae_learns_the_planted_directions_repeatably(planted, tmp_path):
    """The sparse autoencoder (top-2) on the same samples: its decoder rows match the planted directions to a
    cosine of at least 0.9 each (0.97 or more in practice here), and the same seed gives the same weights."""
    loaded, data, _, _ = planted
    record = learn_concepts(loaded, data, "mix", tmp_path / "sae", method="sae", k=3, sparsity=2, pictures=False)
    found = load_dictionary(tmp_path / "sae")
    assert found.method == "sae" and found.sparsity == 2
    assert min(best_match_cosines(found.components)) >= 0.9, best_match_cosines(found.components)
    assert record["fit"]["variance_explained"] > 0.9 and "relative_error" not in record["fit"]
    assert record["fit"]["sparsity"] <= 2
    learn_concepts(loaded, data, "mix", tmp_path / "sae2", method="sae", k=3, sparsity=2, pictures=False)
    again = load_dictionary(tmp_path / "sae2")
    for name in ("components", "encoder_weight", "encoder_bias", "pre_bias"):
        assert torch.equal(getattr(found, name), getattr(again, name))


def test_planted_directions_are_unit_rows():
    assert torch.allclose(PLANTED.norm(dim=1), torch.ones(3))
