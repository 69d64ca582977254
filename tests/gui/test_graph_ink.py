"""A node's text is readable on the values overlay's colours: dark text on light boxes, light text on dark ones."""

from PySide6.QtGui import QColor

from inspector.gui.views.graph_items import FILL, MUTED, ink


def test_text_on_light_and_dark_fills():
    for light in (*FILL.values(), QColor(253, 231, 37)):  # the kinds' own fills; viridis' yellow end
        assert ink(light) == (QColor(0, 0, 0), MUTED)
    for dark in (QColor(68, 1, 84), QColor(59, 82, 139), QColor(0, 0, 0)):  # viridis' dark end and blue; black
        title, path = ink(dark)
        assert title == QColor(255, 255, 255) and path.lightnessF() > 0.8
