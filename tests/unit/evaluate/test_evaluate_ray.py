"""The evaluation on a local Ray instance (2 CPUs), cancelled and resumed there, writes the values and summary of
the job in process: each image's maps and metrics are made on a replica as they are here. A local Ray instance
takes 20 s to over 100 s to start on this busy 2-core machine, past the suite's 15 s a test: it runs where
INSPECTOR_RAY_TESTS=1 is set."""

from __future__ import annotations

import csv
import os

import pytest
from evaluate_images import make_images

from inspector.core import load_model
from inspector.core.common.errors import RunCancelled
from inspector.core.evaluate import run_evaluation
from inspector.core.folder_jobs import local_instance


def _values(path):
    with open(path, newline="", encoding="utf-8") as file:
        return [(r["image"], r["method"], r["metric"], float(r["value"])) for r in csv.DictReader(file)]


@pytest.mark.skipif(os.environ.get("INSPECTOR_RAY_TESTS") != "1", reason="starts Ray: INSPECTOR_RAY_TESTS=1 runs it")
def test_ray_evaluation_cancelled_and_resumed_equals_the_in_process_one(tmp_path):
    pytest.importorskip("ray")
    demo = load_model("demo")
    data = make_images(tmp_path / "data", 5)
    options = dict(steps=6, batch=2)
    here = run_evaluation(demo, data, "gradcam,saliency", "deletion,insertion", tmp_path / "here", **options)
    with local_instance(num_cpus=2):
        with pytest.raises(RunCancelled, match="run it again"):
            run_evaluation(demo, data, "gradcam,saliency", "deletion,insertion", tmp_path / "ray", use_ray=True,
                           cancel=lambda: True, **options)
        assert (tmp_path / "ray" / "evaluation.partial.npz").is_file()
        there = run_evaluation(demo, data, "gradcam,saliency", "deletion,insertion", tmp_path / "ray", use_ray=True,
                               **options)
    assert there["skipped"] == here["skipped"] and there["images"] == here["images"] == 5
    ours, theirs = _values(tmp_path / "ray" / "values.csv"), _values(tmp_path / "here" / "values.csv")
    assert [r[:3] for r in ours] == [r[:3] for r in theirs]
    assert [r[3] for r in ours] == pytest.approx([r[3] for r in theirs], abs=1e-6)
    for a, b in zip(there["summary"], here["summary"]):
        assert a["mean"] == pytest.approx(b["mean"], abs=1e-6) and a["ci_high"] == pytest.approx(b["ci_high"],
                                                                                               abs=1e-6)
