"""`network-inspector bench --contract`: the promise of docs/reference/python-api.md that every mistake in a call to the
Python API is an InspectorError, tried wholesale.

Every exported function of `inspector.core`, `RunSpec.make`, the session files' `load_session` and
`save_session` (and a `Session` built with each field wrong, then saved), `per_box.tiled`, the atlas API and the
concepts API (learn_concepts, load_dictionary, read_record, page_path, nnls, a Dictionary's coefficients and
reconstruct, read_concepts, concept_relevance_map) is called with valid arguments (every argument named), then with each argument in turn replaced by each of the 28
WRONG_VALUES a tester uses (other kinds, empty, negative, NaN, infinite, huge, arrays and tensors of the wrong
shape, a number as a 0-d array or tensor, a missing path, bytes, a NUL in text, a 300-character name); a call that
raises anything but an InspectorError breaks the contract and is listed.
The walk runs in a temporary folder it removes (a relative `out_dir='x'` lands there), so it writes nothing
anywhere else.
"""

from __future__ import annotations

import inspect
import os
import shutil
import tempfile
import warnings
from pathlib import Path

#: The wrong values, as text (evaluated in the walk's folder: MISSING is a path that is not there).
WRONG_VALUES = ("None", "''", "-1", "0", "5", "2.5", "float('nan')", "float('inf')", "10**20", "True", "'x'",
                "b'b'", "[]", "[5]", "{}", "{'a': 1}", "object()", "np.zeros(2)", "np.zeros((1, 3, 7, 7))",
                "torch.zeros(1)", "torch.zeros(2, 3)", "torch.zeros(1, 3, 7, 7)", "MISSING", "'a\\x00b'",
                "'n' * 300", "-10**20", "np.array(3)", "torch.tensor(3)")
MISSING = "no-such-folder/no-such-file.png"


