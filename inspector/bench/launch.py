"""The launch rows of the GUI bench: process start -> window on screen -> the demo's first panels, and the
longest GUI stall in between, each launch a fresh process (`launch_probe`), as a user starts the app."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path


def measure_launch(folder: Path, repeats: int) -> dict:
    """Process start -> window on screen, and -> the demo's first panels drawn (median of runs)."""
    windows, panels, torch_early, stalls = [], [], [], []
    for i in range(max(1, min(repeats, 3))):
        ini = folder / f"launch-{i}.ini"
        t0 = time.time()
        out = subprocess.run([sys.executable, "-m", "inspector.bench.launch_probe", str(t0), str(ini)],
                             capture_output=True, text=True, timeout=300)
        report = json.loads(out.stdout.strip().splitlines()[-1])
        windows.append(report["window_s"])
        panels.append(report["panels_s"])
        torch_early.append(report["torch_at_window"])
        stalls.append(report["stall_s"])
    floors = []
    for _ in range(max(1, min(repeats, 3))):
        out = subprocess.run([sys.executable, "-m", "inspector.bench.launch_floor"], capture_output=True, text=True,
                             timeout=300)
        floors.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return {"window_s": statistics.median(windows), "panels_s": statistics.median(panels),
            "torch_at_window": any(torch_early), "stall_s": statistics.median(stalls),
            **{key: statistics.median(f[key] for f in floors) for key in floors[0] if key != "bytecode_cached"},
            "bytecode_cached": all(f["bytecode_cached"] for f in floors)}
