"""Issue 53 item 4: the Concepts view's reads in one place (`core.concepts.reading.ConceptReader`), used by the app's
worker and by a server alike. Over a Workbench holding the demo: opening a dictionary gives its record, reading an
image gives read_concepts' bars and maps (upsampled to the input), a concept's map is concept_relevance_map's, a
page is the PNG's pixels; what cannot be made says why in its record (another model held, no class, no page); a
dictionary rewritten is read again."""

from __future__ import annotations

import os

import numpy as np
import pytest

from inspector.core.records.concepts import ConceptsRequest
from inspector.core.records.failure import Failure
from inspector.core.records.requests import ModelRequest

DEMO = ModelRequest("demo")


@pytest.fixture(scope="module")
def learned(tmp_path_factory):
    from inspector.core import load_model
    from inspector.core.concepts import learn_concepts
    from inspector.demo.shapes import render

    root = tmp_path_factory.mktemp("reading")
    data = root / "data"
    data.mkdir()
    rng = np.random.default_rng(0)
    for i in range(8):
        render(i, rng).save(data / f"{i:02d}.png")
    learn_concepts(load_model("demo"), data, "relu3", root / "c", k=4, epochs=2, top=2)
    return root / "c"


@pytest.fixture(scope="module")
def bench():
    from inspector.core.workbench import Workbench

    bench = Workbench()
    bench.load(DEMO)
    return bench


def test_open_read_map_and_page_are_the_concepts_own(learned, bench):
    from PIL import Image

    from inspector.core.concepts import load_dictionary, read_record
    from inspector.core.concepts.on_image import concept_relevance_map, read_concepts
    from inspector.core.concepts.reading import ConceptReader, page_picture, upsampled
    from inspector.core.concepts.store import page_path

    folder = str(learned)
    reader = ConceptReader()
    opened = reader.open(ConceptsRequest("open", folder, DEMO), bench)
    assert (opened.folder, opened.layer, opened.k, opened.model) == (folder, "relu3", 4, "demo")
    assert opened.record == read_record(folder)

    read = reader.read(ConceptsRequest("read", folder, DEMO, "sample:star", 3, run_id=7), bench)
    x = bench.input_tensor("sample:star")
    dictionary = load_dictionary(folder)
    here = read_concepts(bench.loaded, x, dictionary, target=3)
    assert (read.run_id, read.layer, read.target) == (7, "relu3", 3)
    np.testing.assert_array_equal(read.coefficients, here.coefficients.detach().numpy())
    np.testing.assert_array_equal(read.relevance, here.relevance.detach().numpy())
    np.testing.assert_array_equal(read.grid, here.maps.detach().numpy())
    np.testing.assert_array_equal(read.maps, upsampled(here.maps.detach().numpy(), tuple(x.shape[-2:])))
    assert read.maps.shape == (4, *x.shape[-2:])

    concept = int(read.coefficients.argmax())
    found = reader.map(ConceptsRequest("map", folder, DEMO, "sample:star", concept=concept, run_id=7), bench, 3)
    assert (found.run_id, found.concept, found.target, found.why) == (7, concept, 3, "")
    np.testing.assert_array_equal(found.map, concept_relevance_map(bench.loaded, x, dictionary, concept, 3)
                                  .detach().numpy())

    page = page_picture(folder, concept)
    with Image.open(page_path(folder, concept)) as image:
        np.testing.assert_array_equal(page.rgb, np.asarray(image.convert("RGB")))
    assert page.rgb.dtype == np.uint8 and (page.folder, page.concept, page.why) == (folder, concept, "")


def test_what_cannot_be_made_says_why_and_a_rewritten_dictionary_is_read_again(learned, bench, tmp_path):
    import shutil

    from inspector.core.concepts.reading import (
        ANOTHER_MODEL,
        ConceptReader,
        page_picture,
    )

    folder = tmp_path / "c"
    shutil.copytree(learned, folder)
    reader = ConceptReader()
    other = ModelRequest("demo", seed=7)
    read = reader.read(ConceptsRequest("read", str(folder), other, "sample:star", run_id=5), bench)
    assert isinstance(read, Failure) and read.cancelled and (read.run_id, read.message) == (5, ANOTHER_MODEL)
    assert reader.map(ConceptsRequest("map", str(folder), other, "sample:star", 3, 0), bench).why == ANOTHER_MODEL
    unclassed = reader.map(ConceptsRequest("map", str(folder), DEMO, "sample:star", None, 0), bench)
    assert unclassed.map is None and unclassed.why == "No class to take the relevance for."
    broken = reader.map(ConceptsRequest("map", str(folder), DEMO, "sample:star", 3, 99), bench)
    assert broken.map is None and broken.why and "\n" not in broken.why

    first = reader.dictionary(str(folder))
    assert reader.dictionary(str(folder)) is first  # kept while its file stays the same
    path = folder / "dictionary.safetensors"
    stamp = path.stat().st_mtime_ns
    os.utime(path, ns=(stamp + 10**9, stamp + 10**9))
    assert reader.dictionary(str(folder)) is not first

    (folder / "pages" / "concept_001.png").unlink()
    gone = page_picture(str(folder), 1)
    assert gone.rgb is None and gone.why.startswith("No page at ") and "\n" not in gone.why
