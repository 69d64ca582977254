"""The statistics of one capture: a plain, frozen record (torch-free, so the window can read it
without importing the engine). Worked out by `inspector.core.engine.stats`."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class TensorStats:
    shape: tuple[int, ...]
    dtype: str
    mean: float
    std: float
    min: float
    max: float
    l2: float
    zero_fraction: float
    nan: int
    inf: int

    def to_dict(self) -> dict:
        return asdict(self)
