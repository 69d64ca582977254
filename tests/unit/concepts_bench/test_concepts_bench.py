"""bench --concepts on the demo with tiny sizes: the rows are the medians' ratios, the pass, fit and measures
add up to the run, and the Concepts view's figures are of the calls it names; bad numbers exit 2 at once."""

from __future__ import annotations

import json

import pytest

from inspector.cli import main


def test_concepts_bench_on_the_demo(tmp_path, capsys):
    out = tmp_path / "concepts.json"
    assert main(["bench", "--concepts", "--model", "demo", "--images", "6", "--batch", "3", "--k", "2",
                 "--json", str(out)]) == 0
    row = json.loads(out.read_text())
    assert (row["model"], row["layer"], row["k"], row["images"], row["batch"]) == ("demo", "relu3", 2, 6, 3)
    med = row["median_s"]
    assert row["images_per_s"]["pass"] == pytest.approx(6 / med["pass"])
    assert row["pass/plain"] == pytest.approx(med["plain"] / med["pass"])
    assert 0 < med["pass"] + med["fit"] + med["measure"] <= med["total"] * 1.001
    view = row["view"]
    assert set(view["median_s"]) == {"plain forward+backward", "read_concepts", "concept_relevance_map"}
    for name, seconds in view["median_s"].items():
        assert view["ratio_to_plain"][name] == pytest.approx(seconds / view["median_s"]["plain forward+backward"])
    assert 0 <= view["target"] < 8 and 0 <= view["concept"] < 2
    assert "pass/plain" in capsys.readouterr().out


@pytest.mark.parametrize("flag, value", [("--images", "0"), ("--k", "0"), ("--batch", "-1")])
def test_bad_numbers_exit_2_in_one_line(flag, value, capsys):
    assert main(["bench", "--concepts", "--model", "demo", flag, value]) == 2
    err = capsys.readouterr().err
    assert err == f"error: {flag} must be at least 1, not {value}.\n"
