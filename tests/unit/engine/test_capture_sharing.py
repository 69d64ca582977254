"""CPU captures share the model's memory only where a run has shown that is safe."""

import numpy as np
import torch
from torch import nn

from inspector.core import RunSpec, Sharing, run


class AddsInPlace(nn.Module):
    """conv -> bn, then `out += 1` in the parent's code (no module hook sees it) -> relu."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 1, bias=False)
        self.bn = nn.Identity()
        self.relu = nn.ReLU()
        self.add_in_place = True
        with torch.no_grad():
            self.conv.weight.copy_(torch.tensor([1.0, -1.0]).view(2, 1, 1, 1))

    def forward(self, x):
        out = self.bn(self.conv(x) * 1.0)
        if self.add_in_place:
            out += 1
        return self.relu(out).sum(dim=(2, 3))


X = torch.tensor([[[[1.0, 2.0]]]])  # conv -> [[1, 2]] and [[-1, -2]]
BN_OUT = np.array([[[[1.0, 2.0]], [[-1.0, -2.0]]]])


def spec():
    return RunSpec.make(["conv", "bn", "relu"], "output", (), "sum")


def made_tensors(model):
    """The tensors the model's modules return, kept by a hook of the user's own."""
    made = {}
    for name in ("conv", "bn", "relu"):
        getattr(model, name).register_forward_hook(lambda m, i, o, name=name: made.__setitem__(name, o.detach()))
    return made


def shares(capture, tensor) -> bool:
    return np.shares_memory(capture.array, tensor.numpy())


def test_a_tensor_changed_in_place_later_is_copied_and_the_rest_shared():
    model = AddsInPlace()
    made = made_tensors(model)
    sharing = Sharing()
    first = run(model, X, spec(), sharing=sharing)
    np.testing.assert_array_equal(first["bn:output"], BN_OUT)  # as bn returned it, before `+= 1`
    assert not any(shares(first.captures[f"{n}:output"], made[n]) for n in made)  # first run: copies
    second = run(model, X, spec(), sharing=sharing)
    np.testing.assert_array_equal(second["bn:output"], BN_OUT)
    np.testing.assert_array_equal(second["relu:output"], [[[[2.0, 3.0]], [[0.0, 0.0]]]])
    np.testing.assert_array_equal(second["conv:output"], BN_OUT)
    assert not shares(second.captures["bn:output"], made["bn"])  # changed later: a copy
    assert shares(second.captures["relu:output"], made["relu"])  # never changed: shared
    assert shares(second.captures["conv:output"], made["conv"])


def test_in_place_change_that_depends_on_the_data_is_caught():
    model = AddsInPlace()
    model.add_in_place = False
    calls = []
    model.conv.register_forward_hook(lambda *_: calls.append(1))
    sharing = Sharing()
    run(model, X, spec(), sharing=sharing)
    run(model, X, spec(), sharing=sharing)  # learned: nothing is changed in place, everything shared
    assert len(calls) == 2
    model.add_in_place = True  # now bn's output is changed after capture
    result = run(model, X, spec(), sharing=sharing)
    np.testing.assert_array_equal(result["bn:output"], BN_OUT)
    assert len(calls) == 4  # the run was done again, with copies
    assert any("Ran twice" in e.what for e in result.events)
    again = run(model, X, spec(), sharing=sharing)
    np.testing.assert_array_equal(again["bn:output"], BN_OUT)
    assert len(calls) == 5  # and remembered: once from now on


def test_in_place_module_input_is_copied_before_it_runs():
    model = nn.Sequential(nn.Identity(), nn.ReLU(inplace=True))
    x = torch.tensor([[-1.0, 2.0]])
    sharing = Sharing()
    for _ in range(3):
        result = run(model, x, RunSpec.make(["0", "1"], "output", (), "sum"), sharing=sharing)
        np.testing.assert_array_equal(result["0:output"], [[-1.0, 2.0]])
        np.testing.assert_array_equal(result["1:output"], [[0.0, 2.0]])


def test_without_a_sharing_state_every_run_copies():
    model = AddsInPlace()
    model.add_in_place = False
    made = made_tensors(model)
    for _ in range(3):
        result = run(model, X, spec())
        assert not any(shares(result.captures[f"{n}:output"], made[n]) for n in made)
        np.testing.assert_array_equal(result["bn:output"], BN_OUT)


def test_the_workbench_and_capture_keep_the_state_of_their_own_model():
    from inspector.core import capture, load_model
    from inspector.core.workbench import ModelRequest, RunRequest, Workbench

    toy = ModelRequest("inspector.demo.toy:ToyMLP")
    bench = Workbench()
    req = RunRequest(toy, "sample:toy_ones", "cpu", RunSpec.make(["fc1", "relu1"], "output", (), "output"))
    bench.execute(req)
    assert bench.sharing.safe() == {"fc1:output", "relu1:output"}
    other = Workbench()
    assert not other.sharing.safe()  # no process-wide state
    bench.load(ModelRequest("demo"))
    assert not bench.sharing.safe()  # another model: learned afresh

    loaded = load_model("inspector.demo.toy:ToyMLP")
    made = {}
    loaded.module.fc1.register_forward_hook(lambda m, i, o: made.__setitem__("fc1", o.detach()))
    x = torch.ones(1, 3)
    first = capture(loaded, x, "fc1", "output", target="output")
    assert not shares(first.captures["fc1:output"], made["fc1"])
    second = capture(loaded, x, "fc1", "output", target="output")  # repeated calls share, as before
    assert shares(second.captures["fc1:output"], made["fc1"])
    np.testing.assert_array_equal(second["fc1:output"], [[7.0, -13.0, 27.0, -29.0]])