def _calls(folder: Path) -> dict:
    """name: (function, valid arguments, every one named), made in `folder`."""
    import threading

    import numpy as np
    import torch
    from PIL import Image

    import inspector.core as core
    from inspector.core.atlas import read_atlas, run_atlas, thumbnail_path
    from inspector.core.atlas.pictures import open_atlas, top_pictures
    from inspector.core.attribution.per_box import tiled
    from inspector.core.concepts import (
        concept_relevance_map,
        learn_concepts,
        load_dictionary,
        nnls,
        page_path,
        read_concepts,
        read_record,
    )
    from inspector.core.session.file import Session, load_session, save_session
    from inspector.core.sources.sharing import Sharing

    demo = core.load_model("demo")
    x = core.load_input("sample:star", demo.preprocess, demo.input_shape)
    detector = core.load_model("demo-detector")
    scene = core.load_input("sample:detect_four_shapes", detector.preprocess, detector.input_shape)
    data = folder / "data"
    data.mkdir()
    for i in range(2):
        Image.fromarray(np.full((32, 32, 3), 90 * i, np.uint8)).save(data / f"{i}.png")
    atlas = str(folder / "atlas")
    run_atlas(demo, str(data), "conv1", 1, atlas, batch=2)
    opened = open_atlas(atlas)
    result = core.capture(demo, x, "conv1", "output")
    session = save_session(Session(input="sample:star"), folder / "s.inspector.json")
    toy = core.load_model("inspector.demo.toy:ToyMLP")  # the graph's calls: a tiny model keeps them fast
    ones = core.load_input("sample:toy_ones", toy.preprocess, toy.input_shape)
    graph = core.record_graph(toy, ones)
    boxes = core.each_box(detector, scene, "saliency", most=1)
    picture = np.zeros((*scene.shape[-2:], 3), np.uint8)
    spec = core.RunSpec.make(["conv1"])
    concepts = str(folder / "concepts")
    learned = dict(loaded=demo, data_dir=str(data), layer="relu3", out_dir=concepts, method="nmf", k=2, sparsity=None,
                   seed=0, held_out=0.5, epochs=1, max_memory_mb=64, top=1, batch=2, device="cpu", progress=None,
                   cancel=None, restart=False, pictures=False, use_ray=False, ray_address=None)
    learn_concepts(**learned)
    dictionary = load_dictionary(concepts)
    samples = torch.ones(3, dictionary.channels)
    return {
        "capture": (core.capture, dict(model=demo, inputs=x, layers="conv1", sites="output", edits=(), target=None,
                                       device="cpu", input_grad=False, cancel=None, sharing=None)),
        "layer_tree": (core.layer_tree, dict(model=demo, example=None)),
        "load_model": (core.load_model, dict(source="demo", weights=None, trust=False, progress=None, seed=None)),
        "load_input": (core.load_input, dict(source="sample:star", preprocess=demo.preprocess,
                                             input_shape=demo.input_shape)),
        "parse_edit": (core.parse_edit, dict(text="conv1:output=zero()")),
        "parse_key": (core.parse_key, dict(text="conv1:output")),
        "parse_target": (core.parse_target, dict(text="top1")),
        "resolve_device": (core.resolve_device, dict(spec="cpu")),
        "RunSpec.make": (core.RunSpec.make, dict(layers=["conv1"], sites="output", edits=(), target=None,
                                                 input_grad=False, keep="full", stats_now=None)),
        "run": (core.run, dict(model=demo.module, inputs=x, spec=spec, labels=None, cancel=threading.Event(),
                               sharing=Sharing(), phase=None)),
        "build_layer_tree": (core.build_layer_tree, dict(model=demo.module, example=None)),
        "complete_statistics": (core.complete_statistics, dict(result=result, cancel=None)),
        "diff_models": (core.diff_models, dict(first=demo, second=demo, inputs=x, layers="conv1", sites="output",
                                               target=None, device="cpu", threshold=1e-3, edits=(),
                                               second_edits=None, input_grad=False, cancel=None, stats=False)),
        "load_pair": (core.load_pair, dict(source="demo", weights=None, against=None, against_model="demo",
                                           against_weights=None, trust=False, seed=None, progress=None,
                                           against_seed=None)),
        "run_atlas": (run_atlas, dict(loaded=demo, data_dir=str(data), layers="conv1", top=1, out_dir=atlas, batch=2,
                                      device="cpu", progress=None, cancel=None, ray_address=None, use_ray=False,
                                      thumbnails=False, restart=False)),
        "read_atlas": (read_atlas, dict(out_dir=atlas)),
        "thumbnail_path": (thumbnail_path, dict(out_dir=atlas, layer="conv1", channel=0, rank=0)),
        "open_atlas": (open_atlas, dict(out_dir=atlas)),
        "top_pictures": (top_pictures, dict(opened=opened, layer="conv1", channel=0)),
        "attribute": (core.attribute, dict(model=demo, inputs=x, method="saliency", target=None, layer=None,
                                           options=None, metrics=("deletion", "road"), metric_steps=2, device="cpu",
                                           protocol="inspector", road_noise=0.01, road_seed=0,
                                           road_percentages=(50,))),
        "each_box": (core.each_box, dict(model=detector, inputs=scene, method="saliency", layer=None, options=None,
                                         min_score=None, most=1, metrics=(), metric_steps=2,
                                         device="cpu", protocol="inspector", road_noise=0.01, road_seed=0,
                                         road_percentages=(50,))),
        "load_session": (load_session, dict(path=str(session), trust=False)),
        "save_session": (save_session, dict(session=Session(), path=str(folder / "saved.inspector.json"))),
        "tiled": (tiled, dict(picture=picture, maps=boxes, columns=None, scale=1)),
        "learn_concepts": (learn_concepts, learned),
        "load_dictionary": (load_dictionary, dict(folder=concepts)),
        "read_record": (read_record, dict(out_dir=concepts)),
        "page_path": (page_path, dict(out_dir=concepts, concept=0)),
        "nnls": (nnls, dict(x=samples, components=dictionary.components, tol=1e-7, steps=10)),
        "Dictionary.coefficients": (dictionary.coefficients, dict(activation=samples)),
        "Dictionary.reconstruct": (dictionary.reconstruct, dict(coefficients=torch.ones(3, dictionary.k))),
        "read_concepts": (read_concepts, dict(loaded=demo, x=x, dictionary=dictionary, target=None, device="cpu",
                                              layer=None)),
        "concept_relevance_map": (concept_relevance_map, dict(loaded=demo, x=x, dictionary=dictionary, concept=0,
                                                              target=0, device="cpu", layer=None)),
        "Session": (_saved_session(folder / "fields.inspector.json"),
                    dict(model="demo", weights=None, input="sample:star", device="cpu", target="auto",
                         layers=("conv1",), sites=("output",), edits=(core.parse_edit("conv1:output=zero()"),),
                         input_grad=False, extra={}, seed=None, attribution=None)),
        "record_graph": (core.record_graph, dict(model=toy, x=ones, leaves=None, cancel=None)),
        "graph_values": (core.graph_values, dict(model=toy, x=ones, graph=graph, target=None, edits=None,
                                                 cancel=None)),
        "compare_edits": (core.compare_edits, dict(model=toy, x=ones, graph=graph, edits=["fc1:output=scale(2)"],
                                                   target=None, threshold=1e-3, memory_bytes=1 << 20, cancel=None)),
        "compare_models": (core.compare_models, dict(first=toy, second=toy, x=ones, graph=graph, edits=None,
                                                     target=None, threshold=1e-3, memory_bytes=1 << 20,
                                                     cancel=None)),
    }


