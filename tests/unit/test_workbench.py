"""The workbench keeps the model loaded and the baseline result while nothing it depends on changes."""

from dataclasses import replace

import numpy as np

from inspector.core import RunSpec
from inspector.core.workbench import ModelRequest, RunRequest, Workbench

TOY = ModelRequest("inspector.demo.toy:ToyMLP")


def request(edits=(), input="sample:toy_ones", run_id=1) -> RunRequest:
    spec = RunSpec.make(["fc1", "relu1"], "output,grad_output", edits, "output", input_grad=True)
    return RunRequest(TOY, input, "cpu", spec, baseline=True, run_id=run_id)


def test_model_loaded_once_and_baseline_kept():
    bench = Workbench()
    first = bench.execute(request())
    module = bench.loaded.module
    assert first.tree is not None and first.baseline is first.result  # no edits: the result is the baseline
    doubled = bench.execute(request(["relu1:grad_output=scale(2)"], run_id=2))
    assert bench.loaded.module is module and doubled.tree is None
    assert doubled.baseline is first.result  # kept, not re-run
    np.testing.assert_array_equal(doubled.result["input:grad"], [[44, 52, 60]])
    np.testing.assert_array_equal(doubled.baseline["input:grad"], [[22, 26, 30]])
    tripled = bench.execute(request(["relu1:grad_output=scale(3)"], run_id=3))
    assert tripled.baseline is first.result
    np.testing.assert_array_equal(tripled.result["input:grad"], [[66, 78, 90]])


def test_baseline_recomputed_when_the_input_changes():
    bench = Workbench()
    bench.execute(request())
    edited = bench.execute(request(["relu1:grad_output=scale(2)"], input="sample:toy_mixed"))
    # toy_mixed = [[1, -2, 0.5]]: fc1 = [-0.5, 5, -1.5, 10], relu passes units 1 and 3, so
    # input grad = 2 * [-4, -5, -6] + 4 * [-10, -11, -12] = [-48, -54, -60]
    np.testing.assert_allclose(edited.baseline["fc1:output"], [[-0.5, 5.0, -1.5, 10.0]])
    np.testing.assert_allclose(edited.baseline["input:grad"], [[-48, -54, -60]])
    np.testing.assert_allclose(edited.result["input:grad"], [[-96, -108, -120]])


def test_disabled_edits_count_as_no_edits():
    bench = Workbench()
    off = replace(RunSpec.make(edits=["relu1:grad_output=scale(2)"]).edits[0], enabled=False)
    outcome = bench.execute(request([off]))
    assert outcome.baseline is outcome.result
