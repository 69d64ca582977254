"""Issue 53 item 4: Concepts and the model catalogue on a real `network-inspector serve` on 127.0.0.1, driven by the
real client. A dictionary learned on the engine over a folder in its data root (progress by stage) is the one
learned here over the same images; opening it, reading an image's concepts (the dock's bars), one concept's
relevance map and its page give what the same work in process gives, exactly; a build cancelled on the engine ends
`cancelled`, keeps its state, and the same request resumes it; folders outside the data root are refused in one
line; the catalogue is the in-process worker's. One server for the module; every wait bounded."""

from __future__ import annotations

import time

import numpy as np
import pytest

from inspector.core.records.concepts import BuildConceptsRequest, ConceptsRequest
from inspector.core.records.failure import Failure
from inspector.core.records.requests import ModelRequest
from inspector.remote.client import value_of
from inspector.remote.errors import EngineError

# the same numbers need the same arithmetic: the server's one thread here too (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("threads_as_the_server")

DEMO = ModelRequest("demo")
LAYER = "relu3"
TARGET = 3  # the demo's class the relevance is for


@pytest.fixture(scope="module")
def served(remote, tmp_path_factory):
    from inspector.demo.shapes import render

    with remote.engine_server(tmp_path_factory.mktemp("served-concepts")) as server:
        images = server.root / "images"
        images.mkdir()
        rng = np.random.default_rng(1)
        for i in range(8):
            render(i, rng).save(images / f"{i:02d}.png")
        yield server


@pytest.fixture(scope="module")
def learned(engine, served, tmp_path_factory):
    """The dictionary learned on the engine (data/concepts), its build's events, and the same built here."""
    from inspector.core import load_model
    from inspector.core.concepts import learn_concepts

    request = BuildConceptsRequest(DEMO, str(served.root / "images"), LAYER, 4, "nmf", str(served.root / "concepts"))
    events = list(engine.request("learn", request, timeout=240.0))
    here = tmp_path_factory.mktemp("concepts-here") / "concepts"
    learn_concepts(load_model("demo"), served.root / "images", LAYER, here, method="nmf", k=4)
    return request, events, here


def test_a_dictionary_learned_on_the_engine_is_the_one_learned_here(learned, served):
    from inspector.core.concepts import load_dictionary, read_record

    request, events, here = learned
    kinds = [e.kind for e in events]
    assert kinds[0] == "accepted" and kinds[-1] == "result", kinds
    assert value_of(events[-1]) == request.out_dir
    progress = [e.body for e in events if e.kind == "progress"]
    assert {p["stage"] for p in progress} >= {"pass", "fit"}, progress
    for p in progress:
        assert 0 <= p["done"] <= p["total"] and p["rate"] >= 0
    there = load_dictionary(request.out_dir)
    mine = load_dictionary(here)
    assert (there.layer, there.method, there.k, there.model) == (mine.layer, mine.method, mine.k, mine.model)
    np.testing.assert_array_equal(there.components.numpy(), mine.components.numpy())
    ours, theirs = read_record(here), read_record(request.out_dir)
    assert [c["top"] for c in theirs["concepts"]] == [c["top"] for c in ours["concepts"]]


def test_open_read_map_and_page_on_the_engine_are_the_work_in_process(learned, engine):
    """The Concepts dock's bars (coefficients, relevance), its maps, a concept's relevance map and page: what the
    engine sends equals what the same dictionary gives in process."""
    from PIL import Image

    from inspector.core.concepts import load_dictionary, read_record
    from inspector.core.concepts.on_image import concept_relevance_map, read_concepts
    from inspector.core.concepts.store import page_path
    from inspector.core.workbench import Workbench

    request, _events, _here = learned
    folder = request.out_dir
    opened = engine.call("concepts", ConceptsRequest("open", folder, DEMO, run_id=3))
    dictionary = load_dictionary(folder)
    assert (opened.folder, opened.layer, opened.method, opened.k, opened.model) == (folder, LAYER, "nmf", 4, "demo")
    assert opened.record == read_record(folder)

    read = engine.call("concepts", ConceptsRequest("read", folder, DEMO, "sample:star", TARGET, run_id=4))
    bench = Workbench()
    loaded, _tree = bench.load(DEMO)
    x = bench.input_tensor("sample:star")
    local = read_concepts(loaded, x, dictionary, target=TARGET)
    assert (read.run_id, read.layer, read.target, local.target) == (4, LAYER, TARGET, TARGET)
    np.testing.assert_array_equal(read.coefficients, local.coefficients.detach().float().numpy())
    np.testing.assert_array_equal(read.relevance, local.relevance.detach().float().numpy())
    np.testing.assert_array_equal(read.grid, local.maps.detach().float().numpy())
    assert read.maps.shape == (4, *x.shape[-2:])

    concept = int(read.coefficients.argmax())
    found = engine.call("concepts", ConceptsRequest("map", folder, DEMO, "sample:star", read.target, concept,
                                                    run_id=4))
    assert (found.run_id, found.concept, found.target, found.why) == (4, concept, read.target, "")
    np.testing.assert_array_equal(found.map, concept_relevance_map(loaded, x, dictionary, concept, read.target)
                                  .detach().float().numpy())

    page = engine.call("concepts", ConceptsRequest("page", folder, DEMO, concept=concept))
    with Image.open(page_path(folder, concept)) as image:
        np.testing.assert_array_equal(page.rgb, np.asarray(image.convert("RGB")))
    assert page.rgb.dtype == np.uint8 and page.why == ""


