"""D-RISE (Petsiuk et al., CVPR 2021): which pixels a detector needs to find one box, with no gradient.

N random masks, as RISE makes them: a grid of cells kept with probability `probability`, upsampled
bilinearly to one cell more than the image and cropped at a random shift, so masks are smooth. Each masked
image runs through the detector; its weight is the best similarity of its detections to the target
detection: IoU of the boxes times the similarity of the class scores. torchvision's detectors give one
label and its score per box (not every class's probability), so the class similarity is the box's score
when its label is the target's, else 0 (the paper's cosine of score vectors with one-hot vectors). The map
is the weighted sum of the masks, divided by N, scaled to [0, 1] on its own (one box's map never shares
a scale with another's). Masks are made on the CPU from `seed` (the same seed, the same masks, the same
map anywhere), a pass at a time (20,000 masks of one-pixel cells held one pass, not 2.5 GB), and run in
batches, without gradients.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

from ..detection.outputs import detections_of, is_detection_output
from ..detection.overlap import box_iou
from ..detection.targets import box_objective
from ..detection.thresholds import score_threshold
from ..common.errors import SpecError
from ..target.objective import parse_target
from ..records.methods import METHODS
from ..sources.seeds import check_seed
from .passes.batching import each_pass, fit_batch, pick_batch
from .record import Attribution, _device, _unwrap

DEFAULTS = {"masks": 500, "probability": 0.5}


def default_cell(x: torch.Tensor) -> int:
    """A sixteenth of the shorter side (D-RISE's 16 x 16 grid), at least 2 pixels."""
    return max(2, math.ceil(min(x.shape[-2:]) / 16))


def draw_masks(count: int, size: tuple[int, int], cell: int, probability: float,
               generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """The random part of the next `count` masks, each drawn after the one before it (its kept cells, then its
    shift), so that masks drawn a pass at a time are the masks drawn at once, whatever the batch: the kept cells
    (count, 1, rows, cols) and the shifts (count, 2)."""
    rows, cols = math.ceil(size[0] / cell), math.ceil(size[1] / cell)
    grids, shifts = torch.empty(count, 1, rows, cols), torch.empty(count, 2, dtype=torch.int64)
    for i in range(count):
        grids[i] = (torch.rand(1, rows, cols, generator=generator) < probability).float()
        shifts[i] = torch.randint(0, cell, (2,), generator=generator)
    return grids, shifts


def render_masks(grids: torch.Tensor, shifts: torch.Tensor, size: tuple[int, int], cell: int) -> torch.Tensor:
    """(n, 1, H, W) float32 masks in [0, 1] from drawn cells and shifts, RISE's way (the module's docstring)."""
    h, w = size
    rows, cols = grids.shape[-2:]
    up = F.interpolate(grids, size=((rows + 1) * cell, (cols + 1) * cell), mode="bilinear", align_corners=False)
    return torch.stack([up[i, :, dy:dy + h, dx:dx + w] for i, (dy, dx) in enumerate(shifts.tolist())])


def make_masks(count: int, size: tuple[int, int], cell: int, probability: float,
               generator: torch.Generator) -> torch.Tensor:
    """(count, 1, H, W) masks drawn from `generator`."""
    return render_masks(*draw_masks(count, size, cell, probability, generator), size, cell)


def similarity(found: dict, box: torch.Tensor, label: int) -> float:
    """The best IoU x class-score similarity of one image's detections to the target detection."""
    scores = found["scores"].double()
    if scores.numel() == 0:
        return 0.0
    labels = found.get("labels")
    same = torch.ones_like(scores) if labels is None else (labels == label).double()
    return float((box_iou(box.double()[None], found["boxes"].double())[0] * same * scores).max())


def _read(found: dict) -> dict:
    """What `similarity` reads of one image's detections, on the CPU (a Mask R-CNN's masks stay where they are)."""
    return {key: found[key].detach().cpu() for key in ("boxes", "scores", "labels") if key in found}


def _check(masks, cell, probability, seed, batch) -> None:
    for name, value, least in (("masks", masks, 1), ("cell", cell, 1), ("batch", 1 if batch is None else batch, 1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
            raise SpecError(f"The D-RISE {name} is a whole number, at least {least}, not {value!r}.")
    if isinstance(probability, bool) or not isinstance(probability, (int, float)) or not 0 < probability <= 1:
        raise SpecError(f"The D-RISE probability of keeping a cell is above 0 and at most 1, not {probability!r}.")
    check_seed(int(seed) if isinstance(seed, np.integer) else seed, "The D-RISE mask seed")


def drise(model, x: torch.Tensor, target=None, masks: int = DEFAULTS["masks"], cell: int | None = None,
          probability: float = DEFAULTS["probability"], seed: int | None = None, batch: int | None = None,
          max_memory: int | None = None, cancel=None, progress=None) -> Attribution:
    """The D-RISE map (H, W) in [0, 1] of one detection of one image x (1, C, H, W): `target` is box:K or
    box:X0,Y0,X1,Y1[@CLASS] (auto: box:0). `progress(done, total)` after each batch of masks; `cancel()`
    True stops between batches (RunCancelled)."""
    module, labels = _unwrap(model)
    if x.ndim != 4 or x.shape[0] != 1:
        raise SpecError(f"D-RISE explains one image (1, C, H, W) at a time, not shape {tuple(x.shape)}.")
    cell = default_cell(x) if cell is None else cell
    _check(masks, cell, probability, seed, batch)
    if cell > min(x.shape[-2:]):
        raise SpecError(f"The D-RISE cell ({cell} pixels) is larger than the input ({x.shape[-2]} x {x.shape[-1]}).")
    device = _device(module)
    x = x.detach().to(device)
    seed = int(torch.randint(0, 2**31 - 1, (1,)).item()) if seed is None else int(seed)
    with torch.no_grad():
        first = module(x)
        if not is_detection_output(first):
            raise SpecError("D-RISE explains a detector's boxes; this model detects nothing (use occlusion for a "
                            "classifier).")
        _score, label, resolved, k = box_objective(first, parse_target(target), labels, score_threshold(module))
        if k is None:
            raise SpecError("D-RISE: the model detected nothing above its score threshold on this input.")
        found = detections_of(first, labels)
        box = torch.tensor(found[k].box, dtype=torch.float64)
        if batch is None:
            batch = pick_batch(module, x, masks, grad=False, max_memory=max_memory, device=device)
        else:
            batch = fit_batch(module, batch)
        size = tuple(x.shape[-2:])
        generator = torch.Generator().manual_seed(seed)  # the masks drawn a pass at a time: one pass's kept
        total = torch.zeros(size, dtype=torch.float64)
        for pass_ in each_pass(masks, batch, "D-RISE", cancel, progress):
            part = render_masks(*draw_masks(pass_.stop - pass_.start, size, cell, probability, generator), size, cell)
            outputs = module(x * part.to(device))
            weights = torch.tensor([similarity(_read(o), box, found[k].label) for o in outputs], dtype=torch.float64)
            total += (weights[:, None, None] * part[:, 0].double()).sum(dim=0)
    raw = (total / masks).float().numpy()
    lo, hi = raw.min(), raw.max()
    scaled = (raw - lo) / (hi - lo) if hi > lo else np.zeros_like(raw)
    return Attribution("drise", scaled, str(resolved), label, cam=raw, detections=tuple(found), target_detection=k,
                       details=(("masks", int(masks)), ("cell", int(cell)), ("probability", float(probability)),
                                ("seed", seed), ("batch", batch)))


def drise_map(model, x, target, layer, options) -> Attribution:
    own = {k: v for k, v in options.items() if k in METHODS["drise"].option_names}  # a baseline is the metrics'
    return drise(model, x, target, **own)
