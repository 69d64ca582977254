"""Occlusion (Zeiler and Fergus 2014): how much the target's score falls when a window of the input is
replaced by the baseline. Windows of `window` x `window` pixels over all channels at once move by
`stride`; windows start at 0, stride, 2 stride, ... until one reaches the far edge (the last is cut at the
border), so every pixel is covered. Each element's value is the mean, over the windows that cover it, of
f(x) - f(x with the window occluded): captum's `Occlusion` with sliding_window_shapes=(C, W, W) and
strides=(C, S, S). The occluded copies run in batches, without gradients, in `core.fast_passes`' layout;
on a CPU their first layers run only on the regions their windows reach, where that saves enough
(`core.occlusion_regions`), the same numbers.
"""

from __future__ import annotations

import contextlib
import math

import numpy as np
import torch
from torch import nn

from ..detection.follow import follow
from ..detection.outputs import is_detection_output
from ..common.errors import SpecError
from ..target.objective import Target, objective, parse_target, primary_output, same_target
from ..sources.loaded import LoadedModel
from .passes.batching import LeafBytes, check_batch, each_pass, fit_batch, pick_batch
from .passes.checks import plain
from .passes.layout import Layout
from .passes.regions import regions_for
from .record import Attribution, _device, _unwrap


def default_window(x: torch.Tensor) -> int:
    """A tenth of the input's shorter side (22 for 224), at least 1."""
    return max(1, round(min(x.shape[-2:]) / 10))


def window_starts(side: int, window: int, stride: int) -> list[int]:
    """Where windows start along a side: 0, stride, ... ceil((side - window) / stride) times after 0."""
    return [i * stride for i in range(math.ceil((side - window) / stride) + 1)]


def check_window(x_shape: tuple[int, ...], window: int, stride: int) -> None:
    """One-line errors for a window or stride that cannot be used on an input of this shape."""
    for name, value in (("window", window), ("stride", stride)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise SpecError(f"The occlusion {name} is a whole number of pixels, at least 1, not {value!r}.")
    if len(x_shape) != 4:
        raise SpecError(f"Occlusion slides a window over an image (N, C, H, W), not shape {tuple(x_shape)}.")
    height, width = x_shape[-2:]
    if window > min(height, width):
        raise SpecError(f"The occlusion window ({window} pixels) is larger than the input ({height} x {width}).")
    if stride > window:
        raise SpecError(f"The occlusion stride ({stride}) is larger than the window ({window}): some pixels would "
                        "never be occluded.")


def occlusion(model: LoadedModel | nn.Module, x: torch.Tensor, target=None, window: int | None = None,
              stride: int | None = None, baseline: torch.Tensor | None = None, batch: int | None = None,
              max_memory: int | None = None, cancel=None, progress=None) -> Attribution:
    """The occlusion map (C, H, W) of the target's score for one image x (1, C, H, W); `baseline` (x's
    shape; zeros when None) fills the windows; `batch` copies a pass (None: from the free memory, at most
    `max_memory` bytes; core.batching). `progress(done, total)` after each batch of windows; `cancel()`
    True stops between batches (RunCancelled)."""
    module, labels = _unwrap(model)
    if x.ndim != 4 or x.shape[0] != 1:
        raise SpecError(f"Occlusion explains one image (1, C, H, W) at a time, not shape {tuple(x.shape)}.")
    window = default_window(x) if window is None else window
    stride = max(1, window // 2) if stride is None else stride
    check_window(tuple(x.shape), window, stride)
    check_batch(batch)
    device = _device(module)
    x = x.detach().to(device)
    b = torch.zeros_like(x) if baseline is None else baseline.detach().to(device=device, dtype=x.dtype)
    if b.shape != x.shape:
        raise SpecError(f"The baseline's shape {tuple(b.shape)} is not the input's {tuple(x.shape)}.")
    height, width = x.shape[-2:]
    spots = [(y, x0) for y in window_starts(height, window, stride) for x0 in window_starts(width, window, stride)]
    layout = Layout(module, grad=False)
    boxes, hooks_free, regions = {}, plain(module), None
    with torch.no_grad():
        with LeafBytes(module) if batch is None else contextlib.nullcontext() as counted:
            answer = layout.run(module, x)
        if batch is None:
            batch = pick_batch(module, x, len(spots), grad=False, max_memory=max_memory, device=device,
                               need=counted.per_copy(x, 1, grad=False))
        else:
            batch = fit_batch(module, batch)
        if is_detection_output(answer):  # a detector: each copy's score of the object found on x (0: lost)
            followed = follow(module, answer, target, labels)
            index, resolved, boxes = followed.label, followed.resolved, followed.record()
            scores_of = lambda output: followed.scores(output).double()  # noqa: E731
        else:
            first, hw = primary_output(answer), (height, width)  # hw: a seg: target's box is in input pixels
            _obj, index, resolved = objective(first, parse_target(target), hw, module)
            same = same_target(index, resolved)
            scores_of = lambda output: _scores(primary_output(output), same, module, hw)  # noqa: E731
            regions = regions_for(module, x, b, spots, window, answer, _format(layout), hooks_free)
        f_x = scores_of(answer)[0]
        # the windows' drops add up on the host, in float64, in window order: one read of a pass's scores
        # instead of two small device operations a window (a GPU waited on them)
        total, count = np.zeros((height, width)), np.zeros((height, width))
        for pass_ in each_pass(len(spots), batch, "Occlusion", cancel, progress):
            part = spots[pass_]
            copies = regions.run(pass_) if regions is not None else layout.run(module, occluded(x, b, part, window))
            scores = scores_of(copies)
            for (y, x0), score in zip(part, (f_x - scores).tolist()):
                total[y:y + window, x0:x0 + window] += score
                count[y:y + window, x0:x0 + window] += 1
    found = np.broadcast_to((total / count).astype(np.float32), (x.shape[1], height, width)).copy()
    return Attribution("occlusion", found, str(resolved), index, **boxes,
                       details=(("window", int(window)), ("stride", int(stride)), ("windows", len(spots)),
                                ("batch", batch)))


def _format(layout: Layout) -> torch.memory_format:
    return torch.channels_last if layout.channels_last else torch.contiguous_format


def occluded(x: torch.Tensor, b: torch.Tensor, spots: list[tuple[int, int]], window: int) -> torch.Tensor:
    """One copy of x (1, C, H, W) per spot (top, left), the window there taken from the baseline b, made in a
    few operations on x's device whatever the number of windows; contiguous, as `x.repeat` made them (a
    channels-last x gave channels-last copies, which a model that `Layout` leaves alone runs in other kernels)."""
    where = torch.as_tensor(spots, device=x.device).reshape(-1, 2)
    rows, cols = (torch.arange(n, device=x.device) for n in x.shape[-2:])
    in_rows = (rows >= where[:, :1]) & (rows < where[:, :1] + window)
    in_cols = (cols >= where[:, 1:]) & (cols < where[:, 1:] + window)
    return torch.where(in_rows[:, None, :, None] & in_cols[:, None, None, :], b, x).contiguous()


def _scores(output: torch.Tensor, target: Target, module: nn.Module, hw: tuple[int, int]) -> torch.Tensor:
    """The objective of each batch item, (n,) float64 (a class's: that column, read at once)."""
    if target.kind == "index":
        return output.reshape(output.shape[0], -1)[:, target.index].double()
    return torch.stack([objective(output[i:i + 1], target, hw, module)[0]
                        for i in range(output.shape[0])]).double()


def occlusion_map(model, x, target, layer, options) -> Attribution:
    return occlusion(model, x, target, **options)
