"""Concept edits refused in one line: on reading the text (site, id, k, dict), before the run (a folder without a
dictionary, a damaged one, another layer's or model's, an id out of range) and on the tensor (another width);
and a dictionary read once per file version."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import torch

from inspector.core import SpecError, capture
from inspector.core.edits import Edit, parse_edit
from inspector.core.common.keys import Key
from inspector.core.sources.loaded import LoadedModel

sys.path.insert(0, str(Path(__file__).parent))
from test_concept_edits import DIRECTIONS, Mixed, write_dictionary  # noqa: E402

from inspector.core.concepts import edit_ops as edits_concepts  # noqa: E402


@pytest.fixture(scope="module")
def model():
    return LoadedModel(Mixed().eval(), "mixed", input_shape=(1, 3, 5, 6))


def refused(model, edit: str) -> str:
    with pytest.raises(SpecError) as info:
        capture(model, torch.rand(1, 3, 5, 6), layers="mix", sites="output", edits=[edit], target="sum")
    message = str(info.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize("text, message", [
    ("mix:input=ablate_concept(0, 'C')",
     "Edit \"mix:input=ablate_concept(0, 'C')\": ablate_concept applies at mix:output only, not at input."),
    ("mix:grad_output=scale_concept(0, 2, 'C')",
     "Edit \"mix:grad_output=scale_concept(0, 2, 'C')\": scale_concept applies at mix:output only, not at "
     "grad_output."),
    ("mix:output=scale_concept(0, 1e999, 'C')", "scale_concept: k must be a finite number, not inf."),
    ("mix:output=scale_concept(0, -1e999, 'C')", "scale_concept: k must be a finite number, not -inf."),
    ("mix:output=ablate_concept(-1, 'C')",
     "ablate_concept: id must be a whole number >= 0 (a concept of the dictionary), not -1."),
    ("mix:output=ablate_concept(1.0, 'C')",
     "ablate_concept: id must be a whole number >= 0 (a concept of the dictionary), not 1.0."),
    ("mix:output=ablate_concept(True, 'C')", "ablate_concept: id must be a number, not True."),
    ("mix:output=ablate_concept(0, 3)", "ablate_concept: dict must be a concepts folder in quotes, e.g. "
                                        "dict='concepts/'."),
    ("mix:output=ablate_concept(0, ' ')", "ablate_concept: dict must be a concepts folder in quotes, e.g. "
                                          "dict='concepts/'."),
    ("mix:output=ablate_concept(0, dict=C/)", "Cannot read 'ablate_concept(0, dict=C/)'; write an op like scale(2) or "
                                              "clamp(min=0), and a concept edit's folder in quotes: dict='DIR'."),
    ("mix:output=ablate_concept(0, dict=C)", "Arguments of 'ablate_concept(0, dict=C)' must be plain numbers or lists, "
                                             "and a concept edit's folder in quotes: dict='DIR'."),
    ("mix:output=ablate_concept(0)", "ablate_concept needs dict. Usage: ablate_concept(id, dict='DIR'): at "
                                     "LAYER:output, remove concept id of the dictionary in DIR (x - c_id d_id)"),
    ("mix:output=scale_concept(0, dict='C')", "scale_concept needs k. Usage: scale_concept(id, k, dict='DIR'): at "
                                              "LAYER:output, scale concept id's component by k (x + (k - 1) c_id d_id)"),
])
def test_the_text_is_refused_before_torch(text, message):
    with pytest.raises(SpecError) as info:
        parse_edit(text)
    assert str(info.value) == message


def test_dictionaries_that_do_not_fit_are_refused_before_the_run(model, tmp_path):
    write_dictionary(tmp_path / "ok")
    write_dictionary(tmp_path / "layer", layer="tail.0")
    write_dictionary(tmp_path / "model", model="demo")
    (tmp_path / "empty").mkdir()
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "dictionary.safetensors").write_bytes(b"garbage")
    d = {name: str(tmp_path / name) for name in ("ok", "layer", "model", "empty", "bad", "none")}
    assert refused(model, f"mix:output=ablate_concept(0, {d['empty']!r})") == (
        f"Edit mix:output=ablate_concept(id=0, dict={d['empty']!r}): No dictionary at {d['empty']}/dictionary."
        f"safetensors (learn one with `network-inspector concepts`).")
    assert refused(model, f"mix:output=ablate_concept(0, {d['none']!r})") == (
        f"Edit mix:output=ablate_concept(id=0, dict={d['none']!r}): No dictionary at {d['none']} (learn one with "
        f"`network-inspector concepts`).")
    assert refused(model, f"mix:output=ablate_concept(0, {d['bad']!r})").startswith(
        f"Edit mix:output=ablate_concept(id=0, dict={d['bad']!r}): {d['bad']}/dictionary.safetensors is damaged "
        f"(not a safetensors file: ")
    assert refused(model, f"mix:output=ablate_concept(0, {d['layer']!r})") == (
        f"Edit mix:output=ablate_concept(id=0, dict={d['layer']!r}): The dictionary is of layer tail.0, not mix.")
    assert refused(model, f"mix:output=scale_concept(0, 2, {d['model']!r})") == (
        f"Edit mix:output=scale_concept(id=0, k=2, dict={d['model']!r}): The dictionary was learned on model demo, "
        f"not mixed.")
    assert refused(model, f"mix:output=ablate_concept(3, {d['ok']!r})") == (
        f"Edit mix:output=ablate_concept(id=3, dict={d['ok']!r}): no concept 3: the dictionary has 3 concepts "
        f"(id 0 to 2).")


def test_refused_on_the_tensor_where_no_model_is_known(tmp_path):
    """engine.run and the hooks know no model's name: the layer, the id and the width are still checked."""
    folder = write_dictionary(tmp_path, layer="tail.0")  # a layer of that name, but 8 channels, not 4
    act = torch.rand(1, 4, 5, 6)
    with pytest.raises(SpecError) as info:
        Edit.apply(parse_edit(f"tail.0:output=ablate_concept(0, {folder!r})"), act)
    assert str(info.value) == (f"Edit tail.0:output=ablate_concept(id=0, dict={folder!r}): The dictionary of tail.0 "
                               f"has 8 channels; this activation has 4 (shape (1, 4, 5, 6)): another layer's or "
                               f"model's.")
    with pytest.raises(SpecError, match=r"The dictionary is of layer tail.0, not mix\.$"):
        Edit.apply(parse_edit(f"mix:output=ablate_concept(0, {folder!r})"), act)
    with pytest.raises(SpecError, match=r"no concept 5: the dictionary has 3 concepts \(id 0 to 2\)\.$"):
        Edit.apply(parse_edit(f"tail.0:output=ablate_concept(5, {folder!r})"), act)
    with pytest.raises(SpecError, match=r"scale_concept: k must be a finite number, not nan\.$"):
        Edit.apply(Edit(Key("tail.0", "output"), "scale_concept", (("id", 0), ("k", float("nan")),
                                                                     ("dict", folder))), act)


