"""Reproducible random weights: load_model(seed=...), Workbench via ModelRequest.seed, manifests."""

from __future__ import annotations

import random
import textwrap

import numpy as np
import pytest
import torch

from inspector.core import InspectorError, load_model
from inspector.core.common.errors import SpecError
from inspector.core.engine.export import export_npz, load_npz
from inspector.core.model_info import describe
from inspector.core.records.requests import ModelRequest
from inspector.core.workbench import Workbench

RANDOM_PY = textwrap.dedent(
    """
    from torch import nn

    class Net(nn.Module):
        input_shape = (1, 4)

        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(4, 8)  # default (random) initialisation
            self.fc2 = nn.Linear(8, 2)

        def forward(self, x):
            return self.fc2(self.fc1(x).relu())
    """
)


@pytest.fixture
def random_py(tmp_path):
    path = tmp_path / "random_net.py"
    path.write_text(RANDOM_PY)
    return f"{path}:Net"


def state(loaded) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in loaded.module.state_dict().items()}


def identical(a: dict, b: dict) -> bool:
    assert a.keys() == b.keys()
    return all(torch.equal(a[k], b[k]) for k in a)


def test_same_seed_gives_bit_identical_torchvision_weights():
    a, b = load_model("resnet18", "random", seed=1234), load_model("resnet18", seed=1234)
    assert a.seed == b.seed == 1234 and a.weights == "random"
    assert identical(state(a), state(b))
    assert any("seed 1234" in note for note in a.notes)
    c = load_model("resnet18", seed=1235)
    randomised = [k for k, v in state(a).items() if v.ndim >= 2]  # conv and linear weights (BN starts at 1, 0)
    assert len(randomised) == 21 and all(not torch.equal(state(a)[k], state(c)[k]) for k in randomised)


def test_no_seed_picks_one_that_gives_the_weights_again():
    first = load_model("squeezenet1_1")
    assert isinstance(first.seed, int) and 0 <= first.seed < 2**31
    again = load_model("squeezenet1_1", seed=first.seed)
    assert identical(state(first), state(again))
    other = load_model("squeezenet1_1")
    assert other.seed != first.seed or identical(state(first), state(other))


def test_factory_is_built_under_the_seed(random_py):
    a, b, c = load_model(random_py, seed=7), load_model(random_py, seed=7), load_model(random_py, seed=8)
    assert a.seed == 7 and c.seed == 8
    assert identical(state(a), state(b)) and not torch.equal(state(a)["fc1.weight"], state(c)["fc1.weight"])
    picked = load_model(random_py, "random")
    assert picked.seed is not None
    assert identical(state(picked), state(load_model(random_py, seed=picked.seed)))


def test_seeding_leaves_the_callers_generators_alone(random_py):
    torch.manual_seed(99)
    random.seed(99)
    np.random.seed(99)
    expected = (torch.rand(3), random.random(), np.random.rand())
    torch.manual_seed(99)
    random.seed(99)
    np.random.seed(99)
    load_model(random_py, seed=5)
    load_model("squeezenet1_1", seed=5)
    load_model("squeezenet1_1")
    got = (torch.rand(3), random.random(), np.random.rand())
    assert torch.equal(got[0], expected[0]) and got[1:] == expected[1:]


def test_workbench_gives_the_same_weights_as_load_model():
    bench = Workbench()
    loaded, _ = bench.load(ModelRequest("squeezenet1_1", "random", seed=42))
    assert loaded.seed == 42
    assert identical(state(loaded), state(load_model("squeezenet1_1", "random", seed=42)))
    # no seed: the one picked is recorded in the request that loads the very same model again
    picked, tree = Workbench().load(ModelRequest("squeezenet1_1", "random"))
    info = describe(picked, tree, ModelRequest("squeezenet1_1", "random"))
    assert info.seed == picked.seed and info.request.seed == picked.seed
    again, _ = Workbench().load(info.request)
    assert identical(state(picked), state(again))


