"""The GUI bench's graph rows run (on the demo model, so the suite stays quick); no timing is asserted."""

from __future__ import annotations

from inspector.bench import gui as bench_gui
from inspector.bench.gui_graph import measure_graph
from inspector.core.inputs.samples import list_samples


def test_the_graph_rows_run_on_the_demo(qapp, tmp_path):
    row = measure_graph(tmp_path, "demo", f"sample:{list_samples()[0]}", "cpu")
    assert row["model"] == "demo" and row["closed_nodes"] < row["nodes"]
    assert row["stall_s"] > 0 and row["again_stall_s"] > 0 and row["open_all_stall_s"] > 0
    assert 0 < row["again_s"] and 0 < row["open_all_s"] and 0 < row["close_all_s"]
    table = bench_gui.format_table({
        "launch": {"window_s": 1, "panels_s": 2, "stall_s": 0.1, "torch_at_window": False, "window_imports_s": 0.5,
                   "torch_import_s": 1, "import_stall_s": 0.05}, "stalls": [], "loaded": [], "graph": row,
        "rapid": {"model": "demo", "leaves": 1, "stall_s": 0.01},
        "run": {"model": "demo", "layer": "conv1", "drawn_s": 0.1, "plain_s": 0.05, "engine_s": 0.06,
                "switch_layers": 3, "switch_s": 0.01, "toggle_s": 0.1},
        "mosaic": {"activation_s": 0.01, "gradient_s": 0.01}, "toggles": {}})
    assert "(k) longest GUI stall, Graph tab" in table and "every group opened" in table
    qapp.processEvents()
