"""The GUI benchmark's measurements run (on the demo model, so the suite stays quick): the command
users run to check the stall and latest-wins figures does not rot. No timing is asserted here."""

from __future__ import annotations

import pytest

from inspector.bench import gui as bench_gui
from inspector.core import load_model
from inspector.core.sources.layers import build_layer_tree


def test_stall_and_rapid_toggle_measurements_run_on_the_demo(qapp, tmp_path):
    loaded = load_model("demo")
    leaves = len(build_layer_tree(loaded.module, loaded.example_input()).leaves)
    image = "sample:" + __import__("inspector.core.inputs.samples", fromlist=["list_samples"]).list_samples()[0]
    stall = bench_gui.measure_stall(tmp_path, "demo", image, "cpu", repeats=2)
    assert stall["model"] == "demo" and stall["leaves"] == leaves
    assert stall["engine_s"] > 0 and stall["run_s"] >= stall["engine_s"] and stall["held_mb"] > 0
    assert 0 < stall["stall_s"] < stall["run_s"] + 1 and 0 < stall["draw_s"] < stall["run_s"]
    rapid = bench_gui.measure_rapid_toggles(tmp_path, "demo", image, "cpu")
    assert rapid["leaves"] == leaves and rapid["stall_s"] > 0
    qapp.processEvents()


def test_the_model_loaded_rows_run(qapp, tmp_path):
    """Issue 25, item 15: the GUI bench's 'model loaded' stalls (a small model here)."""
    image = "sample:" + __import__("inspector.core.inputs.samples", fromlist=["list_samples"]).list_samples()[0]
    rows = bench_gui.measure_model_loaded(tmp_path, ("resnet18",), image, "cpu")
    assert [(r["what"], r["model"]) for r in rows] == [("model loaded", "resnet18")]
    assert all(r["stall_s"] > 0 for r in rows) and rows[0]["leaves"] >= 1
    qapp.processEvents()


def test_the_launch_row_measures_the_start_up_stall_in_a_fresh_process(tmp_path):
    """Issue 25, item 15: the 'start-up' stall is measured where the worker imports PyTorch, as in a user's
    start (in-process, with torch already imported, it missed the import's hold on the GIL)."""
    launch = bench_gui.measure_launch(tmp_path, 1)
    assert 0 < launch["window_s"] < launch["panels_s"]
    assert 0 < launch["stall_s"] < launch["panels_s"] and launch["torch_at_window"] is False
    # issue 41, item 19: the floors under those rows, each from a fresh process of its own
    # (each floor from processes of its own: on a loaded machine one may take longer than the launch beside it)
    assert 0 < launch["window_imports_s"] < 120 and 0 < launch["torch_import_s"] < 120
    assert 0 < launch["import_stall_s"] < launch["torch_import_s"]  # a gap within that import
    from inspector.bench.launch_floor import bytecode_cached

    assert launch["bytecode_cached"] is bytecode_cached()
    table = bench_gui.format_table({
        "launch": launch, "stalls": [], "loaded": [], "rapid": {"model": "demo", "leaves": 1, "stall_s": 0.01},
        "run": {"model": "demo", "layer": "conv1", "drawn_s": 0.1, "plain_s": 0.05, "engine_s": 0.06,
                "switch_layers": 3, "switch_s": 0.01, "toggle_s": 0.1},
        "mosaic": {"activation_s": 0.01, "gradient_s": 0.01}, "toggles": {}})
    assert "(i) longest GUI stall at start-up" in table and "floor: `import torch` after its libraries" in table


def test_the_live_video_measurement_runs_on_the_demo(qapp, tmp_path):
    """`bench --gui --video` plays a video it writes through the app: every frame accounted for
    (drawn or dropped), the plain forward+backward rate measured between blocks, memory sampled."""
    from inspector.bench import live

    video = live.make_video(tmp_path / "pattern.mp4", 12, size=(80, 64))
    row = live.measure_live(tmp_path, "demo", video, frames=12, block=6, plain_repeats=2)
    assert row["model"] == "demo" and row["decoded"] == 12 and row["dropped"] == 0  # demand pace drops none
    assert 10 <= row["frames"] <= 13  # the warm-up run and the frames, some skipped only when overtaken
    assert row["fps"] > 0 and row["plain_fps"] > 0 and row["ratio"] == pytest.approx(row["fps"] / row["plain_fps"],
                                                                                   rel=0.5)
    assert row["stall_s"] > 0 and row["memory_first_mb"] > 0
    assert "frames->panels /s" in live.format_table([row])
    qapp.processEvents()


def test_freezing_new_imports_never_walks_every_object():
    """Issue 25, item 15: a model that brings new modules froze them after a full collection, ~100 ms on
    the GUI thread each time, then after a collection of generation 1 (71 ms after resnet50 loaded, freeing
    nothing); the youngest garbage is enough (what is frozen lives as long as the process)."""
    import gc
    import sys
    import types

    from inspector.gui.common.gc_collector import freeze_imports

    generations = []

    def seen(phase, info):
        if phase == "start":
            generations.append(info["generation"])

    sys.modules["_inspector_new_module_for_test"] = types.ModuleType("_inspector_new_module_for_test")
    gc.callbacks.append(seen)
    try:
        assert freeze_imports()
    finally:
        gc.callbacks.remove(seen)
        del sys.modules["_inspector_new_module_for_test"]
    assert generations == [0]


def test_the_detector_row_runs(qapp, tmp_path):
    """Issue 27: the GUI bench's detector row (boxes clicked, runs, the Compare tab's boxes) on the demo detector."""
    row = bench_gui.measure_detector(tmp_path, "demo-detector", "sample:detect_four_shapes", "cpu", 2)
    assert row["model"] == "demo-detector" and row["leaves"] > 10 and row["detections"] >= 4
    assert row["stall_s"] > 0 and row["compare_stall_s"] > 0 and row["boxes_compared"] >= 1
    assert "(j) longest GUI stall, detector" in bench_gui.format_table({
        "launch": {"window_s": 1, "panels_s": 2, "stall_s": 0.1, "torch_at_window": False, "window_imports_s": 0.5,
                   "torch_import_s": 1, "import_stall_s": 0.05}, "stalls": [],
        "loaded": [], "detector": row, "rapid": {"model": "demo", "leaves": 1, "stall_s": 0.01},
        "run": {"model": "demo", "layer": "conv1", "drawn_s": 0.1, "plain_s": 0.05, "engine_s": 0.06,
                "switch_layers": 3, "switch_s": 0.01, "toggle_s": 0.1},
        "mosaic": {"activation_s": 0.01, "gradient_s": 0.01}, "toggles": {}})
