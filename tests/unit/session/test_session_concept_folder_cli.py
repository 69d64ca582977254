"""A session's relative concept-edit dictionary folder is read from the session file's folder by the core's
session reader, so `capture --session` (run from anywhere) applies the dictionary beside the session as the app
does; one that climbs out of the folder is refused in one line, as a relative input or weights file is."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from inspector.cli.dispatch import main
from inspector.core import SpecError, load_input, load_model
from inspector.core.concepts import Dictionary, save_dictionary
from inspector.core.edits import parse_edit
from inspector.core.session.file import Session, load_session, save_session


def demo_dictionary(folder: Path) -> Dictionary:
    """Two non-negative unit directions in the demo's 64 relu3 channels."""
    g = torch.Generator().manual_seed(3)
    components = torch.rand(2, 64, generator=g)
    components = components / components.norm(dim=1, keepdim=True)
    d = Dictionary("nmf", components, "relu3", "NCHW", "demo")
    save_dictionary(folder, d)
    return d


def by_hand(d: Dictionary) -> np.ndarray:
    """relu3 of the demo on sample:star with concept 0 taken out: x - c_0 d_0 at each position."""
    model = load_model("demo")
    x = load_input("sample:star", model.preprocess, model.input_shape)
    seen = {}
    handle = model.module.relu3.register_forward_hook(lambda _m, _a, out: seen.setdefault("x", out.detach().clone()))
    with torch.no_grad():
        model.module(x)
    handle.remove()
    plain = seen["x"]
    c = d.coefficients(plain)[:, :1]  # (1, 1, 8, 8): concept 0's coefficient at each position
    assert float(c.sum()) > 0  # the concept is on this image: the edit changes relu3
    return (plain - c * d.components[0].view(1, -1, 1, 1)).numpy()


def test_capture_session_reads_the_dictionary_beside_the_session(tmp_path, monkeypatch):
    folder = tmp_path / "project"
    d = demo_dictionary(folder / "concepts")
    edit = parse_edit("relu3:output=ablate_concept(id=0, dict='concepts')")
    session = save_session(Session(model="demo", input="sample:star", layers=("relu3",), sites=("output",),
                                   edits=(edit,)), folder / "s.inspector.json")
    assert load_session(session).edits[0].args == (("id", 0), ("dict", str((folder / "concepts").resolve())))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # "concepts" here is nothing: the session's folder is where it is read
    assert main(["capture", "--session", str(session), "--out", "out.npz"]) == 0
    with np.load(elsewhere / "out.npz") as got:
        key = next(k for k in got.files if k.startswith("relu3:output"))
        np.testing.assert_allclose(got[key], by_hand(d), rtol=1e-4, atol=1e-5)


def test_a_relative_dictionary_folder_that_climbs_out_is_refused(tmp_path):
    demo_dictionary(tmp_path / "outside")
    (tmp_path / "project").mkdir()
    edit = parse_edit("relu3:output=ablate_concept(id=0, dict='../outside')")
    session = save_session(Session(model="demo", input="sample:star", edits=(edit,)),
                           tmp_path / "project" / "s.inspector.json")
    with pytest.raises(SpecError) as info:
        load_session(session)
    assert str(info.value) == (
        "s.inspector.json: the concept edit relu3:output=ablate_concept(id=0, dict='../outside') names "
        "dict='../outside', outside the session's folder; a relative path in a session must stay in that folder.")
