"""`network-inspector capture` on a torchvision detector: the detections in --json and as lines, box targets,
the score threshold, and one-line errors (exit 2)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from inspector.cli import main

MODEL = ["--model", "fasterrcnn_mobilenet_v3_large_320_fpn", "--seed", "0"]


def test_capture_json_lists_the_detections_best_first_and_the_npz_keeps_them(tmp_path, capsys):
    out = tmp_path / "c.npz"
    assert main(["capture", *MODEL, "--input", "sample:scene_four_shapes", "--layers", "backbone.body.16",
                 "--target", "box:2", "--json", "--out", str(out)]) == 0
    said = json.loads(capsys.readouterr().out)
    found = said["detections"]
    assert len(found) == 100 and said["target"] == "box:2" and said["target_detection"] == 2
    assert all(set(d) == {"box", "label", "name", "score"} and len(d["box"]) == 4 for d in found)
    scores = [d["score"] for d in found]
    assert scores == sorted(scores, reverse=True) and said["objective"] == pytest.approx(scores[2])
    assert all(0 <= d["box"][0] < d["box"][2] <= 128 and 0 <= d["box"][1] < d["box"][3] <= 128 for d in found)
    with np.load(out) as arrays:
        table = arrays["output"]
        assert table.shape == (100, 6) and arrays["input"].shape == (1, 3, 128, 128)  # its own size, in [0, 1]
        assert 0 <= arrays["input"].min() and arrays["input"].max() <= 1
    np.testing.assert_allclose(table[:, :4], [d["box"] for d in found], rtol=1e-6)
    np.testing.assert_allclose(table[:, 4], scores, rtol=1e-6)
    assert [int(v) for v in table[:, 5]] == [d["label"] for d in found]


def test_capture_prints_the_detections_and_marks_the_target(capsys):
    assert main(["capture", *MODEL, "--input", "sample:scene_four_shapes", "--layers", "backbone.body.16",
                 "--target", "box:1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("  box:0 ") and lines[1].startswith("> box:1 ") and "(class " in lines[1]
    assert "... and 80 more (--json lists them all)" in lines[20] and "target box:1" in lines[-1]


@pytest.mark.parametrize(("argv", "says"), [
    ([*MODEL, "--target", "box:100"], "the model made 100 detection(s) above the score threshold 0, box:0 to box:99."),
    ([*MODEL, "--target", "box:0", "--score-threshold", "0.5"], "detected nothing above the score threshold 0.5"),
    ([*MODEL, "--target", "box:0,0,2,2"], "no detection matches the box (best IoU"),
    ([*MODEL, "--target", "box:1,2,3"], "box:K takes a detection's rank"),
    ([*MODEL, "--target", "top1"], "is for classifiers; this model detects objects"),
    (["--model", "demo", "--target", "box:0"], "is for object detectors; this model does not detect objects"),
    (["--model", "demo", "--score-threshold", "0.5"], "A score threshold is for detection models"),
])
def test_detection_errors_are_one_line_exit_2(argv, says, capsys):
    layer = "conv1" if "demo" in argv else "backbone.body.0"
    assert main(["capture", *argv, "--input", "sample:scene_four_shapes", "--layers", layer]) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1 and "Traceback" not in err


def test_attribute_explains_one_box_and_says_which(tmp_path, capsys):
    out = tmp_path / "map.npy"
    assert main(["attribute", *MODEL, "--input", "sample:scene_four_shapes", "--method", "gradcam",
                 "--target", "box:3", "--json", "--out", str(out)]) == 0
    said = json.loads(capsys.readouterr().out)
    assert said["target"] == "box:3" and said["target_detection"] == 3 and said["layer"].startswith("backbone.fpn.layer_blocks.")
    assert len(said["detections"]) == 100 and np.load(out).shape == (128, 128)
    png = tmp_path / "map.png"
    assert main(["attribute", *MODEL, "--input", "sample:scene_four_shapes", "--method", "gradcam",
                 "--target", "box:3", "--out", str(png)]) == 0
    line = capsys.readouterr().out.splitlines()[0]
    box = said["detections"][3]
    assert line.startswith(f"gradcam for box:3 (detection 3: {box['name']} {box['score']:.3f} at [")
    from PIL import Image

    x0, y0 = (round(2 * v) for v in box["box"][:2])  # its box outlined in yellow over the map, drawn 2x: 256 a side
    pixels = np.asarray(Image.open(png).convert("RGB"))
    assert pixels.shape == (256, 256, 3) and tuple(pixels[y0 + 5, x0 + 1]) == (255, 212, 0)


@pytest.mark.parametrize("method, options", [("ig", ["--steps", "2"]), ("occlusion", ["--window", "64"]),
                                             ("smoothgrad", ["--samples", "2", "--noise-seed", "0"])])
def test_methods_over_perturbed_copies_follow_the_box_and_are_scored(method, options, tmp_path, capsys):
    """ig, occlusion and SmoothGrad of a box on a torchvision detector, scored by that box's score."""
    out = tmp_path / "m.npy"
    assert main(["attribute", *MODEL, "--input", "sample:scene_four_shapes", "--method", method, *options,
                 "--target", "box:1", "--metrics", "deletion", "--metric-steps", "2", "--json", "--out", str(out)]) == 0
    said = json.loads(capsys.readouterr().out)
    assert said["target_detection"] == 1 and len(said["detections"]) > 1
    curve = said["metrics"]["deletion"]
    assert "box:1" in curve["score"] and len(curve["scores"]) == 3
    assert curve["scores"][0] == pytest.approx(said["detections"][1]["score"], rel=1e-4)
    from inspector.core import load_input

    assert np.load(out).shape[-2:] == load_input("sample:scene_four_shapes").shape[-2:]  # the image's own size


