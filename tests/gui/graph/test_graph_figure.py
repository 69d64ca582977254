"""Save figure on the Graph tab writes the whole graph as laid out (every node, not the part on screen), with the
Colour by overlay's colours and the window's caption: issue 42, item 5."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from PIL import Image

from inspector.core.graph.draw.values import overlay_of
from inspector.core.inputs.samples import list_samples

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def demo(ui, open_window):
    if not ui.has_demo():
        pytest.skip("the demo model's weights are not in resources/")
    return open_window("demo", f"sample:{list_samples()[0]}")


def test_save_figure_writes_the_whole_graph_with_its_colours(qtbot, demo, tmp_path):
    demo.tabs.setCurrentWidget(demo.views.graph)
    qtbot.waitUntil(lambda: demo.graph.layout is not None, timeout=60_000)
    qtbot.waitUntil(lambda: not demo.views.graph.scene.drawing())
    values = demo.graph_values
    values.choose("gradient")
    qtbot.waitUntil(lambda: values.found is not None and values.key == values.request_key()
                    and values.painter.drawn is not None, timeout=60_000)
    view = demo.views.graph.view
    view.scale(8, 8)  # zoomed in: a few nodes on screen
    layout = demo.views.graph.scene.layout
    on_screen = view.mapToScene(view.viewport().rect()).boundingRect()
    shown = [b for b in layout.boxes.values() if on_screen.contains(b.x + b.width / 2, b.y + b.height / 2)]
    assert len(shown) < len(layout.boxes)

    saved = demo.save_figure(str(tmp_path / "graph.svg"))
    assert saved is not None
    root = ET.parse(saved).getroot()
    nodes = {r.get("data-id"): r.get("fill") for r in root.iter(f"{SVG}rect") if r.get("class") == "node"}
    assert set(nodes) == set(layout.boxes)  # every node of the layout, whatever the view shows
    overlay = overlay_of(values.found.for_view(layout.graph), "gradient")
    assert overlay.fills and all(nodes[n] == "#%02x%02x%02x" % tuple(c[:3]) for n, c in overlay.fills.items())
    texts = " ".join(t.text or "" for t in root.iter(f"{SVG}text"))
    assert layout.graph.caption in texts.replace("\n", " ") or layout.graph.caption.split(" (")[0] in texts
    assert "demo" in texts  # the window's caption: the model

    png = demo.save_figure(str(tmp_path / "graph.png"), 2.0)
    with Image.open(png) as picture:
        width, height = picture.size
    svg_width = float(root.get("width"))
    assert width == pytest.approx(2 * svg_width, abs=2)
