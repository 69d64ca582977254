"""A learned dictionary of concepts: K directions in a layer's channel space, read from
OUT_DIR/dictionary.safetensors (safetensors only: loading runs no code).

`Dictionary.coefficients` gives each sample's concept coefficients: for NMF the non-negative least
squares solution for the fixed components (`nnls`), for a sparse autoencoder its encoder (top-k of a
ReLU). `reconstruct` maps coefficients back to channels. A layer's output is taken in its own layout
(`layout`: NCHW maps or NLC tokens; NHWC, NC) or as (N, C) samples.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

import torch

from ..common.arguments import checked
from ..common.errors import ArgumentValueError, InspectorError
from ..folder_jobs import KINDS
from ..storage.paths import check_name, regular_file

DICTIONARY_FILE = KINDS["concepts"][2]  # "dictionary.safetensors"
METHODS = ("nmf", "sae")
LAYOUTS = ("NCHW", "NHWC", "NLC", "NC")

#: nnls: projected gradient (FISTA with restarts) until no coefficient moves by more than NNLS_TOL of the
#: largest, at most NNLS_STEPS steps; in float64
NNLS_TOL = 1e-7
NNLS_STEPS = 3000
NNLS_STEPS_MOST = 10**6  # the most steps `nnls` may be asked for (it stops sooner where it converges)


class ConceptError(InspectorError):
    """A dictionary could not be learned, read or applied (a signed layer for NMF, a width that does not fit)."""


@dataclass(frozen=True)
class Dictionary:
    """K concepts of one layer: `components` (K, C), each a direction in the layer's C channels."""

    method: str  # "nmf" or "sae"
    components: torch.Tensor  # (K, C) float32
    layer: str
    layout: str  # how samples map back to positions: "NCHW", "NHWC", "NLC" (tokens) or "NC"
    model: str = ""
    sparsity: int | None = None  # sae: the top-k
    encoder_weight: torch.Tensor | None = None  # sae: (K, C)
    encoder_bias: torch.Tensor | None = None  # sae: (K,)
    pre_bias: torch.Tensor | None = None  # sae: (C,), taken off before encoding, added back after decoding
    weights: str | None = None  # the model's weights as loaded ("pretrained", "random", a checkpoint's path)
    seed: int | None = None  # the seed of random weights
    digest: str | None = None  # identity.weights_digest of the weights it was learned on

    @property
    def k(self) -> int:
        return int(self.components.shape[0])

    @property
    def channels(self) -> int:
        return int(self.components.shape[1])

    def check(self, layer: str | None = None, model=None, concept: int | None = None) -> None:
        """ConceptError, naming both, when the dictionary is of another layer or model; or has no `concept`.
        `model`: a model's source, or the loaded model (a LoadedModel), whose weights must then be those the
        dictionary was learned on (their hash, where the dictionary records one)."""
        if layer is not None and layer != self.layer:
            raise ConceptError(f"The dictionary is of layer {self.layer}, not {layer}.")
        source = model if isinstance(model, str) or model is None else getattr(model, "source", None)
        if model is not None and self.model and source != self.model:
            raise ConceptError(f"The dictionary was learned on model {self.model}, not {source}.")
        module = getattr(model, "module", None)
        if self.digest and isinstance(module, torch.nn.Module):
            from .identity import weights_digest

            ours = weights_digest(module)
            if ours != self.digest:
                theirs = _weights(self.weights, self.seed, self.digest)
                raise ConceptError(f"The dictionary was learned on {self.model} with other weights ({theirs}), not the "
                                   f"loaded ones ({_weights(model.weights, model.seed, ours)}): its concepts are "
                                   f"another checkpoint's directions.")
        if concept is not None and (isinstance(concept, bool) or not isinstance(concept, int)
                                    or not 0 <= concept < self.k):
            raise ConceptError(f"no concept {concept!r}: the dictionary has {self.k} concepts (id 0 to {self.k - 1}).")

    # -- samples <-> the layer's layout ----------------------------------------------------------
    def to_samples(self, activation: torch.Tensor) -> tuple[torch.Tensor, tuple]:
        """(N, C) samples of a layer's output (or of samples as they are) and how to put them back."""
        x = activation
        if x.dim() == 2:
            width = x.shape[1]
        elif x.dim() == 4 and self.layout == "NCHW":
            width = x.shape[1]
        elif x.dim() in (3, 4):
            width = x.shape[-1]
        else:
            raise ConceptError(f"The dictionary of {self.layer} takes its output ({self.layout}) or (N, C) samples, "
                               f"not a tensor of shape {tuple(x.shape)}.")
        if width != self.channels:
            raise ConceptError(f"The dictionary of {self.layer} has {self.channels} channels; this activation has "
                               f"{width} (shape {tuple(x.shape)}): another layer's or model's.")
        if x.dim() == 4 and self.layout == "NCHW":
            b, c, h, w = x.shape
            return x.permute(0, 2, 3, 1).reshape(-1, c), ("NCHW", b, h, w)
        return x.reshape(-1, width), ("last", tuple(x.shape[:-1]))

    @staticmethod
    def from_samples(values: torch.Tensor, how: tuple) -> torch.Tensor:
        if how[0] == "NCHW":
            _, b, h, w = how
            return values.reshape(b, h, w, -1).permute(0, 3, 1, 2)
        return values.reshape(*how[1], -1)

    # -- the API ---------------------------------------------------------------------------------
    def coefficients(self, activation: torch.Tensor) -> torch.Tensor:
        """Each sample's K coefficients, in the activation's layout with K in place of C ((B, K, H, W) for an
        NCHW map, (B, L, K) for tokens, (N, K) for samples)."""
        x, how = self.to_samples(self._tensor(activation, "Dictionary.coefficients(): activation"))
        if self.method == "nmf":
            coef = solve_nnls(x, self.components.to(x.device))
        else:
            coef = self.encode(x)
        return self.from_samples(coef.to(activation.dtype), how)

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        """The sparse autoencoder's coefficients of (N, C) samples: top-k of ReLU(W (x - pre_bias) + b)."""
        w, b, pre = (t.to(x.device, torch.float32) for t in (self.encoder_weight, self.encoder_bias, self.pre_bias))
        return top_k(torch.relu((x.float() - pre) @ w.T + b), self.sparsity or self.k)

    def reconstruct(self, coefficients: torch.Tensor) -> torch.Tensor:
        """The activation the coefficients stand for (sae: its pre_bias added), in their layout."""
        c = self._tensor(coefficients, "Dictionary.reconstruct(): coefficients")
        if c.dim() == 0:
            raise ConceptError(f"The dictionary of {self.layer} takes (N, K) coefficients or its layer's layout, not a "
                               f"0-d tensor.")
        width = c.shape[1] if (c.dim() == 4 and self.layout == "NCHW") else c.shape[-1]
        if width != self.k:
            raise ConceptError(f"The dictionary of {self.layer} has {self.k} concepts; these coefficients have "
                               f"{width} (shape {tuple(c.shape)}).")
        if c.dim() == 4 and self.layout == "NCHW":
            b, k, h, w = c.shape
            flat, how = c.permute(0, 2, 3, 1).reshape(-1, k), ("NCHW", b, h, w)
        else:
            flat, how = c.reshape(-1, self.k), ("last", tuple(c.shape[:-1]))
        out = flat.float() @ self.components.to(c.device)
        if self.pre_bias is not None:
            out = out + self.pre_bias.to(c.device)
        return self.from_samples(out.to(c.dtype), how)

    def tensors(self) -> dict[str, torch.Tensor]:
        out = {"components": self.components.float().contiguous()}
        if self.method == "sae":
            out.update({"encoder.weight": self.encoder_weight.float().contiguous(),
                        "encoder.bias": self.encoder_bias.float().contiguous(),
                        "pre_bias": self.pre_bias.float().contiguous()})
        return out

    def metadata(self) -> dict[str, str]:
        out = {"method": self.method, "layer": self.layer, "layout": self.layout, "model": self.model,
               "sparsity": json.dumps(self.sparsity), "seed": json.dumps(self.seed)}
        out.update({k: v for k, v in (("weights", self.weights), ("weights_digest", self.digest)) if v is not None})
        return out

    # -- checked arguments -----------------------------------------------------------------------------------
    def _tensor(self, value, what: str) -> torch.Tensor:
        if not isinstance(value, torch.Tensor) or not (value.is_floating_point() or value.dtype in _WHOLE):
            raise ConceptError(f"{what} must be a tensor of numbers, not {_shown(value)}.")
        return value


