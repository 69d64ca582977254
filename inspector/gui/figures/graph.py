"""The Graph tab's figure for Save figure: the whole graph as laid out (every node, not the part on screen), drawn
by the graph command's renderer (`inspector.core.graph.draw.figure`), with the Colour by overlay on it and the window's
caption (model, weights, input, edits) under the title."""

from __future__ import annotations

import io

from inspector.core.graph.draw.figure import draw_graph
from inspector.core.graph.draw.overlay import drawn_for
from inspector.core.graph.draw.png import png_image, png_scale
from inspector.core.graph.draw.svg import svg_text


def graph_figure_bytes(layout, kind: str, found, caption: str, suffix: str, scale: float) -> bytes | None:
    """The file's bytes (`suffix` .svg or .png at `scale`, lowered where the graph is too large for a picture), or
    None when no graph is drawn. `kind`, `found`: the Colour by choice and the values it was drawn from."""
    if layout is None:
        return None
    overlay = drawn_for(kind, found, layout.graph).overlay if found is not None and kind != "none" else None
    figure = draw_graph(layout, overlay, subtitle=caption)
    if suffix == ".svg":
        return svg_text(figure).encode("utf-8")
    scale, _why = png_scale(figure, scale)
    buffer = io.BytesIO()
    png_image(figure, scale).save(buffer, format="PNG")
    return buffer.getvalue()
