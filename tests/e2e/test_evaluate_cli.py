"""`network-inspector evaluate` as a command: what needs no model is refused in one line before torch is imported
(an unknown method, metric or protocol, a data folder missing or without images, an --out that is a file or
another kind of job's folder), and a run prints its summary (the table, or summary.json with --json)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from cli_here import answers_in_one_interpreter, refused_early, run_here

from inspector.core.records.methods import METHODS

sys.path.insert(0, str(Path(__file__).parents[1] / "unit" / "evaluate"))
from evaluate_images import make_images  # noqa: E402

PROTOCOLS = "inspector, rise2018"
#: the methods that explain a classifier's class (the method table's rows; D-RISE explains a detector's box)
CLASSIFIERS = ", ".join(m.name for m in METHODS.values() if m.classifiers)


def test_what_needs_no_model_is_refused_before_torch(tmp_path):
    data = make_images(tmp_path / "data")
    (tmp_path / "empty").mkdir()
    (tmp_path / "file").write_text("x")
    (tmp_path / "atlas").mkdir()
    (tmp_path / "atlas" / "atlas.json").write_text("{}")
    out = str(tmp_path / "out")
    cases = {  # the arguments after evaluate --model demo, and what evaluate says
        "method": (("--data", str(data), "--methods", "gradcam,nope", "--out", out),
                   f"error: --methods takes {CLASSIFIERS} (comma-separated), not 'gradcam,nope'."),
        "metric": (("--data", str(data), "--methods", "gradcam", "--metrics", "deletion,nope", "--out", out),
                   "error: --metrics takes deletion, insertion, road, mprt, random-logit (comma-separated), not "
                   "'deletion,nope'."),
        "mprt mode": (("--data", str(data), "--methods", "gradcam", "--metrics", "mprt", "--mprt", "sideways",
                       "--out", out), "error: Unknown MPRT mode 'sideways'. Modes: cascading, independent."),
        "mprt threshold": (("--data", str(data), "--methods", "gradcam", "--metrics", "mprt", "--mprt-threshold",
                            "1.5", "--out", out),
                           "error: The MPRT threshold is a Spearman correlation above 0 and at most 1, not 1.5."),
        "seed without its metric": (("--data", str(data), "--methods", "gradcam", "--metrics", "deletion",
                                     "--mprt-seed", "3", "--out", out),
                                    "error: --mprt-seed is for --metrics mprt: add it to --metrics, or leave "
                                    "--mprt-seed out."),
        "road noise": (("--data", str(data), "--methods", "gradcam", "--metrics", "road", "--road-noise", "-1",
                        "--out", out), "error: ROAD's noise is a standard deviation, 0 or more, not -1.0."),
        "random-logit of a class-agnostic map": (
            ("--data", str(data), "--methods", "eigencam", "--metrics", "random-logit", "--out", out),
            "error: eigencam explains no class, so random-logit has no other class to compare its map with: leave "
            "eigencam or random-logit out."),
        "protocol": (("--data", str(data), "--methods", "gradcam", "--protocol", "nope", "--out", out),
                     f"error: Unknown protocol 'nope'. Protocols: {PROTOCOLS}."),
        "steps": (("--data", str(data), "--methods", "gradcam", "--metric-steps", "0", "--out", out),
                  "error: --metric-steps must be a whole number of at least 1, not 0."),
        "steps of rise2018": (("--data", str(data), "--methods", "gradcam", "--protocol", "rise2018", "--metric-steps",
                               "8", "--out", out),
                              "error: The protocol rise2018 fixes its steps (224 pixels a step): leave --metric-steps "
                              "out, or use the protocol inspector."),
        "batch": (("--data", str(data), "--methods", "gradcam", "--batch", "0", "--out", out),
                  "error: --batch must be a whole number of at least 1, not 0."),
        "no folder": (("--data", str(tmp_path / "nowhere"), "--methods", "gradcam", "--out", out),
                      f"error: Not a folder or a glob pattern: {tmp_path / 'nowhere'}"),
        "no images": (("--data", str(tmp_path / "empty"), "--methods", "gradcam", "--out", out),
                      f"error: No images in {tmp_path / 'empty'} (looked for .png, .jpg, .jpeg, .bmp, .tif, .tiff, "
                      f".webp, .gif, in nested folders too)."),
        "out a file": (("--data", str(data), "--methods", "gradcam", "--out", str(tmp_path / "file")),
                       f"error: --out {tmp_path / 'file'} is a file; it must be a folder."),
        "out an atlas": (("--data", str(data), "--methods", "gradcam", "--out", str(tmp_path / "atlas")),
                         f"error: {tmp_path / 'atlas'} holds an atlas (atlas.json), not an evaluation: a folder holds "
                         f"one kind of job; choose another --out for the evaluation."),
    }
    answers = answers_in_one_interpreter([("evaluate", "--model", "demo", *args) for args, _ in cases.values()])
    for (case, (_args, line)), answer in zip(cases.items(), answers):
        try:
            refused_early(answer, line)
        except AssertionError:
            pytest.fail(f"{case}: {answer}")
    assert not (tmp_path / "out").exists()


def test_a_run_prints_its_summary_and_with_json_summary_json(tmp_path):
    data = make_images(tmp_path / "data")
    args = ("evaluate", "--model", "demo-shuffled", "--data", str(data), "--methods", "saliency", "--metrics",
            "deletion", "--metric-steps", "4", "--out", str(tmp_path / "out"))
    done = run_here(*args)
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    row = summary["summary"][0]
    assert summary["model"] == "demo-shuffled" and summary["images"] == 3
    assert done.stdout.splitlines()[1].split() == ["saliency", "deletion", "auc", f"{row['mean']:.4f}",
                                                   f"[{row['ci_low']:.4f},", f"{row['ci_high']:.4f}]", "n=3"]
    assert "skipped a/broken.png: " in done.stderr and "evaluate: 100%" in done.stderr  # the bar, with time left
    again = run_here(*args, "--json")  # finished: read back, the same numbers
    assert again.returncode == 0 and json.loads(again.stdout) == summary


def test_a_sanity_metric_is_run_with_its_flags_said_in_the_table(tmp_path):
    data = make_images(tmp_path / "data")
    done = run_here("evaluate", "--model", "demo", "--data", str(data), "--methods", "saliency", "--metrics",
                    "random-logit", "--random-logit-seed", "3", "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["settings"] == {"protocol": "inspector", "steps": 50, "random_logit_seed": 3}
    lines = done.stdout.splitlines()
    assert lines[0].startswith("demo on 3 images (1 skipped), protocol inspector, 50 steps, random_logit_seed 3;")
    assert [line.split()[:3] for line in lines[1:4]] == [["saliency", "random-logit", n]
                                                         for n in ("spearman_abs", "spearman", "ssim")]
    assert lines[1].split()[3] == f"{summary['summary'][0]['mean']:.4f}"