def _saved_session(path: Path):
    """save_session(Session(FIELDS), path), taking the Session's fields: a session built with a wrong one."""
    from inspector.core.session.file import Session, save_session

    def save(**fields):
        return save_session(Session(**fields), path)
    save.__signature__ = inspect.signature(Session)
    return save


#: Exported functions that take no argument (called once, nothing to get wrong).
NO_ARGUMENTS = ("available_devices", "list_samples", "torchvision_classifiers")


def run_contract() -> tuple[int, int, list[str]]:
    """(calls tried, calls that broke the contract, what each of those raised), in a temporary folder that
    is the current folder while the walk runs and is removed after it."""
    import numpy as np  # noqa: F401 - the WRONG_VALUES are evaluated with them
    import torch  # noqa: F401

    from inspector.core import InspectorError

    folder = Path(tempfile.mkdtemp(prefix="inspector-contract-")).resolve()
    here = os.getcwd()
    tried, broken = 0, []
    try:
        os.chdir(folder)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            calls = _calls(folder)
            for name, (function, good) in calls.items():
                taken = set(inspect.signature(function).parameters)
                if taken != set(good):  # every argument is walked
                    raise AssertionError(f"the walk of {name} misses {sorted(taken - set(good))}")
                function(**good)
                for argument in good:
                    for text in WRONG_VALUES:
                        value = eval(text, {"np": np, "torch": torch, "MISSING": MISSING})  # noqa: S307 - ours
                        tried += 1
                        try:
                            function(**{**good, argument: value})
                        except InspectorError:
                            pass
                        except Exception as exc:  # noqa: BLE001 - what the contract forbids
                            broken.append(f"{name}({argument}={text}): {type(exc).__name__}: {exc}"[:160])
    finally:
        os.chdir(here)
        shutil.rmtree(folder, ignore_errors=True)
    return tried, len(broken), broken


def main() -> int:
    tried, count, broken = run_contract()
    print(f"{count} of {tried} calls with a wrong argument raised something other than an InspectorError")
    for line in broken:
        print(f"  {line}")
    return 0 if count == 0 else 1
