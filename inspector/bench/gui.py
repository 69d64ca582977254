"""`network-inspector bench --gui`: how the app feels, measured in the app itself.

Drives a real MainWindow (offscreen when there is no display) and reports:
  (a) the longest GUI-thread stall (a 10 ms heartbeat timer records its largest gap)
      while a run with every leaf ticked is in flight, and while its result is drawn;
  (b) Run pressed -> panels drawn, one layer ticked, against a plain forward +
      loss.backward() of the same model on the same input, in the same process;
  (c) switching the displayed layer (median);
  (d) one mosaic + histogram update of 64 channels of 112x112, paint included (median);
  (e) 20 tick toggles within one second: runs executed and the most requests ever queued;
  (k) the Graph tab: the longest stall while the graph is recorded, laid out and drawn, and while every group
      opens and closes (bench/gui_graph.py).
Settings go to a temporary INI file; the user's configuration is never touched.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Callable

import numpy as np

from .gui_graph import graph_rows, measure_graph
from .gui_harness import (
    Heartbeat,
    Session,
    _noise_image,
    _pause,
    _plain_seconds,
    _qt_app,
    _wait_until,
)
from .launch import measure_launch  # noqa: F401  (a row of this bench, run in its own processes)


def measure_stall(folder: Path, source: str, input_source: str, device: str, repeats: int) -> dict:
    """Longest GUI stalls during a run with every leaf ticked: while the worker computes,
    while the window handles the result (panels, side views), and while that is painted."""
    from PySide6.QtCore import Qt

    session = Session(folder, source, input_source, device)
    try:
        w = session.window
        w.layer_model.tick_leaves()
        leaves = len(w.layer_model.ticked())
        emitted: list[float] = []
        w.worker.sigResult.connect(lambda _o: emitted.append(time.perf_counter()), Qt.DirectConnection)
        session.run()  # warm-up
        beat = Heartbeat()
        beat.start()
        _pause(0.3)
        idle = beat.take()
        computing, handling, painting, totals, engine, drawing = [], [], [], [], [], []
        for _ in range(max(3, repeats)):
            beat.take()
            count = len(session.shown)
            start = time.perf_counter()
            w.state.run()
            _wait_until(lambda: len(session.shown) > count or bool(session.failed))
            shown_at = time.perf_counter()
            gaps = list(beat.gaps)
            computing.append(beat.take(until=emitted[-1]))  # the worker thread emits its result
            beat.gaps = gaps
            handling.append(beat.take(since=emitted[-1]))  # queued slot: draw panels, side views
            _pause(0.3)
            painting.append(beat.take())  # the paint that follows
            totals.append(shown_at - start)
            drawing.append(shown_at - emitted[-1])  # the result handed over -> both panels drawn
            engine.append(session.shown[-1].result.timings.get("total_s", 0.0))
        beat.stop()
        held = session.shown[-1].result.held_bytes() / 2**20
        return {"model": source, "leaves": leaves, "idle_gap_s": idle, "stall_s": max(computing),
                "handle_stall_s": max(handling), "paint_stall_s": max(painting),
                "run_s": statistics.median(totals), "engine_s": statistics.median(engine), "held_mb": held,
                "draw_s": statistics.median(drawing)}
    finally:
        session.close()


def measure_run_and_switch(folder: Path, source: str, input_source: str, device: str, repeats: int) -> dict:
    from inspector.bench.engine import late_layer

    session = Session(folder, source, input_source, device)
    try:
        w = session.window
        layer = late_layer(w.loaded.tree)
        w.layer_model.set_ticked({layer})
        session.run()  # warm-up
        drawn, engine = [], []
        for _ in range(repeats):
            drawn.append(session.run())
            engine.append(session.shown[-1].result.timings.get("total_s", 0.0))
        plain = _plain_seconds(session, input_source, repeats)

        convs = w.loaded.tree.convolutions()
        shown = sorted(set(convs[:: max(1, len(convs) // 5)] + [layer]))
        w.layer_model.set_ticked(shown)
        session.run()
        names = [w.layer_combo.itemData(i) for i in range(w.layer_combo.count())]
        switches = []
        for i in range(max(20, 4 * repeats)):
            name = names[(i + 1) % len(names)]
            start = time.perf_counter()
            w.show_layer(name)
            w.repaint()
            switches.append(time.perf_counter() - start)
        toggles = _toggle_latencies(session, layer, repeats)
        return {"model": source, "layer": layer, "drawn_s": statistics.median(drawn),
                "engine_s": statistics.median(engine), "plain_s": plain, "switch_s": statistics.median(switches),
                "switch_layers": len(names), "toggle_s": statistics.median(toggles)}
    finally:
        session.close()


def _toggle_latencies(session: Session, layer: str, repeats: int) -> list[float]:
    """Seconds from switching an edit on or off to its result drawn (the baseline is kept)."""
    w = session.window
    w.layer_model.set_ticked({layer})
    editing = w.state.editing
    count = len(session.shown)
    editing.add_text(f"{layer}:grad_output=scale(2)")  # first run also makes the baseline
    _wait_until(lambda: len(session.shown) > count and session.settled())
    latencies = []
    for i in range(2 * repeats):
        count = len(session.shown)
        start = time.perf_counter()
        editing.set_enabled(0, i % 2 == 1)
        _wait_until(lambda: len(session.shown) > count and session.settled())
        w.repaint()
        latencies.append(time.perf_counter() - start)
    w.state.set_edits(())
    _wait_until(session.settled)
    return latencies


def measure_mosaic(repeats: int) -> dict:
    import torch
    from PySide6.QtWidgets import QApplication

    from inspector.core.engine.stats import tensor_stats
    from inspector.gui.views.tensor_panel import TensorPanel

    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((1, 64, 112, 112), dtype=np.float32) for _ in range(2)]
    stats = [tensor_stats(torch.from_numpy(a)) for a in arrays]
    out = {}
    for diverging in (False, True):
        panel = TensorPanel("bench", diverging=diverging)
        panel.resize(900, 800)
        panel.show()
        QApplication.processEvents()
        times = []
        for i in range(max(10, 3 * repeats) + 1):
            start = time.perf_counter()
            panel.show_capture("bench:output", arrays[i % 2], stats[i % 2])
            panel.repaint()
            QApplication.processEvents()
            if i:
                times.append(time.perf_counter() - start)
        out["gradient_s" if diverging else "activation_s"] = statistics.median(times)
        panel.close()
        panel.deleteLater()
    return out


def measure_toggles(folder: Path, source: str, input_source: str, device: str) -> dict:
    from PySide6.QtCore import QTimer

    out = {}
    for mode in ("auto-run", "run each"):
        session = Session(folder, source, input_source, device, auto_run=(mode == "auto-run"))
        try:
            w = session.window
            layer = w.loaded.tree.convolutions()[0]
            if mode == "run each":
                session.run()
            _wait_until(session.settled)
            runs, shown = w.worker.runs_done, len(session.shown)
            state = {"toggles": 0, "max_pending": 0}

            def toggle() -> None:
                on = layer not in w.layer_model.ticked()
                w.layer_model.set_subtree(layer, on)  # what a click on the box does
                if mode == "run each":
                    w.state.run()  # no debounce: only the worker's latest-wins keeps the queue short
                state["toggles"] += 1
                state["max_pending"] = max(state["max_pending"], w.worker.pending())
                if state["toggles"] == 20:
                    clock.stop()

            clock = QTimer(interval=48)
            clock.timeout.connect(toggle)
            start = time.perf_counter()
            clock.start()
            _wait_until(lambda: state["toggles"] >= 20)
            toggled_in = time.perf_counter() - start
            _wait_until(session.settled)
            out[mode] = {"toggles": state["toggles"], "within_s": toggled_in, "max_pending": state["max_pending"],
                         "runs": w.worker.runs_done - runs, "shown": len(session.shown) - shown}
        finally:
            session.close()
    return out


def measure_rapid_toggles(folder: Path, source: str, input_source: str, device: str) -> dict:
    """The longest GUI stall while an edit is toggled 20 times in one second with every leaf ticked
    (auto-run on: each toggle asks for a run, the worker's latest-wins drops the ones overtaken)."""
    from PySide6.QtCore import QTimer

    session = Session(folder, source, input_source, device, auto_run=True)
    try:
        w = session.window
        w.layer_model.tick_leaves()
        _wait_until(lambda: bool(session.shown) and session.settled())
        layer = w.loaded.tree.convolutions()[-1]
        editing = w.state.editing
        editing.add_text(f"{layer}:grad_output=scale(2)")
        _wait_until(lambda: session.settled() and len(session.shown) >= 2)
        beat = Heartbeat()
        beat.start()
        state = {"toggles": 0}

        def toggle() -> None:
            editing.set_enabled(0, state["toggles"] % 2 == 1)
            state["toggles"] += 1
            if state["toggles"] == 20:
                clock.stop()

        clock = QTimer(interval=48)
        clock.timeout.connect(toggle)
        clock.start()
        _wait_until(lambda: state["toggles"] >= 20)
        _wait_until(session.settled)
        _pause(0.3)
        stall = beat.take()
        beat.stop()
        return {"model": source, "leaves": len(w.layer_model.ticked()), "stall_s": stall}
    finally:
        session.close()


DETECTOR = "fasterrcnn_mobilenet_v3_large_320_fpn"  # the detector row's model (random weights: 100 boxes)


def measure_detector(folder: Path, source: str, input_source: str, device: str, repeats: int) -> dict:
    """Longest GUI stalls while a detector runs with every leaf ticked: a box clicked (on the list), the run
    for it and its boxes drawn; then the Compare tab with an edit (the two runs' boxes matched and drawn)."""
    from inspector.core.edits import Edit
    from inspector.core.common.keys import Key

    session = Session(folder, source, input_source, device)
    try:
        w = session.window
        w.layer_model.tick_leaves()
        leaves = len(w.layer_model.ticked())
        session.run()  # warm-up
        detections = len(session.shown[-1].result.detections or [])
        if not detections:
            raise RuntimeError(f"{source} detected nothing on {input_source}: no box to click.")
        beat = Heartbeat()
        beat.start()
        runs = []
        for i in range(max(2, repeats)):
            count = len(session.shown)
            start = time.perf_counter()
            w.detections.choose(i % min(detections, 5))  # the box becomes the target
            w.state.run()
            _wait_until(lambda: len(session.shown) > count or bool(session.failed))
            w.repaint()
            runs.append(time.perf_counter() - start)
        clicked = beat.take()
        w.state.set_view("compare")  # its first show: its grid made a part a turn, each painted
        w.repaint()
        _wait_until(lambda: w.views.compare.grid.made)
        _pause(0.3)
        switched = beat.take()
        layer = w.loaded.tree.convolutions()[-1]
        compared = []
        for i in range(max(2, repeats)):  # the edit added, then run again: the two runs' boxes matched and drawn
            count = len(session.shown)
            if i == 0:
                w.state.editing.add(Edit(Key(layer, "output"), "scale", (("k", 0.5),)))  # it runs (edits do)
            else:
                w.state.run()
            _wait_until(lambda: (len(session.shown) > count and session.settled()) or bool(session.failed))
            w.repaint()
            _pause(0.2)
            compared.append(beat.take())
        beat.stop()
        if session.failed:
            raise RuntimeError(session.failed[-1])
        if not w.views.compare.boxes.isVisibleTo(w.views.compare):
            raise RuntimeError("The Compare tab showed no boxes: nothing was measured.")
        return {"model": source, "leaves": leaves, "detections": detections, "stall_s": clicked,
                "compare_stall_s": max(compared), "compare_stall_median_s": statistics.median(compared),
                "switch_stall_s": switched, "run_s": statistics.median(runs),
                "boxes_compared": len(w.views.compare.boxes.changes)}
    finally:
        session.close()


def measure_model_loaded(folder: Path, sources: tuple[str, ...], input_source: str, device: str) -> list[dict]:
    """The longest GUI-thread stall for each of `sources` once its model has loaded in the worker: the
    module tree, the choosers, the layer combo and the first result drawn (the model's default ticks).
    The stall at start-up is measured by `measure_launch`, in a fresh process as a user starts the app."""
    from PySide6.QtCore import Qt

    from inspector.core.records.requests import ModelRequest

    beat = Heartbeat()
    beat.start()
    session = Session(folder, "demo", input_source, device, auto_run=True)
    try:
        w = session.window
        _wait_until(lambda: bool(session.shown) or bool(session.failed))
        rows = []
        for source in sources:
            loaded_at: list[float] = []

            def note(_info, at=loaded_at) -> None:  # on the worker thread, as it hands the model over
                at.append(time.perf_counter())

            w.worker.sigLoaded.connect(note, Qt.DirectConnection)
            count = len(session.shown)
            beat.take()
            w.state.request_model(ModelRequest(source, "random", seed=0))
            _wait_until(lambda: (w.loaded is not None and w.loaded.source == source and len(session.shown) > count)
                        or bool(session.failed))
            _pause(0.3)
            w.worker.sigLoaded.disconnect(note)
            rows.append({"what": "model loaded", "model": source, "stall_s": beat.take(since=loaded_at[0]),
                         "leaves": len(w.layer_model.ticked())})
        return rows
    finally:
        beat.stop()
        session.close()


def format_table(report: dict) -> str:
    b, d, e = report["run"], report["mosaic"], report["toggles"]
    ms = lambda s: f"{s * 1000:.0f} ms"  # noqa: E731
    launch = report["launch"]
    rows = [
        ("(g) launch: process start -> window shown", "demo", ms(launch["window_s"]), "target 3000 ms",
         "torch imported before the window" if launch["torch_at_window"] else "engine loads behind the window"),
        ("    -> the demo's first panels drawn", "", ms(launch["panels_s"]), "", ""),
        ("(i) longest GUI stall at start-up: window shown -> first panels", "demo", ms(launch["stall_s"]),
         "target 50 ms", "median of launches; the worker imports PyTorch meanwhile"),
        ("    floor: the window's imports (PySide6, pyqtgraph, numpy, the app)", "", ms(launch["window_imports_s"]),
         "", "in a fresh process, before any window"),
        ("    floor: `import torch` after its libraries are preloaded", "", ms(launch["torch_import_s"]), "",
         "the first panels come after the window by at least this; torch's bytecode "
         + ("cached" if launch.get("bytecode_cached") else "compiled at each start (PYTHONDONTWRITEBYTECODE)")),
        ("    beside it: a plain Python thread's longest gap while another imports torch", "",
         ms(launch["import_stall_s"]), "", "a 5 ms sleep loop, no Qt, no app: torch's import holds the GIL in C calls"),
    ]
    for a in report["stalls"]:
        rows += [
            ("(a) longest GUI stall, worker computing", f"{a['model']}, {a['leaves']} leaves ticked",
             ms(a["stall_s"]), f"idle {ms(a['idle_gap_s'])}",
             f"{a['stall_s'] / a['run_s']:.1%} of Run->shown {a['run_s']:.2f} s (engine {a['engine_s']:.2f} s)"),
            ("    result handed over -> panels drawn (median)", "", ms(a["draw_s"]), "target 35 ms", ""),
            ("    longest stall handling the result", "panels + side views", ms(a["handle_stall_s"]), "",
             f"{a['handle_stall_s'] / a['run_s']:.1%} of Run->shown, held {a['held_mb']:.0f} MB"),
            ("    longest stall painting it", "", ms(a["paint_stall_s"]), "", ""),
        ]
    for m in report.get("loaded", []):
        rows.append(("(i) longest GUI stall once a model has loaded", m["model"], ms(m["stall_s"]), "target 50 ms",
                     "tree, choosers, layer combo, first result drawn"))
    t = report.get("detector")
    if t:
        rows += [
            ("(j) longest GUI stall, detector: box clicked -> run -> boxes drawn", f"{t['model']}, {t['leaves']} "
             f"leaves ticked", ms(t["stall_s"]), "target 50 ms", f"{t['detections']} detections, run {ms(t['run_s'])}"),
            ("    the same, the Compare tab's first show", "", ms(t["switch_stall_s"]), "", ""),
            ("    the same, an edit on the Compare tab", f"{t['boxes_compared']} boxes matched",
             ms(t["compare_stall_s"]), "target 50 ms", f"median {ms(t['compare_stall_median_s'])}; run, boxes "
                                                       "matched and drawn, mosaics"),
        ]
    if report.get("graph"):
        rows += graph_rows(report["graph"], ms)
    r = report["rapid"]
    rows.append(("(h) longest GUI stall, 20 edit toggles in 1 s", f"{r['model']}, {r['leaves']} leaves ticked",
                 ms(r["stall_s"]), "target 50 ms", ""))
    rows += [
        ("(b) Run pressed -> panels drawn", f"{b['model']}, {b['layer']}", ms(b["drawn_s"]),
         f"plain f+b {ms(b['plain_s'])}", f"{b['drawn_s'] / b['plain_s']:.2f}x (engine {ms(b['engine_s'])}, "
                                          f"{b['engine_s'] / b['plain_s']:.2f}x)"),
        ("(c) switch displayed layer (median)", f"{b['switch_layers']} layers", ms(b["switch_s"]),
         f"run {ms(b['drawn_s'])}", f"{b['switch_s'] / b['drawn_s']:.2f}x of a run"),
        ("(f) edit toggled -> panels drawn", f"{b['model']}, {b['layer']}", ms(b["toggle_s"]),
         f"plain f+b {ms(b['plain_s'])}", f"{b['toggle_s'] / b['plain_s']:.2f}x"),
        ("(d) mosaic+histogram 64x112x112 + paint", "activation (median)", ms(d["activation_s"]), "", ""),
        ("", "gradient, diverging (median)", ms(d["gradient_s"]), "", ""),
    ]
    for mode, t in e.items():
        rows.append((f"(e) 20 toggles in {t['within_s']:.2f} s, {mode}", f"max queued {t['max_pending']}",
                     f"{t['runs']} run(s)", f"{t['shown']} drawn", ""))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)


