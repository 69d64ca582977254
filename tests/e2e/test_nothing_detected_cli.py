"""`network-inspector attribute` on a detector that detects nothing above its score threshold, with the default
target: a one-line error, exit 2, nothing written, whatever the method that explains a box (as `--target box:0`
already was); not a blank map with exit 0."""

from __future__ import annotations

import pytest
import torch

from inspector.cli import main

DEMO = ["--model", "demo-detector", "--score-threshold", "0.999", "--input", "sample:scene_four_shapes"]
SAYS = "detected nothing above its score threshold on this input"


def test_the_demo_detector_scores_nothing_as_high_as_the_threshold():
    """The premise, checked on the model's own answer with no threshold: every score is under 0.999."""
    from inspector.core import load_input, load_model
    from inspector.core.detection.thresholds import set_score_threshold

    loaded = load_model("demo-detector")
    set_score_threshold(loaded.module, 0.0)
    x = load_input("sample:scene_four_shapes", loaded.preprocess, loaded.input_shape)
    with torch.no_grad():
        scores = loaded.module(x)[0]["scores"]
    assert len(scores) > 0 and float(scores.max()) < 0.999


@pytest.mark.parametrize("method, options", [
    ("saliency", []), ("gradcam", []), ("guided", []), ("guided-gradcam", []),
    ("smoothgrad", ["--samples", "2"]), ("ig", ["--steps", "2"]), ("occlusion", ["--window", "40"]),
    ("drise", ["--masks", "4"]),
])
def test_nothing_detected_is_one_line_exit_2_and_nothing_written(method, options, tmp_path, capsys):
    out = tmp_path / "thr.png"
    assert main(["attribute", *DEMO, "--method", method, *options, "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert SAYS in captured.err and captured.err.count("\n") == 1 and "Traceback" not in captured.err
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_the_issues_case_on_a_torchvision_detector(tmp_path, capsys):
    out = tmp_path / "thr.png"
    assert main(["attribute", "--model", "fasterrcnn_mobilenet_v3_large_320_fpn", "--seed", "0",
                 "--score-threshold", "0.5", "--input", "sample:scene_four_shapes", "--method", "gradcam",
                 "--out", str(out)]) == 2  # was 0, with a blank map in thr.png
    err = capsys.readouterr().err
    assert SAYS in err and err.count("\n") == 1
    assert not out.exists()
