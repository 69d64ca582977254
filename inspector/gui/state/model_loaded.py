"""What a newly loaded model changes in the choices and says once: a Gradient choice it cannot have falls back
to its default, a torchvision detector with random weights says why its boxes are at chance, and a classifier
head of zero weights (torchvision's ViT, random) why every gradient is 0 (it was the Hook log's last line)."""

from __future__ import annotations


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
