"""Issue 43 item 3, the leftovers: the Edits dock's concept form (fill it in, the edit appears as written, the next
run applies it: relu3 and the logits as worked out here by hand from the dictionary), and a session naming a concept
edit's dictionary relative to the session file when it is beside or under it (read back from there, also once the
folder has moved; one that climbs out refused; one elsewhere kept absolute)."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import torch
from PySide6.QtWidgets import QPushButton, QToolButton

from inspector.core import load_input, load_model
from inspector.core.concepts import learn_concepts, load_dictionary
from inspector.core.edits import parse_edit
from inspector.demo.shapes import render


@pytest.fixture(scope="module")
def learned(tmp_path_factory):
    """A dictionary of the demo's relu3: K=4 over 8 generated shapes."""
    root = tmp_path_factory.mktemp("concept_form")
    data = root / "data"
    data.mkdir()
    rng = np.random.default_rng(2)
    for i in range(8):
        render(i, rng).save(data / f"{i:02d}.png")
    learn_concepts(load_model("demo"), data, "relu3", root / "c", k=4, epochs=2, top=1, pictures=False)
    return root / "c"


def by_hand(folder, concept: int):
    """relu3 of the demo on sample:star with the concept's component taken out (x - c d, c the dictionary's
    coefficients of the plain relu3 at each position), and the logits of the rest of the demo on it."""
    model = load_model("demo")
    x = load_input("sample:star", model.preprocess, model.input_shape)
    net, seen = model.module, {}
    handle = net.relu3.register_forward_hook(lambda _m, _a, out: seen.setdefault("relu3", out.detach().clone()))
    with torch.no_grad():
        net(x)
    handle.remove()
    plain = seen["relu3"]
    d = load_dictionary(folder)
    c = d.coefficients(plain)[:, concept:concept + 1]
    edited = plain - c * d.components[concept].view(1, -1, 1, 1)
    with torch.no_grad():
        logits = net.fc(net.flatten(net.pool(edited)))
    return plain, edited, logits, c


def test_the_edits_docks_concept_form_adds_the_edit_and_the_next_run_applies_it(ui, qtbot, open_window, learned,
                                                                                  monkeypatch):
    window = open_window("demo", "sample:star", {"relu3", "fc"})
    plain, edited, logits, c = by_hand(learned, 1)
    assert c.sum() > 0  # the concept is on this image: the edit changes relu3
    panel = window.views.edits_panel
    panel.layer.setCurrentText("relu3")
    panel.site.setCurrentText("output")
    panel.op.setCurrentText("ablate_concept")
    assert set(panel.args.fields) == {"id", "dict"}
    panel.args.fields["id"].setValue(1)
    from inspector.gui.common import file_dialogs

    asked = []
    monkeypatch.setattr(file_dialogs, "choose_folder", lambda _parent, kind, _title, _start="", engine=False:
                        asked.append(kind) or str(learned))
    browse = next(b for b in panel.args.findChildren(QToolButton) if b.text() == "…")
    browse.click()  # the folder chosen in a file dialog
    assert asked == ["concepts-out"] and panel.args.fields["dict"].text() == str(learned)
    add = next(b for b in panel.findChildren(QPushButton) if b.text() == "Add")
    add.click()
    text = f"relu3:output=ablate_concept(id=1, dict={str(learned)!r})"
    assert [panel.list.item(i).text() for i in range(panel.list.count())] == [text]
    outcome = ui.expect_result(qtbot, window)
    got = torch.from_numpy(outcome.result["relu3:output"])
    assert not torch.equal(got, plain)
    torch.testing.assert_close(got, edited, rtol=0, atol=1e-6)
    torch.testing.assert_close(torch.from_numpy(outcome.result["fc:output"]), logits, rtol=0, atol=1e-5)
    np.testing.assert_array_equal(outcome.baseline["relu3:output"], plain.numpy())  # Compare's no-edit side


def test_a_session_names_a_concept_folder_beside_it_relative_and_reads_it_back(qtbot, window, learned, tmp_path):
    beside = tmp_path / "work"
    shutil.copytree(learned, beside / "concepts" / "relu3")
    far = str(learned)  # in another folder: kept absolute
    state = window.state
    near_edit = parse_edit(f"relu3:output=ablate_concept(id=2, dict={str(beside / 'concepts' / 'relu3')!r})")
    far_edit = parse_edit(f"relu3:output=scale_concept(id=0, k=2.0, dict={far!r})")
    state.set_edits([near_edit, far_edit])
    path = beside / "s.inspector.json"
    window.edits.save(str(path))
    stored = [e["edit"] for e in json.loads(path.read_text())["edits"]]
    assert stored == ["relu3:output=ablate_concept(id=2, dict='concepts/relu3')",
                      f"relu3:output=scale_concept(id=0, k=2.0, dict={far!r})"]
    # the folder moves with its session: read back from where the session now is
    moved = tmp_path / "moved"
    shutil.move(str(beside), str(moved))
    state.set_edits([])
    assert window.edits.load(str(moved / "s.inspector.json"), trust=True)
    qtbot.waitUntil(lambda: len(state.edits) == 2, timeout=30_000)
    assert dict(state.edits[0].args)["dict"] == str((moved / "concepts" / "relu3").resolve())
    assert dict(state.edits[1].args)["dict"] == far


def test_a_session_whose_concept_folder_climbs_out_is_refused(qtbot, window, tmp_path):
    path = tmp_path / "inner" / "s.inspector.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"format": "network-inspector-session", "version": 1, "model": {"source": "demo"},
                                "input": "sample:star",
                                "edits": ["relu3:output=ablate_concept(id=0, dict='../c')"]}))
    notices = []
    window.state.sigNotice.connect(notices.append)
    before = window.state.edits
    loaded = window.edits.load(str(path), trust=True)
    said = [n.text for n in notices if n.level == "error"]
    assert said, f"loaded={loaded}, notices={[n.text for n in notices]}"
    assert "dict='../c'" in said[-1] and "outside the session's folder" in said[-1]
    assert window.state.edits == before and window.state.pending_edits is None