def _weights(weights, seed, digest) -> str:
    parts = [f"{weights} weights" if weights else "", f"seed {seed}" if seed is not None else "",
             f"weights hash {digest}"]
    return ", ".join(p for p in parts if p)


def _shown(value) -> str:
    if isinstance(value, torch.Tensor):
        return f"a {value.dtype} tensor of shape {tuple(value.shape)}"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


_WHOLE = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)


def top_k(values: torch.Tensor, k: int) -> torch.Tensor:
    """`values` (N, K) with all but each row's k largest set to 0."""
    if k >= values.shape[1]:
        return values
    kept, where = values.topk(k, dim=1)
    return torch.zeros_like(values).scatter_(1, where, kept)


@checked
def nnls(x: torch.Tensor, components: torch.Tensor, tol: float = NNLS_TOL, steps: int = NNLS_STEPS) -> torch.Tensor:
    """`solve_nnls`, its arguments checked: (N, C) samples and (K, C) components of numbers, a tolerance from 0,
    and from 0 to NNLS_STEPS_MOST steps."""
    for name, value, dims in (("x", x, 2), ("components", components, 2)):
        if value.dim() != dims or not (value.is_floating_point() or value.dtype in _WHOLE):
            raise ArgumentValueError(f"nnls(): {name} must be a 2-D tensor of numbers, not {_shown(value)}.")
    if x.shape[1] != components.shape[1]:
        raise ArgumentValueError(f"nnls(): x has {x.shape[1]} channels, the components {components.shape[1]}.")
    if isinstance(tol, bool) or not 0 <= tol < math.inf:
        raise ArgumentValueError(f"nnls(): tol must be a finite number from 0, not {tol!r}.")
    if isinstance(steps, bool) or not 0 <= steps <= NNLS_STEPS_MOST:
        raise ArgumentValueError(f"nnls(): steps must be a whole number from 0 to {NNLS_STEPS_MOST}, not {steps!r}.")
    return solve_nnls(x, components.to(x.device), tol, steps)


