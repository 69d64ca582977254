"""A model that fails on the input inside any method's passes is one line (issue 40, item 5): the same RunError
"The model raised KIND: ..." saliency gave, for integrated gradients' and occlusion's first pass too, through
the API and the CLI, and for each box of a picture the detector cannot take."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch

from inspector.core import attribute, each_box, load_model
from inspector.core.common.errors import RunError
from inspector.core.records.methods import METHODS

CLASSIFIER_METHODS = [m.name for m in METHODS.values() if m.classifiers and not m.vits_only]  # rollout, LeGrad,
# Chefer: no attention in the demo, a SpecError before any pass


@pytest.fixture(scope="module")
def demo():
    return load_model("demo")


@pytest.mark.parametrize("method", CLASSIFIER_METHODS)
@pytest.mark.parametrize("shape", [(1, 1, 64, 64), (1, 3, 2, 2)], ids=["one-channel", "2x2"])
def test_every_method_says_the_model_failed_in_one_line(demo, method, shape):
    x = torch.rand(shape, generator=torch.Generator().manual_seed(0))
    with pytest.raises(RunError) as info:
        attribute(demo, x, method)
    said = str(info.value)
    assert said.startswith("The model raised RuntimeError") and "\n" not in said
    assert isinstance(info.value.__cause__ or info.value.__context__, RuntimeError)  # the model's own error kept


def test_each_box_on_a_picture_the_detector_cannot_resize_is_one_line():
    detector = load_model("demo-detector")
    x = torch.rand(1, 3, 3, 5000, generator=torch.Generator().manual_seed(0))
    with pytest.raises(RunError, match=r"^The model raised RuntimeError: Input and output sizes should be greater"):
        each_box(detector, x, "gradcam")


def test_the_cli_says_it_in_one_line_and_exits_2(tmp_path):
    np.save(tmp_path / "one.npy", np.random.default_rng(0).random((1, 1, 64, 64), dtype=np.float32))
    for method in ("ig", "occlusion"):
        done = subprocess.run([sys.executable, "-m", "inspector", "attribute", "--model", "demo", "--input",
                               str(tmp_path / "one.npy"), "--method", method, "--out", str(tmp_path / "o.npy")],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 2, done.stderr
        assert done.stderr.strip().splitlines() == [
            f"error: The model raised RuntimeError: Given groups=1, weight of size [16, 3, 3, 3], expected "
            f"input[{2 if method == 'ig' else 1}, 1, 64, 64] to have 3 channels, but got 1 channels instead"]
        assert not (tmp_path / "o.npy").exists()
