"""Occlusion's copies computed only where a window changes them (incremental inference): a window changes the
first layers' outputs only near it, so up to a layer S that every path from the input to the output passes
through, each copy's layers run on the box their window reaches, reading the clean image's values around it,
and the copy's S is the clean S with its box put in; the rest of the model runs whole from there.

Which layers can run on boxes is `core.occlusion_graph`'s (torch.fx). Per layer a box has one size in a job (the
largest any window needs, moved inside the layer's extent where a window's would cross it), so a pass's boxes run
as one batch. S is the local layer, passed by every path, where a copy costs least (multiply-adds on the boxes,
the reads of their reaches, and the whole layers after S); the boxes are used where that is at most `WORTH` of a
whole copy. resnet50 with 32-pixel windows at stride 16: S is in layer3, a copy 0.55 of a whole one's cost.

A layer on boxes reads its input over its box's reach: the clean values there (the padding's value outside the
extent: 0, or -inf before a max-pool), the input's box put in, so the values are the whole copy's (the
convolutions run on smaller arrays: float32 rounding at most; resnet50's maps came out bit for bit). Each job
checks that two copies occluded with x itself, run on boxes, give the model's output on x; else, and where the
model has a hook (the app's edits, a user's), is not on a CPU, cannot be traced, or no split saves enough, the
copies run whole.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.fx as fx
import torch.nn.functional as F
from torch import nn

from .checks import same_outputs
from .layout import ThreadSwitch, on_cpu
from .region_graph import ELEMENT, Graph, Op, graph_of, record

WORTH = 0.8  # of a whole copy's cost, at most, for the boxes to be used
GATHER = 3 * ELEMENT  # a read of a reach copies each element three times (clean values, the box's, the choice)
READ = 2e6  # and costs this many multiply-adds a copy whatever its size (a dozen small operations a pass)
PLANS = 8  # plans remembered per model and input shape
TIE = 1.02  # the first split within this of the cheapest: fewer layers on boxes where estimates hardly differ
_REGIONS = ThreadSwitch()  # off in a thread inside `whole_copies()`


@dataclass
class _Box:
    """A node's box in every window of the job: rows [r, r + h), columns [c, c + w); r and c per window."""

    r: np.ndarray
    c: np.ndarray
    h: int
    w: int


@dataclass(repr=False)
class _Plan:
    """Where a job's boxes stop (`split`), the nodes before it in order (the input first), every local node's
    box, the trace from the split on, and the reaches read: {(node, padding value): margin needed around it}."""

    split: fx.Node
    prefix: list
    boxes: dict
    suffix: fx.GraphModule
    reads: dict


def _fit(lo: np.ndarray, hi: np.ndarray, extent: int) -> tuple[np.ndarray, int]:
    """One size for every window's [lo, hi) (the largest, at most the extent) and the starts that keep it inside."""
    size = min(max(1, int((hi - lo).max())), extent)
    return np.clip(lo, 0, extent - size), size