def solve_nnls(x: torch.Tensor, components: torch.Tensor, tol: float = NNLS_TOL,
               steps: int = NNLS_STEPS) -> torch.Tensor:
    """argmin over c >= 0 of ||x - c D||^2 for each row of `x` (N, C), D = `components` (K, C): accelerated
    projected gradient (FISTA, restarted when the objective rises), in float64, until the largest change of a
    coefficient in a step is below `tol` times the largest coefficient (or `steps` steps). Exact zeros where the
    constraint holds, so a concept is active where its coefficient is above 0. Returns float32 (N, K)."""
    d = components.double()
    gram = d @ d.T  # (K, K)
    b = x.double() @ d.T  # (N, K)
    lipschitz = float(torch.linalg.eigvalsh(gram)[-1]) if gram.numel() else 1.0
    if lipschitz <= 0:
        return torch.zeros(x.shape[0], d.shape[0], dtype=torch.float32, device=x.device)
    step = 1.0 / lipschitz
    c = torch.clamp(b * step, min=0)  # a first guess
    y, t = c.clone(), 1.0
    for _ in range(steps):
        new = torch.clamp(y - step * (y @ gram - b), min=0)
        moved = float((new - c).abs().max()) if new.numel() else 0.0
        scale = float(new.abs().max()) if new.numel() else 0.0
        # restart the momentum where it took the objective up (gradient scheme of O'Donoghue & Candes)
        up = ((y - new) * (new - c)).sum(1, keepdim=True) > 0
        t_next = (1 + (1 + 4 * t * t) ** 0.5) / 2
        y = torch.where(up, new, new + ((t - 1) / t_next) * (new - c))
        c, t = new, (1.0 if bool(up.all()) else t_next)
        if moved <= tol * max(scale, 1e-30):
            break
    return c.float()


def save_dictionary(folder: Path, dictionary: Dictionary) -> Path:
    """dictionary.safetensors in `folder`, written whole or not at all."""
    from safetensors.torch import save

    from ..storage.writes import write_bytes

    return write_bytes(Path(folder) / DICTIONARY_FILE, save(dictionary.tensors(), metadata=dictionary.metadata()))


