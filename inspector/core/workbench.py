"""The loaded model and what runs reuse between them; the app's worker thread drives one.

Qt-free so the headless replay of a session runs the very same path. It keeps the
model loaded (and on its device) across runs, caches the decoded input, and keeps the
baseline (no edits) result while model, input, device, target, layers and sites stay
the same, so toggling an edit costs one forward and backward.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import torch

from .attribution import attribute
from .attribution.cancel_within import stops_within_a_module
from .attribution.scores.faithfulness import scored
from .compare.pair import run_against
from .sources.devices import resolve_device
from .edits import check_edits as check_concept_edits
from .inputs.files import input_preprocess, load_input
from .sources.layers import LayerTree, build_layer_tree
from .records.methods import METHODS
from .records.requests import AttributionRequest, ModelRequest, RunRequest
from .engine.deferred import complete_statistics, with_statistics
from .engine.diagnostics import dead_units, first_nonfinite, gradient_flow
from .engine.edit_reach import check_edits_reach
from .engine.runner import run
from .engine.result import RunResult
from .engine.stats import TensorStats
from .sources.sharing import Sharing
from .sources.loaded import LoadedModel
from .sources.loader import load_model

if TYPE_CHECKING:
    from .compare.diff import ModelDiff


@dataclass
class RunOutcome:
    """What `Workbench.execute` returns: plain data (numpy arrays and records), safe to hand to
    another thread. With `RunRequest.visible` set, captures of other layers have no statistics
    and `analysis` is None until a `StatsUpdate` from `Workbench.finish` is applied."""

    run_id: int
    result: RunResult
    baseline: RunResult | None = None
    tree: LayerTree | None = None  # set when the model was (re)loaded for this run
    analysis: "Analysis | None" = None
    analyse: bool = False  # diagnostics were asked for (they come with the StatsUpdate when deferred)
    against: "ModelDiff | None" = None  # RunRequest.against: the second model's result, compared

    @property
    def complete(self) -> bool:
        """Every capture has its statistics (and the diagnostics are here when asked for)."""
        return not self.result.stats_pending() and not (self.baseline and self.baseline.stats_pending())


@dataclass(frozen=True)
class StatsUpdate:
    """What `Workbench.finish` works out after a run: the deferred statistics of the result and
    of its baseline (by capture name), and the diagnostics. Plain data."""

    run_id: int
    stats: dict[str, TensorStats]
    baseline_stats: dict[str, TensorStats]
    analysis: "Analysis | None" = None

    def apply(self, outcome: RunOutcome) -> None:
        """Fill the statistics and diagnostics into `outcome` (on the thread that reads it)."""
        outcome.result.set_stats(self.stats)
        if outcome.baseline is not None and outcome.baseline is not outcome.result:
            outcome.baseline.set_stats(self.baseline_stats)
        if self.analysis is not None:
            outcome.analysis = self.analysis


@dataclass(frozen=True)
class Analysis:
    """Diagnostics of a result, worked out off the GUI thread."""

    flow: list
    dead: dict[str, float]
    nonfinite: tuple[str, str] | None

    @classmethod
    def of(cls, result: RunResult) -> "Analysis":
        return cls(gradient_flow(result), dead_units(result), first_nonfinite(result))


class Workbench:
    def __init__(self) -> None:
        self.loaded: LoadedModel | None = None
        self.tree: LayerTree | None = None
        self._model_request: ModelRequest | None = None
        self._device: torch.device | None = None
        self._input_key: tuple | None = None
        self._input: torch.Tensor | None = None
        self._baseline_key: tuple | None = None
        self._baseline: RunResult | None = None
        self.sharing = Sharing()  # what runs have shown about the loaded model (see core.sharing)
        self.second: Workbench | None = None  # holds the model RunRequest.against compares with
        # A model counts as loaded once a run on it worked: until then the last one that did is kept
        # (loaded, tree, request, device), so going back to it loads nothing (the app does when the new one fails).
        self.ran = False
        self._previous: tuple | None = None

    def holds(self, request: ModelRequest) -> bool:
        """The loaded model is the one `request` asks for, also when it names the seed that was picked
        for it (ModelInfo.request does, so that reloading gives the same weights)."""
        kept = self._model_request
        return self.loaded is not None and request in (kept, replace(kept, seed=self.loaded.seed))

    def load(self, request: ModelRequest, progress=None) -> tuple[LoadedModel, LayerTree]:
        """Load (or keep) the model; the layer tree comes from one small run at its default input."""
        if not self.holds(request):
            previous = self._previous
            if previous is not None and request in (previous[2], replace(previous[2], seed=previous[0].seed)):
                (self.loaded, self.tree, self._model_request, self._device), self._previous = previous, None
                self.ran = True
            else:
                loaded = load_model(request.source, request.weights, request.trust, progress, seed=request.seed)
                example = loaded.example_input()
                tree = build_layer_tree(loaded.module, example)
                if self.loaded is not None and self.ran:  # kept on the CPU: two models on a GPU may not fit
                    self._device = torch.device("cpu")  # a move that fails part way is made again by move_to
                    self.loaded.module.to(self._device)
                    self._previous = (self.loaded, self.tree, self._model_request, self._device)
                self.loaded, self.tree, self._model_request, self.ran = loaded, tree, request, False
                self._device = torch.device("cpu")
            self._input_key = self._baseline_key = None
            self._input = self._baseline = None
            self.sharing = Sharing()
        return self.loaded, self.tree

    def move_to(self, device: str) -> torch.device:
        dev = resolve_device(device)
        if self.loaded is not None and dev != self._device:
            self.loaded.module.to(dev)
            self._device = dev
            self._baseline = None
        return dev

    def input_tensor(self, source: str, frame=None) -> torch.Tensor:
        """The decoded input (kept while model, source and the source's file stay: a file written again or removed
        since is read again); `frame`: a video frame named `source`."""
        key = (self._model_request, source, None if frame is not None else _file_stamp(source))
        if key != self._input_key:
            if frame is not None:
                from PIL import Image

                preprocess = input_preprocess(self.loaded.preprocess, self.loaded.input_shape)
                self._input = preprocess(Image.fromarray(frame))
            else:
                self._input = load_input(source, self.loaded.preprocess, self.loaded.input_shape)
            self._input_key = key
        return self._input

    def execute(self, request: RunRequest, cancel: threading.Event | None = None, progress=None,
                phase=None) -> RunOutcome:
        """Run `request` (loading its model when it is not the one held). `phase` is told "forward",
        "backward", and "baseline forward"/"baseline backward" for the no-edit run kept to compare."""
        fresh = not self.holds(request.model)
        loaded, tree = self.load(request.model, progress)
        self.move_to(request.device)
        x = self.input_tensor(request.input, request.frame)
        spec = request.spec if request.visible is None else replace(request.spec, stats_now=tuple(request.visible))
        check_edits_reach(spec.edits, tree)
        check_concept_edits(spec.edits, loaded)
        result = run(loaded.module, x, spec, loaded.labels, cancel, self.sharing, phase)
        baseline = None
        if request.baseline:
            key = request.baseline_key()
            if not any(e.enabled for e in request.spec.edits):
                self._baseline_key, self._baseline = key, result
            elif key != self._baseline_key or self._baseline is None:
                plain = replace(spec, edits=())
                told = None if phase is None else (lambda name: phase(f"baseline {name}"))
                self._baseline = run(loaded.module, x, plain, loaded.labels, cancel, self.sharing, told)
                self._baseline_key = key
            baseline = self._baseline
        against = None
        if request.against is None:
            self.second = None  # compared against the baseline again: the second model's memory goes
        else:
            if self.second is None:
                self.second = Workbench()
            against = run_against(self.second, loaded, x, request, result, cancel, progress, phase)
        analysis = Analysis.of(result) if request.analyse and not spec.defers_stats else None
        self.ran, self._previous = True, None  # the model ran: the one kept to go back to is let go
        return RunOutcome(request.run_id, result, baseline, tree if fresh else None, analysis,
                          analyse=request.analyse, against=against)

    def finish(self, outcome: RunOutcome, cancel: threading.Event | None = None,
               diagnose: bool = True) -> StatsUpdate:
        """The statistics `execute` left out (RunRequest.visible) and, unless `diagnose` is False,
        the diagnostics, worked out from the outcome's arrays; `outcome` is not changed
        (`update.apply(outcome)` fills it). Raises RunCancelled when `cancel` is set (a newer run
        is waiting). The app sends the statistics first and `diagnose`s after."""
        stats = complete_statistics(outcome.result, cancel)
        baseline_stats = {}
        if outcome.baseline is not None and outcome.baseline is not outcome.result:
            baseline_stats = complete_statistics(outcome.baseline, cancel)
        update = StatsUpdate(outcome.run_id, stats, baseline_stats, outcome.analysis)
        return self.diagnose(outcome, update) if diagnose else update

    @staticmethod
    def diagnose(outcome: RunOutcome, update: StatsUpdate) -> StatsUpdate:
        """`update` with the diagnostics of `outcome` (read with the statistics `update` brings)."""
        if update.analysis is not None or not outcome.analyse:
            return update
        analysis = Analysis.of(with_statistics(outcome.result, update.stats))
        return replace(update, analysis=analysis)

    def attribute(self, request: AttributionRequest, cancel=None, progress=None):
        """The attribution map for the loaded model and the request's input (see core.attribution), scored
        with the request's metrics. `progress(done, total)` and `cancel()` reach the methods that run in
        steps (ig, smoothgrad, occlusion) and the metrics."""
        loaded, _ = self.load(request.model)
        self.move_to(request.device)
        x = self.input_tensor(request.input)
        options = dict(request.options)
        method = METHODS.get(request.method)
        if method is not None and method.passes:  # the methods that run in passes: progress and cancel
            options.update(cancel=cancel, progress=progress)
        start = time.perf_counter()
        title = method.title if method is not None else request.method
        with stops_within_a_module(loaded.module, cancel, title[:1].upper() + title[1:]):  # within a pass too
            found = attribute(loaded, x, request.method, request.target, request.layer, options or None)
        found = replace(found, details=found.details + (("seconds", time.perf_counter() - start),))
        if not request.metrics:
            return found
        with stops_within_a_module(loaded.module, cancel, "Deletion and insertion"):
            return scored(loaded, x, found, request.metrics, request.metric_steps, options.get("baseline"),
                          cancel=cancel, progress=progress, blur_sigma=options.get("blur_sigma"),
                          baseline_seed=options.get("baseline_seed"),  # the method's own baseline, else the one named
                          protocol=request.protocol, road_noise=request.road_noise, road_seed=request.road_seed,
                          road_percentages=request.road_percentages)


def _file_stamp(source: str) -> tuple | None:
    """What says a file is the one decoded before: its modification time and size (None: no file by that name,
    a sample or a name the input loader reads otherwise)."""
    import os

    try:
        found = os.stat(source)
    except (OSError, ValueError):  # no such file, or a name no file can have (a NUL)
        return None
    return (found.st_mtime_ns, found.st_size, found.st_ino)
