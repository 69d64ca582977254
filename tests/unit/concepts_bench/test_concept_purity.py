"""The purity table: purity worked out by hand, and a tiny run on the demo whose rows are the purities of the
top images that the concepts' and the atlas's own records list."""

from __future__ import annotations

import json
import statistics

import pytest

from inspector.bench.concept_purity import concept_purity, purity, shapes_folder, table
from inspector.demo.shapes import CLASSES


def test_purity_is_the_share_of_the_most_common_class():
    assert purity(["star/1.png", "star/2.png", "ring/3.png", "star/4.png"]) == (0.75, "star")
    assert purity(["ring/1.png"]) == (1.0, "ring")
    assert purity([]) == (0.0, "")


def test_shapes_folder_has_each_class_in_its_folder(tmp_path):
    shapes_folder(tmp_path, 2)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(CLASSES)
    assert all(len(list((tmp_path / c).glob("*.png"))) == 2 for c in CLASSES)


def test_a_tiny_run_reports_the_records_top_images_purity(tmp_path):
    lines = []
    row = concept_purity(per_class=2, k=3, top=4, method="sae", sparsity=2, out=tmp_path,
                         log=lines.append)  # (sae: no seconds importing scikit-learn)
    record = json.loads((tmp_path / "concepts" / "concepts.json").read_text())
    atlas = json.loads((tmp_path / "atlas" / "atlas.json").read_text())
    expected = [purity([e["image"] for e in c["top"]])[0] for c in record["concepts"]]
    assert [c["purity"] for c in row["concepts"]] == expected
    channels = [purity([e["image"] for e in t])[0] for t in atlas["layers"]["relu3"]["top"]]
    assert [c["purity"] for c in row["channels"]] == channels and len(channels) == 64
    assert row["summary"]["concepts"]["mean"] == pytest.approx(statistics.fmean(expected))
    assert row["summary"]["channels"]["best_3_mean"] == pytest.approx(statistics.fmean(sorted(channels)[-3:]))
    assert all(c["top"] == 4 for c in row["concepts"])
    assert lines == table(row) and lines[-1].startswith("| channels | 64 |")
