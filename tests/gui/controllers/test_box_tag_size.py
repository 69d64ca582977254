"""A detector's box drawn under its map in the Attribution tab: on a small input (the toy detector's 32 pixels) the
picture is drawn a whole number of times larger, so that the box's tag (a font of fixed pixels) stays small beside
the map, and stretched over the map's pixels. Drawn at the input's pixels, the tag and edges took 10 of its 32 rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from inspector.core.detection.picture import CHOSEN

TOY = Path(__file__).parents[2] / "unit" / "detection" / "toy_detector.py"


def _tag_rows(picture: np.ndarray) -> int:
    """The rows holding more of the target box's yellow than its two upright edges (3 pixels each): the tag's
    rows and the box's top and bottom edges."""
    yellow = np.all(picture[..., :3] == CHOSEN, axis=-1)
    return int((yellow.sum(axis=1) > 8).sum())


def _on_map(item, values: np.ndarray) -> tuple[float, float]:
    rect = item.mapRectToParent(item.boundingRect())
    assert (rect.x(), rect.y()) == (0, 0)
    return rect.width(), rect.height()


def test_the_box_tag_is_small_beside_the_map_of_a_small_input(ui, qtbot, open_window, tmp_path, image_file):
    path = tmp_path / "toy_detector.py"
    path.write_text(TOY.read_text())
    window = open_window(f"{path}:ToyDetector", image_file)
    result = window.first_outcome.result
    assert result.input.shape[-2:] == (32, 32) and result.target_detection == 0
    window.state.set_view("attribution")
    view = window.views.attribution
    view.method.setCurrentText("saliency")
    view.compute.click()
    qtbot.waitUntil(lambda: view.map is not None, timeout=30_000)
    picture = view.picture.image
    assert picture.shape[:2] == (512, 512)  # 16 times the input: the first whole multiple from 512
    assert _on_map(view.picture, view.values) == (32, 32)  # stretched over the map's 32 x 32 pixels
    rows = _tag_rows(picture)
    assert 6 < rows < 0.05 * 512  # the 11-pixel tag and the box's 3-pixel edges: under 5 % of the height

    view.explain_each_box()  # Each box's cells: the same picture under each map
    qtbot.waitUntil(lambda: not view.comparing, timeout=30_000)
    cell = next(iter(view.comparison.cells.values()))[0]
    under = [i for i in cell.addedItems if getattr(i, "image", None) is not None and i.image.ndim == 3]
    assert len(under) == 1 and under[0].image.shape[:2] == (512, 512)
    assert _on_map(under[0], view.values) == (32, 32)


def test_the_exported_figure_draws_a_larger_picture_under_its_map():
    from inspector.gui.common.heat_colours import heat_colormap
    from inspector.gui.figures.draw import FigureCell, overlay

    rng = np.random.default_rng(0)
    picture = np.kron(rng.integers(0, 256, (4, 4, 3)), np.ones((3, 3, 1))).astype(np.uint8)  # 4 x 4 drawn 3 times
    cell = FigureCell("box", values=np.zeros((4, 4)), picture=picture, colours=heat_colormap(), opacity=0.0)
    np.testing.assert_array_equal(overlay(cell, 12, 12), picture)  # no map over it: the picture itself, not white
