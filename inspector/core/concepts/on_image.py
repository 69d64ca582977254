"""Concepts on one image: its coefficients, each concept's map, and concept relevance for a target.

At the dictionary's layer the output x holds, at each position p (a map's (h, w) or a patch token; a ViT's
class and register tokens left out, as the atlas leaves them), the coefficients c(p) of the K concepts
(`Dictionary.coefficients`: NMF's non-negative least squares, or the sparse autoencoder's encoder). With g(p)
the gradient of the target logit T with respect to x(p):

    coefficients[i]  = mean over p of c_i(p)                       (the concept's map, `maps[i]`, averaged)
    relevance[i]     = sum over p of (g(p) . d_i) c_i(p)           (gradient x coefficient: dT/dc_i(p) times
                                                                    c_i(p), where x = sum_j c_j d_j + residual)

`concept_relevance_map` takes the target's gradient through one concept only (CRP-style, see its docstring).
Each call runs the model once: one forward (with a target, the backward from the target down to the layer; for
the map, on down to the input). One forward hook on the layer, removed whatever happens; it hands the model a
copy of the layer's output, so an in-place module after the layer changes neither the values read here nor the
gradient taken at it. The model and its weights are left as they were.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

from ..common.arguments import shown_value as _shown
from ..sources.devices import resolve_device
from ..common.errors import ArgumentTypeError, InputError, RunError, SpecError
from ..folder_jobs import Layout, layout_of
from ..target.objective import objective, primary_output
from ..sources.grids import token_grid
from ..sources.loaded import LoadedModel
from ..target.text import Target
from .dictionary import ConceptError, Dictionary


@dataclass(frozen=True)
class ConceptReading:
    """What the Concepts view shows for one image and one dictionary."""

    layer: str
    coefficients: torch.Tensor  # (K,) each concept's coefficient, the mean of its map over the positions
    maps: torch.Tensor  # (K, h, w) the coefficient at each position (the map's h, w; a ViT's patch grid)
    relevance: torch.Tensor | None  # (K,) sum over positions of (dT/dx(p) . d_i) c_i(p); None without a target
    target: int | None
    logits: torch.Tensor | None  # (classes,) the model's output for the image (its primary output, first item)


def read_concepts(loaded: LoadedModel, x: torch.Tensor, dictionary: Dictionary, *, target: int | None = None,
                  device: str | torch.device = "cpu", layer: str | None = None) -> ConceptReading:
    """The image `x` ((1, C, H, W) or (C, H, W), preprocessed as the model wants) seen through `dictionary`:
    its coefficients and maps, and with a `target` (a class index) each concept's relevance for it. `layer`,
    when given, is the layer the caller expects the dictionary to be of (refused, naming both, when not)."""
    d, x, dev = _checked(loaded, x, dictionary, None, target, device, layer)
    with _LayerPass(loaded.module, d.layer) as seen:
        logits, obj = _forward(loaded, x, target)
        grad = None
        if obj is not None:
            grad = _grad(obj, seen.output)
    layout = _layout(loaded, x, d, seen.value)
    coef = _on_picture(d.coefficients(seen.value), d, layout)  # (P, K)
    maps = coef.T.reshape(d.k, layout.height, layout.width).float().cpu()
    relevance = None
    if grad is not None:
        g = _on_picture(grad, d, layout, channels=True)  # (P, C)
        relevance = ((g.float() @ d.components.to(g.device).T) * coef.float()).sum(0).cpu()
    return ConceptReading(d.layer, maps.reshape(d.k, -1).mean(1), maps, relevance, target, logits)


def concept_relevance_map(loaded: LoadedModel, x: torch.Tensor, dictionary: Dictionary, concept: int, target: int,
                          device: str | torch.device = "cpu", layer: str | None = None) -> torch.Tensor:
    """(H, W) over the input: where concept `concept` is relevant to class `target`, CRP-style.

    With g(p) = dT/dx(p) at the layer and c_i(p) the concept's coefficient, the relevance R_i = sum_p
    (g(p) . d_i) c_i(p) is taken back to the input with g replaced by its part that flows through c_i:

        g_i(p) = (g(p) . d_i) * dc_i(p)/dx(p)

    (zero on the class and register tokens, which no map shows). dc_i/dx is the coefficient's gradient at the
    image: for a sparse autoencoder the encoder's row W_i where the concept is active (among the top-k, above
    0), 0 elsewhere; for NMF, on the active set A (the concepts above 0 at p) the non-negative least squares
    solution is c_A = (D_A D_A^T)^-1 D_A x, so dc_i/dx is row i of (D_A D_A^T)^-1 D_A where i is in A, 0
    elsewhere. The backward goes on from the layer to the input with g_i as the layer's upstream gradient and
    only through the layer (paths that skip it, such as a residual's, carry nothing), and the map is gradient x
    input summed over the colour channels: sum over colour of x * d(sum_p g_i(p) . x(p))/dx_input, g_i held
    fixed. `layer`: as in `read_concepts`."""
    if target is None or concept is None:
        raise SpecError("A concept's relevance map is of one concept (its id) for one target (a class index).")
    d, x, dev = _checked(loaded, x, dictionary, concept, target, device, layer)
    x = x.detach().requires_grad_(True)
    with _LayerPass(loaded.module, d.layer) as seen:
        _, obj = _forward(loaded, x, target)
        grad = _grad(obj, seen.output, keep=True)
        layout = _layout(loaded, x, d, seen.value)
        samples, how = d.to_samples(seen.value)
        g_samples, _ = d.to_samples(grad)
        along = g_samples.float() @ d.components[concept].to(g_samples.device)  # (N,) g(p) . d_i
        through = coefficient_gradient(d, samples, concept)  # (N, C) dc_i/dx
        upstream = (along[:, None] * through)
        keep = _picture_mask(layout, x.shape[0], samples.shape[0], samples.device)
        upstream = d.from_samples(upstream * keep[:, None], how).to(seen.output.dtype)
        (wrt,) = _backward(lambda: torch.autograd.grad(seen.output, [x], grad_outputs=[upstream],
                                                       allow_unused=True))
    if wrt is None:
        return torch.zeros(x.shape[-2:])
    return (x.detach() * wrt)[0].sum(0).float().cpu()


def coefficient_gradient(dictionary: Dictionary, samples: torch.Tensor, concept: int,
                         coefficients: torch.Tensor | None = None) -> torch.Tensor:
    """(N, C): the gradient of concept `concept`'s coefficient with respect to each of the (N, C) samples (see
    `concept_relevance_map`). `coefficients`: NMF's (N, K), when already worked out."""
    d = dictionary
    comp = d.components.to(samples.device).double()
    if d.method == "sae":
        coef = d.encode(samples)
        active = (coef[:, concept] > 0).double()
        return (active[:, None] * d.encoder_weight.to(samples.device).double()[concept]).float()
    coef = d.coefficients(samples) if coefficients is None else coefficients
    on = coef.double() > 0  # (N, K) the active set at each sample
    out = torch.zeros(samples.shape[0], d.channels, dtype=torch.float64, device=samples.device)
    rows = on[:, concept].nonzero().squeeze(1)
    if rows.numel():
        m = on[rows].double()
        gram = comp @ comp.T
        # the active set's Gram matrix, the identity on the inactive concepts (they stay 0)
        system = m[:, :, None] * gram * m[:, None, :] + torch.diag_embed(1 - m)
        unit = torch.zeros_like(m)
        unit[:, concept] = 1
        y, info = torch.linalg.solve_ex(system, unit)
        if bool((info != 0).any()):  # directions of the active set that are not independent
            y = (torch.linalg.pinv(system) @ unit[:, :, None]).squeeze(2)
        out[rows] = (y * m) @ comp
    return out.float()


