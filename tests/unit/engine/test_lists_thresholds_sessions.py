"""Issue 52 item 6, the API: a 0-d array or tensor where a list is expected (np.array(3) is iterable by its type,
not by its value: iterating it raised TypeError), compare_edits' and compare_models' threshold and edits, and a
Session whose fields are of the wrong kind given to save_session (TypeError from its to_dict, or from JSON) are
each one line, an InspectorError, and save_session writes nothing. The contract walk tries them all
(test_contract_walk); here the exact words, worked out from the rule each message states."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

from inspector.core.common.errors import ArgumentTypeError, MismatchError, SpecError

ZERO_D = [np.array(3), torch.tensor(3)]


@pytest.fixture(scope="module")
def toy():
    from inspector.core import load_input, load_model, record_graph

    model = load_model("inspector.demo.toy:ToyMLP")
    x = load_input("sample:toy_ones", model.preprocess, model.input_shape)
    return model, x, record_graph(model, x)


@pytest.mark.parametrize("value", ZERO_D, ids=["array", "tensor"])
def test_a_0d_array_or_tensor_is_not_a_list(toy, value):
    from inspector.core import RunSpec, attribute, capture

    model, x, _ = toy
    shown = repr(value)
    for call, words in [
        (lambda: capture(model, x, layers=value), f"layers must be text like 'conv1,layer4.*' or a list of such "
                                                  f"names, not {shown}."),
        (lambda: capture(model, x, "fc1", sites=value), f"sites must be text like 'output,grad_output' or a list "
                                                        f"of such names, not {shown}."),
        (lambda: RunSpec.make(["fc1"], edits=value), f"edits must be a list, e.g. "
                                                     f"['relu1:grad_input=clamp(min=0)'], not {shown}."),
        (lambda: RunSpec.make(["fc1"], stats_now=value), f"stats_now must be text like 'conv1,fc' or a list of "
                                                         f"such names, not {shown}."),
        (lambda: attribute(model, x, "saliency", metrics=value), f"metrics must be text like 'deletion,insertion' "
                                                                 f"or a list of such names, not {shown}."),
    ]:
        with pytest.raises(ArgumentTypeError) as error:
            call()
        assert str(error.value) == words


@pytest.mark.parametrize("value", ["0.1", None, [0.1], np.zeros(2), torch.zeros(2, 3), torch.tensor(0.1), True])
def test_a_threshold_of_the_wrong_kind_is_one_line(toy, value):
    from inspector.core import compare_edits, compare_models

    model, x, graph = toy
    with pytest.raises(ArgumentTypeError) as error:
        compare_edits(model, x, graph, ["fc1:output=scale(2)"], threshold=value)
    assert str(error.value) == f"The threshold must be a number >= 0, not {' '.join(repr(value).split())}."
    with pytest.raises(ArgumentTypeError):
        compare_models(model, model, x, graph, threshold=value)


def test_a_threshold_below_0_or_not_finite_stays_a_mismatch(toy):
    from inspector.core import compare_edits

    model, x, graph = toy
    for value, shown in ((-1, "-1"), (float("nan"), "nan"), (np.float32(-0.5), "-0.5")):
        with pytest.raises(MismatchError) as error:
            compare_edits(model, x, graph, [], threshold=value)
        assert str(error.value) == f"The threshold must be a number >= 0, got {shown}."


@pytest.mark.parametrize("value", [5, 2.5, object(), np.array(3), torch.tensor(3), np.int64(5)],
                         ids=["5", "2.5", "object()", "np.array(3)", "torch.tensor(3)", "np.int64(5)"])  # one id everywhere
def test_edits_that_are_not_a_list_are_one_line(toy, value):
    from inspector.core import compare_edits, compare_models, graph_values

    model, x, graph = toy
    words = f"edits must be a list, e.g. ['layer1:output=scale(2)'], not {value!r}."
    for call in (lambda: compare_edits(model, x, graph, value), lambda: compare_models(model, model, x, graph,
                                                                                         edits=value),
                 lambda: graph_values(model, x, graph, edits=value)):
        with pytest.raises(ArgumentTypeError) as error:
            call()
        assert str(error.value) == words


def test_a_list_of_edits_still_compares(toy):
    """The check takes what it took: text, an Edit, a list or tuple of them, and None (no edit)."""
    from inspector.core import compare_edits, parse_edit

    model, x, graph = toy
    for edits in ("fc1:output=zero()", parse_edit("fc1:output=zero()"), ("fc1:output=zero()",)):
        assert compare_edits(model, x, graph, edits).change["fc1"] == pytest.approx(1.0)  # all of fc1 zeroed


@pytest.mark.parametrize("fields, words", [
    (dict(layers=5), "save_session(): session.layers must be a list, e.g. ['conv1'], not 5."),
    (dict(layers="conv1"), "save_session(): session.layers must be a list, e.g. ['conv1'], not 'conv1'."),
    (dict(sites=np.array(3)), "save_session(): session.sites must be a list, e.g. ['output'], not array(3)."),
    (dict(edits=torch.tensor(3)), "save_session(): session.edits must be a list, e.g. ['conv1:output=zero()'], "
                                  "not tensor(3)."),
    (dict(sites=(np.zeros((2, 2)),)), "save_session(): session.sites must be text like 'output', not "
                                      "array([[0., 0.], [0., 0.]])."),
    (dict(edits=(5,)), "save_session(): session.edits must be Edits or text like 'conv1:output=zero()', not 5."),
    (dict(edits=("conv1:output",)), "Cannot read edit 'conv1:output'. Write KEY=OP(ARGS), e.g. "
                                    "relu1:grad_input=clamp(min=0)."),
    (dict(extra=np.zeros(2)), "save_session(): session.extra must be a dict, not array([0., 0.])."),
    (dict(attribution=5), "save_session(): session.attribution must be a dict or None, not 5."),
    (dict(model=b"b"), "save_session(): session is not a valid session: model.source must be text, not b'b'."),
    (dict(sites=("nope",)), "save_session(): session is not a valid session: sites[0] must be one of input, "
                            "output, grad_output, grad_input, attention, params, not \"nope\"."),
    (dict(input="a\x00b"), "save_session(): session is not a valid session: input must not hold a NUL byte (\\x00)."),
    (dict(seed=-1), "The session's model seed must be a whole number from 0 to 4294967295, not -1."),
    (dict(extra={"a": object()}), "save_session(): session cannot be written as JSON: Object of type object is "
                                  "not JSON serializable."),
])
def test_a_session_of_the_wrong_kind_is_one_line_and_nothing_is_written(tmp_path, fields, words):
    from inspector.core.session.file import Session, save_session

    with pytest.raises(SpecError) as error:
        save_session(Session(**fields), tmp_path / "s.inspector.json")
    assert str(error.value) == words
    assert os.listdir(tmp_path) == []


def test_a_session_with_lists_and_text_edits_saves_and_loads(tmp_path):
    """Lists where the record holds tuples are taken as before; an edit as text (as a session file holds it) is
    saved as written and read back as that Edit (it was an AttributeError: a str has no .key)."""
    from inspector.core import parse_edit
    from inspector.core.session.file import Session, load_session, save_session

    session = Session(layers=["conv1"], sites=["output"],
                      edits=[parse_edit("conv1:output=zero()"), "conv1:output=scale(2)"],
                      seed=3, extra={"note": "x"})
    loaded = load_session(save_session(session, tmp_path / "s.inspector.json"))
    assert (loaded.layers, loaded.sites, [str(e) for e in loaded.edits], loaded.seed, loaded.extra) == \
           (("conv1",), ("output",), ["conv1:output=zero()", "conv1:output=scale(k=2)"], 3, {"note": "x"})
