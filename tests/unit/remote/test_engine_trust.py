"""Issue 53's "every view against the server": Check these maps and Evaluate… on a real `network-inspector serve` on
127.0.0.1, driven by the real client. A trust card made on the engine (its phases said as progress) is the card the
app's own worker makes (`card_on` on a Workbench here) from the same request and seed: every AUC, MPRT's curve and
maps, random-logit's class and similarity; the strip's maps cross only when asked. An evaluation over a folder in the
data root writes the files `run_evaluation` writes here over the same images, byte for byte, with progress in images;
a cancel stops it (its state kept) and the same request finishes it. Folders outside the data root and a card of a
model the engine does not hold are refused in one line. One server for the module; every wait bounded."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from inspector.core.records.evaluation import EvaluationDone, EvaluationRequest
from inspector.core.records.requests import ModelRequest
from inspector.core.records.trust import TrustRequest
from inspector.remote.client import value_of
from inspector.remote.errors import EngineError

# the same numbers need the same arithmetic: the server's one thread here too (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("threads_as_the_server")

DEMO = ModelRequest("demo")
SEED = 5
FILES = ("summary.json", "summary.csv", "values.json", "values.csv")


@pytest.fixture(scope="module")
def served(remote, tmp_path_factory):
    with remote.engine_server(tmp_path_factory.mktemp("served-trust")) as server:
        images = server.root / "images"
        images.mkdir()
        rng = np.random.default_rng(3)
        for i in range(6):
            Image.fromarray(rng.integers(0, 256, (40, 48, 3), dtype=np.uint8)).save(images / f"{i}.png")
        yield server


@pytest.fixture(scope="module")
def bench():
    from inspector.core.workbench import Workbench

    here = Workbench()
    here.load(DEMO)
    return here


def test_a_card_made_on_the_engine_is_the_one_the_app_makes_here(engine, bench):
    from inspector.core.attribution.sanity.served import card_on

    request = TrustRequest(DEMO, "sample:star", "cpu", "saliency", "", None, -3, (), protocol="rise2018", seed=SEED)
    events = list(engine.request("checks", request, timeout=120.0))
    kinds = [e.kind for e in events]
    assert kinds[0] == "accepted" and kinds[-1] == "result", kinds
    stages = [e.body["stage"] for e in events if e.kind == "progress"]
    assert stages and stages[0] == "the map", stages  # its phases, in the app's words: each kind said at least once
    for said in ("deletion and insertion (rise2018), pass ", "ROAD, pass ", "MPRT step ", "random-logit map "):
        assert any(stage.startswith(said) for stage in stages), (said, stages)
    there, here = value_of(events[-1]), card_on(bench, request)
    assert (there.method, there.protocol, there.seed, there.seed_drawn, there.target_index) == \
        (here.method, "rise2018", SEED, False, here.target_index)
    assert [c.as_json() for c in there.curves] == [c.as_json() for c in here.curves]
    assert [c.metric for c in there.curves] == ["deletion", "insertion", "road-morf", "road-lerf"]
    assert there.mprt.layers == here.mprt.layers and len(there.mprt.maps) == len(here.mprt.layers) + 1
    np.testing.assert_array_equal(there.mprt.curve, here.mprt.curve)
    for a, b in zip(there.mprt.maps, here.mprt.maps):
        np.testing.assert_array_equal(a, b)
    assert (there.mprt.verdict, there.mprt.changes) == (here.mprt.verdict, here.mprt.changes)
    assert there.random_logit.other_index == here.random_logit.other_index
    assert there.random_logit.similarity == here.random_logit.similarity
    assert [(c.check, c.refused) for c in there.checked] == [(c.check, "") for c in here.checked]


def test_the_strip_s_maps_cross_only_when_asked_and_the_numbers_stay(engine, bench):
    from inspector.core.attribution.sanity.served import card_on

    request = TrustRequest(DEMO, "sample:star", "cpu", "gradcam", "", "relu3", -4, (), seed=SEED, maps=False)
    there = engine.call("checks", request, timeout=120.0)
    here = card_on(bench, request)
    assert there.mprt.maps == () and len(here.mprt.maps) == len(here.mprt.layers) + 1
    np.testing.assert_array_equal(there.mprt.curve, here.mprt.curve)
    assert [s.as_json() for s in there.mprt.similarities] == [s.as_json() for s in here.mprt.similarities]
    assert _timeless(there.as_json()) == _timeless(here.as_json())  # every number but the times taken


def _timeless(value):
    """A card's JSON without the seconds each check took."""
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if k != "seconds"}
    return [_timeless(v) for v in value] if isinstance(value, list) else value


