"""Issue 53, item 5: only what is seen crosses. A run's result is sent with the arrays of the visible layers only;
the others keep their statistics and are named as held, and come back bit for bit when asked for."""

from __future__ import annotations

import numpy as np

from inspector.core.records.requests import ModelRequest, RunRequest
from inspector.protocol.messages import Message, from_wire, to_wire
from inspector.protocol.seen import held_arrays, layer_of, seen_only, with_arrays


def test_a_capture_belongs_to_its_layer_and_a_parameter_s_gradient_to_its_module():
    assert [layer_of(n) for n in ("conv1:output", "block.0.relu:grad_input", "fc.weight:grad", "fc:output#1")] == \
        ["conv1", "block.0.relu", "fc", "fc"]


def test_the_result_sent_holds_the_visible_layers_arrays_and_every_statistic(tmp_path):
    from inspector.core.runspec import RunSpec
    from inspector.core.workbench import Workbench

    bench = Workbench()
    layers = ("conv1", "relu1", "block.conv1", "fc")
    spec = RunSpec.make(layers, sites=("output", "grad_output", "params"))
    whole = bench.execute(RunRequest(ModelRequest("demo"), "sample:star", spec=spec)).result
    names = list(whole.captures)
    assert any(n.endswith(":grad") for n in names)  # fc.weight:grad and the like take part
    sent = from_wire(to_wire(Message("result", "r", seen_only(whole, ("relu1", "fc"))))).body

    shown = [n for n in names if n.split(":")[0] in ("relu1", "fc") or n.startswith(("fc.weight:", "fc.bias:"))]
    assert set(sent.held) == set(names) - set(shown) and sent.held  # worked out by the names' own text
    for name in names:
        assert sent.captures[name].stats == whole.captures[name].stats  # every statistic crossed
        if name in shown:
            np.testing.assert_array_equal(sent.captures[name].array, whole.captures[name].array)
        else:
            assert sent.captures[name].array is None
    np.testing.assert_array_equal(sent.input, whole.input)
    np.testing.assert_array_equal(sent.output, whole.output)

    asked = list(sent.held[:2]) + ["nope:output"]
    came = from_wire(to_wire(Message("result", "f", held_arrays(whole, asked)))).body
    assert set(came) == set(asked[:2])
    with_arrays(sent, came)
    assert set(sent.held) == set(names) - set(shown) - set(asked[:2])
    for name in asked[:2]:
        assert sent.captures[name].array.tobytes() == whole.captures[name].array.tobytes()
    assert seen_only(whole, None) is whole  # in this process: everything, as before
