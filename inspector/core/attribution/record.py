"""What an attribution method returns (`Attribution`), and the model and device it runs on: shared by
`attribution` (gradients, Grad-CAM, guided, rollout) and `integrated` (integrated gradients)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from ..edits.guided import approximation_note
from ..common.errors import SpecError
from ..records.signs import default_sign, picture_of
from ..sources.loaded import LoadedModel


@dataclass(frozen=True)
class Attribution:
    """A map and how it was made. `map` is what `attribute --out x.npy` writes:
    saliency (H, W); gradcam (H, W) upsampled to the input and scaled to [0, 1];
    guided and guided-gradcam (C, H, W) input gradients."""

    method: str
    map: np.ndarray
    target: str
    target_index: int | None
    layer: str | None = None
    cam: np.ndarray | None = None  # Grad-CAM at the layer's resolution (h, w), unscaled
    covered: tuple[str, ...] = ()  # nn.ReLU modules given the exact guided rule
    approximated: tuple[str, ...] = ()  # other activation modules: positive gradients only
    unreached: tuple[str, ...] = ()  # activations called as functions: no hook reaches them
    warnings: tuple[str, ...] = ()
    approximated_types: tuple[str, ...] = ()  # the classes of `approximated` (GELU, SiLU, ...)
    completeness_gap: float | None = None  # integrated gradients: |sum(map) - (f(x) - f(baseline))|
    details: tuple[tuple[str, object], ...] = ()  # how it was made (steps, quadrature, baseline, ...)
    baseline: np.ndarray | None = None  # ig and occlusion: the baseline, (C, H, W) in the model's input space
    curves: tuple = ()  # deletion and insertion scores asked for with the map (inspector.core.attribution.scores.faithfulness.Curve)
    notes: tuple[str, ...] = ()  # how it was made, in words, that is no warning (which layer Grad-CAM chose)
    detections: tuple | None = None  # a detector's (records.detections.Detection), best first
    target_detection: int | None = None  # the rank of the detection explained
    sign: str | None = None  # how the map is drawn and scored (records.signs); None: the method's default

    @property
    def shown_sign(self) -> str:
        """The sign the map is drawn and scored with: its own, else its method's default (records.signs)."""
        return self.sign or default_sign(self.method, dict(self.details).get("of"))

    @property
    def picture(self) -> np.ndarray:
        """The (H, W) picture the view draws and deletion/insertion rank, under `shown_sign`."""
        return picture_of(self.map, self.shown_sign)

    @property
    def settings(self) -> dict:
        """How the map was made, as every surface says it (caption, Compare all's cells and export, --json):
        method, sign, target, layer and the method's options (SmoothGrad's kind and its inner method's), not
        the run's timing or what was worked out from them."""
        made = {k: (v.item() if hasattr(v, "item") else v) for k, v in self.details if k not in NOT_SETTINGS}
        found = {"method": self.method, "sign": self.shown_sign, "target": self.target}
        if self.layer:
            found["layer"] = self.layer
        return found | made

    def settings_text(self) -> str:
        """`settings` in one line: "ig · signed · class 3 · steps 8 · quadrature riemann_trapezoid · ..."."""
        s = self.settings
        first = [s.pop("method"), s.pop("sign"), s.pop("target")]
        return " · ".join(first + [f"{k} {_short(v)}" for k, v in s.items() if v is not None])

    @property
    def approximation(self) -> str:
        """Where the guided rule was an approximation, in words ("" where it was exact or not used)."""
        return approximation_note(self.approximated, self.approximated_types)


#: Details that are results or timing, not settings of the map (`Attribution.settings` leaves them out).
NOT_SETTINGS = ("seconds", "baseline is", "scores' baseline is", "f(x) - f(baseline)", "sigma", "windows", "batch")


def _short(value) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def boxes_of(result) -> dict:
    """The Attribution fields a detector's run fills in (none for other models)."""
    if result.detections is None:
        return {}
    return {"detections": tuple(result.detections), "target_detection": result.target_detection}


def _unwrap(model: LoadedModel | nn.Module) -> tuple[nn.Module, list[str] | None]:
    return (model.module, model.labels) if isinstance(model, LoadedModel) else (model, None)


def _device(module: nn.Module) -> torch.device:
    return next((p.device for p in module.parameters()), torch.device("cpu"))


#: What every method that explains a box says when the detector found none (ig's and occlusion's words, `follow`).
NOTHING_DETECTED = "The model detected nothing above its score threshold on this input: there is no box to explain."


def box_found(detections, target_detection) -> None:
    """A detector's run whose default target found no box (the engine's `auto` then scores nothing: a map of 0
    and a warning) explains nothing: SpecError, as `box:0` and ig, occlusion and D-RISE already refuse."""
    if detections is not None and target_detection is None:
        raise SpecError(NOTHING_DETECTED)