def test_a_card_of_a_model_the_engine_does_not_hold_is_one_line(engine):
    request = TrustRequest(ModelRequest("demo", seed=7), "sample:star", "cpu", "saliency", seed=SEED)
    with pytest.raises(EngineError) as refused:
        engine.call("checks", request, timeout=60.0)
    assert str(refused.value) == "Another model was loaded meanwhile; press Compare all, then check its maps."


def _evaluation(served, out) -> EvaluationRequest:
    return EvaluationRequest(DEMO, str(served.root / "images"), out, ("saliency", "gradcam"), ("deletion", "insertion"),
                             steps=4, batch=2, run_id=9)


@pytest.fixture(scope="module")
def here(served, bench, tmp_path_factory):
    """The same evaluation made by the app's own worker's function, in this process: the files to match."""
    from inspector.core.evaluate.served import evaluate_on

    out = tmp_path_factory.mktemp("evaluated-here")
    return evaluate_on(bench, _evaluation(served, str(out)))


def test_an_evaluation_on_the_engine_writes_the_files_written_here(engine, served, here):
    from inspector.core.evaluate import read_summary

    request = _evaluation(served, str(served.root / "evaluation"))
    events = list(engine.request("evaluate", request, timeout=240.0))
    kinds = [e.kind for e in events]
    assert kinds[0] == "accepted" and kinds[-1] == "result", kinds
    progress = [(e.body["done"], e.body["total"]) for e in events if e.kind == "progress"]
    assert progress[-1] == (6, 6) and all(0 <= d <= t == 6 for d, t in progress), progress
    done = value_of(events[-1])
    assert isinstance(done, EvaluationDone) and done.out_dir == request.out_dir
    assert done.summary == read_summary(request.out_dir) == here.summary
    for name in FILES:
        assert (served.root / "evaluation" / name).read_bytes() == Path(here.out_dir, name).read_bytes(), name


def test_a_cancelled_evaluation_stops_and_the_same_request_finishes_it(engine, served, here):
    from inspector.core.evaluate import read_summary

    request = _evaluation(served, str(served.root / "stopped"))
    key = engine.send("evaluate", request)
    seen = []
    deadline = time.monotonic() + 120
    for event in engine.events(key, timeout=120):
        seen.append(event)
        if event.kind == "progress" and sum(e.kind == "progress" for e in seen) == 1:  # it runs: stop it
            assert engine.cancel(key)
        assert time.monotonic() < deadline
    assert seen[-1].kind == "cancelled", [e.kind for e in seen]
    out = served.root / "stopped"
    assert not (out / "summary.json").exists() and (out / "evaluation.job.json").is_file()  # its state, kept
    again = list(engine.request("evaluate", request, timeout=240))
    assert again[-1].kind == "result", [e.kind for e in again]
    first = [e.body["done"] for e in again if e.kind == "progress"][0]
    assert first >= 1  # it went on where it stopped
    assert value_of(again[-1]).summary == read_summary(out)
    for name in FILES:
        assert (out / name).read_bytes() == Path(here.out_dir, name).read_bytes(), name


def test_folders_outside_the_data_root_are_refused_in_one_line(engine, served, tmp_path):
    for request, said in ((_evaluation(served, str(tmp_path / "out")), "The evaluation folder"),
                          (EvaluationRequest(DEMO, str(tmp_path), str(served.root / "x"), ("saliency",),
                                             ("deletion",)), "The data folder")):
        with pytest.raises(EngineError) as refused:
            engine.call("evaluate", request, timeout=60.0)
        line = str(refused.value)
        assert line.startswith(said) and "outside this server's data root" in line and "\n" not in line, line
    assert not (tmp_path / "out").exists()