# -- one pass of the model with a hook on the layer ----------------------------------------------------------
class _LayerPass:
    """A forward hook on `layer` (its first call): keeps the module's output (`output`, in the graph) and a copy
    of its values (`value`), and hands the model a copy, so later in-place modules change neither."""

    def __init__(self, model: torch.nn.Module, layer: str) -> None:
        modules = dict(model.named_modules())
        if layer not in modules:
            raise SpecError(f"The dictionary is of layer {layer}, which this model does not have (see "
                            f"`network-inspector layers`).")
        self.module, self.layer = modules[layer], layer
        self.output: torch.Tensor | None = None
        self.value: torch.Tensor | None = None
        self.handle = None

    def __enter__(self) -> "_LayerPass":
        self.handle = self.module.register_forward_hook(self._hook)
        return self

    def __exit__(self, *exc) -> None:
        if self.handle is not None:
            self.handle.remove()
            self.handle = None

    def _hook(self, _module, _args, output):
        if self.output is not None:
            return None  # a shared module's later calls
        many = isinstance(output, (tuple, list))
        tensor = next((o for o in output if isinstance(o, torch.Tensor)), None) if many else output
        if not isinstance(tensor, torch.Tensor) or not tensor.is_floating_point():
            raise SpecError(f"Layer {self.layer} does not return a floating-point tensor; it has no concepts.")
        self.output, self.value = tensor, tensor.detach().clone()
        handed = tensor.clone() if torch.is_grad_enabled() else self.value.clone()
        if not many:
            return handed
        items = [handed if o is tensor else o for o in output]
        return type(output)(items) if isinstance(output, list) else tuple(items)


