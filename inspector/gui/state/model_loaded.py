"""A model loaded (`on_loaded`, for AppState): it counts as loaded once a run on it worked, its edits, ticks and
target are set for it, and the first run waits for the window's paint. What a newly loaded model changes in the
choices and says once (`said_on_load`): a Gradient choice it cannot have falls back
to its default, a torchvision detector with random weights says why its boxes are at chance, and a classifier
head of zero weights (torchvision's ViT, random) why every gradient is 0 (it was the Hook log's last line)."""

from __future__ import annotations

from inspector.core.records.detections import fits_task

from ..common.gc_collector import freeze_imports
from ..common.paint_turns import after_paint



def said_on_load(state, info) -> None:
    """After `info`'s model loaded (AppState._on_loaded), before its first run is asked for."""
    if info.task == "detection" and info.seed is not None:  # random weights: the boxes are at chance, said
        from inspector.core.detection.picture import DEFAULT_SHOWN, FEW

        # two thresholds: the model's own (0, so that it returns boxes at all) and the picture's (its FEW best,
        # about 0.01 here); the banner said "0" and the picture's tooltip "0.01", naming neither
        state.notify("info", f"{info.request.source} has random weights (seed {info.seed}): every box scores "
                             f"near chance, so the model's own score threshold is 0 here and the picture shows its "
                             f"{FEW} best boxes (a trained detector's from {DEFAULT_SHOWN:g}; the slider under the "
                             f"input moves it). Load pretrained weights or a checkpoint to see what it detects.")
    if info.zero_head:  # stays while this model does: every gradient panel shows 0
        state.notify("warning", info.zero_head, about="model")
    if state.grad_site == "attention" and not info.attention:  # a choice this model cannot have: its default
        state.grad_site = "grad_output"
        state.sigGradSiteShown.emit(state.grad_site)
        state.notify("info", f"Gradient is grad_output again: {info.request.source} has no attention module the "
                             f"app knows, so it has no attention per head.")


def on_loaded(state, info) -> None:
    """The worker loaded `info`'s model (AppState's sigLoaded): set its edits, ticks and target, say what it
    changes, and run it once the window has painted it."""
    freeze_imports()  # modules the model's source imported (torchvision, ...) live as long as the app
    first = state.model is None or info.source != state.model.source
    back, state.back_to = state.back_to, None
    if (state.model is None or info.request != state.model.request) and info.request != back:
        if state.trying is None:
            state.trying = (state.model, set(state.ticks)) if state.model is not None else (None, None)
    if first and state.against is not None and state.model is not None:
        state.against = None  # it was chosen for the other model
        state.sigAgainstSet.emit(None)
    before, state.model, state.loading = state.model, info, None
    if before is None or before.request != info.request:
        state.runs_of_model = 0
    if state.pending_edits is not None or before is None or before.source != info.source:
        edits = state.editing.for_model(before.source if before else None, info.source, state.pending_edits)
        state.pending_edits = None
        if edits != state.edits:
            state.edits = edits
            state.sigEditsSet.emit(edits)
    ticks = state.next_ticks
    if ticks is None:
        ticks = state.store.ticks(info.source)
    if ticks is None:
        ticks = set(state.ticks) if not first else info.tree.default_ticks(info.task)
    state.next_ticks = None
    state.ticks = frozenset(p for p in ticks if p in {l.path for l in info.tree.layers})
    if first and state.pending_target is None:
        state.forget_box()  # another model's box
    if state.pending_target is None and not fits_task(state.target, info.task):
        state.target = "auto"  # a class for a detector, or a box for a classifier: the model's own default
        state.sigTargetShown.emit(state.target)
    said_on_load(state, info)
    state.sigModelShown.emit(info.request)
    state.sigModelLoaded.emit(info, set(state.ticks))
    if state.pending_target is not None:
        state.target = state.pending_target
        state.sigTargetShown.emit(state.target)
        state.pending_target = None
    if not state.input and info.preprocess is not None:
        state.set_input(state.store.first_sample())
    # The panels belong to the model loaded, auto-run or not: run once the window has painted the model (its
    # tree, choosers and the rest): a run begun in this turn took the CPU and the GIL from that paint.
    state.timer.stop()  # what this turn asked for is in that run
    after_paint(state, lambda: state.schedule_run(force=True))
    state.live.on_frame()  # a live input's frames waited for the model


def offer_attention(state) -> None:
    """Attention per head needs an attention module ticked: name this model's own (any family) and
    offer to tick and show the first."""
    info = state.model
    if info is None or not info.attention or set(info.attention) & set(state.ticks):
        return
    first = info.attention[0]
    state.notify("info", f"Attention per head is worked out at this model's attention modules "
                         f"({len(info.attention)}: {first}, ...); none is ticked.",
                 (f"Tick {first}", lambda: state.tick_and_show(first)))
