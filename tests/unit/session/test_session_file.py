"""Session files round-trip, refuse code unless trusted, and replay the same run headless."""

import json
import subprocess
import sys

import numpy as np
import pytest

from inspector.core import UntrustedCodeError, parse_edit
from inspector.core.common.errors import SpecError
from inspector.core.session.file import Session, load_session, save_session
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


# -- the seed of random weights ------------------------------------------------------
def test_seed_round_trips_and_reaches_the_model_request(tmp_path):
    session = toy_session(model="resnet18", weights="random", seed=2024, layers=(), edits=())
    path = save_session(session, tmp_path / "s.inspector.json")
    data = json.loads(path.read_text())
    assert data["model"] == {"source": "resnet18", "weights": "random", "seed": 2024}
    loaded = load_session(path)
    assert loaded == session and loaded.seed == 2024
    assert loaded.run_request().model.seed == 2024


def test_a_session_without_seed_still_loads(tmp_path):
    path = tmp_path / "old.inspector.json"
    path.write_text(json.dumps({"format": "network-inspector-session", "version": 1,
                                "model": {"source": "demo", "weights": None}, "input": "sample:star"}))
    session = load_session(path)
    assert session.seed is None and session.model == "demo" and session.input == "sample:star"
    assert "seed" not in session.to_dict()["model"]


@pytest.mark.parametrize("bad", ["x", "12", -1, 2**32, 1.5, True, [3]])
def test_a_bad_seed_is_one_clear_error(tmp_path, bad):
    path = tmp_path / "bad.inspector.json"
    path.write_text(json.dumps({"format": "network-inspector-session", "version": 1,
                                "model": {"source": "resnet18", "weights": "random", "seed": bad}}))
    with pytest.raises(SpecError) as info:
        load_session(path)
    assert str(info.value) == f"The session's model seed must be a whole number from 0 to 4294967295, not {bad!r}."


def test_a_model_entry_that_is_not_an_object_is_refused(tmp_path):
    path = tmp_path / "bad.inspector.json"
    path.write_text(json.dumps({"format": "network-inspector-session", "version": 1, "model": "resnet18"}))
    with pytest.raises(SpecError, match="bad.inspector.json is not a valid session: model must be an object"):
        load_session(path)


def test_replay_with_a_seed_gives_the_same_weights_as_load_model():
    import torch

    from inspector.core import load_model

    session = Session(model="squeezenet1_1", weights="random", seed=11, input="sample:star",
                      layers=("features.0",), sites=("output",), target="0")
    bench = Workbench()
    result = bench.execute(session.run_request()).result
    assert bench.loaded.seed == 11
    direct = load_model("squeezenet1_1", "random", seed=11)
    for key, value in direct.module.state_dict().items():
        assert torch.equal(bench.loaded.module.state_dict()[key], value), key
    first_conv = direct.module.features[0](torch.as_tensor(result["input"]))
    np.testing.assert_array_equal(result["features.0:output"], first_conv.detach().numpy())


def test_a_session_with_no_sites_is_refused_as_the_cli_refuses_an_empty_list(tmp_path):
    """`--sites ''` is an error; a session file with `"sites": []` once ran and captured nothing."""
    path = save_session(toy_session(model="demo", layers=("conv1",), edits=()), tmp_path / "s.inspector.json")
    data = json.loads(path.read_text())
    data["sites"] = []
    path.write_text(json.dumps(data))
    with pytest.raises(SpecError) as error:
        load_session(path)
    assert "sites" in str(error.value) and "[]" in str(error.value)


def test_relative_files_in_a_session_are_read_beside_it_and_never_outside(tmp_path, monkeypatch):
    """A session and its image travel together; `../` that climbs out of the session's folder (or a
    link that leads out) is refused, absolute paths and sample: inputs are kept as they are."""
    from PIL import Image

    folder = tmp_path / "shared"
    folder.mkdir()
    Image.fromarray(np.zeros((16, 16, 3), np.uint8)).save(folder / "cat.png")
    monkeypatch.chdir(tmp_path)  # not the session's folder
    path = save_session(toy_session(model="demo", layers=("conv1",), edits=(), input="cat.png"),
                        folder / "s.inspector.json")
    assert load_session(path).input == str((folder / "cat.png").resolve())
    (tmp_path / "secret.png").write_bytes(b"x")
    (folder / "out").symlink_to(tmp_path, target_is_directory=True)
    for outside in ("../secret.png", "out/secret.png"):
        save_session(toy_session(model="demo", layers=("conv1",), edits=(), input=outside), path)
        with pytest.raises(SpecError, match="outside the session's folder"):
            load_session(path)
    absolute = str(tmp_path / "secret.png")
    save_session(toy_session(model="demo", layers=("conv1",), edits=(), input=absolute, weights="random"), path)
    assert load_session(path).input == absolute and load_session(path).weights == "random"


def test_the_attribution_choice_round_trips_and_a_wrong_one_is_named(tmp_path):
    """Issue 26: a session keeps the Attribution tab's choice (the map is made again from it, seeded)."""
    choice = {"method": "occlusion", "target": "3", "layer": None,
              "options": {"window": 8, "stride": 4, "baseline": "white"}, "metrics": ["deletion", "insertion"]}
    session = toy_session(attribution=choice)
    path = save_session(session, tmp_path / "s.inspector.json")
    assert json.loads(path.read_text())["attribution"] == choice
    assert load_session(path, trust=True).attribution == choice
    for wrong, words in [({"method": "lime"}, "attribution.method"),
                         ({"method": "ig", "metrics": ["roar"]}, r"attribution.metrics\[0\]"),
                         ({"target": "3"}, "attribution")]:
        data = json.loads(path.read_text())
        data["attribution"] = wrong
        (tmp_path / "bad.inspector.json").write_text(json.dumps(data))
        with pytest.raises(SpecError, match=f"bad.inspector.json is not a valid session: {words}"):
            load_session(tmp_path / "bad.inspector.json", trust=True)