def _reach(op: Op, box: _Box, out_shape) -> _Box:
    """The box of a window op's output that a box of its source changes: the positions whose reach meets it."""
    found = []
    for axis, (start, size) in enumerate(((box.r, box.h), (box.c, box.w))):
        k, s, p, d = op.k[axis], op.s[axis], op.p[axis], op.d[axis]
        lo = np.maximum(-((-(start + p - d * (k - 1))) // s), 0)
        hi = np.minimum((start + size - 1 + p) // s + 1, out_shape[2 + axis])
        found.append(_fit(lo, hi, out_shape[2 + axis]))
    (r, h), (c, w) = found
    return _Box(r, c, h, w)


def _union(boxes: list[_Box], out_shape) -> _Box:
    (r, h), (c, w) = (_fit(np.min([b.r for b in boxes], axis=0), np.max([b.r + b.h for b in boxes], axis=0),
                           out_shape[2]),
                      _fit(np.min([b.c for b in boxes], axis=0), np.max([b.c + b.w for b in boxes], axis=0),
                           out_shape[3]))
    return _Box(r, c, h, w)


def _needed(op: Op, box: _Box) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Where a window op reads its source for its box: (first rows, first columns, rows, columns)."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = op.k, op.s, op.p, op.d
    return (box.r * sh - ph, box.c * sw - pw, (box.h - 1) * sh + dh * (kh - 1) + 1,
            (box.w - 1) * sw + dw * (kw - 1) + 1)


def _same_box(a: _Box, b: _Box) -> bool:
    return a.h == b.h and a.w == b.w and np.array_equal(a.r, b.r) and np.array_equal(a.c, b.c)


def _boxes(graph: Graph, x: torch.Tensor, spots, window: int) -> dict:
    """Every local node's box in each of the job's windows."""
    height, width = x.shape[-2:]
    where = np.asarray(spots, dtype=np.int64).reshape(-1, 2)
    boxes: dict = {}
    for node, op in graph.ops.items():  # in the trace's order: sources first
        out = graph.shapes[node]
        if op.kind == "input":
            h, w = min(window, height), min(window, width)
            boxes[node] = _Box(np.minimum(where[:, 0], height - h), np.minimum(where[:, 1], width - w), h, w)
        elif op.kind == "window":
            boxes[node] = _reach(op, boxes[op.sources[0]], out)
        else:
            boxes[node] = _union([boxes[n] for n in op.sources], out)
    return boxes


def _box_cost(graph: Graph, node: fx.Node, boxes: dict) -> float:
    """What a copy of the node costs on its box: its share of the whole node's cost, and the reads of reaches."""
    op, box, shapes = graph.ops[node], boxes[node], graph.shapes
    if op.kind == "input":
        return 0.0
    cost = op.cost * box.h * box.w / (shapes[node][2] * shapes[node][3])
    if op.kind == "window":
        _r, _c, h, w = _needed(op, box)
        return cost + READ + GATHER * shapes[op.sources[0]][1] * h * w
    for source in op.sources:
        if not _same_box(boxes[source], box):
            cost += READ + GATHER * shapes[source][1] * box.h * box.w
    return cost


def _reads(graph: Graph, prefix: list, boxes: dict) -> dict:
    """{(source, padding value): the margin around its extent that the job's reads of it reach}."""
    reads: dict = {}
    for node in prefix[1:]:
        op, box = graph.ops[node], boxes[node]
        if op.kind == "window":
            r, c, h, w = _needed(op, box)
            extent = graph.shapes[op.sources[0]][2:]
            margin = int(max(0, -r.min(), -c.min(), (r + h).max() - extent[0], (c + w).max() - extent[1]))
            key = (op.sources[0], op.pad)
            reads[key] = max(reads.get(key, 0), margin)
        else:
            for source in op.sources:
                if not _same_box(boxes[source], box):
                    reads.setdefault((source, 0.0), 0)
    return reads


def _suffix(traced: fx.GraphModule, split: fx.Node, prefix: set) -> fx.GraphModule:
    """The trace from the split on: a graph whose one input is the split's value."""
    graph = fx.Graph()
    env = {split: graph.placeholder("split")}
    for node in traced.graph.nodes:
        if node not in prefix:
            env[node] = graph.node_copy(node, env.__getitem__)
    return fx.GraphModule(traced, graph)


def plan(graph: Graph, x: torch.Tensor, spots, window: int) -> _Plan | None:
    """The split where a copy costs least, or None where none costs at most WORTH of a whole copy; worked out
    once per input shape and windows, then remembered."""
    key = (tuple(x.shape), window, tuple(map(tuple, spots)))
    if key in graph.plans:
        return graph.plans[key]
    boxes = _boxes(graph, x, spots, window)
    total = sum(graph.costs.values())
    on_boxes = {n: _box_cost(graph, n, boxes) for n in graph.ops}
    costs, ancestors = {}, {}
    for node, op in graph.ops.items():  # in the trace's order; a local node's sources are local
        ancestors[node] = set().union(*(ancestors[n] | {n} for n in op.sources))
        before = ancestors[node]
        if op.kind == "input" or any(u not in before and u is not node for n in before for u in n.users):
            continue  # a path to the output that does not pass through it
        upto = before | {node}
        costs[node] = (sum(on_boxes[n] for n in upto)
                       + 2 * ELEMENT * math.prod(graph.shapes[node][1:])  # the clean split copied, the box put in
                       + total - sum(graph.costs[n] for n in upto))
    least = min(costs.values(), default=math.inf)
    found = None
    if least <= WORTH * total:
        split = next(n for n, cost in costs.items() if cost <= TIE * least)
        prefix = [n for n in graph.traced.graph.nodes if n in ancestors[split]] + [split]
        found = _Plan(split, prefix, boxes, _suffix(graph.traced, split, set(prefix)), _reads(graph, prefix, boxes))
    if len(graph.plans) >= PLANS:  # the oldest forgotten (a user trying windows in the app)
        graph.plans.pop(next(iter(graph.plans)))
    graph.plans[key] = found
    return found


class Regions:
    """One occlusion job's copies on boxes: `run(which)` is the model's output for the copies occluded at those
    of the job's spots, as `layout.run(module, occluded(...))` gives it."""

    def __init__(self, graph: Graph, planned: _Plan, x: torch.Tensor, b: torch.Tensor, spots, window: int,
                 memory_format) -> None:
        self.graph, self.plan, self.x, self.b, self.window, self.format = graph, planned, x, b, window, memory_format
        self.spots = np.asarray(spots, dtype=np.int64).reshape(-1, 2)
        keep = {source for source, _ in planned.reads} | {planned.split}
        clean = record(graph.traced, x.contiguous(memory_format=memory_format), keep, planned.split)
        # each source read, (H + 2 margin, W + 2 margin, C), the padding's value around it
        self.padded = {(source, value): (margin, F.pad(clean[source][0], (margin,) * 4, value=value)
                                         .permute(1, 2, 0).contiguous())
                       for (source, value), margin in planned.reads.items()}
        self.split = clean[planned.split]

    def _read(self, source: fx.Node, patch: torch.Tensor, idx: np.ndarray, r: np.ndarray, c: np.ndarray,
              h: int, w: int, value: float) -> torch.Tensor:
        """The source's values over rows [r, r + h), columns [c, c + w) of each copy (B, C, h, w): the clean ones,
        `value` outside the extent, the source's own box (`patch`) where it is."""
        m, padded = self.padded[(source, value)]
        device = padded.device
        rows = torch.as_tensor(r, device=device)[:, None] + torch.arange(h, device=device)  # (B, h)
        cols = torch.as_tensor(c, device=device)[:, None] + torch.arange(w, device=device)
        region = padded[(rows + m)[:, :, None], (cols + m)[:, None, :]]  # (B, h, w, C)
        box = self.plan.boxes[source]
        rows = rows - torch.as_tensor(box.r[idx], device=device)[:, None]  # where in the source's box
        cols = cols - torch.as_tensor(box.c[idx], device=device)[:, None]
        inside = ((rows >= 0) & (rows < box.h))[:, :, None] & ((cols >= 0) & (cols < box.w))[:, None, :]
        copies = torch.arange(len(idx), device=device)[:, None, None]
        boxed = patch.permute(0, 2, 3, 1)[copies, rows.clamp(0, box.h - 1)[:, :, None],
                                          cols.clamp(0, box.w - 1)[:, None, :]]
        region = torch.where(inside[..., None], boxed, region).permute(0, 3, 1, 2)  # channels-last
        return region if self.format == torch.channels_last else region.contiguous()

    def _input(self, idx: np.ndarray, b: torch.Tensor) -> torch.Tensor:
        """The image occluded with b, over the input's box of each copy."""
        box = self.plan.boxes[self.plan.prefix[0]]
        height, width = self.x.shape[-2:]
        parts = []
        for (y, x0), r, c in zip(self.spots[idx], box.r[idx], box.c[idx]):
            part = self.x[0, :, r:r + box.h, c:c + box.w].clone()
            y1, x1 = min(y + self.window, height), min(x0 + self.window, width)
            part[:, y - r:y1 - r, x0 - c:x1 - c] = b[0, :, y:y1, x0:x1]
            parts.append(part)
        return torch.stack(parts).contiguous(memory_format=self.format)

    def run(self, which: slice | list, b: torch.Tensor | None = None):
        """The model's output for the copies `which` (a slice or indices of the job's spots), occluded with the
        job's baseline (or `b`)."""
        idx = np.arange(len(self.spots))[which]
        boxes = self.plan.boxes
        patches = {self.plan.prefix[0]: self._input(idx, self.b if b is None else b)}
        for node in self.plan.prefix[1:]:
            op, box = self.graph.ops[node], boxes[node]
            if op.kind == "window":
                r, c, h, w = _needed(op, box)
                source = op.sources[0]
                patches[node] = op.run(self._read(source, patches[source], idx, r[idx], c[idx], h, w, op.pad))
                continue
            values = {source: patches[source] if _same_box(boxes[source], box) else
                      self._read(source, patches[source], idx, box.r[idx], box.c[idx], box.h, box.w, 0.0)
                      for source in op.sources}
            patches[node] = op.run(values[op.sources[0]]) if isinstance(op.run, nn.Module) else op.run(values)
        box, patch = boxes[self.plan.split], patches[self.plan.split]
        whole = self.split.expand(len(idx), *self.split.shape[1:]).contiguous(memory_format=self.format)
        for j, (r, c) in enumerate(zip(box.r[idx], box.c[idx])):
            whole[j, :, r:r + box.h, c:c + box.w] = patch[j]
        return self.plan.suffix(whole)


def regions_for(module: nn.Module, x: torch.Tensor, b: torch.Tensor, spots, window: int, answer,
                memory_format=torch.contiguous_format, hooks_free: bool = True) -> Regions | None:
    """The job's `Regions`, or None where its copies run whole: not on a CPU, `hooks_free` False (a model with a
    hook), a model that cannot be traced or
    changed since, no split that saves enough, or boxes that do not give `answer` (the model's output on x) for
    copies occluded with x itself, the first window and the last."""
    if not _REGIONS.on or not hooks_free or not on_cpu(module) or x.ndim != 4:
        return None
    graph = graph_of(module, x)
    if graph is None or not graph.still(module):
        return None
    try:
        planned = plan(graph, x, spots, window)
        if planned is None:
            return None
        found = Regions(graph, planned, x, b, spots, window, memory_format)
        ends = [0, len(spots) - 1]
        again = found.run(ends, b=x)
        if not all(same_outputs(_part(answer, 0), _part(again, i)) for i in range(len(ends))):
            return None
    except Exception:  # noqa: BLE001 - a graph the boxes cannot run: the copies run whole
        return None
    return found


def _part(output, i: int):
    """Copy i of a model's output (a tensor, or tensors in a tuple, list or dict)."""
    if isinstance(output, torch.Tensor):
        return output[i:i + 1]
    if isinstance(output, dict):
        return {k: _part(v, i) for k, v in output.items()}
    if isinstance(output, (tuple, list)):
        return [_part(v, i) for v in output]
    return output


def whole_copies():
    """While in the block, occlusion in this thread runs every copy whole: what `bench --attribution --against
    whole` measures the regions against."""
    return _REGIONS.off()
