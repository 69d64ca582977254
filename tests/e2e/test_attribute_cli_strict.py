"""What `attribute` says of NaN, complex and empty values (issue 40, items 8 and 13): --json is valid JSON with
"NaN" as a string (json.loads with NaN refused reads it), a NaN baseline is warned of as a NaN input is, a
complex input or baseline, an empty --layer and a --min-score of nan are one line each."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import torch

from inspector.core import attribute, each_box, load_model
from inspector.core.common.errors import SpecError


def _cli(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "inspector", "attribute", "--model", "demo", *argv],
                          capture_output=True, text=True, timeout=120)


def _strict(text: str):
    def refuse(constant):
        raise ValueError(f"bare {constant} is not JSON")
    return json.loads(text, parse_constant=refuse)


def test_json_is_strict_and_a_nan_baseline_is_warned_of(tmp_path):
    picture = np.random.default_rng(0).random((1, 3, 64, 64), dtype=np.float32)
    baseline = np.zeros((1, 3, 64, 64), np.float32)
    baseline[0, 1, 2, 3] = np.nan
    np.save(tmp_path / "x.npy", picture)
    np.save(tmp_path / "b.npy", baseline)
    done = _cli("--input", str(tmp_path / "x.npy"), "--method", "ig", "--steps", "4", "--baseline",
                str(tmp_path / "b.npy"), "--json", "--out", str(tmp_path / "o.npy"))
    assert done.returncode == 0, done.stderr
    said = _strict(done.stdout)
    assert said["completeness_gap"] == "NaN" and said["settings"]["f(x) - f(baseline)"] == "NaN"
    assert "warning: The baseline holds 1 NaN of 12288 values; everything computed from it may be NaN." \
        in done.stderr.splitlines()


@pytest.mark.parametrize("argv, line", [
    (("--layer", ""), "error: The layer is empty: name one (conv1, layer4.2.conv3), or give none for the "
                      "method's own."),
    (("--baseline", "COMPLEX"), "error: The baseline file COMPLEX is complex (complex64): a baseline holds real "
                                "numbers, as the input does."),
], ids=["empty layer", "complex baseline"])
def test_one_line_each(tmp_path, argv, line):
    complex_file = tmp_path / "c.npy"
    np.save(complex_file, (np.zeros((1, 3, 64, 64)) + 1j).astype(np.complex64))
    argv = tuple(str(complex_file) if a == "COMPLEX" else a for a in argv)
    method = "gradcam" if "--layer" in argv else "ig"
    done = _cli("--input", "sample:star", "--method", method, *argv, "--out", str(tmp_path / "o.npy"))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [line.replace("COMPLEX", str(complex_file))]


@pytest.fixture(scope="module")
def demo():
    return load_model("demo")


def test_the_api_refuses_a_complex_input_and_warns_of_a_nan_one(demo):
    x = torch.rand(1, 3, 64, 64, generator=torch.Generator().manual_seed(0))
    with pytest.raises(SpecError, match=r"^The input is complex \(complex64\): a model takes real numbers\.$"):
        attribute(demo, x.to(torch.complex64), "saliency")
    x[0, 0, 5, 5] = float("nan")
    x[0, 2, 1, 1] = float("inf")
    for method in ("ig", "occlusion", "saliency"):  # said once, whether the engine ran or not
        found = attribute(demo, x, method, options={"steps": 4} if method == "ig" else None)
        said = [w for w in found.warnings if w.startswith("The model's input")]
        assert said == ["The model's input holds 1 NaN and 1 Inf of 12288 values; everything computed from it "
                        "may be NaN."], found.warnings


@pytest.mark.parametrize("score", [float("nan"), -0.1, 1.5, float("inf")])
def test_each_box_takes_a_least_score_from_0_to_1(score):
    detector = load_model("demo-detector")
    with pytest.raises(SpecError, match="The least score of a box to explain is a number from 0 to 1"):
        each_box(detector, torch.rand(1, 3, 64, 64), "saliency", min_score=score)


@pytest.mark.filterwarnings("ignore::FutureWarning")  # torch.jit.script and torch.jit.save say they are deprecated
def test_a_torchscript_model_loads_without_torch_s_deprecation_text(tmp_path):
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 2, 3), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten()).eval()
    torch.jit.save(torch.jit.script(net), tmp_path / "net.pt")
    done = subprocess.run([sys.executable, "-m", "inspector", "attribute", "--model", str(tmp_path / "net.pt"),
                           "--trust", "--input", "sample:star", "--method", "saliency", "--out",
                           str(tmp_path / "o.npy")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == "", done.stderr  # no 'torch.jit.load is deprecated' library text
