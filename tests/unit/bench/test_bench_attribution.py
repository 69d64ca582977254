"""Issue 26: `bench --attribution` measures ours against captum on the same settings: the maps of ig and
occlusion agree (so the times compare like with like), the ratio is ours over captum's."""

from __future__ import annotations

import pytest

pytest.importorskip("captum")


def test_the_attribution_bench_runs_and_compares_like_with_like():
    from inspector.bench.attribution import bench_model, format_header, format_row

    lines = []
    rows = bench_model("demo", ("ig", "occlusion", "smoothgrad"), repeats=1, log=lines.append)
    by = {r["method"]: r for r in rows}
    assert by["ig"]["rel_l2"] < 1e-3 and by["occlusion"]["rel_l2"] < 1e-4  # the same maps, timed
    assert 0 < by["smoothgrad"]["rel_l2"] < 1  # other noise draws, the same kind of map
    for r in rows:
        assert r["ratio"] == pytest.approx(r["ours_s"] / r["captum_s"]) and r["ours_peak_mb"] >= 0
    assert lines == [format_row(r) for r in rows] and "captum peak" in format_header()


def test_the_attribution_bench_measures_occlusions_boxes_against_whole_copies(monkeypatch):
    from inspector.bench.attribution import bench_model, format_header
    from inspector.core.attribution.passes import regions as occlusion_regions

    # the demo's 64 px input under 32 px windows saves too little for the boxes: used here all the same
    monkeypatch.setattr(occlusion_regions, "WORTH", 10.0)
    passes = []
    run = occlusion_regions.Regions.run
    monkeypatch.setattr(occlusion_regions.Regions, "run", lambda self, which, b=None: passes.append(which) or
                        run(self, which, b))
    lines = []
    rows = bench_model("demo", ("occlusion",), repeats=1, log=lines.append, against="whole")
    # ours on boxes: the check, then 3 x 3 windows in 2 passes; the whole copies none
    assert len(passes) == 3 and rows[0]["against"] == "whole" and rows[0]["rel_l2"] < 1e-5
    assert format_header("whole").split()[3] == "whole"


def test_each_repeats_own_ratio_is_kept_and_shown_as_a_range(monkeypatch):
    """The median ratio is over the medians; each repeat's own ratio (its two runs back to back) is kept too,
    and the row shows their lowest and highest: how far the machine moved the figure during the bench."""
    import numpy as np

    from inspector.bench import attribution as bench

    seconds = iter([2.0, 4.0, 3.0, 2.0])  # ours, captum, ours, captum
    monkeypatch.setattr(bench, "_timed", lambda run, dev: (next(seconds), 0, np.ones((3, 4, 4))))
    lines = []
    (row,) = bench.bench_model("demo", ("ig",), repeats=2, log=lines.append)
    assert row["pair_ratios"] == [0.5, 1.5] and row["ratio"] == pytest.approx(2.5 / 3.0)
    assert "0.50-1.50x" in lines[-1] and "pairs" in bench.format_header()


def test_the_ig_auto_bench_times_captum_at_the_steps_auto_chose():
    from inspector.bench.ig_auto import bench_ig_auto
    from inspector.core import load_input, load_model
    from inspector.core.attribution import attribute
    from inspector.core.inputs.samples import list_samples

    lines = []
    (row,) = bench_ig_auto(("demo",), images=1, log=lines.append)
    demo = load_model("demo")
    x = load_input(f"sample:{list_samples()[0]}", demo.preprocess, demo.input_shape)
    found = attribute(demo, x, "ig", None, options={"steps": "auto"})  # top1: the class the bench took
    assert row["steps"] == dict(found.details)["steps"] and row["steps"] in (5, 9, 17, 33, 65, 129, 257)
    assert row["ratio"] == row["auto_s"] / row["captum_s"] and len(lines) == 3
