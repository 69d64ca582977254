"""A node's text is readable on the values overlay's colours: dark text on light boxes, light text on dark ones."""

from PySide6.QtGui import QColor

from inspector.gui.views.graph.items import FILL, MUTED, ink


def test_text_on_light_and_dark_fills():
    for light in (*FILL.values(), QColor(253, 231, 37)):  # the kinds' own fills; viridis' yellow end
        assert ink(light) == (QColor(20, 22, 26), MUTED)
    for dark in (QColor(68, 1, 84), QColor(59, 82, 139), QColor(0, 0, 0)):  # viridis' dark end and blue; black
        title, path = ink(dark)
        assert title == QColor(255, 255, 255) and path.lightnessF() > 0.8


def test_the_app_and_the_figures_draw_with_one_palette_and_one_ink_rule():
    import torch
    from torch import nn

    from inspector.core.graph import record_graph
    from inspector.core.graph.draw import figure as draw
    from inspector.core.graph.draw.values import colour_at
    from inspector.core.graph.layout.graph_layout import GraphLayout
    from inspector.gui.views.graph import items as graph_items

    assert {k: c.getRgb()[:3] for k, c in FILL.items()} == draw.FILL
    for name in ("BORDER", "MUTED", "FRAME_FILL", "FRAME_BORDER", "EDGE", "LABEL"):
        assert getattr(graph_items, name).getRgb()[:3] == getattr(draw, name), name
    grey = (130, 130, 130)  # luma 130: the figure's old rule (above 140) wrote white on it, the app black
    for fill in (*(colour_at(k / 63) for k in range(64)), grey):
        title, path = ink(QColor(*fill))
        assert (title.getRgb()[:3], path.getRgb()[:3]) == draw.inks(fill), fill
    layout = GraphLayout(record_graph(nn.Sequential(nn.Linear(2, 2)), torch.zeros(1, 2))).layout()
    figure = draw.draw_graph(layout, draw.Overlay(fills={"0": grey}))
    labels = [t.fill for t in figure.graph_items if isinstance(t, draw.Text) and t.id == "0" and t.role == "label"]
    assert labels == [draw.INK, draw.MUTED]  # op dark, path grey: as the app writes them on that fill
    corners = {r.id: r.radius for r in figure.graph_items if isinstance(r, draw.Rect) and r.role == "node"}
    assert corners == {"input": 10.0, "0": 4.0, "output": 10.0}  # the app's: round functions, square modules
