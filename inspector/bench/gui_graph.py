"""The GUI bench's graph rows: the Graph tab shown on a model (its graph recorded and laid out in the worker, then
drawn: the first time with the imports that takes), recorded again, every group opened (the largest drawing), then
closed again, each while a heartbeat on the GUI thread records its longest stall (target 50 ms)."""

from __future__ import annotations

import time
from pathlib import Path

from .gui_harness import Heartbeat, Session, _pause, _wait_until


def measure_graph(folder: Path, source: str, input_source: str, device: str) -> dict:
    session = Session(folder, source, input_source, device)
    try:
        w = session.window
        _wait_until(lambda: bool(session.shown) or bool(session.failed))
        tab, graph = w.views.graph, w.graph
        beat = Heartbeat()
        beat.start()
        _pause(0.3)
        idle = beat.take()
        start = time.perf_counter()
        w.tabs.setCurrentWidget(tab)
        _wait_until(lambda: graph.layout is not None and not tab.scene.drawing() or "No graph" in tab.status.text())
        first_s = time.perf_counter() - start
        _pause(0.3)
        shown = beat.take()
        if graph.layout is None:
            raise RuntimeError(tab.status.text())
        closed_nodes = len(graph.layout.boxes)
        graph._asked = None  # recorded and laid out again, the imports (torch's function mode, the layout) warm
        start = time.perf_counter()
        graph.ensure()
        _wait_until(lambda: graph.layout is not None and not tab.scene.drawing())
        again_s = time.perf_counter() - start
        _pause(0.3)
        again = beat.take()
        every = frozenset(g.id for g in graph.graph.groups)
        timings, stalls = {}, {}
        for name, groups in (("open_all", every), ("close_all", frozenset())):
            start = time.perf_counter()
            graph._lay_out(groups)
            _wait_until(lambda g=groups: graph.layout.open_groups == g and not tab.scene.drawing())
            timings[name] = time.perf_counter() - start
            _pause(0.3)
            stalls[name] = beat.take()
        beat.stop()
        return {"model": source, "nodes": len(graph.graph.nodes), "closed_nodes": closed_nodes,
                "idle_gap_s": idle, "first_s": first_s, "stall_s": shown,
                "again_s": again_s, "again_stall_s": again,
                "open_all_s": timings["open_all"], "open_all_stall_s": stalls["open_all"],
                "close_all_s": timings["close_all"], "close_all_stall_s": stalls["close_all"]}
    finally:
        session.close()


def graph_rows(g: dict, ms) -> list[tuple[str, str, str, str, str]]:
    """The bench table's rows of `measure_graph`'s numbers."""
    return [
        ("(k) longest GUI stall, Graph tab: recorded, laid out, drawn", f"{g['model']}, {g['closed_nodes']} of "
         f"{g['nodes']} nodes", ms(g["stall_s"]), "target 50 ms", f"tab shown -> drawn {ms(g['first_s'])}, idle "
                                                                  f"{ms(g['idle_gap_s'])}"),
        ("    the same, recorded again (imports warm)", "", ms(g["again_stall_s"]), "target 50 ms",
         f"asked -> drawn {ms(g['again_s'])}"),
        ("    the same, every group opened", f"{g['nodes']} nodes", ms(g["open_all_stall_s"]), "target 50 ms",
         f"asked -> drawn {ms(g['open_all_s'])}"),
        ("    the same, every group closed again", "", ms(g["close_all_stall_s"]), "target 50 ms",
         f"asked -> drawn {ms(g['close_all_s'])}"),
    ]


def main(sources: list[str], device: str = "cpu") -> list[dict]:
    """`python -m inspector.bench.gui_graph resnet50 vit_b_16`: the graph rows alone, for each model in turn (the
    first pays the imports of recording and layout), on a noise image."""
    import tempfile

    from .gui_harness import _noise_image, _qt_app

    app = _qt_app()
    rows = []
    with tempfile.TemporaryDirectory(prefix="inspector-bench-graph-") as tmp:
        folder = Path(tmp)
        image = _noise_image(folder)
        for source in sources:
            rows.append(measure_graph(folder, source, image, device))
            for row in graph_rows(rows[-1], lambda s: f"{s * 1000:.0f} ms"):
                print("  ".join(row).rstrip())
    print(f"Qt platform {app.platformName()}, device {device}")
    return rows


if __name__ == "__main__":
    import sys

    main(sys.argv[1:] or ["resnet50"])
