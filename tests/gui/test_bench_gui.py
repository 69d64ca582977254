"""The GUI benchmark's measurements run (on the demo model, so the suite stays quick): the command
users run to check the stall and latest-wins figures does not rot. No timing is asserted here."""

from __future__ import annotations

from inspector.bench import gui as bench_gui
from inspector.core import load_model
from inspector.core.layers import build_layer_tree


def test_stall_and_rapid_toggle_measurements_run_on_the_demo(qapp, tmp_path):
    loaded = load_model("demo")
    leaves = len(build_layer_tree(loaded.module, loaded.example_input()).leaves)
    image = "sample:" + __import__("inspector.core.samples", fromlist=["list_samples"]).list_samples()[0]
    stall = bench_gui.measure_stall(tmp_path, "demo", image, "cpu", repeats=2)
    assert stall["model"] == "demo" and stall["leaves"] == leaves
    assert stall["engine_s"] > 0 and stall["run_s"] >= stall["engine_s"] and stall["held_mb"] > 0
    assert 0 < stall["stall_s"] < stall["run_s"] + 1 and 0 < stall["draw_s"] < stall["run_s"]
    rapid = bench_gui.measure_rapid_toggles(tmp_path, "demo", image, "cpu")
    assert rapid["leaves"] == leaves and rapid["stall_s"] > 0
    qapp.processEvents()