def test_another_models_read_is_let_go_and_a_dictionary_that_is_not_there_fails_in_one_line(learned, engine,
                                                                                            served):
    request, _events, _here = learned
    other = ModelRequest("demo", seed=7)
    read = engine.call("concepts", ConceptsRequest("read", request.out_dir, other, "sample:star", run_id=5))
    assert isinstance(read, Failure) and read.cancelled and read.run_id == 5
    missing = served.root / "no-concepts"
    missing.mkdir()
    with pytest.raises(EngineError) as caught:
        engine.call("concepts", ConceptsRequest("open", str(missing), DEMO, run_id=6))
    assert "\n" not in str(caught.value) and caught.value.failure.what == "concepts"


@pytest.mark.parametrize("make", [
    lambda root, outside: ConceptsRequest("open", str(outside), DEMO),
    lambda root, outside: ConceptsRequest("read", str(root / "concepts"), DEMO, str(outside / "x.png")),
    lambda root, outside: BuildConceptsRequest(DEMO, str(outside), LAYER, 4, "nmf", str(root / "c2")),
    lambda root, outside: BuildConceptsRequest(DEMO, str(root / "images"), LAYER, 4, "nmf", str(outside / "c")),
], ids=["open", "read's input", "build's images", "build's output"])
def test_folders_outside_the_data_root_are_refused(make, engine, served, tmp_path):
    with pytest.raises(EngineError) as caught:
        engine.call("concepts" if isinstance(make(served.root, tmp_path), ConceptsRequest) else "learn",
                    make(served.root, tmp_path))
    said = str(caught.value)
    assert "outside this server's data root" in said and "\n" not in said
    assert not (tmp_path / "c").exists()


def test_a_frame_that_is_not_an_image_is_refused(engine, learned):
    request, _events, _here = learned
    with pytest.raises(EngineError, match="A video frame is an"):
        engine.call("concepts", ConceptsRequest("read", request.out_dir, DEMO, "clip@frame 1",
                                                frame=np.zeros((4, 4), np.float64)))


def test_a_build_cancelled_on_the_engine_ends_cancelled_and_the_same_request_resumes(engine, served):
    from inspector.core.concepts import load_dictionary

    request = BuildConceptsRequest(DEMO, str(served.root / "images"), LAYER, 4, "sae", str(served.root / "sae"),
                                   sparsity=2)
    key = engine.send("learn", request)
    seen = []
    deadline = time.monotonic() + 120
    for event in engine.events(key, timeout=120):
        seen.append(event)
        if event.kind == "progress" and len(seen) == 2:  # the build runs: stop it
            assert engine.cancel(key)
        assert time.monotonic() < deadline
    assert seen[-1].kind == "cancelled", [e.kind for e in seen]
    assert (served.root / "sae" / "concepts.partial.json").is_file()  # its state: the next build goes on from it
    assert not (served.root / "sae" / "dictionary.safetensors").exists()
    again = list(engine.request("learn", request, timeout=240))
    assert again[-1].kind == "result", [e.kind for e in again]
    assert load_dictionary(request.out_dir).method == "sae"


def test_the_catalogue_is_the_in_process_workers(engine):
    from inspector.core.sources.timm_models import catalogue
    from inspector.core.sources.torchvision_models import torchvision_names

    names = engine.call("catalogue", None)
    assert names == list(torchvision_names()) + list(catalogue())
    assert "resnet18" in names