@checked
def load_dictionary(folder: str | os.PathLike) -> Dictionary:
    """The Dictionary in `folder` (its dictionary.safetensors, or that file itself); ConceptError, in one line, when
    it is missing, damaged, or its tensors are not what a dictionary holds: numbers of their shapes, finite, and for
    NMF not negative (a NaN encoder or a negative component would make every concept edit on it do nothing)."""
    from safetensors import SafetensorError, safe_open

    path = Path(check_name(folder, "The dictionary folder", ConceptError))
    if path.is_dir():
        path = path / DICTIONARY_FILE
    if not path.exists() and not path.is_symlink():
        raise ConceptError(f"No dictionary at {path} (learn one with `network-inspector concepts`).")
    regular_file(str(path), "The dictionary", ConceptError)  # not a FIFO, which safetensors would wait on
    try:
        with safe_open(str(path), framework="pt") as file:
            meta = file.metadata() or {}
            tensors = {name: file.get_tensor(name) for name in file.keys()}
    except (SafetensorError, OSError, ValueError, RuntimeError) as exc:
        raise ConceptError(f"{path} is damaged (not a safetensors file: {str(exc)[:160]}).") from None
    method, layout, layer = meta.get("method"), meta.get("layout"), meta.get("layer")
    if method not in METHODS or layout not in LAYOUTS or not layer or "\0" in layer or "components" not in tensors:
        raise ConceptError(f"{path} is not a concept dictionary (it lacks components, or a method, layer or layout "
                           f"in its metadata).")
    want = {"components"} | ({"encoder.weight", "encoder.bias", "pre_bias"} if method == "sae" else set())
    if set(tensors) != want:
        missing, extra = sorted(want - set(tensors)), sorted(set(tensors) - want)
        differs = f"lacks {', '.join(missing)}" if missing else f"holds {', '.join(extra)} too"
        raise ConceptError(f"{path} is damaged: a {method} dictionary holds {', '.join(sorted(want))}; this one "
                           f"{differs}.")
    for name, tensor in tensors.items():
        if not tensor.is_floating_point():
            raise ConceptError(f"{path} is damaged: its {name} is {tensor.dtype}, not floating point.")
        if not torch.isfinite(tensor).all():
            raise ConceptError(f"{path} is damaged: its {name} holds NaN or infinite values.")
    comp = tensors["components"].float()
    if comp.dim() != 2 or comp.shape[0] < 1 or comp.shape[1] < 1:
        raise ConceptError(f"{path} is damaged: components must be a (K, C) matrix, not {tuple(comp.shape)}.")
    if method == "nmf" and (comp < 0).any():
        raise ConceptError(f"{path} is damaged: an NMF dictionary's components are not negative; these reach "
                           f"{float(comp.min()):.3g}.")
    k, c = comp.shape
    sparsity, seed = _json(meta.get("sparsity", "null")), _json(meta.get("seed", "null"))
    digest, weights = meta.get("weights_digest"), meta.get("weights")
    if (seed is not None and (isinstance(seed, bool) or not isinstance(seed, int))) or (
            digest is not None and (len(digest) != 16 or not all(ch in "0123456789abcdef" for ch in digest))):
        raise ConceptError(f"{path} is damaged: the seed or weights hash of its model is not one a job writes.")
    extra = {}
    if method == "sae":
        want = {"encoder.weight": (k, c), "encoder.bias": (k,), "pre_bias": (c,)}
        for name, shape in want.items():
            if tuple(tensors[name].shape) != shape:
                raise ConceptError(f"{path} is damaged: {name} should be {shape} for {k} concepts of {c} channels, "
                                   f"it is {tuple(tensors[name].shape)}.")
        extra = dict(encoder_weight=tensors["encoder.weight"].float(), encoder_bias=tensors["encoder.bias"].float(),
                     pre_bias=tensors["pre_bias"].float())
        if isinstance(sparsity, bool) or not isinstance(sparsity, int) or not 1 <= sparsity <= k:
            raise ConceptError(f"{path} is damaged: its sparsity must be from 1 to {k}, not {sparsity!r}.")
    elif sparsity is not None:
        raise ConceptError(f"{path} is damaged: an NMF dictionary has no sparsity, this one {sparsity!r}.")
    return Dictionary(method, comp, layer, layout, meta.get("model", ""), sparsity, **extra, weights=weights,
                      seed=seed, digest=digest)


def _json(text: str):
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return "unreadable"
