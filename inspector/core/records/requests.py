"""What the app asks the worker for: plain, frozen records that cross threads as they are.

Torch-free, so the window can build them before the engine has been imported.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .protocols import DEFAULT_PROTOCOL, ROAD_NOISE, ROAD_PERCENTAGES

if TYPE_CHECKING:
    from ..runspec import RunSpec


def _empty_spec():
    from ..runspec import RunSpec

    return RunSpec()


@dataclass(frozen=True)
class ModelRequest:
    source: str = "demo"
    weights: str | None = None
    trust: bool = False
    seed: int | None = None  # random weights: the seed to build them with (None: pick one)


@dataclass(frozen=True)
class AgainstRequest:
    """A second model to run beside the loaded one and compare with it, key by key (the Compare tab's
    second-model mode): same input, same layers and sites, the target resolved on the first model.
    `edits`: the edits the second model runs with (the first runs with the request's spec)."""

    model: ModelRequest = field(default_factory=ModelRequest)
    edits: tuple = ()
    threshold: float = 1e-3


@dataclass(frozen=True)
class RunRequest:
    """An immutable snapshot of what the user asked for."""

    model: ModelRequest = field(default_factory=ModelRequest)
    input: str = ""
    device: str = "cpu"
    spec: RunSpec = field(default_factory=_empty_spec)
    baseline: bool = False  # also keep a no-edit result to compare against
    analyse: bool = False  # also work out diagnostics (gradient flow, dead units, first NaN/Inf)
    run_id: int = 0
    # The layers the visible panels show: only their statistics are computed during the run, the
    # rest (and the diagnostics) by Workbench.finish afterwards. None: everything in the run.
    visible: tuple[str, ...] | None = None
    against: AgainstRequest | None = None  # also run this second model and compare (ModelDiff)
    # A live video frame, (H, W, 3) uint8 numpy array, as the input; `input` then names it
    # ("VIDEO@frame N"), one name per frame.
    frame: object = field(default=None, compare=False, repr=False)

    def baseline_key(self) -> tuple:
        s = self.spec
        return (self.model, self.input, self.device, s.layers, s.sites, s.target, s.input_grad)


@dataclass(frozen=True)
class MapRequest:
    """One map of `input` on `model`: `method` (a method of the table, records.methods) explaining `target` at
    `layer`, with its `options` as sorted (name, value) pairs (the table's; a baseline by name). What an
    AttributionRequest and a TrustRequest (records.trust) both name, in this order."""

    model: ModelRequest = field(default_factory=ModelRequest)
    input: str = ""
    device: str = "cpu"
    method: str = "gradcam"
    target: str = "auto"
    layer: str | None = None
    run_id: int = 0
    options: tuple[tuple[str, object], ...] = ()


@dataclass(frozen=True)
class AttributionRequest(MapRequest):
    """An attribution map for the current model and input (MapRequest's fields) and the faithfulness
    `metrics` to score it with: deletion and insertion under `protocol` (records.protocols; `metric_steps` its K,
    None for its own), road with ROAD's noise, seed (None: a new one, said in the curves) and percentages."""

    metrics: tuple[str, ...] = ()
    metric_steps: int | None = None
    protocol: str = DEFAULT_PROTOCOL
    road_noise: float = ROAD_NOISE
    road_seed: int | None = None
    road_percentages: tuple[float, ...] = ROAD_PERCENTAGES


@dataclass(frozen=True)
class AtlasRequest:
    """What the Atlas view asks the worker for. `kind`: "open" an atlas folder (`out_dir`), "build"
    one from `model` over `data_dir` (the `layers`, `top` K, `batch`, on `device`) into `out_dir`,
    or the "pictures" of `layer`'s channel `channel` top images in the atlas at `out_dir`."""

    kind: str
    out_dir: str
    model: ModelRequest | None = None
    data_dir: str = ""
    layers: tuple[str, ...] = ()
    top: int = 9
    batch: int = 16
    device: str = "cpu"
    layer: str = ""
    channel: int = 0
    run_id: int = 0
