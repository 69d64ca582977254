"""Issue 25, viewing: the enlarged channel is a real image view (wheel zoom, drag pan, double click to
fit), reads out the pixel under the mouse, marks the same pixel on the other side (linked cursors), and
can be laid over the input picture at a chosen opacity."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication


@pytest.fixture
def maps() -> np.ndarray:
    rng = np.random.default_rng(3)
    return rng.standard_normal((1, 4, 20, 30)).astype(np.float32)


def zoom_scene_point(panel, y: int, x: int):
    """Where the centre of pixel (y, x) of the enlarged channel lies in the zoom's scene."""
    return panel.zoom.view.mapViewToScene(QPointF(x + 0.5, y + 0.5))


def wheel(widget, pos: QPoint, steps: int) -> None:
    event = QWheelEvent(QPointF(pos), QPointF(widget.mapToGlobal(pos)), QPoint(0, 0), QPoint(0, 120 * steps),
                        Qt.NoButton, Qt.NoModifier, Qt.NoScrollPhase, False)
    QApplication.sendEvent(widget, event)


def test_the_wheel_zooms_and_a_double_click_fits_again(qtbot, make_panel, maps):
    panel = make_panel()
    panel.show_capture("x:output", maps, None)
    qtbot.wait(50)
    view = panel.zoom.view
    fitted = view.viewRect()
    assert fitted.width() >= 30 and fitted.height() >= 20  # the whole 20 x 30 map is in view
    centre = panel.zoom.canvas.mapFromScene(zoom_scene_point(panel, 10, 15))
    wheel(panel.zoom.canvas.viewport(), centre, 3)
    qtbot.wait(50)
    zoomed = view.viewRect()
    assert zoomed.width() < 0.8 * fitted.width() and zoomed.contains(QPointF(15.5, 10.5))
    panel.zoom._on_clicked(type("DoubleClick", (), {"double": lambda self: True})())
    assert view.viewRect().width() == pytest.approx(fitted.width(), rel=1e-6)
    # the next frame of the same size keeps the user's zoom; another key fits again
    wheel(panel.zoom.canvas.viewport(), centre, 3)
    qtbot.wait(50)
    zoomed = view.viewRect()
    panel.show_capture("x:output", maps * 2, None)
    assert view.viewRect() == zoomed
    panel.show_capture("y:output", maps, None)
    assert view.viewRect().width() == pytest.approx(fitted.width(), rel=1e-6)


def test_the_pixel_under_the_mouse_is_read_out(qtbot, make_panel, maps):
    panel = make_panel()
    panel.show_capture("x:output", maps, None)
    panel.zoom_channel(2)
    for y, x in [(0, 0), (19, 29), (7, 11)]:
        panel.zoom._on_moved(zoom_scene_point(panel, y, x))
        assert panel.hover.text() == f"channel 2   y {y}, x {x}   value {float(maps[0, 2, y, x]):.5g}"
        assert panel.zoom.marker.isVisible() and panel.zoom.marker.rect().topLeft() == QPointF(x, y)
    # a real mouse move over the zoom goes through the scene's signal
    target = panel.zoom.canvas.mapFromScene(zoom_scene_point(panel, 5, 6))
    qtbot.mouseMove(panel.zoom.canvas.viewport(), target)
    qtbot.waitUntil(lambda: panel.hover.text().startswith("channel 2   y 5, x 6"), timeout=2000)


def test_cursors_are_linked_between_the_activation_and_the_gradient(qtbot, make_panel, maps):
    activation, gradient = make_panel(), make_panel(diverging=True)
    activation.sigCursor.connect(gradient.show_cursor)  # as the main window connects them
    gradient.sigCursor.connect(activation.show_cursor)
    grads = -3 * maps + 1
    activation.show_capture("x:output", maps, None)
    gradient.show_capture("x:grad_output", grads, None)
    for panel in (activation, gradient):
        panel.zoom_channel(1)
    activation.zoom._on_moved(zoom_scene_point(activation, 4, 9))
    assert gradient.hover.text() == (f"channel 1   y 4, x 9   value {float(grads[0, 1, 4, 9]):.5g}"
                                     "   (the other side's cursor)")
    assert gradient.zoom.marker.isVisible() and gradient.zoom.marker.rect().topLeft() == QPointF(9, 4)
    gradient._on_mouse_moved(gradient.view.mapViewToScene(QPointF(*reversed(mosaic_point(gradient, 3, 2, 8)))))
    assert activation.hover.text().startswith(f"channel 3   y 2, x 8   value {float(maps[0, 3, 2, 8]):.5g}")
    assert not activation.zoom.marker.isVisible()  # channel 3 is not the enlarged one
    activation.zoom._on_moved(None)  # the mouse left: the other side's mark goes
    assert not gradient.zoom.marker.isVisible()
    # maps of another shape (a module's grad_input) are not linked
    gradient.show_capture("x:grad_input", grads[:, :, :10], None)
    gradient.hover.setText(" ")
    activation.zoom._on_moved(zoom_scene_point(activation, 4, 9))
    assert gradient.hover.text() == " " and not gradient.zoom.marker.isVisible()


def mosaic_point(panel, channel: int, y: int, x: int) -> tuple[float, float]:
    row, col = panel.mosaic.origin(channel)
    return row + y + 0.5, col + x + 0.5


def centre_colour(panel) -> tuple[int, int, int]:
    image = panel.zoom.canvas.grab().toImage()
    point = panel.zoom.canvas.mapFromScene(zoom_scene_point(panel, 10, 15))
    colour = image.pixelColor(point.x(), point.y())
    return colour.red(), colour.green(), colour.blue()


def test_the_enlarged_channel_laid_over_the_input(qtbot, make_panel, maps):
    panel = make_panel()
    picture = np.zeros((64, 96, 3), np.uint8)
    picture[..., 0] = 255  # all red
    panel.set_backdrop(picture)
    panel.show_capture("x:output", maps, None)
    zoom = panel.zoom
    assert zoom.on_input.isEnabled() and not zoom.overlaid()
    zoom.on_input.setChecked(True)
    zoom.opacity.setValue(0)
    qtbot.wait(50)
    assert zoom.overlaid() and zoom.backdrop.mapRectToParent(zoom.backdrop.boundingRect()) == \
        zoom.image.mapRectToParent(zoom.image.boundingRect())  # stretched over the map's 30 x 20 pixels
    assert centre_colour(panel) == (255, 0, 0)  # opacity 0: only the input shows
    zoom.opacity.setValue(100)
    qtbot.wait(50)
    assert zoom.image.opacity() == 1.0 and centre_colour(panel) != (255, 0, 0)
    zoom.opacity.setValue(40)
    assert zoom.image.opacity() == pytest.approx(0.4)
    # weights and vectors are not pictures of the input: nothing to lay over it
    panel.show_capture("conv.weight:grad", np.ones((4, 3, 3, 3), np.float32), None)
    assert not zoom.on_input.isEnabled() and not zoom.overlaid()
    panel.show_capture("x:output", maps, None)
    assert zoom.overlaid()  # the choice stays for the next map of the input's area
    panel.set_backdrop(None)
    assert not zoom.overlaid() and not zoom.on_input.isEnabled()
