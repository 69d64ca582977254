"""The app's Evaluate…: the request that crosses to the engine (`inspector.core.evaluate.run_evaluation` over a
folder, on the loaded model) and what comes back, as plain frozen records. Torch-free: the window builds them before
the engine has loaded."""

from __future__ import annotations

from dataclasses import dataclass, field

from .protocols import DEFAULT_PROTOCOL
from .requests import ModelRequest


@dataclass(frozen=True)
class EvaluationRequest:
    """Evaluate `methods`' maps of every image in `data_dir` by `metrics` under `protocol` (`steps`: its K, None:
    the protocol's own), on `model` and `device`, into `out_dir`: as `network-inspector evaluate` takes them. The
    same request again resumes a job that was cancelled."""

    model: ModelRequest
    data_dir: str
    out_dir: str
    methods: tuple[str, ...]
    metrics: tuple[str, ...]
    protocol: str = DEFAULT_PROTOCOL
    steps: int | None = None
    batch: int = 4
    device: str = "cpu"
    run_id: int = 0


@dataclass(frozen=True)
class EvaluationDone:
    """A finished evaluation: its folder and its summary (summary.json's content, `read_summary`)."""

    out_dir: str
    summary: dict = field(compare=False)
