"""`network-inspector bench --contract`: the README's promise that every mistake in a call to the
Python API is an InspectorError, tried wholesale.

Every exported function of `inspector.core` and the atlas API is called with valid arguments, then
with each argument in turn replaced by each value of WRONG (other kinds, empty, negative, huge); a
call that raises anything but an InspectorError breaks the contract and is listed.
"""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path

WRONG_VALUES = ("None", "5", "2.5", "True", "''", "'x'", "b'b'", "[5]", "{'a': 1}", "object()", "np.zeros(2)",
                "torch.zeros(1)", "-1", "10**20")


def _calls():
    import numpy as np
    from PIL import Image

    import inspector.core as core
    from inspector.core.atlas import read_atlas, run_atlas, thumbnail_path
    from inspector.core.atlas.pictures import open_atlas, top_pictures

    demo = core.load_model("demo")
    x = core.load_input("sample:star", demo.preprocess, demo.input_shape)
    detector = core.load_model("demo-detector")
    scene = core.load_input("sample:detect_four_shapes", detector.preprocess, detector.input_shape)
    folder = Path(tempfile.mkdtemp(prefix="inspector-contract-"))
    data = folder / "data"
    data.mkdir()
    for i in range(2):
        Image.fromarray(np.full((32, 32, 3), 90 * i, np.uint8)).save(data / f"{i}.png")
    run_atlas(demo, str(data), "conv1", 1, str(folder / "atlas"), batch=2)
    opened = open_atlas(str(folder / "atlas"))
    result = core.capture(demo, x, "conv1", "output")
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
        "run": (core.run, dict(model=demo.module, inputs=x, spec=core.RunSpec.make(["conv1"]))),
        "build_layer_tree": (core.build_layer_tree, dict(model=demo.module, example=None)),
        "complete_statistics": (core.complete_statistics, dict(result=result, cancel=None)),
        "diff_models": (core.diff_models, dict(first=demo, second=demo, inputs=x, layers="conv1", sites="output",
                                               threshold=1e-3)),
        "load_pair": (core.load_pair, dict(source="demo", weights=None, against=None, against_model="demo")),
        "run_atlas": (run_atlas, dict(loaded=demo, data_dir=str(data), layers="conv1", top=1,
                                      out_dir=str(folder / "atlas"), batch=2)),
        "read_atlas": (read_atlas, dict(out_dir=str(folder / "atlas"))),
        "thumbnail_path": (thumbnail_path, dict(out_dir=str(folder / "atlas"), layer="conv1", channel=0, rank=0)),
        "open_atlas": (open_atlas, dict(out_dir=str(folder / "atlas"))),
        "top_pictures": (top_pictures, dict(opened=opened, layer="conv1", channel=0)),
        "attribute": (core.attribute, dict(model=demo, inputs=x, method="occlusion", options={"window": 16},
                                           metrics=("deletion",), metric_steps=2)),
        "each_box": (core.each_box, dict(model=detector, inputs=scene, method="saliency", most=2,
                                         metrics=("deletion",), metric_steps=2)),
    }


def run_contract() -> tuple[int, int, list[str]]:
    """(calls tried, calls that broke the contract, what each of those raised)."""
    import numpy as np  # noqa: F401 - the WRONG_VALUES are evaluated with it
    import torch  # noqa: F401

    from inspector.core import InspectorError

    warnings.filterwarnings("ignore")
    tried, broken = 0, []
    for name, (function, good) in _calls().items():
        function(**good)
        for argument in good:
            for text in WRONG_VALUES:
                value = eval(text)  # noqa: S307 - our own fixed list of literals
                tried += 1
                try:
                    function(**{**good, argument: value})
                except InspectorError:
                    pass
                except Exception as exc:  # noqa: BLE001 - what the contract forbids
                    broken.append(f"{name}({argument}={text}): {type(exc).__name__}: {exc}"[:160])
    return tried, len(broken), broken


def main() -> int:
    tried, count, broken = run_contract()
    print(f"{count} of {tried} calls with a wrong argument raised something other than an InspectorError")
    for line in broken:
        print(f"  {line}")
    return 0 if count == 0 else 1
