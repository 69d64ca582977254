"""`network-inspector bench --remote`: a run through `serve` on this machine against the same run in process.

A real `serve` process on 127.0.0.1 (a free port, its own token file and data root in a temporary folder) and the
real client; in this process a Workbench of the same model. The run is the app's: every leaf of the model ticked
(`output`, `grad_output`), one late layer visible (its statistics during the run, the rest after), top-1, on a
bundled sample. Interleaved after a warm-up, medians of the repeats (and their spread):

  in process   Workbench.execute to the outcome the panels draw (visible), then finish (all statistics)
  remote       the same request through the server: to its `partial` event (the panels' outcome, visible layers'
               arrays only), then `drawn` said as the app says it, and to its `result` (every statistic); bytes
               received per run, against the bytes of every capture the run made
Goal: remote visible <= 1.1x in process + 20 ms.
"""

from __future__ import annotations

import os
import re
import select
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

GOAL_RATIO, GOAL_MS = 1.1, 20.0
STARTUP_S = 120.0


@contextmanager
def local_server(device: str = "cpu"):
    """`serve --port 0` in a temporary folder: (url, token); stopped whatever happens."""
    with tempfile.TemporaryDirectory(prefix="inspector-bench-remote-") as folder:
        root = Path(folder) / "data"
        root.mkdir()
        process = subprocess.Popen([sys.executable, "-m", "inspector", "serve", "--port", "0", "--device", device,
                                    "--token-file", str(Path(folder) / "token"), "--data-root", str(root)],
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=folder)
        try:
            ready, _, _ = select.select([process.stdout], [], [], STARTUP_S)
            line = process.stdout.readline() if ready else ""
            found = re.search(r"(wss?://[^\s;]+)", line)
            if not found:
                raise RuntimeError(f"serve did not start: {line!r}")
            yield found.group(1), (Path(folder) / "token").read_text().strip()
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)


class _Counted:
    """The client's socket, counting the bytes it receives."""

    def __init__(self, ws) -> None:
        self.ws, self.bytes = ws, 0

    def recv(self, *args, **kwargs):
        frame = self.ws.recv(*args, **kwargs)
        self.bytes += len(frame)
        return frame

    def __getattr__(self, name):
        return getattr(self.ws, name)


def bench_remote(name: str = "resnet50", repeats: int = 5, device: str = "cpu", input: str = "sample:star",
                 log: Callable[[str], None] = print) -> dict:
    from inspector.bench.engine import late_layer
    from inspector.core.records.requests import ModelRequest, RunRequest
    from inspector.core.runspec import RunSpec
    from inspector.core.workbench import Workbench
    from inspector.remote.client import EngineClient

    model = ModelRequest(name, seed=0 if name not in ("demo", "demo-detector") else None)
    bench = Workbench()
    loaded, tree = bench.load(model)
    bench.move_to(device)
    leaves = tuple(l.path for l in tree if l.is_leaf and l.path and l.calls)
    late = late_layer(tree)
    spec = RunSpec.make(leaves, stats_now=(late,))

    def request(run_id: int) -> RunRequest:
        return RunRequest(model, input, device, spec, run_id=run_id, visible=(late,))

    times: dict[str, list[float]] = {"in process visible": [], "in process all": [], "remote visible": [],
                                     "remote all": []}
    sent: list[int] = []
    captured = 0
    with local_server(device) as (url, token), EngineClient(url, token, timeout=600.0) as engine:
        engine.ws = counted = _Counted(engine.ws)
        engine.call("load", model)
        for i in range(repeats + 1):  # the first of each is a warm-up
            start = time.perf_counter()
            outcome = bench.execute(request(i))
            visible = time.perf_counter() - start
            bench.finish(outcome).apply(outcome)
            whole = time.perf_counter() - start
            captured = outcome.result.held_bytes()
            del outcome

            counted.bytes = 0
            start, partial, said = time.perf_counter(), None, None
            key = engine.send("run", request(i))
            for event in engine.events(key):
                if event.kind == "partial" and partial is None:
                    partial = time.perf_counter() - start
                    said = engine.send("drawn", key, key=f"drawn-{key}")  # as the app says its panels are drawn
                if event.kind in ("failure", "error", "cancelled"):
                    raise RuntimeError(f"the remote run ended {event.kind}: {event.body}")
            remote_all = time.perf_counter() - start
            if said is not None:
                list(engine.events(said))  # its answer, read and let go
            if i:
                times["in process visible"].append(visible)
                times["in process all"].append(whole)
                times["remote visible"].append(partial if partial is not None else remote_all)
                times["remote all"].append(remote_all)
                sent.append(counted.bytes)
    median = {k: statistics.median(v) for k, v in times.items()}
    spread = {k: (min(v), max(v)) for k, v in times.items()}
    ratio = median["remote visible"] / median["in process visible"]
    extra_ms = (median["remote visible"] - median["in process visible"]) * 1000
    row = {"model": name, "device": device, "leaves": len(leaves), "visible": late, "repeats": repeats,
           "median_s": median, "spread_s": spread, "ratio_visible": ratio, "extra_ms_visible": extra_ms,
           "ratio_all": median["remote all"] / median["in process all"],
           "bytes_per_run": statistics.median(sent), "bytes_captured": captured,
           "goal": ratio <= GOAL_RATIO or extra_ms <= GOAL_MS}
    log(f"{name} on {device}, {len(leaves)} leaves, {late} visible, {repeats} repeats (medians, min-max):")
    for key in times:
        log(f"  {key:<20} {median[key] * 1000:8.1f} ms  ({spread[key][0] * 1000:.1f}-{spread[key][1] * 1000:.1f})")
    log(f"  remote / in process: visible {ratio:.2f}x (+{extra_ms:.1f} ms), all {row['ratio_all']:.2f}x; goal "
        f"<= {GOAL_RATIO}x or +{GOAL_MS:.0f} ms: {'met' if row['goal'] else 'not met'}")
    log(f"  bytes received per run {row['bytes_per_run'] / 1e6:.2f} MB of {captured / 1e6:.1f} MB captured "
        f"({row['bytes_per_run'] / max(captured, 1):.2%})")
    return row


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    bench_remote(*(sys.argv[1:2] or ["resnet50"]))
