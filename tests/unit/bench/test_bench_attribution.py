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
