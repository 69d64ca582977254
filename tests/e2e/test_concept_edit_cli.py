"""A concept edit from the command line: `network-inspector concepts` learns a dictionary of the demo's relu3 on a
few generated shapes, `capture --edit 'relu3:output=ablate_concept(...)'` changes relu3 and the logits exactly as
worked out here; a session file holding the edit gives the same arrays; refusals are one line, exit 2."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from cli_here import run_here

from inspector.core import capture, load_input, load_model
from inspector.core.concepts import load_dictionary
from inspector.core.edits import parse_edit
from inspector.core.session.file import Session, load_session, save_session
from inspector.demo.shapes import render


@pytest.fixture(scope="module")
def learned(tmp_path_factory):
    root = tmp_path_factory.mktemp("concept_edit")
    data = root / "data"
    data.mkdir()
    rng = np.random.default_rng(0)
    for i in range(16):
        render(i % 8, rng).save(data / f"{i:02d}.png")
    done = run_here("concepts", "--model", "demo", "--data", str(data), "--layer", "relu3", "--k", "4",
                    "--epochs", "2", "--top", "1", "--out", str(root / "c"))
    assert done.returncode == 0, done.stderr
    return root / "c"


@pytest.fixture(scope="module")
def demo():
    model = load_model("demo")
    return model, load_input("sample:star", model.preprocess, model.input_shape)


def by_hand(demo, folder, concept, k=0.0):
    """relu3 with concept `concept`'s component times k, and the logits of the rest of the demo run on it."""
    model, x = demo
    plain = torch.from_numpy(capture(model, x, layers="relu3", sites="output")["relu3:output"])
    c = load_dictionary(folder).coefficients(plain)[:, concept:concept + 1]
    edited = plain + (k - 1) * (c * load_dictionary(folder).components[concept].view(1, -1, 1, 1))
    net = model.module
    with torch.no_grad():
        logits = net.fc(net.flatten(net.pool(edited)))
    return plain, edited, logits, c


def strongest(demo, folder) -> int:
    model, x = demo
    plain = torch.from_numpy(capture(model, x, layers="relu3", sites="output")["relu3:output"])
    return int(load_dictionary(folder).coefficients(plain).sum((0, 2, 3)).argmax())


def arrays(path):
    with np.load(path) as npz:
        return {key: torch.from_numpy(npz[key]) for key in npz.files}


def test_capture_edit_changes_relu3_and_the_logits_as_worked_out(learned, demo, tmp_path):
    concept = strongest(demo, learned)
    edit = f"relu3:output=ablate_concept(id={concept}, dict={str(learned)!r})"
    done = run_here("capture", "--model", "demo", "--input", "sample:star", "--layers", "relu3,fc", "--sites",
                    "output", "--edit", edit, "--out", str(tmp_path / "x.npz"))
    assert done.returncode == 0, done.stderr
    got = arrays(tmp_path / "x.npz")
    plain, edited, logits, c = by_hand(demo, learned, concept)
    assert c.sum() > 0  # the concept is there on this image, so the edit changes something
    assert not torch.equal(got["relu3:output"], plain)
    assert torch.equal(got["relu3:output"], edited)
    torch.testing.assert_close(got["fc:output"], logits, rtol=0, atol=1e-6)
    scaled = run_here("capture", "--model", "demo", "--input", "sample:star", "--layers", "relu3", "--sites",
                      "output", "--edit", edit.replace("ablate_concept(", "scale_concept(k=2, "),
                      "--out", str(tmp_path / "k2.npz"))
    assert scaled.returncode == 0, scaled.stderr
    assert torch.equal(arrays(tmp_path / "k2.npz")["relu3:output"], by_hand(demo, learned, concept, k=2.0)[1])


def test_a_session_file_round_trips_the_edit(learned, demo, tmp_path):
    edit = parse_edit(f"relu3:output=scale_concept(id=1, k=0.5, dict={str(learned)!r})")
    path = save_session(Session(input="sample:star", layers=("relu3", "fc"), sites=("output",), edits=(edit,)),
                        tmp_path / "s.inspector.json")
    assert load_session(path).edits == (edit,)
    replayed = run_here("capture", "--session", str(path), "--out", str(tmp_path / "s.npz"))
    typed = run_here("capture", "--model", "demo", "--input", "sample:star", "--layers", "relu3,fc", "--sites",
                     "output", "--edit", str(edit), "--out", str(tmp_path / "t.npz"))
    assert (replayed.returncode, typed.returncode) == (0, 0), replayed.stderr + typed.stderr
    a, b = arrays(tmp_path / "s.npz"), arrays(tmp_path / "t.npz")
    assert torch.equal(a["relu3:output"], b["relu3:output"]) and torch.equal(a["fc:output"], b["fc:output"])
    assert torch.equal(a["relu3:output"], by_hand(demo, learned, 1, k=0.5)[1])


@pytest.mark.parametrize("edit, message", [
    ("relu2:output=ablate_concept(0, {d!r})", "The dictionary is of layer relu3, not relu2."),
    ("relu3:output=ablate_concept(4, {d!r})", "no concept 4: the dictionary has 4 concepts (id 0 to 3)."),
    ("relu3:output=ablate_concept(0, {e!r})", "No dictionary at {e} (learn one with `network-inspector concepts`)."),
])
def test_refusals_are_one_line_exit_2(learned, tmp_path, edit, message):
    edit = edit.format(d=str(learned), e=str(tmp_path))
    done = run_here("capture", "--model", "demo", "--input", "sample:star", "--layers", "relu3", "--edit", edit)
    parsed = parse_edit(edit)
    e = tmp_path / "dictionary.safetensors"
    assert (done.returncode, done.stderr.strip()) == (2, f"error: Edit {parsed}: {message.format(e=e)}")


def test_the_apps_run_keeps_the_baseline_beside_the_edited_run(learned, demo, tmp_path):
    """The app's runs (Workbench.execute, as the Edits dock and Compare ask them): the edited result and the
    no-edit baseline it is compared against."""
    from inspector.core.workbench import Workbench

    concept = strongest(demo, learned)
    edit = parse_edit(f"relu3:output=ablate_concept(id={concept}, dict={str(learned)!r})")
    session = Session(input="sample:star", layers=("relu3", "fc"), sites=("output",), edits=(edit,))
    outcome = Workbench().execute(session.run_request(baseline=True))
    plain, edited, logits, _ = by_hand(demo, learned, concept)
    assert torch.equal(torch.from_numpy(outcome.result["relu3:output"]), edited)
    assert torch.equal(torch.from_numpy(outcome.baseline["relu3:output"]), plain)
    assert outcome.result.edits == [str(edit)]
    torch.testing.assert_close(torch.from_numpy(outcome.result["fc:output"]), logits, rtol=0, atol=1e-6)
