"""Issue 52 item 7: Fit on the Graph tab at 1280x800 draws the demo at zoom 0.34, under the zoom where boxes say
their text: its nodes were unlabelled slivers, and the selected node was filled with the selection's blue, which
hid the overlay's colour (the hottest node's, as it happened). A box far out now says its name in 7-9 px on
screen (into half the gap beside it where it is wider than the box), and the selection is a stroke around the fill."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor

from inspector.core.inputs.samples import list_samples
from inspector.gui.views.graph.items import SELECTED, TEXT_LOD


@pytest.fixture
def demo(ui, open_window):
    if not ui.has_demo():
        pytest.skip("the demo model's weights are not in resources/")
    return open_window("demo", f"sample:{list_samples()[0]}")


def box_pixels(window, node_id: str) -> list[QColor]:
    """The colours of the pixels inside `node_id`'s box on screen."""
    view = window.views.graph.view
    item = window.views.graph.scene.nodes[node_id]
    rect = view.mapFromScene(item.mapToScene(QRectF(item.rect))).boundingRect().adjusted(2, 2, -2, -2)
    image = view.viewport().grab().toImage()
    return [image.pixelColor(x, y) for x in range(rect.left(), rect.right()) for y in range(rect.top(), rect.bottom())]


def test_fit_leaves_each_box_its_name_and_the_selection_its_fill(qtbot, demo):
    demo.tabs.setCurrentWidget(demo.views.graph)
    qtbot.waitUntil(lambda: demo.graph.layout is not None, timeout=60_000)
    qtbot.waitUntil(lambda: not demo.views.graph.scene.drawing())
    values = demo.graph_values
    values.choose("gradient")
    qtbot.waitUntil(lambda: values.found is not None and values.painter.drawn is not None, timeout=60_000)
    nodes = demo.views.graph.scene.nodes
    hottest = max((k for k, i in nodes.items() if i.fill is not None and demo.graph.module_of(k)),
                  key=lambda k: values.found.for_view(demo.graph.layout.graph).nodes[k].grad_l2 or 0)
    demo.graph.select_everywhere(hottest)
    view = demo.views.graph.view
    view.fit_all()
    qtbot.wait(50)
    assert view.zoom() < TEXT_LOD  # the plain boxes of far out
    for node_id in ("bn1", "pool1", hottest):
        item = nodes[node_id]
        ink = {c.rgb() for c in box_pixels(demo, node_id)} - {item.fill.rgb()}
        assert len(ink) >= 3, f"{node_id}'s box says nothing"  # the text's ink and its antialiased edges
        assert item.far_label(view.zoom())[0] == node_id  # whole
    pixels = box_pixels(demo, hottest)
    assert nodes[hottest].selected
    fill = sum(c.rgb() == nodes[hottest].fill.rgb() for c in pixels)
    assert fill > len(pixels) // 3, "the selection's colour hides the overlay's"  # the rest: its name
    assert not any(c.rgb() == SELECTED.rgb() for c in pixels)  # the stroke is on the box's edge
