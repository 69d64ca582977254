"""The public API (inspector.core's exports, docs/reference/python-api.md) raises only InspectorError
subclasses for user mistakes, with the CLI's words."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import inspector.core as core
from inspector.core import InspectorError, SpecError

TOY = "inspector.demo.toy:ToyMLP"


@pytest.fixture(scope="module")
def toy():
    return core.load_model(TOY)


@pytest.fixture(scope="module")
def demo():
    return core.load_model("demo")


@pytest.fixture(scope="module")
def star(demo):
    return core.load_input("sample:star", demo.preprocess, demo.input_shape)


@pytest.mark.parametrize("target, words", [
    (-1, "Class index must be >= 0, got -1."),
    (-9, "Class index must be >= 0, got -9."),
    (2.5, "Unknown target 2.5."),
    (True, "Unknown target True."),
    (False, "Unknown target False."),
    (8, "Class index 8 is out of range: the model has 8 outputs."),
    (10**30, "is out of range: the model has 8 outputs."),
    ("-1", "Class index must be >= 0, got -1."),
    (np.int64(-2), "Class index must be >= 0, got -2."),
    ([3], "Unknown target [3]."),
    (np.zeros(2), "Unknown target array([0., 0.])."),
])
def test_capture_targets_give_the_clis_words(demo, star, target, words):
    with pytest.raises(SpecError) as info:
        core.capture(demo, star, "fc", "output", target=target)
    assert words in str(info.value)


def test_a_numpy_integer_target_is_a_class_index(demo, star):
    result = core.capture(demo, star, "fc", "output", target=np.int64(5))
    assert result.target == "5" and result.target_index == 5


BAD_CALLS = {
    # name: (function, args, kwargs)
    "load_model(5)": (lambda: core.load_model(5)),
    "load_model(None)": (lambda: core.load_model(None)),
    "load_model('')": (lambda: core.load_model("")),
    "load_model weights=5": (lambda: core.load_model("demo", weights=5)),
    "load_model seed='x'": (lambda: core.load_model(TOY, seed="x")),
    "load_model seed=-1": (lambda: core.load_model(TOY, seed=-1)),
    "load_input(5)": (lambda: core.load_input(5)),
    "load_input(None)": (lambda: core.load_input(None)),
    "load_input('')": (lambda: core.load_input("")),
    "load_input sample:nope": (lambda: core.load_input("sample:nope")),
    "parse_edit(5)": (lambda: core.parse_edit(5)),
    "parse_edit(None)": (lambda: core.parse_edit(None)),
    "parse_key(5)": (lambda: core.parse_key(5)),
    "parse_key(None)": (lambda: core.parse_key(None)),
    "parse_target(2.5)": (lambda: core.parse_target(2.5)),
    "resolve_device(5)": (lambda: core.resolve_device(5)),
    "resolve_device('gpu')": (lambda: core.resolve_device("gpu")),
    "resolve_device('cuda:x')": (lambda: core.resolve_device("cuda:x")),
    "RunSpec.make sites=5": (lambda: core.RunSpec.make(["fc1"], sites=5)),
    "RunSpec.make sites=['nope']": (lambda: core.RunSpec.make(["fc1"], sites=["nope"])),
    "RunSpec.make edits=[5]": (lambda: core.RunSpec.make(["fc1"], edits=[5])),
    "RunSpec.make edits='fc1:output=zero()'": (lambda: core.RunSpec.make(["fc1"], edits="fc1:output=zero()")),
    "RunSpec.make layers=5": (lambda: core.RunSpec.make(5)),
    "RunSpec.make layers=[5]": (lambda: core.RunSpec.make([5])),
    "load_pair(5)": (lambda: core.load_pair(5, None, against="x.safetensors")),
    "load_pair against=5": (lambda: core.load_pair("demo", None, against=5)),
    "load_pair without a second model": (lambda: core.load_pair("demo", None)),
    "diff_models(None, None)": (lambda: core.diff_models(None, None, torch.zeros(1, 3))),
    "attribute method=lime": (lambda: core.attribute(core.load_model("demo"), torch.zeros(1, 3, 64, 64), "lime")),
    "attribute metrics=roar": (lambda: core.attribute(core.load_model("demo"), torch.zeros(1, 3, 64, 64),
                                                      "saliency", metrics=["roar"])),
    "attribute protocol=rise": (lambda: core.attribute(core.load_model("demo"), torch.zeros(1, 3, 64, 64),
                                                       "saliency", metrics=["deletion"], protocol="rise")),
    "attribute rise2018 with steps": (lambda: core.attribute(core.load_model("demo"), torch.zeros(1, 3, 64, 64),
                                                             "saliency", metrics=["deletion"], metric_steps=10,
                                                             protocol="rise2018")),
    "attribute road_noise=-1": (lambda: core.attribute(core.load_model("demo"), torch.zeros(1, 3, 64, 64),
                                                       "saliency", metrics=["road"], road_noise=-1.0)),
    "attribute road_percentages=[150]": (lambda: core.attribute(core.load_model("demo"), torch.zeros(1, 3, 64, 64),
                                                                "saliency", metrics=["road"],
                                                                road_percentages=[150])),
    "attribute window too big": (lambda: core.attribute(core.load_model("demo"), torch.zeros(1, 3, 64, 64),
                                                        "occlusion", options={"window": 99})),
    "record_graph(5, x)": (lambda: core.record_graph(5, torch.zeros(1, 3, 64, 64))),
    "record_graph x=None": (lambda: core.record_graph(core.load_model("demo"), None)),
    "record_graph leaves=['nope']": (lambda: core.record_graph(core.load_model("demo"), torch.zeros(1, 3, 64, 64),
                                                               leaves=["nope"])),
    "graph_values graph=5": (lambda: core.graph_values(core.load_model("demo"), torch.zeros(1, 3, 64, 64), 5)),
    "compare_edits edits=[5]": (lambda: core.compare_edits(core.load_model("demo"), torch.zeros(1, 3, 64, 64),
                                                           core.Graph((), ()), [5])),
    "compare_models second=None": (lambda: core.compare_models(core.load_model("demo"), None,
                                                               torch.zeros(1, 3, 64, 64), core.Graph((), ()))),
    "GraphLayout(5)": (lambda: core.GraphLayout(5)),
    "each_box on a classifier": (lambda: core.each_box(core.load_model("demo"), torch.zeros(1, 3, 64, 64))),
    "each_box metrics=roar": (lambda: core.each_box(core.load_model("demo-detector"), torch.zeros(1, 3, 64, 64),
                                                    "saliency", metrics=["roar"])),
    "each_box method=eigencam": (lambda: core.each_box(core.load_model("demo-detector"), torch.zeros(1, 3, 64, 64),
                                                      "eigencam")),
    "diff_models inputs=list": (lambda: core.diff_models(core.load_model(TOY, seed=1), core.load_model(TOY, seed=2),
                                                          [[1.0, 1.0, 1.0]])),
    "diff_models layers=[5]": (lambda: core.diff_models(core.load_model(TOY, seed=1), core.load_model(TOY, seed=2),
                                                         torch.ones(1, 3), layers=[5])),
}


def _toy_calls(toy):
    x = core.load_input("sample:toy_ones")
    return {
        "capture inputs=None": lambda: core.capture(toy, None),
        "capture inputs=list": lambda: core.capture(toy, [[1.0, 1.0, 1.0]]),
        "capture inputs=ndarray": lambda: core.capture(toy, np.ones((1, 3), np.float32)),
        "capture inputs wrong shape": lambda: core.capture(toy, torch.ones(1, 5)),
        "capture inputs empty": lambda: core.capture(toy, torch.ones(0, 3)),
        "capture model=module": lambda: core.capture(torch.nn.Linear(3, 1), x),
        "capture model=None": lambda: core.capture(None, x),
        "capture layers=5": lambda: core.capture(toy, x, layers=5),
        "capture layers=[5]": lambda: core.capture(toy, x, layers=[5]),
        "capture layers=None": lambda: core.capture(toy, x, layers=None),
        "capture layers=fc9": lambda: core.capture(toy, x, layers="fc9"),
        "capture sites=5": lambda: core.capture(toy, x, sites=5),
        "capture sites=None": lambda: core.capture(toy, x, sites=None),
        "capture sites=nope": lambda: core.capture(toy, x, sites="nope"),
        "capture edits=str": lambda: core.capture(toy, x, edits="relu1:output=zero()"),
        "capture edits=[5]": lambda: core.capture(toy, x, edits=[5]),
        "capture edits=None": lambda: core.capture(toy, x, edits=None),
        "capture edits unknown layer": lambda: core.capture(toy, x, edits=["fc9:output=zero()"]),
        "capture target=2.5": lambda: core.capture(toy, x, target=2.5),
        "capture target 3 of one output": lambda: core.capture(toy, x, target=3),
        "capture device=gpu": lambda: core.capture(toy, x, device="gpu"),
        "capture device=5": lambda: core.capture(toy, x, device=5),
        "capture input_grad='yes'": lambda: core.capture(toy, x, input_grad="yes"),
        "capture cancel=True": lambda: core.capture(toy, x, cancel=True),
        "capture sharing=5": lambda: core.capture(toy, x, sharing=5),
        "layer_tree(None)": lambda: core.layer_tree(None),
        "layer_tree example wrong shape": lambda: core.layer_tree(toy, torch.ones(1, 7)),
        "layer_tree example=5": lambda: core.layer_tree(toy, 5),
        "build_layer_tree(None)": lambda: core.build_layer_tree(None),
        "build_layer_tree example wrong shape": lambda: core.build_layer_tree(toy.module, torch.ones(1, 7)),
        "run inputs=None": lambda: core.run(toy.module, None, core.RunSpec.make(["fc1"])),
        "run spec=None": lambda: core.run(toy.module, x, None),
        "run spec layers fc9": lambda: core.run(toy.module, x, core.RunSpec.make(["fc9"])),
        "run model=None": lambda: core.run(None, x, core.RunSpec.make(["fc1"])),
        "complete_statistics(None)": lambda: core.complete_statistics(None),
    }


@pytest.mark.parametrize("name", list(BAD_CALLS))
def test_bad_arguments_raise_inspector_errors(name):
    with pytest.raises(InspectorError) as info:
        BAD_CALLS[name]()
    assert str(info.value) and "\n" not in str(info.value)


def test_bad_arguments_to_capture_layer_tree_and_run_raise_inspector_errors(toy):
    wrong = {}
    for name, call in _toy_calls(toy).items():
        try:
            call()
        except InspectorError as exc:
            assert str(exc), name
            continue
        except Exception as exc:  # noqa: BLE001 - the point: name every call that raises something else
            wrong[name] = f"{type(exc).__name__}: {exc}"
            continue
        wrong[name] = "no error"
    assert wrong == {}


def test_a_key_a_result_lacks_is_an_inspector_error_and_a_key_error(toy):
    from inspector.core.common.errors import UnknownKeyError

    result = core.capture(toy, core.load_input("sample:toy_ones"), "fc1", "output", target="output")
    with pytest.raises(UnknownKeyError) as info:
        result["fc9:output"]
    assert isinstance(info.value, KeyError) and isinstance(info.value, InspectorError)
    assert str(info.value) == "No capture 'fc9:output' in this result; its keys: input, output, fc1:output."
    with pytest.raises(UnknownKeyError, match="No layer named 'fc9'"):
        core.layer_tree(toy).get("fc9")


def test_hooks_are_removed_after_bad_calls(toy):
    for call in _toy_calls(toy).values():
        try:
            call()
        except InspectorError:
            pass
    for module in toy.module.modules():
        assert not module._forward_hooks and not module._forward_pre_hooks and not module._backward_hooks


def test_every_exported_function_is_walked():
    walked = " ".join(BAD_CALLS) + " capture layer_tree build_layer_tree run complete_statistics"
    functions = [n for n in core.__all__ if callable(getattr(core, n)) and n[0].islower()]
    harmless = {"available_devices", "list_samples", "torchvision_classifiers"}  # take no arguments
    assert sorted(n for n in functions if n not in walked and n not in harmless) == []


# -- every argument of the checked public functions, given the wrong kind -------------------------------
WRONG = [None, 5, 2.5, True, "text", b"bytes", [5], {"a": 1}, object(), np.zeros(2), torch.zeros(1)]


def _checked_calls(tmp_path_factory):
    """(function, valid arguments) for the public functions checked at the boundary (the documented API,
    the atlas API included): each call works as given."""
    from PIL import Image

    from inspector.core.atlas import read_atlas, run_atlas, thumbnail_path
    from inspector.core.atlas.pictures import open_atlas, top_pictures

    demo = core.load_model("demo")
    data = tmp_path_factory.mktemp("contract-data")
    for i in range(2):
        Image.fromarray(np.full((32, 32, 3), 90 * i, np.uint8)).save(data / f"{i}.png")
    out = tmp_path_factory.mktemp("contract-atlas")
    run_atlas(demo, str(data), "conv1", 1, str(out), batch=2)
    opened = open_atlas(str(out))
    x = core.load_input("sample:star", demo.preprocess, demo.input_shape)
    detector = core.load_model("demo-detector")
    scene = core.load_input("sample:detect_four_shapes", detector.preprocess, detector.input_shape)
    return {
        "load_input": (core.load_input, dict(source="sample:star", preprocess=demo.preprocess,
                                             input_shape=demo.input_shape)),
        "diff_models": (core.diff_models, dict(first=demo, second=demo, inputs=x, layers="conv1",
                                               sites="output", target=None, device="cpu", threshold=1e-3,
                                               edits=(), second_edits=None, input_grad=False, cancel=None,
                                               stats=False)),
        "run_atlas": (run_atlas, dict(loaded=demo, data_dir=str(data), layers="conv1", top=1, out_dir=str(out),
                                      batch=2, device="cpu", progress=None, cancel=None, ray_address=None,
                                      use_ray=False, thumbnails=True, restart=False)),
        "read_atlas": (read_atlas, dict(out_dir=str(out))),
        "thumbnail_path": (thumbnail_path, dict(out_dir=str(out), layer="conv1", channel=0, rank=0)),
        "open_atlas": (open_atlas, dict(out_dir=str(out))),
        "top_pictures": (top_pictures, dict(opened=opened, layer="conv1", channel=0)),
        "attribute": (core.attribute, dict(model=demo, inputs=x, method="occlusion", target=None, layer=None,
                                           options={"window": 16, "stride": 16}, metrics=("deletion",),
                                           metric_steps=2, device="cpu")),
        "each_box": (core.each_box, dict(model=detector, inputs=scene, method="saliency", layer=None, options=None,
                                         min_score=None, most=2, metrics=("deletion",), metric_steps=2,
                                         device="cpu")),
    }


@pytest.fixture(scope="module")
def checked_calls(tmp_path_factory):
    return _checked_calls(tmp_path_factory)


def test_every_argument_of_the_wrong_kind_is_an_inspector_error_and_a_type_error(checked_calls):
    """Each argument in turn gets every value of WRONG that its annotation does not allow: the call
    raises an ArgumentTypeError naming the function and the argument, before any work."""
    import typing

    from typeguard import TypeCheckError, check_type

    from inspector.core.common.errors import ArgumentTypeError

    tried = 0
    for name, (function, good) in checked_calls.items():
        function(**good)  # the valid call works
        hints = typing.get_type_hints(function)
        for argument in good:
            for value in WRONG:
                try:
                    check_type(value, hints[argument])
                    continue  # this value is of an allowed kind
                except TypeCheckError:
                    pass
                with pytest.raises(ArgumentTypeError) as error:
                    function(**{**good, argument: value})
                assert isinstance(error.value, (InspectorError, TypeError))
                assert str(error.value).startswith(f"{name}(): {argument} must be "), str(error.value)
                tried += 1
    assert tried > 250
