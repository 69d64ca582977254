"""The workbench keeps the model loaded and the baseline result while nothing it depends on changes."""

from dataclasses import replace

import numpy as np
import pytest

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


def plain_data(value, seen=None) -> bool:
    """No tensors and no modules anywhere inside: numpy arrays, records, builtins."""
    import dataclasses

    import torch

    seen = set() if seen is None else seen
    if id(value) in seen:
        return True
    seen.add(id(value))
    if isinstance(value, (torch.Tensor, torch.nn.Module)):
        return False
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return all(plain_data(getattr(value, f.name), seen) for f in dataclasses.fields(value))
    if isinstance(value, dict):
        return all(plain_data(k, seen) and plain_data(v, seen) for k, v in value.items())
    if isinstance(value, (list, tuple, set, frozenset)):
        return all(plain_data(v, seen) for v in value)
    return True


def test_visible_layers_first_then_the_rest_as_an_update():
    spec = RunSpec.make(["fc1", "relu1", "fc2"], "output,grad_output,params", ["fc2:grad_output=scale(2)"],
                        "output", input_grad=True)
    whole = Workbench().execute(RunRequest(TOY, "sample:toy_ones", "cpu", spec, baseline=True, analyse=True))
    bench = Workbench()
    outcome = bench.execute(RunRequest(TOY, "sample:toy_ones", "cpu", spec, baseline=True, analyse=True,
                                       run_id=7, visible=("relu1",)))
    result = outcome.result
    assert {n for n, c in result.captures.items() if c.stats} == {"relu1:output", "relu1:grad_output"}
    assert outcome.analysis is None and not outcome.complete
    assert plain_data(outcome)
    update = bench.finish(outcome)
    assert plain_data(update) and update.run_id == 7
    assert set(update.stats) == set(result.captures) - {"relu1:output", "relu1:grad_output"}
    fc1 = update.stats["fc1:output"]  # [[7, -13, 27, -29]]
    assert (fc1.mean, fc1.min, fc1.max, fc1.l2) == (-2.0, -29.0, 27.0, pytest.approx(np.sqrt(1788)))
    assert update.stats["fc1.bias:grad"].l2 == pytest.approx(2 * np.sqrt(10))  # the edit doubled [1, 0, 3, 0]
    assert update.stats == {n: whole.result.captures[n].stats for n in update.stats}
    assert set(update.baseline_stats) == set(outcome.baseline.stats_pending())
    assert update.baseline_stats["fc1.bias:grad"].l2 == pytest.approx(np.sqrt(10))
    assert update.analysis == whole.analysis and update.analysis.dead["relu1:output"] == 0.5
    update.apply(outcome)
    assert outcome.complete and outcome.analysis == whole.analysis
    assert outcome.result.captures["fc1:output"].stats == fc1


def test_finish_stops_when_cancelled():
    import threading

    from inspector.core import RunCancelled

    bench = Workbench()
    outcome = bench.execute(replace(request(), visible=()))
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(RunCancelled):
        bench.finish(outcome, cancel)
    assert bench.finish(bench.execute(request())).stats == {}  # nothing deferred: nothing to do


def test_an_image_written_again_or_removed_is_read_again(tmp_path):
    """The decoded input is kept while its file stays: the same path written with other pixels is the new image, and
    a path whose file is gone says so (it handed back the image it had kept: a run on a removed file, or on the old
    pixels of a file written again, succeeded)."""
    from PIL import Image

    from inspector.core.common.errors import InspectorError

    bench = Workbench()
    bench.execute(RunRequest(ModelRequest("demo"), "sample:star", "cpu", RunSpec.make(["conv1"]), run_id=1))
    path = tmp_path / "picture.png"
    Image.fromarray(np.zeros((64, 64, 3), np.uint8)).save(path)
    black = bench.input_tensor(str(path)).clone()
    assert bench.input_tensor(str(path)) is bench.input_tensor(str(path))  # kept while the file stays
    Image.fromarray(np.full((64, 64, 3), 255, np.uint8)).save(path)
    white = bench.input_tensor(str(path))
    assert float(white.mean()) > float(black.mean())  # by hand: all 255 against all 0, whatever the normalisation
    path.unlink()
    with pytest.raises(InspectorError, match="not found"):
        bench.input_tensor(str(path))
