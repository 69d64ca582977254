"""Session files round-trip, refuse code unless trusted, and replay the same run headless."""

import json
import subprocess
import sys

import numpy as np
import pytest

from inspector.core import UntrustedCodeError, parse_edit
from inspector.core.errors import SpecError
from inspector.core.session_file import Session, load_session, save_session
from inspector.core.workbench import Workbench

TOY = "inspector.demo.toy:ToyMLP"


def toy_session(**changes) -> Session:
    base = dict(model=TOY, input="sample:toy_ones", target="output", layers=("fc1", "relu1", "fc2"),
                sites=("output", "grad_input", "params"), input_grad=True,
                edits=(parse_edit("relu1:grad_input=scale(2)"), parse_edit("fc2.bias:grad=zero()")))
    base.update(changes)
    return Session(**base)


def test_round_trip_keeps_everything(tmp_path):
    session = toy_session()
    path = save_session(session, tmp_path / "s.inspector.json")
    data = json.loads(path.read_text())
    assert data["edits"][0] == {"edit": "relu1:grad_input=scale(k=2)", "enabled": True}
    assert load_session(path, trust=True) == session


def test_disabled_edit_survives_and_does_nothing(tmp_path):
    from dataclasses import replace

    edits = (replace(parse_edit("relu1:grad_input=scale(2)"), enabled=False),)
    path = save_session(toy_session(edits=edits), tmp_path / "s.inspector.json")
    loaded = load_session(path, trust=True)
    assert loaded.edits[0].enabled is False
    result = Workbench().execute(loaded.run_request(trust=True)).result
    np.testing.assert_array_equal(result["fc1.bias:grad"], [1, 0, 3, 0])  # the tutorial's value, unedited


def test_session_pointing_at_code_needs_trust(tmp_path):
    path = save_session(toy_session(), tmp_path / "s.inspector.json")
    with pytest.raises(UntrustedCodeError, match="runs code"):
        load_session(path)
    demo = save_session(toy_session(model="demo", layers=(), edits=()), tmp_path / "d.inspector.json")
    assert load_session(demo).model == "demo"  # the bundled model needs no trust


def test_not_a_session(tmp_path):
    bad = tmp_path / "x.inspector.json"
    bad.write_text('{"hello": 1}')
    with pytest.raises(SpecError, match="not a Network Inspector session"):
        load_session(bad)
    bad.write_text("{nope")
    with pytest.raises(SpecError, match="not valid JSON"):
        load_session(bad)


def test_replay_gives_the_api_arrays(tmp_path):
    """Edited values by hand: relu1's grad_input doubled -> fc1 bias grad [2,0,6,0], input grad [[44,52,60]]."""
    path = save_session(toy_session(), tmp_path / "s.inspector.json")
    out = tmp_path / "replay.npz"
    done = subprocess.run([sys.executable, "-m", "inspector", "capture", "--session", str(path), "--trust",
                           "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    arrays = np.load(out)
    np.testing.assert_array_equal(arrays["fc1.bias:grad"], [2, 0, 6, 0])
    np.testing.assert_array_equal(arrays["input:grad"], [[44, 52, 60]])
    np.testing.assert_array_equal(arrays["fc2.bias:grad"], [0])
    direct = Workbench().execute(toy_session().run_request(trust=True)).result
    assert set(arrays.files) == set(direct.arrays())
    for key in arrays.files:
        np.testing.assert_array_equal(arrays[key], direct[key])


def test_replay_refuses_code_without_trust(tmp_path):
    path = save_session(toy_session(), tmp_path / "s.inspector.json")
    done = subprocess.run([sys.executable, "-m", "inspector", "capture", "--session", str(path)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    assert "runs code" in done.stderr and "Traceback" not in done.stderr