def _forward(loaded: LoadedModel, x: torch.Tensor, target: int | None):
    """The model's logits (first item, detached) and, with a target, the objective (its logit)."""
    with torch.set_grad_enabled(target is not None):
        try:
            output = loaded.module(x)
        except (SpecError, ConceptError):
            raise
        except Exception as exc:
            raise RunError(f"The model raised {type(exc).__name__}: {exc}") from exc
    primary = primary_output(output)
    logits = primary.detach()[0].float().cpu() if primary.dim() else primary.detach().float().cpu()
    if target is None:
        return logits, None
    obj, _, _ = objective(primary, Target("index", target), tuple(x.shape[-2:]))
    return logits, obj


def _grad(obj: torch.Tensor, output: torch.Tensor | None, keep: bool = False) -> torch.Tensor:
    if output is None:
        raise SpecError("The dictionary's layer never ran in the model's forward; it shows no concepts.")
    if not output.requires_grad:
        return torch.zeros_like(output)
    (grad,) = _backward(lambda: torch.autograd.grad(obj, [output], retain_graph=keep, allow_unused=True))
    return torch.zeros_like(output) if grad is None else grad


def _backward(fn: Callable):
    try:
        return fn()
    except RuntimeError as exc:
        raise RunError(f"Backward failed: {exc}") from exc


# -- arguments and layouts -----------------------------------------------------------------------------------
def _checked(loaded, x, dictionary, concept, target, device, layer):
    if not isinstance(loaded, LoadedModel):
        raise ArgumentTypeError(f"read_concepts and concept_relevance_map take the loaded model (load_model's), not "
                                f"{_shown(loaded)}.")
    if layer is not None and not isinstance(layer, str):
        raise ArgumentTypeError(f"The layer the dictionary is expected of is a layer's name or None, not "
                                f"{_shown(layer)}.")
    if not isinstance(dictionary, Dictionary):
        raise ConceptError(f"read_concepts needs a Dictionary (load_dictionary(DIR)), not {type(dictionary).__name__}.")
    dictionary.check(layer=layer, model=loaded, concept=concept)
    if target is not None and (isinstance(target, bool) or not isinstance(target, int) or target < 0):
        raise SpecError(f"The target is a class index (a whole number >= 0), not {target!r}.")
    if not isinstance(x, torch.Tensor) or x.dim() not in (3, 4) or (x.dim() == 4 and x.shape[0] != 1):
        shape = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
        raise InputError(f"Concepts are read on one image: an input of shape (1, C, H, W) or (C, H, W), not {shape}.")
    dev = resolve_device(device)
    if loaded.device != dev:
        loaded.module.to(dev)
    x = (x if x.dim() == 4 else x[None]).detach().to(dev)
    if x.is_floating_point():
        x = x.to(loaded.dtype)
    return dictionary, x, dev


def _layout(loaded, x, d: Dictionary, value: torch.Tensor | None) -> Layout:
    if value is None:
        raise SpecError(f"Layer {d.layer} never ran in the model's forward; it shows no concepts.")
    grid = token_grid(loaded.module, tuple(x.shape[-2:]))
    return layout_of(d.layer, tuple(value.shape), grid, d.layout == "NHWC" if value.dim() == 4 else None)


def _on_picture(t: torch.Tensor, d: Dictionary, layout: Layout, channels: bool = False) -> torch.Tensor:
    """The first image's values at the picture's positions, (P, K) (coefficients) or (P, C) (`channels`), row
    major over (height, width): a map's (h, w), a ViT's patch tokens (class and register tokens left out)."""
    if t.dim() == 4 and d.layout == "NCHW":
        return t[0].reshape(t.shape[1], -1).T
    if t.dim() == 4:
        return t[0].reshape(-1, t.shape[-1])
    if t.dim() == 3:
        return t[0, layout.prefix:]
    return t[:1]


def _picture_mask(layout: Layout, batch: int, rows: int, device) -> torch.Tensor:
    """(rows,) 1 at the samples that are positions of the picture, 0 at class and register tokens."""
    keep = torch.ones(rows, device=device)
    if layout.prefix and layout.kind in ("tokens", "sequence"):
        keep.view(batch, -1)[:, :layout.prefix] = 0
    return keep
