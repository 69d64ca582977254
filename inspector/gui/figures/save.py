"""File > Save figure: the figure of the tab on screen with its caption (model, weights and seed, input, layer,
edits) under it, as PNG at a scale or SVG."""

from __future__ import annotations

from pathlib import Path

from inspector.core.common.errors import WriteError
from inspector.core.storage.writes import write_bytes

from ..common import file_dialogs


def ask_and_save(window) -> None:
    """File > Save figure: a file, and for a PNG its scale, asked; then `save_figure`."""
    from PySide6.QtWidgets import QInputDialog

    path = file_dialogs.save_file(window, "figure", "Save figure (PNG or SVG, captioned)", "figure.png",
                                  "PNG (*.png);;SVG (*.svg)")
    if not path:
        return
    scale = 1.0
    if Path(path).suffix.lower() != ".svg":
        chosen, ok = QInputDialog.getItem(window, "Save figure", "Scale (pixels per pixel of the figure):",
                                          ["1x", "2x", "3x", "4x"], 1, False)
        if not ok:
            return
        scale = float(chosen[:-1])
    save_figure(window, path, scale)

def save_figure(window, path: str, scale: float = 2.0) -> Path | None:
    """The figure of the tab on screen with its caption (model, weights and seed, input, layer, edits)
    under it: PNG at `scale`, or SVG. The Attribution tab's is drawn from its map or its comparison
    (figure.attribution_figure: no controls, nothing clipped), the Graph tab's is the whole graph as laid out
    with its colours (graph_figure); the other tabs' is the view on screen."""
    from .figure import attribution_figure, caption_of, figure_bytes

    suffix = Path(path).suffix.lower()
    if suffix not in (".png", ".svg"):
        window.state.notify("error", f"Could not write {path}: name a .png or .svg file.")
        return None
    view = window.tabs.currentWidget()
    if view is window.views.attribution:
        figure = attribution_figure(view, caption_of(window.state, layer=False))
        if figure is None:
            window.state.notify("error", "No figure to save yet: compute a map or press Compare all first.")
            return None
        data = figure.file_bytes(suffix, scale)
    elif view is window.views.graph:
        from .graph import graph_figure_bytes

        values = window.graph_values
        data = graph_figure_bytes(window.views.graph.scene.layout, values.kind, values.found,
                                  caption_of(window.state, layer=False), suffix, scale)
        if data is None:
            window.state.notify("error", "No graph to save yet: wait until the Graph tab has drawn it.")
            return None
    else:
        data = figure_bytes(view, caption_of(window.state), suffix, scale)
    try:
        write_bytes(path, data)
    except WriteError as exc:
        window.state.notify("error", str(exc))
        return None
    window.state.notify("info", f"Saved the figure to {Path(path).resolve()}.")
    return Path(path)
