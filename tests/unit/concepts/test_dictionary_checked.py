"""Issue 52, item 3: a dictionary is checked on load (an SAE with a NaN encoder or an infinite bias, or an NMF
dictionary with negative components, loaded, and a concept edit built on it then silently did nothing), and it
records the model's identity (source, weights, seed and a hash of the weights), so that it is not applied to another
checkpoint of the same architecture without a word."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
from PIL import Image
from safetensors import safe_open
from safetensors.torch import load_file, save_file

from inspector.core import capture, load_input, load_model
from inspector.core.concepts import ConceptError, learn_concepts, load_dictionary, read_concepts
from inspector.core.concepts.dictionary import Dictionary, save_dictionary
from inspector.core.concepts.identity import weights_digest
from inspector.core.edits import check_edits as check_concept_edits
from inspector.core.edits import parse_edit


@pytest.fixture(scope="module")
def learned(tmp_path_factory):
    """An SAE and an NMF dictionary of the demo's relu3, learned over four pictures."""
    root = tmp_path_factory.mktemp("dictionaries")
    (root / "data").mkdir()
    rng = np.random.default_rng(3)
    for i in range(4):
        Image.fromarray(rng.integers(0, 256, (32, 32, 3), dtype=np.uint8)).save(root / "data" / f"{i}.png")
    demo = load_model("demo")
    options = dict(k=2, epochs=1, top=1, batch=2, pictures=False)
    learn_concepts(demo, root / "data", "relu3", root / "sae", method="sae", sparsity=1, **options)
    learn_concepts(demo, root / "data", "relu3", root / "nmf", **options)
    return demo, root


def _damaged(learned, tmp_path, method: str, name: str, change) -> str:
    _, root = learned
    path = root / method / "dictionary.safetensors"
    with safe_open(str(path), "pt") as file:
        meta = file.metadata()
    tensors = load_file(path)
    change(tensors, name)
    (tmp_path / "d").mkdir()
    save_file(tensors, str(tmp_path / "d" / "dictionary.safetensors"), metadata=meta)
    return str(tmp_path / "d")


def _set(value):
    def change(tensors, name):
        tensors[name] = tensors[name].clone()
        tensors[name].view(-1)[0] = value
    return change


@pytest.mark.parametrize("method, name, change, says", [
    ("sae", "encoder.weight", _set(float("nan")), "its encoder.weight holds NaN or infinite values."),
    ("sae", "encoder.bias", _set(float("inf")), "its encoder.bias holds NaN or infinite values."),
    ("sae", "pre_bias", _set(-float("inf")), "its pre_bias holds NaN or infinite values."),
    ("nmf", "components", _set(-0.5), "an NMF dictionary's components are not negative; these reach -0.5."),
    ("nmf", "components", lambda t, n: t.update({n: t[n].to(torch.int64)}),
     "its components is torch.int64, not floating point."),
    ("nmf", "extra", lambda t, n: t.update({n: torch.zeros(2)}), "a nmf dictionary holds components; this one holds "
                                                                 "extra too."),
    ("sae", "encoder.bias", lambda t, n: t.pop(n), "a sae dictionary holds components, encoder.bias, encoder.weight, "
                                                   "pre_bias; this one lacks encoder.bias."),
])
def test_a_dictionary_that_no_fit_can_give_is_refused_on_load(learned, tmp_path, method, name, change, says):
    folder = _damaged(learned, tmp_path, method, name, change)
    with pytest.raises(ConceptError) as error:
        load_dictionary(folder)
    assert str(error.value) == f"{folder}/dictionary.safetensors is damaged: {says}"


def test_an_edit_on_a_refused_dictionary_is_refused_before_the_run(learned, tmp_path):
    """Before, the NaN encoder loaded and ablate_concept left the output as it was."""
    demo, _ = learned
    folder = _damaged(learned, tmp_path, "sae", "encoder.weight", _set(float("nan")))
    with pytest.raises(Exception, match=re.escape("encoder.weight holds NaN or infinite values.")):
        check_concept_edits([parse_edit(f"relu3:output=ablate_concept(0, dict={folder!r})")], demo)


def test_the_dictionary_records_the_weights_it_was_learned_on(learned):
    demo, root = learned
    found = load_dictionary(root / "sae")
    assert (found.model, found.weights, found.seed, found.digest) == ("demo", demo.weights, None,
                                                                      weights_digest(demo.module))
    found.check(model=demo)  # the model it was learned on


def test_another_checkpoint_of_the_same_model_is_refused_in_one_line(learned):
    """The demo with one weight changed (another checkpoint of its architecture, the same source): read_concepts and
    a concept edit are refused, naming both weights; the dictionary's own model still passes."""
    demo, root = learned
    other = load_model("demo")
    with torch.no_grad():
        other.module.conv1.weight[0, 0, 0, 0] += 0.5
    assert weights_digest(other.module) != weights_digest(demo.module)
    dictionary = load_dictionary(root / "nmf")
    x = load_input("sample:star", other.preprocess, other.input_shape)
    said = (f"The dictionary was learned on demo with other weights ({demo.weights} weights, weights hash "
            f"{weights_digest(demo.module)}), not the loaded ones ({other.weights} weights, weights hash "
            f"{weights_digest(other.module)}): its concepts are another checkpoint's directions.")
    with pytest.raises(ConceptError) as error:
        read_concepts(other, x, dictionary)
    assert str(error.value) == said
    with pytest.raises(Exception) as error:
        check_concept_edits([parse_edit(f"relu3:output=ablate_concept(0, dict={str(root / 'nmf')!r})")], other)
    assert str(error.value).endswith(said)
    with pytest.raises(Exception) as error:  # capture (and the app's runs, diff) pass the loaded model, not its name
        capture(other, x, "relu3", "output", edits=[f"relu3:output=ablate_concept(0, dict={str(root / 'nmf')!r})"])
    assert str(error.value).endswith(said)
    assert read_concepts(demo, x, dictionary).coefficients.shape == (2,)


def test_a_dictionary_without_a_weights_hash_is_judged_by_its_model_name(learned, tmp_path):
    """One written before the hash was recorded (or by hand): its weights are not held against it."""
    demo, root = learned
    old = load_dictionary(root / "nmf")
    save_dictionary(tmp_path, Dictionary("nmf", old.components, "relu3", "NCHW", "demo"))
    other = load_model("demo")
    with torch.no_grad():
        other.module.conv1.weight[0, 0, 0, 0] += 0.5
    load_dictionary(tmp_path).check(model=other)
    with pytest.raises(ConceptError, match="learned on model demo, not resnet18"):
        load_dictionary(tmp_path).check(model="resnet18")
