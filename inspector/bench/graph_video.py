"""The Graph tab's overlay while a video plays: `python -m inspector.bench.graph_video [MODEL] [FRAMES]`.

Plays FRAMES frames of a generated video (frames taken as fast as the panels are drawn, `pace="demand"`) with the
Graph tab shown, once coloured by nothing and once by gradient L2, and says the frames drawn per second of each and
how many overlays were painted (each overlay is a forward and backward of its own, in the worker beside the frames).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from .gui_harness import Session, _qt_app, _wait_until
from .live import make_video


def measure_overlay_video(folder: Path, source: str, frames: int, kind: str) -> dict:
    """Frames per second with the Graph tab coloured by `kind` ("none": no overlay), and the overlays painted."""
    from PIL import Image

    from inspector.core.inputs.video import VideoReader

    video = make_video(folder / "video.mp4", frames + 10) if not (folder / "video.mp4").exists() \
        else str(folder / "video.mp4")
    first = folder / "first-frame.png"
    with VideoReader(video) as reader:
        Image.fromarray(next(iter(reader.frames())).rgb).save(first)
    session = Session(folder, source, str(first), "cpu")
    try:
        w = session.window
        session.run()
        w.tabs.setCurrentWidget(w.views.graph)
        _wait_until(lambda: w.graph.layout is not None and not w.views.graph.scene.drawing())
        values = w.graph_values
        values.choose(kind)
        if kind != "none":
            _wait_until(lambda: values.painter.drawn is not None)
        painted = []
        original = values.painter.show
        values.painter.show = lambda drawn: (painted.append(time.perf_counter()), original(drawn))[1]
        drawn: list[float] = []
        w.sigResultShown.connect(lambda _o: drawn.append(time.perf_counter()))
        state = w.state
        state.live.open(video, pace="demand")
        _wait_until(lambda: len(drawn) >= frames or state.live.feed.ended, timeout_s=600)
        state.live.pause(True)
        times = drawn[:frames]
        fps = (len(times) - 1) / (times[-1] - times[0]) if len(times) > 2 else float("nan")
        overlays = sum(times[0] <= t <= times[-1] for t in painted)
        state.live.close()
        _wait_until(session.settled)
        return {"model": source, "kind": kind, "frames": len(times), "fps": fps, "overlays": overlays}
    finally:
        session.close()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    source = argv[0] if argv else "demo"
    frames = int(argv[1]) if len(argv) > 1 else 60
    _qt_app()
    with tempfile.TemporaryDirectory(prefix="inspector-bench-graph-video-") as tmp:
        for kind in ("none", "gradient"):
            row = measure_overlay_video(Path(tmp), source, frames, kind)
            print(f"{row['model']}: colour by {row['kind']}: {row['fps']:.1f} frames/s over {row['frames']} frames, "
                  f"{row['overlays']} overlays painted", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
