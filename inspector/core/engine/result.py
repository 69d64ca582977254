"""What a run returns: captures by key, predictions, timings, the hook log and warnings."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from ..common.errors import UnknownKeyError
from ..common.keys import Key
from ..records.detections import Detection
from ..records.stats import TensorStats
from ..storage.writes import save_npz

EventKind = Literal["registered", "fired", "removed", "warning", "note"]


@dataclass(frozen=True)
class Capture:
    key: Key
    stats: TensorStats | None
    array: np.ndarray | None  # None when only statistics were kept

    @property
    def name(self) -> str:
        return str(self.key)


@dataclass(frozen=True)
class Prediction:
    index: int
    label: str
    probability: float
    logit: float


@dataclass(frozen=True)
class HookEvent:
    time: float
    kind: EventKind
    what: str


@dataclass
class RunResult:
    captures: dict[str, Capture] = field(default_factory=dict)
    input: np.ndarray | None = None
    input_grad: np.ndarray | None = None
    output: np.ndarray | None = None
    predictions: list[Prediction] = field(default_factory=list)
    # a segmentation's predicted class per pixel (H, W) of sample 0, worked out where the logits are
    classes: np.ndarray | None = None
    # a detector's detections of sample 0, best first; `output` then holds one row per detection
    # (inspector.core.detection.outputs.COLUMNS), `extras` its masks or keypoints
    detections: list[Detection] | None = None
    extras: dict[str, np.ndarray] = field(default_factory=dict)
    target: str = ""
    target_index: int | None = None
    target_detection: int | None = None  # the rank of the detection a box target picked
    objective: float | None = None
    device: str = "cpu"
    edits: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    events: list[HookEvent] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # captures stored without statistics (RunSpec.stats_now), by name -> the captured dtype;
    # written during the run only. `complete_statistics` works them out from the arrays.
    stats_deferred: dict[str, str] = field(default_factory=dict)
    # captures whose arrays the engine kept where it ran (a remote engine sends the visible layers' only): their
    # statistics are here; their arrays come when asked for (inspector.protocol.seen)
    held: tuple[str, ...] = ()

    def __getitem__(self, key: str) -> np.ndarray:
        arrays = self.arrays()
        if key not in arrays:
            shown = ", ".join(list(arrays)[:8]) + (", ..." if len(arrays) > 8 else "")
            raise UnknownKeyError(f"No capture {key!r} in this result; its keys: {shown or 'none'}.")
        return arrays[key]

    def log(self, kind: EventKind, what: str) -> None:
        self.events.append(HookEvent(time.perf_counter(), kind, what))
        if kind == "warning":
            self.warnings.append(what)

    def arrays(self) -> dict[str, np.ndarray]:
        """Every array by its key, as written to `.npz`: captures, `input`, `input:grad`, `output`."""
        out: dict[str, np.ndarray] = {}
        if self.input is not None:
            out["input"] = self.input
        if self.input_grad is not None:
            out["input:grad"] = self.input_grad
        if self.output is not None:
            out["output"] = self.output
        out.update(self.extras)
        out.update({name: c.array for name, c in self.captures.items() if c.array is not None})
        return out

    def stats_pending(self) -> list[str]:
        """Deferred captures whose statistics have not been filled in yet."""
        return [name for name in list(self.stats_deferred) if self.captures[name].stats is None]

    def set_stats(self, stats: dict[str, TensorStats]) -> None:
        """Fill in statistics worked out later (keys only replaced, never added or removed, so a
        thread reading the captures meanwhile sees each one either without or with them)."""
        for name, s in stats.items():
            capture = self.captures.get(name)
            if capture is not None:
                self.captures[name] = Capture(capture.key, s, capture.array)

    def held_bytes(self) -> int:
        return sum(a.nbytes for a in self.arrays().values())

    def save_npz(self, path) -> None:
        """Every array under its key, to exactly `path` (whole or not at all: inspector.core.storage.writes)."""
        save_npz(path, self.arrays())

    def summary(self) -> dict:
        """A JSON-ready description: per key statistics, predictions, timings, warnings."""
        return {
            "device": self.device,
            "target": self.target,
            "target_index": self.target_index,
            "objective": self.objective,
            "edits": self.edits,
            "captures": {name: c.stats.to_dict() for name, c in self.captures.items() if c.stats},
            "predictions": [p.__dict__ for p in self.predictions],
            **({} if self.detections is None else {"detections": [d.to_dict() for d in self.detections],
                                                   "target_detection": self.target_detection}),
            "timings": self.timings,
            "warnings": self.warnings,
        }