@pytest.mark.parametrize("bad", [-1, 2**32, "abc", "1.5", 1.5, True, "-3", [1]])
def test_bad_seeds_are_refused_with_one_line(bad):
    with pytest.raises(SpecError) as info:
        load_model("squeezenet1_1", seed=bad)
    message = str(info.value)
    assert "\n" not in message and "seed must be a whole number from 0 to 4294967295" in message
    assert repr(bad) in message


def test_the_largest_and_smallest_seeds_are_taken():
    assert load_model("inspector.demo.toy:ToyMLP", seed=2**32 - 1).seed == 2**32 - 1
    assert load_model("inspector.demo.toy:ToyMLP", seed=0).seed == 0


def test_check_seed_reads_digits_only_from_the_command_line():
    from inspector.core.sources.seeds import check_seed

    assert check_seed(" 12 ", "--seed", text=True) == 12 and check_seed(None) is None
    with pytest.raises(SpecError, match=r"^seed must be a whole number from 0 to 4294967295, not '12'\.$"):
        check_seed("12")  # an API caller or a session file passes a number
    with pytest.raises(SpecError, match="not '١٢'"):
        check_seed("١٢", "--seed", text=True)  # Arabic-Indic digits are digits to str.isdigit, not to us


@pytest.mark.parametrize("source, weights, why", [
    ("demo", None, "bundled weights"),
    ("resnet18", "pretrained", "pretrained weights are not random"),
])
def test_a_seed_with_weights_that_are_not_random_is_refused(source, weights, why):
    with pytest.raises(SpecError, match=why):
        load_model(source, weights, seed=3)


def test_a_seed_with_a_checkpoint_is_refused(random_py, tmp_path):
    path = tmp_path / "w.pt"
    torch.save(load_model(random_py, seed=1).module.state_dict(), path)
    with pytest.raises(InspectorError, match="the weights come from"):
        load_model(random_py, str(path), seed=3)
    assert load_model(random_py, str(path)).seed is None  # checkpoint weights are not random


def test_seed_round_trips_through_the_manifest(tmp_path):
    from inspector.core import capture

    loaded = load_model("inspector.demo.toy:ToyMLP", seed=77)
    result = capture(loaded, torch.ones(1, 3), layers="fc1", sites="output", target="output")
    export_npz(result, tmp_path / "c.npz", {"model": loaded.source, "weights": loaded.weights, "seed": loaded.seed})
    arrays, manifest = load_npz(tmp_path / "c.npz")
    assert manifest["seed"] == 77 and manifest["model"] == "inspector.demo.toy:ToyMLP"
    np.testing.assert_array_equal(arrays["fc1:output"], [[7, -13, 27, -29]])
    export_npz(result, tmp_path / "d.npz", {"model": "demo"})
    assert load_npz(tmp_path / "d.npz")[1]["seed"] is None  # always present
    with pytest.raises(SpecError, match="manifest's seed"):
        export_npz(result, tmp_path / "e.npz", {"seed": "x"})


def test_workbench_keeps_the_model_when_asked_with_the_seed_picked_for_it():
    from inspector.core import RunSpec
    from inspector.core.records.requests import RunRequest

    bench = Workbench()
    asked = ModelRequest("inspector.demo.toy:ToyMLP")
    spec = RunSpec.make(("fc1",), ("output",), (), "output", False)
    first = bench.execute(RunRequest(asked, "sample:toy_ones", spec=spec))
    loaded = bench.loaded
    assert first.tree is not None and loaded.seed is not None
    # the app asks again with ModelInfo.request, which names the picked seed: same model, not fresh
    again = bench.execute(RunRequest(ModelRequest(asked.source, seed=loaded.seed), "sample:toy_ones", spec=spec))
    assert bench.loaded is loaded and again.tree is None
    assert bench.execute(RunRequest(asked, "sample:toy_ones", spec=spec)).tree is None and bench.loaded is loaded
    other = bench.execute(RunRequest(ModelRequest(asked.source, seed=loaded.seed + 1), "sample:toy_ones", spec=spec))
    assert other.tree is not None and bench.loaded is not loaded and bench.loaded.seed == loaded.seed + 1
