"""Diagnostics (gradient flow, dead units, first NaN/Inf, statistics table) and the .npz export."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace

import numpy as np
import pytest
import torch
from torch import nn

from inspector.core import RunSpec, capture, load_model, run
from inspector.core.engine.export import export_npz, heat_values, jet, load_npz, overlay
from inspector.core.engine.diagnostics import (
    dead_units,
    first_nonfinite,
    gradient_flow,
    stats_table,
    to_csv,
)


@pytest.fixture(scope="module")
def toy():
    model = load_model("inspector.demo.toy:ToyMLP")
    return capture(model, torch.ones(1, 3), "all", "output,grad_output,grad_input,params", target="output",
                   input_grad=True)


def test_gradient_flow_forward_order_and_flags(toy):
    rows = gradient_flow(toy, vanishing=2, exploding=40)
    assert [(r.key, r.depth) for r in rows] == [
        ("input:grad", 0), ("fc1:grad_input", 1), ("fc1:grad_output", 1), ("fc1.weight:grad", 1),
        ("fc1.bias:grad", 1), ("relu1:grad_input", 2), ("relu1:grad_output", 2), ("fc2:grad_input", 3),
        ("fc2:grad_output", 3), ("fc2.weight:grad", 3), ("fc2.bias:grad", 3)]
    by_key = {r.key: r for r in rows}
    assert by_key["fc1.bias:grad"].norm == pytest.approx(np.sqrt(10))  # [1, 0, 3, 0]
    assert by_key["fc1.bias:grad"].mean_abs == pytest.approx(1.0)
    assert by_key["input:grad"].exploding and not by_key["input:grad"].vanishing  # [22, 26, 30]
    assert [r.key for r in rows if r.vanishing] == ["fc2:grad_output", "fc2.bias:grad"]  # both [1]
    assert not any(r.vanishing or r.exploding for r in gradient_flow(toy) if r.key != "input:grad")


def test_dead_units(toy):
    shares = dead_units(toy)
    assert shares["relu1:output"] == 0.5 and shares["fc1:output"] == 0.0  # [7, 0, 27, 0]
    net = nn.Sequential(nn.Conv2d(3, 4, 3), nn.Flatten())
    result = run(net, torch.randn(2, 3, 5, 5), RunSpec.make(["0"], "output", ["0:output=zero_channels([0, 2])"]))
    assert dead_units(result) == {"0:output": 0.5}


class Div(nn.Module):
    def forward(self, x):
        return x / torch.zeros_like(x)


class SqrtAtZero(nn.Module):
    """Finite forward (sqrt(0) + x), NaN backward (0 * inf)."""

    def forward(self, x):
        return torch.sqrt(x * 0) + x


def test_first_nonfinite_forward_and_backward():
    net = nn.Sequential(nn.Linear(3, 3), Div(), nn.Linear(3, 1))
    result = run(net, torch.ones(1, 3), RunSpec.make(["0", "1", "2"], "output"))
    assert first_nonfinite(result) == ("1:output", "forward")
    net = nn.Sequential(nn.Linear(3, 3), SqrtAtZero(), nn.Linear(3, 1))
    spec = RunSpec.make(["0", "1", "2"], "output,grad_output,grad_input", target="sum", input_grad=True)
    result = run(net, torch.ones(1, 3), spec)
    assert first_nonfinite(result) == ("1:grad_input", "backward")
    assert first_nonfinite(run(net, torch.ones(1, 3), RunSpec.make(["0", "1", "2"], "output"))) is None
    rows = {r["key"]: r for r in stats_table(result)}
    assert rows["1:grad_input"]["nan"] == 3 and rows["1:grad_output"]["nan"] == 0


def test_stats_table_and_csv(toy):
    rows = stats_table(toy)
    keys = [r["key"] for r in rows]
    assert keys[:3] == ["input", "output", "input:grad"] and "fc1.bias:grad" in keys
    assert len(rows) == len(toy.arrays())
    fc1 = next(r for r in rows if r["key"] == "fc1:output")
    assert fc1["shape"] == "1x4" and fc1["min"] == -29 and fc1["max"] == 27
    parsed = list(csv.DictReader(io.StringIO(to_csv(rows))))
    assert list(parsed[0]) == ["key", "shape", "mean", "std", "min", "max", "l2", "zero_fraction", "nan", "inf"]
    assert float(parsed[keys.index("relu1:output")]["zero_fraction"]) == 0.5
    assert to_csv([]) == ""


def test_export_round_trip(toy, tmp_path):
    npz, sidecar = export_npz(toy, tmp_path / "toy", {"model": "inspector.demo.toy:ToyMLP", "input": "ones"})
    assert npz.name == "toy.npz" and sidecar.name == "toy.json"
    arrays, manifest = load_npz(npz)
    assert arrays.keys() == toy.arrays().keys()
    for key, value in toy.arrays().items():
        np.testing.assert_array_equal(arrays[key], value)
    assert manifest == json.loads(sidecar.read_text())
    assert manifest["model"] == "inspector.demo.toy:ToyMLP" and manifest["target"] == "output"
    assert manifest["keys"]["fc1:output"] == [1, 4] and manifest["device"] == "cpu"
    assert set(manifest["versions"]) == {"python", "torch", "torchvision", "numpy", "inspector"}


def test_heat_map_overlay():
    assert jet(np.array([0.0, 1.0])).tolist() == [[0, 0, 128], [128, 0, 0]]
    values = heat_values(np.stack([np.eye(4), -2 * np.eye(4)]))
    assert values.max() == 1 and values.min() == 0
    image = np.full((4, 4, 3), 200, np.uint8)
    assert overlay(image, np.zeros((4, 4)))[0, 0].tolist() == [100, 100, 164]


def test_signed_overlay_by_hand():
    """A signed picture: red where positive, blue where negative, each pixel as opaque as |value| / max."""
    image = np.full((2, 2, 3), 100, np.uint8)
    m = np.array([[2.0, -2.0], [0.0, 1.0]])
    np.testing.assert_array_equal(heat_values(m, "signed"), [[1, -1], [0, 0.5]])
    out = overlay(image, m, opacity=1.0, sign="signed")
    assert out[0, 0].tolist() == [200, 0, 0] and out[0, 1].tolist() == [0, 40, 200]
    assert out[1, 0].tolist() == [100, 100, 100]  # 0 leaves the picture as it was
    # half way to red (white + (red - white) / 2 = (227.5, 127.5, 127.5), rounded) at half opacity over 100
    assert out[1, 1].tolist() == [164, 114, 114]


def channels_case() -> torch.Tensor:
    """(2, 6, 2, 2): channels 0 (zeros) and 1 (negative zeros) dead; 2 (negatives and zeros),
    3 (NaN and zeros), 4 (positives and zeros) and 5 (one non-zero, in the second item) alive."""
    x = torch.zeros(2, 6, 2, 2)
    x[:, 1] = -0.0
    x[0, 2, 0, 0] = -3.0
    x[1, 3, 1, 1] = float("nan")
    x[:, 4, 0] = 2.0
    x[1, 5, 1, 0] = 1e-30
    return x


def numpy_dead_share(array: np.ndarray, dim: int) -> float:
    per_channel = np.moveaxis(array, dim, 0).reshape(array.shape[dim], -1)
    return float((~np.any(per_channel != 0, axis=1)).mean())


@pytest.mark.parametrize("stats", ["in run", "deferred", "off"])
def test_dead_units_against_numpy(stats):
    x4 = channels_case()
    x3 = x4.reshape(2, 6, 4).transpose(1, 2).contiguous()  # (N, T, D): channels last
    relu = x4.abs() * torch.randn(2, 6, 2, 2).sign().clamp(min=0)  # non-negative, some channels dead
    for x, dim in ((x4, 1), (x3, 2), (relu, 1)):
        spec = RunSpec.make(["0"], "output", target="sum", stats_now=[] if stats == "deferred" else None)
        if stats == "off":
            spec = replace(spec, stats=False)
        result = run(nn.Sequential(nn.Identity()), x, spec)
        assert (result.captures["0:output"].stats is None) == (stats != "in run")
        expected = numpy_dead_share(x.numpy(), dim)
        assert dead_units(result) == {"0:output": expected}
    assert numpy_dead_share(x4.numpy(), 1) == 2 / 6


def test_gradient_flow_norms_against_numpy():
    torch.manual_seed(3)
    net = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4))
    for stats in (True, False):
        spec = replace(RunSpec.make(["0", "1", "2"], "grad_output,params", target="sum"), stats=stats)
        result = run(net, torch.randn(5, 8), spec)
        for row in gradient_flow(result):
            array = np.float64(result[row.key]).ravel()
            assert row.norm == pytest.approx(np.sqrt((array ** 2).sum()), rel=1e-5)
            assert row.mean_abs == pytest.approx(np.abs(array).mean(), rel=1e-5)