def main(model: str = "resnet18", stall_models: tuple[str, ...] = ("resnet50", "vit_b_16", "convnext_tiny"), repeats: int = 5,
         device: str = "cpu", log: Callable[[str], None] = print) -> dict:
    """Measure and print; returns the numbers as a dict."""
    import torch

    app = _qt_app()
    log(f"GUI bench: Qt platform {app.platformName()}, device {device}, torch threads {torch.get_num_threads()}")
    with tempfile.TemporaryDirectory(prefix="inspector-bench-gui-") as tmp:
        folder = Path(tmp)
        image = _noise_image(folder)
        report = {
            "launch": measure_launch(folder, repeats),
            "stalls": [measure_stall(folder, m, image, device, repeats) for m in stall_models],
            "loaded": measure_model_loaded(folder, stall_models, image, device),
            "detector": measure_detector(folder, DETECTOR, "sample:scene_four_shapes", device, repeats),
            "graph": measure_graph(folder, stall_models[0], image, device),
            "rapid": measure_rapid_toggles(folder, stall_models[0], image, device),
            "run": measure_run_and_switch(folder, model, image, device, repeats),
            "mosaic": measure_mosaic(repeats),
            "toggles": measure_toggles(folder, model, image, device),
        }
        from PySide6.QtCore import QEvent
        from PySide6.QtWidgets import QApplication

        QApplication.sendPostedEvents(None, QEvent.DeferredDelete)
    log(format_table(report))
    return report
