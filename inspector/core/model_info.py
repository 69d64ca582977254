"""A loaded model as a plain, frozen record: what the app is told about the model the worker holds.

The module itself never leaves the worker thread; the window gets this description
(source, weights, kind, labels, preprocessing, layer tree, parameter names, notes).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .sources.layers import LayerTree
from .records.requests import ModelRequest
from .engine.zero_head import zero_head_warning
from .sources.grids import token_grid

if TYPE_CHECKING:
    from .sources.preprocess import Preprocess
    from .records.tokens import TokenGrid
    from .sources.loaded import LoadedModel


@dataclass(frozen=True)
class ModelInfo:
    request: ModelRequest  # what loads this very model again (with the seed that was used)
    kind: str
    weights: str
    tree: LayerTree
    parameters: tuple[tuple[str, tuple[int, ...]], ...] = ()  # named_parameters(): name, shape
    labels: tuple[str, ...] | None = None
    preprocess: "Preprocess | None" = None
    input_shape: tuple[int, ...] | None = None
    notes: tuple[str, ...] = ()
    seed: int | None = None
    tokens: "TokenGrid | None" = None  # the patch grid token sequences follow (transformers)
    task: str = "classification"  # "segmentation": (batch, classes, H, W) outputs, seg: targets; "detection"
    attention: tuple[str, ...] = ()  # paths of the attention modules the `attention` site works out
    zero_head: str | None = None  # why every gradient is 0 when its classifier head's weights are (zero_head)

    @property
    def source(self) -> str:
        return self.request.source

    @property
    def layer_types(self) -> dict[str, str]:
        """Type by path of every module an edit can act on: those that run in a forward (all of them
        when the tree was built without one), so presets never name a module that never runs."""
        ran = any(l.calls for l in self.tree.layers)
        return {l.path: l.type_name for l in self.tree.layers if l.path and (l.calls or not ran)}

    @property
    def parameter_names(self) -> list[str]:
        return [name for name, _ in self.parameters]

    def parameters_of(self, layer: str) -> list[str]:
        """Short names (`weight`, `bias`) of the parameters `layer` owns directly."""
        prefix = f"{layer}." if layer else ""
        return [name[len(prefix):] for name, _ in self.parameters
                if name.startswith(prefix) and "." not in name[len(prefix):]]


def _task(loaded: "LoadedModel", tree: LayerTree) -> str:
    """The loader's word, "detection" for any model that answered its example with boxes and scores, or
    "segmentation" for any model whose output is (1, classes, H, W) maps."""
    if loaded.task != "classification":
        return loaded.task
    if tree.detects:
        return "detection"
    root = next((l for l in tree.layers if not l.path), None)
    shapes = root.output_shapes if root is not None else ()
    return "segmentation" if shapes and len(shapes[0]) == 4 and shapes[0][1] > 1 else loaded.task


def describe(loaded: "LoadedModel", tree: LayerTree, request: ModelRequest) -> ModelInfo:
    seed = loaded.seed
    if seed is not None:
        request = dataclasses.replace(request, seed=seed)  # reloading gives the very same weights
    params = tuple((name, tuple(p.shape)) for name, p in loaded.module.named_parameters())
    return ModelInfo(request=request, kind=loaded.kind, weights=loaded.weights, tree=tree, parameters=params,
                     labels=tuple(loaded.labels) if loaded.labels else None, preprocess=loaded.preprocess,
                     input_shape=loaded.input_shape, notes=tuple(loaded.notes), seed=seed,
                     tokens=token_grid(loaded.module, tuple(loaded.input_shape[-2:]) if loaded.input_shape else None),
                     task=_task(loaded, tree), attention=_attention_paths(loaded.module),
                     zero_head=zero_head_warning(loaded.module))


def _attention_paths(module) -> tuple[str, ...]:
    from .attention.site import supports_attention

    return tuple(p for p, m in module.named_modules() if p and supports_attention(m))
