"""The shipped benchmark on the small demo model: what it measures and how it reports it."""

from __future__ import annotations

import json
import statistics

import pytest

from inspector.bench.engine import bench_model, format_header
from inspector.cli import main

# Output + grad_output of every leaf of DemoNet, in floats (shapes from `network-inspector layers
# --model demo`; block.relu runs twice), plus the 3x64x64 input and the 8 logits.
LEAVES = {
    "conv1": 16 * 64 * 64, "bn1": 16 * 64 * 64, "relu1": 16 * 64 * 64, "pool1": 16 * 32 * 32,
    "conv2": 32 * 32 * 32, "bn2": 32 * 32 * 32, "relu2": 32 * 32 * 32, "pool2": 32 * 16 * 16,
    "block.conv1": 32 * 16 * 16, "block.bn1": 32 * 16 * 16, "block.relu": 2 * 32 * 16 * 16,
    "block.conv2": 32 * 16 * 16, "block.bn2": 32 * 16 * 16,
    "conv3": 64 * 8 * 8, "bn3": 64 * 8 * 8, "relu3": 64 * 8 * 8, "pool": 64, "flatten": 64, "fc": 8,
}
HELD_FLOATS = 2 * sum(LEAVES.values()) + 3 * 64 * 64 + 8


def test_bench_row_on_the_demo_model():
    lines = []
    row = bench_model("demo", repeats=3, log=lines.append)
    assert row["leaves"] == len(LEAVES)
    assert row["late_layer"] == "conv3" and row["gradcam_layer"] == "conv3"
    assert row["captures_mb"] == pytest.approx(HELD_FLOATS * 4 / 2**20)
    medians = row["median_s"]
    assert set(medians) == {"plain", "floor", "all", "nostats", "visible", "update", "diagnosed", "late",
                            "saliency", "gradcam"}
    for name, seconds in medians.items():
        assert row["min_s"][name] <= seconds <= row["max_s"][name]
    assert row["all/plain"] == pytest.approx(medians["all"] / medians["plain"])
    assert row["all/floor"] == pytest.approx(medians["all"] / medians["floor"])
    assert row["nostats/floor"] == pytest.approx(medians["nostats"] / medians["floor"])
    assert row["stats_overhead"] == pytest.approx(medians["all"] / medians["nostats"] - 1)
    for stage in ("visible", "update", "diagnosed"):
        assert row[f"{stage}/floor"] == pytest.approx(medians[stage] / medians["floor"])
    # one call times all three stages, so each takes at least as long as the one before
    assert row["min_s"]["visible"] <= row["max_s"]["update"] and row["min_s"]["update"] <= row["max_s"]["diagnosed"]
    assert len(lines) == 1 and lines[0].startswith("demo") and f"{row['all/plain']:.2f}x" in lines[0]
    assert len(format_header().split()) >= 15 and f"{row['update/floor']:.2f}x" in lines[0]


