"""An evaluation over a folder against `attribute` and `scored` run on each image by hand, its summary against
scipy's and a by-hand Student t interval, and a job stopped (between images or inside a map) and resumed giving the
files of a job never stopped."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest
from scipy import stats

from inspector.core import load_input
from inspector.core.attribution import attribute
from inspector.core.attribution.scores.faithfulness import scored
from inspector.core.common.errors import InputError, RunCancelled, SpecError
from inspector.core.evaluate import EvaluationError, read_summary, run_evaluation
from inspector.core.inputs.files import list_images

FILES = ("summary.json", "summary.csv", "values.json", "values.csv")


@pytest.fixture(scope="module")
def whole(demo, data, tmp_path_factory):
    out = tmp_path_factory.mktemp("whole")
    result = run_evaluation(demo, data, "gradcam,saliency", "deletion,insertion", out, steps=8)
    return out, result


def _rows(path):
    with open(path, newline="", encoding="utf-8") as file:
        return list(csv.DictReader(file))


@pytest.mark.numeric
def test_each_value_is_attribute_and_scored_on_that_image(demo, data, whole):
    out, result = whole
    by_hand = {}
    for path in list_images(data).files:
        if path.name == "broken.png":
            continue
        x = load_input(str(path), demo.preprocess, demo.input_shape)
        for method in ("gradcam", "saliency"):
            found = scored(demo, x, attribute(demo, x, method), ("deletion", "insertion"), 8)
            for curve in found.curves:
                by_hand[(path.relative_to(data).as_posix(), method, curve.metric)] = curve.auc
    rows = _rows(out / "values.csv")
    assert [(r["image"], r["method"], r["metric"]) for r in rows] == list(by_hand)  # the listing's order
    assert {r["number"] for r in rows} == {"auc"}
    for r in rows:
        assert float(r["value"]) == pytest.approx(by_hand[(r["image"], r["method"], r["metric"])], abs=1e-6)
    values = json.loads((out / "values.json").read_text())
    assert [i["image"] for i in values["images"]] == ["a/0.png", "a/2.png", "b/1.png"]
    for image in values["images"]:
        for (name, method, metric), auc in by_hand.items():
            if name == image["image"]:
                assert image["values"][method][metric]["auc"] == pytest.approx(auc, abs=1e-6)
    assert result["skipped"] == values["skipped"] == [
        {"path": "a/broken.png", "reason": result["skipped"][0]["reason"]}]
    assert result["images"] == 3 and result["model"] == "demo" and result["settings"] == {"protocol": "inspector",
                                                                                          "steps": 8}


@pytest.mark.numeric
def test_the_summary_is_the_mean_and_its_student_t_interval(whole):
    out, result = whole
    rows = _rows(out / "values.csv")
    assert len(result["summary"]) == 4 and result["confidence"] == 0.95
    t_975_2 = 4.302652729749464  # Student t, 2 degrees of freedom, 97.5th percentile (from a table)
    for row, table_row in zip(result["summary"], _rows(out / "summary.csv")):
        v = np.array([float(r["value"]) for r in rows if (r["method"], r["metric"]) == (row["method"], row["metric"])])
        mean = sum(v) / 3
        s = math.sqrt(sum((vi - mean) ** 2 for vi in v) / 2)
        assert row["n"] == 3 and row["mean"] == pytest.approx(mean, rel=1e-12)
        assert row["std"] == pytest.approx(s, rel=1e-12)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((mean - t_975_2 * s / math.sqrt(3),
                                                                 mean + t_975_2 * s / math.sqrt(3)), rel=1e-9)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx(stats.t.interval(0.95, 2, loc=v.mean(),
                                                                                 scale=stats.sem(v)), rel=1e-12)
        assert float(table_row["ci_high"]) == row["ci_high"] and table_row["method"] == row["method"]
    assert read_summary(out) == result


@pytest.mark.numeric
def test_under_a_named_protocol_each_value_is_scored_under_it(demo, data, tmp_path):
    result = run_evaluation(demo, data, "saliency", "deletion,insertion", tmp_path / "out", protocol="rise2018")
    assert result["settings"] == {"protocol": "rise2018", "steps": None}
    values = json.loads((tmp_path / "out" / "values.json").read_text())
    for image in values["images"]:
        x = load_input(str(data / image["image"]), demo.preprocess, demo.input_shape)
        found = scored(demo, x, attribute(demo, x, "saliency"), ("deletion", "insertion"), protocol="rise2018")
        assert found.curves[0].protocol == "rise2018" and len(found.curves[0].scores) == 4096 // 224 + 2
        for curve in found.curves:
            assert image["values"]["saliency"][curve.metric]["auc"] == pytest.approx(curve.auc, abs=1e-6)


def _stopped_and_resumed(demo, data, out, methods, cancel, says):
    with pytest.raises(RunCancelled, match=says):
        run_evaluation(demo, data, methods, "deletion,insertion", out, steps=8, cancel=cancel)
    assert (out / "evaluation.partial.npz").is_file() and not (out / "summary.json").exists()
    seen = []
    resumed = run_evaluation(demo, data, methods, "deletion,insertion", out, steps=8,
                             progress=lambda d, t: seen.append(d))
    assert not (out / "evaluation.partial.npz").exists() and not (out / "evaluation.lock").exists()
    return resumed, seen


def test_stopped_between_images_and_resumed_writes_the_same_files(demo, data, whole, tmp_path):
    calls = []
    resumed, seen = _stopped_and_resumed(demo, data, tmp_path / "out", "gradcam,saliency",
                                         lambda: calls.append(1) or len(calls) >= 2, "after 2 of 4 images; run it again")
    assert seen[0] == 2  # the broken file and the first image were kept
    assert resumed == whole[1]
    for name in FILES:
        assert (tmp_path / "out" / name).read_bytes() == (whole[0] / name).read_bytes(), name
    again = run_evaluation(demo, data, "gradcam,saliency", "deletion,insertion", tmp_path / "out", steps=8)
    assert again == whole[1]  # finished: read back


def test_stopped_inside_a_map_keeps_the_images_before_it(demo, data, tmp_path):
    """Integrated gradients ask `cancel` before each pass. Once the broken file and the first image are done, the
    job's own question after that image is answered no, the next (integrated gradients', inside the second image's
    map) yes: the job stops inside the map and keeps the first image."""
    asked = []

    def cancel() -> bool:
        if asked and asked[-1] >= 2:  # counting the questions since two were done
            asked.append(asked[-1] + 1)
        return bool(asked) and asked[-1] >= 4

    def progress(done: int, total: int) -> None:
        if done == 2:
            asked.append(2)

    with pytest.raises(RunCancelled, match="after 2 of 4 images"):
        run_evaluation(demo, data, "ig", "deletion", tmp_path / "out", steps=4, cancel=cancel, progress=progress)
    assert asked == [2, 3, 4]  # the job's question after the image, then integrated gradients' first
    resumed = run_evaluation(demo, data, "ig", "deletion", tmp_path / "out", steps=4)
    straight = run_evaluation(demo, data, "ig", "deletion", tmp_path / "straight", steps=4)
    assert resumed["summary"] == straight["summary"]
    assert (tmp_path / "out" / "values.csv").read_bytes() == (tmp_path / "straight" / "values.csv").read_bytes()


@pytest.mark.parametrize("methods, metrics, options, error, says", [
    ("gradcam,nope", "deletion", {}, SpecError, "--methods takes saliency, gradcam"),
    ("drise", "deletion", {}, SpecError, "not 'drise'"),  # a detector's method
    ("gradcam", "deletion,nope", {}, SpecError, "--metrics takes deletion, insertion, road, mprt, random-logit "),
    ("gradcam", "deletion", {"protocol": "nope"}, SpecError, r"Unknown protocol 'nope'\. Protocols: inspector, "
                                                             "rise2018"),
    ("gradcam", "deletion", {"protocol": "rise2018", "steps": 8}, SpecError, "The protocol rise2018 fixes its steps"),
    ("gradcam", "deletion", {"steps": 0}, SpecError, "--metric-steps must be a whole number of at least 1"),
    ("gradcam", "deletion", {"batch": 0}, SpecError, "--batch must be a whole number of at least 1"),
])
def test_wrong_arguments_are_one_line_and_write_nothing(demo, data, tmp_path, methods, metrics, options, error,
                                                        says):
    with pytest.raises(error, match=says) as raised:
        run_evaluation(demo, data, methods, metrics, tmp_path / "out", **options)
    assert "\n" not in str(raised.value) and not (tmp_path / "out").exists()


def test_a_folder_without_images_a_file_as_out_and_another_jobs_folder_are_refused(demo, data, tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="No images in"):
        run_evaluation(demo, tmp_path / "empty", "gradcam", "deletion", tmp_path / "out")
    with pytest.raises(InputError):
        run_evaluation(demo, tmp_path / "nowhere", "gradcam", "deletion", tmp_path / "out")
    (tmp_path / "file").write_text("x")
    with pytest.raises(SpecError, match="is a file"):
        run_evaluation(demo, data, "gradcam", "deletion", tmp_path / "file")
    (tmp_path / "atlas").mkdir()
    (tmp_path / "atlas" / "atlas.json").write_text("{}")
    with pytest.raises(EvaluationError, match="holds an atlas"):
        run_evaluation(demo, data, "gradcam", "deletion", tmp_path / "atlas")
    assert not (tmp_path / "out").exists() and sorted(p.name for p in (tmp_path / "atlas").iterdir()) == ["atlas.json"]


def test_another_evaluation_in_the_folder_is_refused(demo, data, whole):
    with pytest.raises(EvaluationError, match="holds the evaluation of a different job .* methods gradcam, saliency"):
        run_evaluation(demo, data, "saliency", "deletion", whole[0], steps=8)


def test_a_saved_state_changed_after_it_was_saved_is_refused_in_one_line(demo, data, tmp_path):
    out = tmp_path / "out"
    calls = []
    with pytest.raises(RunCancelled):
        run_evaluation(demo, data, "saliency", "deletion", out, steps=4,
                       cancel=lambda: calls.append(1) or len(calls) >= 2)
    with np.load(out / "evaluation.partial.npz") as arrays:
        done, values = arrays["done"], arrays["values"].copy()
    # a/0.png done, a/broken.png skipped (the listing's order: a/0, a/2, a/broken, b/1)
    assert done.tolist() == [True, False, True, False] and np.isfinite(values[0, 0]) and np.isnan(values[1:]).all()
    values[0, 0] = 0.5
    np.savez(out / "evaluation.partial.npz", done=done, values=values)
    with pytest.raises(EvaluationError, match="is damaged .*checksum does not match.*--restart"):
        run_evaluation(demo, data, "saliency", "deletion", out, steps=4)
    again = run_evaluation(demo, data, "saliency", "deletion", out, steps=4, restart=True)
    assert again["images"] == 3
