"""Chefer et al.'s relevance of one detection of DETR (ICCV 2021, "Generic Attention-model Explainability for
Interpreting Bi-Modal and Encoder-Decoder Transformers"; the rules of the reference code's DETR generator,
hila-chefer/Transformer-MM-Explainability `DETR/modules/ExplanationGenerator.py`, `generate_ours` as its DETR
notebook calls it: attention and its gradient, no LRP): the map of the detection's query over the image's feature
grid.

With A an attention's probabilities (heads, N, S), dA the gradient of the target with respect to them and
Ā = mean over heads of clamp(dA * A, min=0) (rule 5), over the encoder's tokens (the backbone's feature grid, i)
and the queries (q), R_ii and R_qq start as the identity and R_qi at zero:
- each encoder self-attention, in order: R_ii += Ā R_ii (rule 6);
- each decoder layer: its self-attention R_qq += Ā R_qq and R_qi += Ā R_qi, both from what they were before (rules
  6 and 7), then its cross-attention R_qi += norm(R_qq)^T Ā norm(R_ii) (rule 10),
where norm(R) is what R adds to the identity with each row divided by its sum, plus the identity (eqs. 8 and 9, the
code's `handle_residual`). A row that adds nothing stays the identity's row: the reference code's 0/0 there makes
that layer's whole addition NaN, which it then sets to 0 (on a one-layer decoder, whose other queries never reach
the target, every map would be 0).

The target is the detection's score as the image processor reports it (the `box:` target's objective; the
reference code takes the query's logit of its best class). The detection's query is the one whose predicted box
the post-processing turned into the detection's box. The map is R_qi's row of that query on the feature grid the
encoder reads, upsampled to the input and scaled to [0, 1].
"""

from __future__ import annotations

import torch
from torch import nn

from ..attention.taps import AttentionTaps
from ..common.errors import RunError, SpecError
from ..common.hooks import together
from ..detection.outputs import detections_of, is_detection_output, order
from ..detection.targets import box_objective
from ..detection.thresholds import score_threshold
from ..records.methods import METHODS
from ..records.support import NO_DENSE_ATTENTION
from ..sources.hf_detectors import PROCESSORS
from ..sources.loaded import LoadedModel
from ..target.objective import parse_target
from .cams.layers import upsample
from .record import NOTHING_DETECTED, Attribution, _device, _unwrap

#: transformers' `model_type` of the query-based detectors whose encoder and decoder attend densely, by name.
DENSE = {"detr": "DETR", "conditional_detr": "Conditional DETR"}
#: ... and of those whose attention is deformable.
DEFORMABLE = {"deformable_detr": "Deformable DETR", "rt_detr": "RT-DETR", "rt_detr_v2": "RT-DETR v2",
              "d_fine": "D-FINE"}


def query_family(module: nn.Module) -> str | None:
    """The `model_type` of a transformers query-based detector (hf_detectors' families), else None."""
    kind = getattr(getattr(module, "config", None), "model_type", None)
    return kind if kind in PROCESSORS and type(module).__name__.endswith("ForObjectDetection") else None


def box_methods(module: nn.Module) -> str:
    """The methods that explain `module`'s boxes, as a refusal's "use …" lists them: every method for detectors, and
    Chefer's only for a DETR or a Conditional DETR (it reads their dense attention)."""
    dense = query_family(module) in DENSE
    return ", ".join(name for name, row in METHODS.items() if row.detectors and (name != "chefer" or dense))


def _layers(module: nn.Module) -> tuple[list[str], list[tuple[str, str]]]:
    """The encoder's self-attention paths and each decoder layer's (self-attention, cross-attention), in order."""
    encoder = [f"model.encoder.layers.{i}.self_attn" for i in range(len(module.model.encoder.layers))]
    decoder = [(f"model.decoder.layers.{i}.self_attn", f"model.decoder.layers.{i}.encoder_attn")
               for i in range(len(module.model.decoder.layers))]
    return encoder, decoder


def _query_of(box: torch.Tensor, predicted: torch.Tensor) -> int:
    """The query whose predicted box (`predicted`, (1, queries, 4) before post-processing) `box` was made from: the
    one row its gradient reaches (the post-processing only converts, scales and picks the row)."""
    (grad,) = torch.autograd.grad(box.sum(), predicted, retain_graph=True)
    rows = grad[0].abs().sum(dim=-1).nonzero().flatten().tolist()
    if len(rows) != 1:
        raise RunError(f"Chefer's relevance: the detection's box comes from {len(rows)} queries, not one.")
    return rows[0]


def _normalised(relevance: torch.Tensor) -> torch.Tensor:
    """Eqs. 8 and 9: what `relevance` adds to the identity, each row divided by its sum (a row of zeros kept), plus
    the identity."""
    eye = torch.eye(relevance.shape[-1], dtype=relevance.dtype, device=relevance.device)
    added = relevance - eye
    sums = added.sum(dim=-1, keepdim=True)
    return torch.where(sums > 0, added / torch.where(sums > 0, sums, 1.0), 0.0) + eye