def test_bench_command_writes_json(tmp_path, capsys):
    out = tmp_path / "bench.json"
    assert main(["bench", "--models", "demo", "--repeats", "1", "--json", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("CPU allocator:")
    assert printed[1].split()[:3] == ["model", "plain", "s"]
    rows = json.loads(out.read_text())
    assert [r["model"] for r in rows] == ["demo"]
    assert statistics.median(rows[0]["min_s"].values()) > 0


def test_sweep_reports_every_model_and_goes_on_after_a_failure(tmp_path, capsys):
    """The CI subset of `network-inspector sweep`: a timm ViT, a segmentation model and a broken source."""
    from inspector.cli import main

    out = tmp_path / "sweep.json"
    code = main(["sweep", "--models", "timm:deit_tiny_distilled_patch16_224", "lraspp_mobilenet_v3_large",
                 "timm:nosuch", "--json", str(out)])
    rows = {r["model"]: r for r in json.loads(out.read_text())}
    assert code == 1 and list(rows) == ["timm:deit_tiny_distilled_patch16_224", "lraspp_mobilenet_v3_large",
                                         "timm:nosuch"]
    deit, seg, bad = rows.values()
    assert deit["ok"] and deit["captures"] >= 2 * deit["leaves"] > 400 and tuple(deit["input_shape"]) == (1, 3, 224, 224)
    assert seg["ok"] and tuple(seg["input_shape"]) == (1, 3, 520, 520)
    assert not bad["ok"] and "timm has no model 'nosuch'" in bad["error"]
    assert "2 of 3 models ok; failed: timm:nosuch" in capsys.readouterr().out


def test_diff_bench_on_the_demo_model(tmp_path, capsys):
    from inspector.bench.diff import bench_diff

    lines = []
    row = bench_diff("demo", repeats=2, log=lines.append)
    medians = row["median_s"]
    assert set(medians) == {"single", "bare", "diff"}
    assert row["diff/single"] == pytest.approx(medians["diff"] / medians["single"])
    assert row["diff/bare"] == pytest.approx(medians["diff"] / medians["bare"])
    assert row["changed"] == "fc" and row["first_divergent"] == "fc:output"  # only the head was scaled
    assert row["keys"] == 2 * len(LEAVES) + 2 + 1  # block.relu twice, and the model's output
    assert 0 < row["compare_s"] < medians["diff"]
    assert len(lines) == 1 and f"{row['diff/single']:.2f}x" in lines[0]
    out = tmp_path / "diff.json"
    assert main(["bench", "--diff", "--models", "demo", "--repeats", "1", "--json", str(out)]) == 0
    assert capsys.readouterr().out.splitlines()[1].split()[:3] == ["model", "keys", "single"]
    assert json.loads(out.read_text())[0]["first_divergent"] == "fc:output"


def test_graph_bench_on_the_demo_model(tmp_path, capsys):
    """bench --graph (issue 42, item 2): the demo's graph recorded and laid out, its one group (`block`) opened and
    closed, the sizes those of record_graph called here."""
    import torch

    from inspector.core import load_model, record_graph

    out = tmp_path / "graph.json"
    assert main(["bench", "--graph", "--models", "demo", "--repeats", "2", "--json", str(out)]) == 0
    row = json.loads(out.read_text())[0]
    demo = load_model("demo")
    graph = record_graph(demo, torch.zeros(1, *demo.input_shape[-3:]))
    assert (row["nodes"], row["edges"], row["groups"]) == (len(graph.nodes), len(graph.edges), 1)
    assert row["top_nodes"] == len(graph.closed().nodes) == len(graph.nodes) - 7 + 1
    # block: conv1, bn1, relu, conv2, bn2, the residual add() and relu again, drawn closed as one node
    assert row["top"][0] == 1 and len(row["top"][1]) == 1 and row["two"][0] == 0
    assert row["drawn_s"] == pytest.approx(row["record_s"] + row["layout_s"], rel=0.5)
    assert "| demo |" in capsys.readouterr().out


def test_atlas_bench_on_the_demo_model(tmp_path):
    """bench --atlas: every conv of the demo (conv1, conv2, block.conv1, block.conv2, conv3: 16+32+32+32+64
    channels), throughputs from the medians of the repeats, the thumbnails timed apart."""
    out = tmp_path / "atlas.json"
    assert main(["bench", "--atlas", "--model", "demo", "--images", "6", "--batch", "4", "--repeats", "2",
                 "--json", str(out)]) == 0
    row = json.loads(out.read_text())
    assert row["conv_layers"] == 5 and row["channels"] == 176 and row["images"] == 6 and row["batch"] == 4
    med = row["median_s"]
    assert row["images_per_s"]["atlas"] == pytest.approx(6 / med["atlas"])
    assert row["atlas/plain"] == pytest.approx(med["plain"] / med["atlas"])
    assert row["thumbnails_s"] == med["thumbs"] > 0


def test_the_sweep_captures_on_the_device_it_was_given(monkeypatch):
    """`sweep --device cuda` built the tree on the GPU but captured on the CPU (capture's default device)."""
    import torch

    import inspector.core as core
    from inspector.bench.sweep import sweep_model

    real, asked = core.capture, []
    monkeypatch.setattr(core, "capture", lambda *a, **k: asked.append(k.get("device")) or real(*a, **k))
    row = sweep_model("resnet18", device="cpu")
    # 52 leaf modules, each block's relu running twice: 60 calls, an output and a grad_output each
    assert row.ok and (row.leaves, row.captures) == (52, 120) and asked == [torch.device("cpu")]
