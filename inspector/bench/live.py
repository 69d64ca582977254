"""`network-inspector bench --gui --video`: a video played through the app, measured in the app itself.

Drives a real MainWindow (offscreen without a display) on a video written here, frames taken
as fast as the panels are drawn (`pace="demand"`), one layer ticked, and reports per model:
  - frames -> panels drawn per second (frames counted when the window has drawn both panels),
    against the model's own forward + loss.backward() rate on the same frame size, in the same
    process, interleaved: blocks of frames, then the video paused and plain runs timed on the
    worker's own model; the ratio is the median over blocks;
  - the longest GUI-thread stall while frames play (a 10 ms heartbeat), and the GUI thread's CPU
    time per frame drawn (its share of the frame's cost: what a stall is made of);
  - the process's resident memory after each block: after the first, half-way and at the end (flat:
    no growth with frames once the allocator has its working set).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from .gui_harness import Heartbeat, Session, _pause, _plain_seconds, _qt_app, _wait_until


def resident_mb() -> float:
    """Resident memory of this process in MB (Linux: now; elsewhere: the peak so far)."""
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
        import os

        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak / 2**20 if sys.platform == "darwin" else peak / 2**10


def make_video(path: Path, frames: int, size: tuple[int, int] = (320, 256), fps: int = 25) -> str:
    """A moving colour pattern (every frame different), `size` = (width, height)."""
    from inspector.core.inputs.video import write_video

    w, h = size
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)

    def frame(i: int) -> np.ndarray:
        t = i / fps
        r = 127 + 120 * np.sin(xx / 17 + 3 * t)
        g = 127 + 120 * np.sin(yy / 23 - 2 * t)
        b = 127 + 120 * np.sin((xx + yy) / 31 + t)
        return np.stack([r, g, b], axis=-1).astype(np.uint8)

    return str(write_video(path, (frame(i) for i in range(frames)), fps=fps))


def measure_live(folder: Path, source: str, video: str, frames: int, block: int, device: str = "cpu",
                 plain_repeats: int = 5) -> dict:
    """Play `frames` frames of `video` on `source` with one (late) layer ticked, in blocks of `block`."""
    from inspector.bench.engine import late_layer

    first = folder / "first-frame.png"
    from PIL import Image

    from inspector.core.inputs.video import VideoReader

    with VideoReader(video) as reader:
        Image.fromarray(next(iter(reader.frames())).rgb).save(first)
    session = Session(folder, source, str(first), device)
    try:
        w = session.window
        layer = late_layer(w.loaded.tree)
        w.layer_model.set_ticked({layer})
        session.run()  # warm-up on a still frame of the same size
        drawn: list[float] = []
        w.sigResultShown.connect(lambda _o: drawn.append(time.perf_counter()))
        state = w.state
        state.live.open(video, pace="demand")
        state.live.pause(True)
        beat = Heartbeat()
        rates, plains, stalls, memory, busy = [], [], [], [], []
        blocks = max(1, frames // block)
        for b in range(blocks):
            start_count = len(drawn)
            beat.start()
            cpu = time.thread_time()
            state.live.pause(False)
            _wait_until(lambda: len(drawn) >= start_count + block or state.live.feed.ended, timeout_s=600)
            state.live.pause(True)
            stalls.append(beat.take())
            busy.append((time.thread_time() - cpu) / max(1, len(drawn) - start_count))
            del session.shown[:-1]  # the harness's own list: memory is the app's, not the outcomes kept here
            beat.stop()
            times = drawn[start_count:start_count + block]
            if len(times) > 2:
                rates.append((len(times) - 1) / (times[-1] - times[0]))
            idle = lambda: not state.live.busy and w.worker.pending() == 0 and not state.live.feed.has_frame()  # noqa: E731
            _wait_until(idle)
            _pause(0.05)
            _wait_until(idle)
            memory.append(resident_mb())
            plains.append(_plain_seconds(session, state.good_input, plain_repeats))
            if state.live.feed.ended:
                break
        shown = len(drawn)
        feed = state.live.feed
        dropped, decoded = feed.dropped, feed.decoded
        state.live.close()
        _wait_until(session.settled)
        ratios = [rate * plain for rate, plain in zip(rates, plains)]
        return {"model": source, "layer": layer, "frames": shown, "decoded": decoded, "dropped": dropped,
                "fps": statistics.median(rates), "plain_fps": 1 / statistics.median(plains),
                "ratio": statistics.median(ratios), "stall_s": max(stalls), "gui_s_per_frame": statistics.median(busy),
                "memory_first_mb": memory[0], "memory_half_mb": memory[len(memory) // 2],
                "memory_last_mb": memory[-1], "memory_max_mb": max(memory), "memory_mb": memory}
    finally:
        session.close()


def format_table(rows: list[dict]) -> str:
    head = ("model", "layer ticked", "frames", "frames->panels /s", "plain f+b /s", "ratio", "longest GUI stall",
            "GUI CPU /frame",
            "resident memory: first block -> half -> end (max)")
    lines = [head]
    for r in rows:
        lines.append((r["model"], r["layer"], f"{r['frames']} ({r['dropped']} dropped)", f"{r['fps']:.1f}",
                      f"{r['plain_fps']:.1f}", f"{r['ratio']:.2f}x", f"{r['stall_s'] * 1000:.0f} ms",
                      f"{r['gui_s_per_frame'] * 1000:.1f} ms",
                      f"{r['memory_first_mb']:.0f} -> {r['memory_half_mb']:.0f} -> {r['memory_last_mb']:.0f} MB "
                      f"({r['memory_max_mb']:.0f})"))
    widths = [max(len(l[i]) for l in lines) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(l, widths)).rstrip() for l in lines)


def main(models: tuple[tuple[str, int, int], ...] = (("demo", 1000, 100), ("resnet18", 200, 40)),
         device: str = "cpu", log=print) -> list[dict]:
    """(model, frames, block) for each model: measure and print; returns the rows."""
    import torch

    app = _qt_app()
    log(f"live video bench: Qt platform {app.platformName()}, device {device}, torch threads {torch.get_num_threads()}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="inspector-bench-live-") as tmp:
        folder = Path(tmp)
        video = make_video(folder / "pattern.mp4", max(n for _m, n, _b in models))
        for source, frames, block in models:
            rows.append(measure_live(folder, source, video, frames, block, device))
            log(format_table(rows[-1:]))
        from PySide6.QtCore import QEvent
        from PySide6.QtWidgets import QApplication

        QApplication.sendPostedEvents(None, QEvent.DeferredDelete)
    log(format_table(rows))
    return rows