def _run(module: nn.Module, x: torch.Tensor, paths: list[str]):
    """One forward with the attention tapped: (the detections, the taps, the feature grid (h, w), the predicted
    boxes before post-processing)."""
    seen: dict[str, object] = {}

    def grid(_module, _args, out):
        seen["grid"] = tuple(out.shape[-2:])

    def raw(_module, _args, out):  # before the post-processing hook (hf_detectors) replaces the output
        seen["boxes"] = getattr(out, "pred_boxes", None)

    modules = dict(module.named_modules())
    def hooks():
        yield module.model.input_projection.register_forward_hook(grid)
        yield module.register_forward_hook(raw, prepend=True)

    with together(hooks()), AttentionTaps({p: modules[p] for p in paths}, probs=True) as taps, torch.enable_grad():
        output = module(x.detach().to(_device(module)).requires_grad_(True))
    return output, taps.taps, seen.get("grid"), seen.get("boxes")


def chefer_query(model: LoadedModel | nn.Module, x: torch.Tensor, target=None) -> Attribution:
    """Chefer's relevance of one detection (`target`: box:K or box:X0,Y0,X1,Y1[@CLASS]; auto: box:0) of a DETR or
    Conditional DETR on one image x (1, C, H, W) (see the module's docstring)."""
    module, labels = _unwrap(model)
    kind = query_family(module)
    if kind in DEFORMABLE:
        raise SpecError(f"Chefer's relevance reads a query's attention over the image: {DEFORMABLE[kind]}'s "
                        f"{NO_DENSE_ATTENTION} (each query samples a few points at learned offsets). For its boxes "
                        f"use {box_methods(module)}.")
    if kind not in DENSE:
        raise SpecError(f"Chefer's relevance of a box reads DETR's or Conditional DETR's attention; this model is a "
                        f"{type(module).__name__}.")
    if x.ndim != 4 or x.shape[0] != 1:
        raise SpecError(f"Chefer's relevance explains one image (1, C, H, W) at a time, not shape {tuple(x.shape)}.")
    encoder, decoder = _layers(module)
    paths = encoder + [p for pair in decoder for p in pair]
    output, taps, grid, predicted = _run(module, x, paths)
    if not is_detection_output(output) or predicted is None:
        raise SpecError(f"Chefer's relevance explains a box of a {DENSE[kind]} loaded as a detector (an `hf:` "
                        f"folder); this one answers with {type(output).__name__}.")
    if [t.path for t in taps] != paths:
        raise RunError(f"Chefer's relevance: the attention ran as {[t.path for t in taps]}, not once each as "
                       f"{paths}.")
    obj, label, resolved, k = box_objective(output, parse_target(target), labels, score_threshold(module))
    if k is None:
        raise SpecError(NOTHING_DETECTED)
    first = output[0]
    query = _query_of(first["boxes"][order(first)[k]], predicted)
    if not obj.requires_grad:
        raise SpecError(f"Chefer's relevance: the score of {resolved} does not depend on the attention.")
    grads = torch.autograd.grad(obj, [t.node for t in taps], allow_unused=True)
    cams = {t.path: (t.probs_grad(g)[0].double() * t.probs[0].double()).clamp(min=0).mean(dim=0)
            for t, g in zip(taps, grads)}
    relevance = _relevance(cams, encoder, decoder)[query]
    h, w = grid
    if relevance.numel() != h * w:
        raise RunError(f"Chefer's relevance: {relevance.numel()} encoder tokens for a {h} x {w} feature grid.")
    cam = relevance.reshape(h, w).float().cpu().numpy()
    notes = (f"relevance over {len(encoder)} encoder and {len(decoder)} decoder layer(s): the row of query {query} "
             f"on the {h} x {w} feature grid",)
    return Attribution("chefer", upsample(cam, tuple(x.shape[-2:])), str(resolved), label, None, cam, notes=notes,
                       detections=tuple(detections_of(output, labels)), target_detection=k)


def _relevance(cams: dict[str, torch.Tensor], encoder: list[str], decoder: list[tuple[str, str]]) -> torch.Tensor:
    """R_qi (queries, tokens) from each attention's Ā (rules 6, 7 and 10; the module's docstring)."""
    queries, tokens = cams[decoder[0][1]].shape
    like = cams[decoder[0][1]]
    r_ii = torch.eye(tokens, dtype=like.dtype, device=like.device)
    for path in encoder:
        r_ii = r_ii + cams[path] @ r_ii
    r_qq = torch.eye(queries, dtype=like.dtype, device=like.device)
    r_qi = torch.zeros(queries, tokens, dtype=like.dtype, device=like.device)
    for self_path, cross_path in decoder:
        r_qq, r_qi = r_qq + cams[self_path] @ r_qq, r_qi + cams[self_path] @ r_qi
        r_qi = r_qi + _normalised(r_qq).T @ cams[cross_path] @ _normalised(r_ii)
    return r_qi
