"""What the writing commands produce is kept: a capture `.npz`, `diff --json` and an `atlas.json`
from fixed arguments equal the reference outputs stored in tests/data/reference/.

The references were written by this code before the package layout changed, and pin that the
move changed no behaviour: the same keys in the same order, shapes, dtypes, names and texts
exactly; float values to float32 rounding at the scale of what is compared (oneDNN picks its
kernels by the CPU's instruction set, so the last bits differ from one CPU to another).

A change that means to change these outputs rewrites them with
`NI_WRITE_REFERENCE=1 uv run pytest tests/e2e/test_reference_outputs.py -n 0` and says why.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

pytestmark = pytest.mark.numeric  # CI runs these again under another oneDNN instruction set

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "reference"
WRITE = os.environ.get("NI_WRITE_REFERENCE") == "1"


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-m", "inspector", *args], capture_output=True, text=True,
                          timeout=300, env=env, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return done


def kept(made: Path, name: str) -> Path:
    """The stored reference `name`; with NI_WRITE_REFERENCE=1, `made` becomes it first."""
    if WRITE:
        REFERENCE.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(made, REFERENCE / name)
    return REFERENCE / name


def same_json(got, want, where: str = "", scale: float = 0.0) -> None:
    """Equal structure, keys in order, texts and whole numbers exactly; floats to 1e-5 of their size
    and 1e-5 of `scale`, the largest magnitude of the values they come from (at least 1e-6: relative
    L2 differences and cosines of float32 tensors)."""
    assert type(got) is type(want) or {type(got), type(want)} <= {int, float}, where
    if isinstance(want, dict):
        assert list(got) == list(want), where
        for key in want:
            same_json(got[key], want[key], f"{where}.{key}", scale)
    elif isinstance(want, list):
        assert len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            same_json(g, w, f"{where}[{i}]", scale)
    elif isinstance(want, float):
        assert math.isclose(got, want, rel_tol=1e-5, abs_tol=max(1e-6, 1e-5 * scale)), (where, got, want)
    else:
        assert got == want, where


def test_capture_npz_equals_the_reference(tmp_path):
    cli("capture", "--model", "demo", "--input", "sample:circle", "--layers", "conv3,block.conv2,fc",
        "--sites", "output,grad_output,params", "--out", "cap.npz", cwd=tmp_path)
    got = np.load(tmp_path / "cap.npz")
    want = np.load(kept(tmp_path / "cap.npz", "capture.npz"))
    assert got.files == want.files
    assert "conv3:grad_output" in want.files and "fc.bias:grad" in want.files
    for key in want.files:
        assert got[key].shape == want[key].shape and got[key].dtype == want[key].dtype, key
        # float32 sums over at most 288 terms per layer, reordered by the CPU's kernels: 1e-5 of
        # the array's largest value (measured spread across SSE4.1, AVX2, AVX-512: < 1e-6)
        scale = float(np.abs(want[key]).max()) if want[key].size else 0.0
        np.testing.assert_allclose(got[key], want[key], rtol=1e-5, atol=1e-5 * scale, err_msg=key)
    np.testing.assert_array_equal(got["input"], want["input"])  # preprocessing alone: exact


def test_diff_json_equals_the_reference(tmp_path):
    """The demo against itself with conv3's weights x1.25: conv3's output differs by exactly 0.25
    (relative L2), everything before conv3 is equal, the first divergent capture is conv3:output."""
    from safetensors.torch import load_file, save_file

    weights = load_file(Path(__file__).resolve().parents[2] / "resources" / "demo" / "demo.safetensors")
    weights["conv3.weight"] = weights["conv3.weight"] * 1.25
    save_file(weights, tmp_path / "other.safetensors")
    done = cli("diff", "--model", "demo", "--against", "other.safetensors", "--input", "sample:star",
               "--layers", "conv2,conv3,relu3,fc", "--json", cwd=tmp_path)
    (tmp_path / "diff.json").write_text(done.stdout)
    got = json.loads(done.stdout)
    want = json.loads(kept(tmp_path / "diff.json", "diff.json").read_text())
    same_json(got, want)
    assert want["first_divergent"] == "conv3:output"
    rows = {row["key"]: row for row in want["rows"]}
    assert rows["conv2:output"]["rel_l2"] == 0.0 and math.isclose(rows["conv3:output"]["rel_l2"], 0.25, rel_tol=1e-6)


def make_images(root: Path, count: int = 6) -> Path:
    rng = np.random.default_rng(0)
    for i in range(count):
        folder = root / ("cats" if i % 2 else "dogs") / ("deep" if i % 3 == 0 else "")
        folder.mkdir(parents=True, exist_ok=True)
        Image.fromarray(rng.integers(0, 256, (64, 64 + 8 * (i % 2), 3), dtype=np.uint8)).save(folder / f"img{i:02d}.png")
    (root / "cats" / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n not really")
    return root


def test_atlas_json_equals_the_reference(tmp_path):
    make_images(tmp_path / "data")
    cli("atlas", "--model", "demo", "--data", "data", "--layers", "conv3,fc", "--top", "2", "--batch", "4",
        "--out", "atlas", cwd=tmp_path)
    out = tmp_path / "atlas"
    got = json.loads((out / "atlas.json").read_text())
    want = json.loads(kept(out / "atlas.json", "atlas.json").read_text())
    same_json({k: v for k, v in got.items() if k != "layers"}, {k: v for k, v in want.items() if k != "layers"})
    assert list(got["layers"]) == list(want["layers"]) == ["conv3", "fc"]
    for name, layer in want["layers"].items():
        # a layer's statistics are 1-Lipschitz in its values (the std too), and each value carries
        # float32 rounding of up to 1e-5 of the layer's largest (its best score): measured 2.8e-6 on
        # fc's std of 0.197 under SSE4.1, where fc's values reach 13.5
        same_json(got["layers"][name], layer, name, scale=max(abs(e["score"]) for top in layer["top"] for e in top))
    regions = json.loads((out / "thumbnails" / "regions.json").read_text())
    same_json(regions, json.loads(kept(out / "thumbnails" / "regions.json", "regions.json").read_text()))
    thumbs = sorted(p.relative_to(out).as_posix() for p in (out / "thumbnails").rglob("*.png"))
    assert len(thumbs) == 72 * 2  # 64 + 8 channels, top 2
    # (the reference's top images are apart by more than rounding: exact names and positions hold)
    for layer in want["layers"].values():
        for top in layer["top"]:
            assert top[0]["score"] - top[1]["score"] > 1e-4 * abs(top[0]["score"]) or top[0]["image"] < top[1]["image"]

