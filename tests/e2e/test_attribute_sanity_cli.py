"""Issue 55 from the command: `attribute --metrics mprt,random-logit` says MPRT's similarities at each step, its
verdict, seed, mode, threshold and time, and random-logit's other class, similarity and seed (text and --json),
the numbers those of the API's `mprt` and `random_logit` called with the same seeds; a seed not given is drawn, said,
and brings the same numbers back; what the checks cannot take is one line, exit 2, before torch is imported."""

from __future__ import annotations

import json

import pytest
from cli_here import answers_in_one_interpreter, refused_early

from inspector.cli.dispatch import main
from inspector.core import load_input, load_model
from inspector.core.attribution.sanity.random_logit import random_logit
from inspector.core.attribution.sanity.randomisation import mprt

DEMO = ["attribute", "--model", "demo", "--input", "sample:star"]


@pytest.fixture(scope="module")
def demo():
    model = load_model("demo")
    return model, load_input("sample:star", model.preprocess, model.input_shape)


@pytest.mark.numeric
def test_the_json_report_equals_the_api_with_the_same_seeds(demo, tmp_path, capsys):
    code = main([*DEMO, "--method", "saliency", "--metrics", "deletion,mprt,random-logit", "--mprt-seed", "3",
                 "--random-logit-seed", "4", "--json", "--out", str(tmp_path / "s.npy")])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    report = json.loads(captured.out)
    assert list(report["metrics"]) == ["deletion"] and list(report["sanity"]) == ["mprt", "random-logit"]
    model, x = demo
    by_hand = mprt(model, x, "saliency", seed=3)
    said = report["sanity"]["mprt"]
    assert (said["mode"], said["seed"], said["seed_drawn"], said["threshold"]) == ("cascading", 3, False, 0.5)
    assert said["verdict"] == by_hand.verdict and said["changes"] == by_hand.changes and said["seconds"] > 0
    assert [step["layer"] for step in said["steps"]] == list(by_hand.steps)
    for step, alike in zip(said["steps"], by_hand.similarities, strict=True):
        assert step["spearman_abs"] == pytest.approx(alike.spearman_abs, abs=1e-12)
        assert step["spearman_signed"] == pytest.approx(alike.spearman_signed, abs=1e-12)
        assert step["ssim"] == pytest.approx(alike.ssim, abs=1e-12)
    other = random_logit(model, x, "saliency", seed=4)
    said = report["sanity"]["random-logit"]
    assert (said["target_index"], said["other_index"], said["seed"]) == (3, other.other_index, 4)
    assert (said["spearman_abs"], said["spearman_signed"], said["ssim"]) == pytest.approx(
        (other.similarity.spearman_abs, other.similarity.spearman_signed, other.similarity.ssim), abs=1e-12)
    words = captured.err.splitlines()  # with --json the words go to stderr
    assert any(line.startswith("mprt cascading, seed 3, threshold 0.5: " + by_hand.verdict) for line in words)
    assert sum(line.startswith("  step ") for line in words) == len(by_hand.steps)


@pytest.mark.numeric
def test_a_drawn_seed_is_said_and_brings_the_same_numbers_back(demo, tmp_path, capsys):
    assert main([*DEMO, "--method", "gradcam", "--metrics", "mprt,random-logit", "--mprt", "independent",
                 "--mprt-threshold", "0.3", "--out", str(tmp_path / "g.npy")]) == 0
    lines = capsys.readouterr().out.splitlines()
    head = next(line for line in lines if line.startswith("mprt "))
    assert head.startswith("mprt independent, seed ") and "--mprt-seed" in head and ", threshold 0.3: " in head
    seed = int(head.split(", seed ")[1].split(" ")[0])
    model, x = demo
    again = mprt(model, x, "gradcam", mode="independent", seed=seed, threshold=0.3)
    assert head.split(", threshold 0.3: ", 1)[1].rsplit(" (", 1)[0] == again.verdict
    last = again.similarities[-1]
    assert lines[lines.index(head) + len(again.steps)].endswith(
        f"Spearman |map| {last.spearman_abs:.3f}, signed {last.spearman_signed:.3f}, SSIM {last.ssim:.3f}")
    line = next(line for line in lines if line.startswith("random-logit, seed "))
    other = random_logit(model, x, "gradcam", seed=int(line.split(", seed ")[1].split(" ")[0]))
    assert f"the map of class {other.other_index} (" in line and "against class 3 (star)'s" in line
    assert f"Spearman |map| {other.similarity.spearman_abs:.3f}," in line


def test_what_the_checks_cannot_take_is_one_line_before_torch(tmp_path):
    out = str(tmp_path / "m.npy")
    cases = {
        "mode": (["--method", "gradcam", "--metrics", "mprt", "--mprt", "sideways"],
                 "error: Unknown MPRT mode 'sideways'. Modes: cascading, independent."),
        "threshold 0": (["--method", "gradcam", "--metrics", "mprt", "--mprt-threshold", "0"],
                        "error: The MPRT threshold is a Spearman correlation above 0 and at most 1, not 0.0."),
        "threshold above 1": (["--method", "gradcam", "--metrics", "mprt", "--mprt-threshold", "1.5"],
                              "error: The MPRT threshold is a Spearman correlation above 0 and at most 1, not 1.5."),
        "seed without mprt": (["--method", "gradcam", "--metrics", "deletion", "--mprt-seed", "3"],
                              "error: --mprt-seed is for --metrics mprt: add mprt to --metrics, or leave --mprt-seed "
                              "out."),
        "mode without mprt": (["--method", "gradcam", "--metrics", "random-logit", "--mprt", "independent"],
                              "error: --mprt is for --metrics mprt: add mprt to --metrics, or leave --mprt out."),
        "seed without random-logit": (["--method", "gradcam", "--metrics", "mprt", "--random-logit-seed", "1"],
                                      "error: --random-logit-seed is for --metrics random-logit: add random-logit "
                                      "to --metrics, or leave --random-logit-seed out."),
        "bad seed": (["--method", "gradcam", "--metrics", "mprt", "--mprt-seed", "x"],
                     "error: --mprt-seed must be a whole number from 0 to 4294967295, not 'x'."),
        "class-agnostic": (["--method", "eigencam", "--metrics", "random-logit"],
                           "error: eigencam explains no class, so there is no other class to compare it with: "
                           "random-logit needs a method that explains a class."),
        "unknown metric": (["--method", "gradcam", "--metrics", "mprt,nope"],
                           "error: --metrics takes deletion, insertion, road, mprt, random-logit (comma-separated), "
                           "not 'mprt,nope'."),
        "each box": (["--method", "gradcam", "--metrics", "mprt", "--each-box"],
                     "error: --metrics mprt check a classifier's map; --each-box explains a detector's boxes."),
    }
    answers = answers_in_one_interpreter([[*DEMO, *args, "--out", out] for args, _ in cases.values()])
    for (case, (_args, line)), answer in zip(cases.items(), answers):
        try:
            refused_early(answer, line)
        except AssertionError:
            pytest.fail(f"{case}: {answer}")
    assert not (tmp_path / "m.npy").exists()
