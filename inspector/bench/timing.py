"""Timing work on a device: CUDA (and MPS) run asynchronously, so a timer reads the clock only after the
device has finished what was queued, on that device (`cuda:1`'s queue, not the current device's)."""

from __future__ import annotations

import time
from typing import Callable

import torch


def synchronize(device: str | torch.device) -> None:
    """Wait until `device` has done its queued work; the CPU has nothing queued."""
    device = torch.device(device)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


def timed(fn: Callable[[], object], device: str | torch.device) -> float:
    """Seconds `fn()` takes on `device`, from an idle device to its last kernel."""
    synchronize(device)
    start = time.perf_counter()
    fn()
    synchronize(device)
    return time.perf_counter() - start
