"""What one run captures and changes: an immutable record that crosses threads as it is."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Literal

from .common.arguments import need_flag, need_list, need_texts
from .edits import Edit, parse_edit
from .common.errors import SpecError
from .common.keys import parse_sites
from .target.objective import Target, parse_target


@dataclass(frozen=True)
class RunSpec:
    """What to capture and change in one run. Immutable, so it can cross threads as is.

    `stats_now`: the layers whose captures get statistics during the run (what the visible
    panels show); the other captures are stored without them, for `complete_statistics`
    (inspector.core.engine.deferred) to fill in afterwards. None (the default) means every capture,
    as the CLI and `capture()` do. A parameter gradient (`fc1.weight:grad`) counts as its
    layer's (`fc1`). Ignored with `keep="stats"`, where there is no array to come back to.
    """

    layers: tuple[str, ...] = ()
    sites: frozenset[str] = frozenset({"output", "grad_output"})
    edits: tuple[Edit, ...] = ()
    target: Target = field(default_factory=Target)
    input_grad: bool = False
    keep: Literal["full", "stats"] = "full"
    stats: bool = True  # per-capture statistics (off only to measure what they cost)
    stats_now: tuple[str, ...] | None = None

    @classmethod
    def make(
        cls,
        layers: Iterable[str] = (),
        sites: Iterable[str] | str = ("output", "grad_output"),
        edits: Iterable[Edit | str] = (),
        target: str | int | Target | None = None,
        input_grad: bool = False,
        keep: Literal["full", "stats"] = "full",
        stats_now: Iterable[str] | None = None,
    ) -> "RunSpec":
        sites = parse_sites(sites)
        text = isinstance(layers, str)
        layers = need_texts(layers, "layers", "conv1,layer4.1.conv2")
        if text:  # one comma-separated text of paths
            layers = [p for p in layers if p]
        edits = need_list(edits, "edits", "relu1:grad_input=clamp(min=0)")
        need_flag(input_grad, "input_grad")
        if not isinstance(keep, str) or keep not in ("full", "stats"):
            raise SpecError(f"keep must be 'full' or 'stats', not {keep!r}.")
        parsed = tuple(e if isinstance(e, Edit) else parse_edit(e) for e in edits)
        now = None if stats_now is None else tuple(need_texts(stats_now, "stats_now", "conv1,fc"))
        return cls(tuple(layers), sites, parsed, parse_target(target), input_grad, keep, stats_now=now)

    @property
    def defers_stats(self) -> bool:
        """Whether some captures are stored without statistics, for later."""
        return self.stats and self.keep == "full" and self.stats_now is not None

    def stats_in_run(self, layer: str, site: str) -> bool:
        """Whether the capture at `layer`/`site` gets its statistics during the run."""
        if not self.defers_stats:
            return self.stats
        if site == "grad":  # a parameter gradient belongs to its module: fc1.weight -> fc1
            layer = layer.rpartition(".")[0]
        return layer in self.stats_now