def test_an_edit_built_by_hand_at_another_site_is_refused_before_the_run(model, tmp_path):
    edit = Edit(Key("mix", "grad_output"), "ablate_concept", (("id", 0), ("dict", write_dictionary(tmp_path))))
    with pytest.raises(SpecError) as info:
        capture(model, torch.rand(1, 3, 5, 6), layers="mix", sites="output", edits=[edit], target="sum")
    assert str(info.value) == f"Edit {edit}: ablate_concept applies at a layer's output (mix:output) only, not at " \
                              f"grad_output."
    with pytest.raises(SpecError, match=r"ablate_concept applies at mix:output only, not at grad_output\."):
        edit.apply(torch.rand(1, 8, 5, 6))


def test_a_dictionary_is_read_once_per_file_version(model, tmp_path, monkeypatch):
    from inspector.core.concepts import dictionary as module

    reads = []
    real = module.load_dictionary
    monkeypatch.setattr(module, "load_dictionary", lambda path: reads.append(path) or real(path))
    edits_concepts._read.cache_clear()
    edits_concepts._placed.cache_clear()
    folder = write_dictionary(tmp_path)
    x = torch.rand(1, 3, 5, 6)
    edit = f"mix:output=ablate_concept(0, {folder!r})"
    first = capture(model, x, layers="mix", sites="output", edits=[edit], target="sum")["mix:output"]
    capture(model, x, layers="mix", sites="output", edits=[edit], target="sum")
    assert len(reads) == 1
    # the folder's dictionary changes (concepts 0 and 1 swapped): read again, and used
    write_dictionary(tmp_path, components=DIRECTIONS[[1, 0, 2]])
    stat = os.stat(Path(folder) / "dictionary.safetensors")
    os.utime(Path(folder) / "dictionary.safetensors", ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    again = capture(model, x, layers="mix", sites="output", edits=[edit], target="sum")["mix:output"]
    assert len(reads) == 2
    assert not torch.equal(torch.from_numpy(first), torch.from_numpy(again))
    assert torch.from_numpy(again)[:, 2:5].abs().max() < 1e-6  # concept 0 is now the second direction
