"""The metrics road, mprt and random-logit of an evaluation over a folder (issue 55 item 6): each image's values
equal ROAD (`scored`), MPRT (`mprt`) and random-logit (`random_logit`) run by hand on that image with the same
seeds; the settings (their defaults filled in, the seeds fixed at 0) are written with the numbers; a job stopped and
resumed writes the files of a job never stopped; a wrong setting is one line and writes nothing."""

from __future__ import annotations

import json
import math

import pytest

from inspector.core import load_input
from inspector.core.attribution import attribute
from inspector.core.attribution.sanity.random_logit import random_logit
from inspector.core.attribution.sanity.randomisation import mprt
from inspector.core.attribution.scores.faithfulness import scored
from inspector.core.common.errors import RunCancelled, SpecError
from inspector.core.evaluate import run_evaluation

METRICS = "road,mprt,random-logit"
FILES = ("summary.json", "summary.csv", "values.json", "values.csv")
IMAGES = ("a/0.png", "a/2.png", "b/1.png")  # the listing's order; a/broken.png is skipped


@pytest.fixture(scope="module")
def whole(demo, data, tmp_path_factory):
    out = tmp_path_factory.mktemp("whole")
    return out, run_evaluation(demo, data, "saliency", METRICS, out, options={"road_seed": 5})


def _by_hand(demo, x) -> dict:
    """The three metrics of x's saliency map, each check called on its own, with the job's seeds."""
    road = {c.metric: c.auc for c in scored(demo, x, attribute(demo, x, "saliency"), ("road",), road_noise=0.01,
                                            road_seed=5).curves}
    randomised = mprt(demo, x, "saliency", mode="cascading", seed=0, threshold=0.5)
    last = randomised.similarities[-1]  # cascading: the verdict reads the wholly random model
    other = random_logit(demo, x, "saliency", seed=0)
    return {"road": {"morf_auc": road["road-morf"], "lerf_auc": road["road-lerf"]},
            "mprt": {"spearman_abs_final": last.spearman_abs, "spearman_final": last.spearman_signed,
                     "ssim_final": last.ssim, "changes": float(last.spearman_abs < 0.5)},
            "random-logit": {"spearman_abs": other.similarity.spearman_abs,
                             "spearman": other.similarity.spearman_signed, "ssim": other.similarity.ssim}}


@pytest.mark.numeric
def test_each_value_is_the_check_run_by_hand_on_that_image(demo, data, whole):
    out, result = whole
    values = json.loads((out / "values.json").read_text())
    assert [image["image"] for image in values["images"]] == list(IMAGES)
    for image in values["images"]:
        x = load_input(str(data / image["image"]), demo.preprocess, demo.input_shape)
        expected = _by_hand(demo, x)
        got = image["values"]["saliency"]
        assert set(got) == set(expected)
        for metric, numbers in expected.items():
            assert list(got[metric]) == list(numbers)  # the row's order
            for number, value in numbers.items():
                assert got[metric][number] == pytest.approx(value, abs=1e-9), (image["image"], metric, number)
    assert result["settings"] == {"protocol": "inspector", "steps": 50, "road_noise": 0.01, "road_seed": 5,
                                  "mprt": "cascading", "mprt_seed": 0, "mprt_threshold": 0.5,
                                  "random_logit_seed": 0}
    rows = {(r["metric"], r["number"]): r for r in result["summary"]}
    assert list(rows) == [("road", "morf_auc"), ("road", "lerf_auc"), ("mprt", "spearman_abs_final"),
                          ("mprt", "spearman_final"), ("mprt", "ssim_final"), ("mprt", "changes"),
                          ("random-logit", "spearman_abs"), ("random-logit", "spearman"), ("random-logit", "ssim")]
    changes = [image["values"]["saliency"]["mprt"]["changes"] for image in values["images"]]
    assert rows[("mprt", "changes")]["mean"] == pytest.approx(sum(changes) / 3)  # the share of maps that change


def test_stopped_and_resumed_writes_the_same_files(demo, data, whole, tmp_path):
    out = tmp_path / "out"
    calls = []
    with pytest.raises(RunCancelled, match="after 2 of 4 images"):
        run_evaluation(demo, data, "saliency", METRICS, out, options={"road_seed": 5},
                       cancel=lambda: calls.append(1) or len(calls) >= 2)
    resumed = run_evaluation(demo, data, "saliency", METRICS, out, options={"road_seed": 5})
    assert resumed == whole[1]
    for name in FILES:
        assert (out / name).read_bytes() == (whole[0] / name).read_bytes(), name


@pytest.mark.numeric
def test_independent_mode_reads_the_step_least_like_the_original(demo, data, tmp_path):
    result = run_evaluation(demo, data, "saliency", "mprt", tmp_path / "out",
                            options={"mprt": "independent", "mprt_seed": 2, "mprt_threshold": 0.9})
    assert result["settings"]["mprt"] == "independent" and result["settings"]["mprt_threshold"] == 0.9
    values = json.loads((tmp_path / "out" / "values.json").read_text())
    x = load_input(str(data / IMAGES[0]), demo.preprocess, demo.input_shape)
    by_hand = mprt(demo, x, "saliency", mode="independent", seed=2, threshold=0.9)
    least = min(by_hand.similarities[1:], key=lambda s: s.spearman_abs)
    got = values["images"][0]["values"]["saliency"]["mprt"]
    assert got["spearman_abs_final"] == pytest.approx(least.spearman_abs, abs=1e-9)
    assert got["ssim_final"] == pytest.approx(least.ssim, abs=1e-9)
    assert got["changes"] == float(least.spearman_abs < 0.9) and not math.isnan(got["changes"])


@pytest.mark.parametrize("methods, metrics, options, says", [
    ("saliency", "mprt", {"mprt": "sideways"}, "Unknown MPRT mode 'sideways'. Modes: cascading, independent."),
    ("saliency", "mprt", {"mprt_threshold": 0}, "The MPRT threshold is a Spearman correlation above 0"),
    ("saliency", "mprt", {"mprt_seed": -1}, "--mprt-seed must be a whole number from 0 to"),
    ("saliency", "road", {"road_noise": -0.5}, "ROAD's noise is a standard deviation, 0 or more, not -0.5."),
    ("saliency", "mprt", {"road_seed": 1}, "--road-seed is for --metrics road: add it to --metrics, or leave "
                                           "--road-seed out."),
    ("saliency", "deletion", {"random_logit_seed": 1}, "--random-logit-seed is for --metrics random-logit"),
    ("saliency", "road", {"nope": 1}, "Unknown metric setting 'nope'. Settings: road_noise, road_seed, mprt, "),
    ("gradcam,eigencam", "random-logit", {}, "eigencam explains no class, so random-logit has no other class"),
])
def test_a_wrong_setting_is_one_line_and_writes_nothing(demo, data, tmp_path, methods, metrics, options, says):
    with pytest.raises(SpecError) as raised:
        run_evaluation(demo, data, methods, metrics, tmp_path / "out", options=options)
    assert str(raised.value).startswith(says) and "\n" not in str(raised.value)
    assert not (tmp_path / "out").exists()