def test_rollout_refuses_a_detector_in_one_line(tmp_path, capsys):
    assert main(["attribute", *MODEL, "--input", "sample:scene_four_shapes", "--method", "rollout",
                 "--target", "box:0", "--out", str(tmp_path / "m.npy")]) == 2
    err = capsys.readouterr().err
    assert "rollout" in err and err.count("\n") == 1


def test_attribute_drise_with_a_seed_gives_the_same_map_twice(tmp_path, capsys):
    maps = []
    for name in ("a.npy", "b.npy"):
        assert main(["attribute", *MODEL, "--input", "sample:scene_four_shapes", "--method", "drise", "--masks", "12",
                     "--cell", "16", "--mask-seed", "3", "--target", "box:1", "--json", "--out",
                     str(tmp_path / name)]) == 0
        said = json.loads(capsys.readouterr().out)
        maps.append(np.load(tmp_path / name))
    assert said["settings"]["masks"] == 12 and said["settings"]["cell"] == 16 and said["settings"]["seed"] == 3
    assert said["target_detection"] == 1 and maps[0].shape == (128, 128) and np.array_equal(maps[0], maps[1])
    assert maps[0].min() == 0 and maps[0].max() == 1
    assert main(["attribute", *MODEL, "--input", "sample:scene_four_shapes", "--method", "drise", "--masks", "0",
                 "--out", str(tmp_path / "c.npy")]) == 2
    assert "--masks must be at least 1, not 0." in capsys.readouterr().err


def test_attribute_each_box_stacks_the_maps_of_box_0_to_k_and_tiles_them(tmp_path, capsys):
    """`--each-box` on the demo detector: the .npy stacks exactly the maps separate `--target box:K` runs
    make, in rank order; the picture tiles one cell per box."""
    demo = ["--model", "demo-detector", "--input", "sample:detect_four_shapes", "--method", "gradcam"]
    stacked = tmp_path / "each.npy"
    assert main(["attribute", *demo, "--each-box", "--json", "--out", str(stacked)]) == 0
    said = json.loads(capsys.readouterr().out)
    shown = [d for d in said["detections"] if d["score"] >= 0.5]
    assert 2 <= len(shown) <= 9 and [b["target"] for b in said["boxes"]] == [f"box:{k}" for k in range(len(shown))]
    from inspector.core import load_input

    h, w = load_input("sample:detect_four_shapes").shape[-2:]
    maps = np.load(stacked)
    assert maps.shape == (len(shown), h, w)
    for k in range(len(shown)):
        alone = tmp_path / f"box{k}.npy"
        assert main(["attribute", *demo, "--target", f"box:{k}", "--out", str(alone)]) == 0
        np.testing.assert_array_equal(maps[k], np.load(alone))
    capsys.readouterr()
    picture = tmp_path / "each.png"
    assert main(["attribute", *demo, "--each-box", "2", "--out", str(picture)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("gradcam for each of 2 boxes at ") and lines[1].startswith("  box:0 ")
    from PIL import Image

    from inspector.core.attribution.per_box import CAPTION, GAP

    k = -(-256 // min(h, w))  # each tile at least 256 pixels on its short side, in k x k blocks
    assert Image.open(picture).size == (2 * k * w + GAP, k * h + CAPTION)  # two cells side by side


@pytest.mark.parametrize(("argv", "says"), [
    (["--each-box", "--target", "box:0"], "leave out --target"),
    (["--each-box", "0"], "--each-box explains the best N boxes, N at least 1, not 0."),
    (["--min-score", "0.3"], "add --each-box"),
    (["--each-box", "--method", "eigencam"], "its map is the same for every box"),
    (["--each-box", "--min-score", "0.99"], "No detection scores 0.99 or more (100 found, the best"),
    (["--each-box", "--model", "demo"], "Each box is for a detection model"),
])
def test_attribute_each_box_errors_are_one_line_exit_2(argv, says, tmp_path, capsys):
    model = [] if "--model" in argv else MODEL
    method = [] if "--method" in argv else ["--method", "saliency"]
    assert main(["attribute", *model, "--input", "sample:scene_four_shapes", *method, *argv,
                 "--out", str(tmp_path / "m.npy")]) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "m.npy").exists()


def test_diff_keeps_the_boxes_from_the_score_threshold_on_both_detectors(capsys):
    """--score-threshold reaches both models of a diff (it was ignored: the 0.81 triangle and 0.77 circle of
    detect_four_shapes stayed); on a model that keeps no threshold it is the one-line error capture gives."""
    demo = ["diff", "--model", "demo-detector", "--against-model", "demo-detector", "--input",
            "sample:detect_four_shapes", "--layers", "head.classification_head", "--json"]
    assert main([*demo, "--score-threshold", "0.85"]) == 0
    changes = json.loads(capsys.readouterr().out)["boxes"]["changes"]
    assert [(c["kind"], c["before"]["name"], c["after"]["name"]) for c in changes] == \
        [("kept", "star", "star"), ("kept", "checkerboard", "checkerboard")]
    assert all(c[side]["score"] >= 0.85 for c in changes for side in ("before", "after"))
    assert main(["diff", "--model", "demo", "--against-model", "demo", "--input", "sample:star",
                 "--score-threshold", "0.85"]) == 2
    assert capsys.readouterr().err == "error: A score threshold is for detection models; this model keeps none.\n"
