"""Issue 39, item 8: figures, not screen grabs. Compare all's export and File > Save figure on the Attribution
tab draw the figure itself (every cell, its colour bar and caption; no controls, nothing clipped by the
window); at 1280x800 Compare all scrolls instead of clipping; the SVG rendered by another renderer than
Qt's (CairoSVG) is the PNG, its curves plain strokes; one File menu entry for figures."""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PIL import Image
from PySide6.QtWidgets import QScrollArea

from inspector.core.attribution import Attribution

METHODS = ("saliency", "gradcam", "guided", "ig", "occlusion", "smoothgrad")
INSERTION = np.array([84, 162, 75])  # faithfulness_plot.COLOURS["insertion"], #54a24b


@dataclass(frozen=True)
class Scored:
    """A deletion or insertion curve as the scores hand it over (the fields of the core's Curve)."""

    metric: str
    scores: np.ndarray
    auc: float
    score_of: str = "probability of class 3"
    order: str = "most positive first"
    protocol: str = "inspector"

    def as_json(self) -> dict:
        return {"auc": self.auc, "scores": [float(v) for v in self.scores], "score": self.score_of,
                "order": self.order}


def _picture() -> np.ndarray:
    y, x = np.mgrid[0:32, 0:32]
    return np.stack([x * 8, y * 8, np.full_like(x, 128)], axis=-1).astype(np.uint8)


def _found(method: str, k: int) -> Attribution:
    """A scored map, as Compare all's cells come: its title says "ig · signed · del 0.117 · ins 0.112 · 3.23 s"."""
    rng = np.random.default_rng(k)
    curves = (Scored("deletion", np.linspace(0.9, 0.1, 51), 0.5), Scored("insertion", np.full(51, 0.5), 0.5))
    return Attribution(method, rng.standard_normal((32, 32)).astype(np.float32), "3", 3,
                       details=(("seconds", 0.25 * (k + 1)), ("steps", 50), ("quadrature", "gausslegendre")),
                       curves=curves)


def _rgb(data: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(data)) as im:
        return np.asarray(im.convert("RGB")).astype(np.int16)


def _compare_all(qtbot, window) -> object:
    """The Attribution tab at 1280x800 showing Compare all's six cells (made here, not computed)."""
    window.resize(1280, 800)
    view = window.views.attribution
    window.tabs.setCurrentWidget(view)
    comparison = view.comparison
    comparison.start(METHODS, _picture())
    view.pages.setCurrentWidget(comparison)
    for k, method in enumerate(METHODS):
        comparison.add(method, _found(method, k))
    qtbot.wait(200)
    return view


def _elsewhere(svg: bytes) -> np.ndarray:
    """The SVG as CairoSVG (cairo, not Qt) draws it."""
    import cairosvg

    return _rgb(cairosvg.svg2png(bytestring=svg))


def _renders_the_same(svg: bytes, png: bytes) -> np.ndarray:
    """The SVG drawn elsewhere is the PNG of the same figure: the same size, and a mean difference per
    channel of a few levels (text is laid out by another engine)."""
    other, ours = _elsewhere(svg), _rgb(png)
    assert other.shape == ours.shape
    difference = np.abs(other - ours).mean(axis=(0, 1))
    assert (difference < 6).all(), difference
    return other


def _stroke_width(rgb: np.ndarray, colour: np.ndarray) -> float:
    """How many pixels of `colour` a column holds where it has any, the median over columns: a flat curve's
    stroke width (a band where a renderer scaled a non-scaling pen)."""
    near = np.abs(rgb - colour).sum(axis=2) < 90
    counts = near.sum(axis=0)
    return float(np.median(counts[counts > 0])) if counts.any() else 0.0


def test_compare_all_exports_every_cell_drawn_at_its_own_size(qtbot, window, tmp_path):
    """At 1280x800 the old export grabbed the canvas on screen: 637x392, the guided and occlusion columns cut.
    Now it is the figure of all six cells, three columns by two rows of 240-px maps, each cell drawn."""
    view = _compare_all(qtbot, window)
    written = view.comparison.export(tmp_path / "cmp")
    png = written[2].read_bytes()
    rgb = _rgb(png)
    assert rgb.shape[1] >= 3 * 240 and rgb.shape[0] >= 2 * 240, rgb.shape
    figure = view.comparison.figure()
    assert (figure.columns, len(figure.rows)) == (3, 2) and rgb.shape[:2] == (figure.height, figure.width)
    assert png == figure.png()  # the figure alone: no widget's pixels in it
    for k, method in enumerate(METHODS):
        box = figure.map_rect(k)
        assert min(box.width(), box.height()) >= 240
        cell = rgb[box.top():box.bottom() + 1, box.left():box.right() + 1]
        assert cell.std() > 20 and (cell.min(axis=2) < 240).mean() > 0.9, method  # a map, not white paper
        assert figure.cells[k].title.startswith(f"{method} · ") and "steps 50" in " ".join(figure.cells[k].lines)


def test_compare_all_on_screen_scrolls_instead_of_clipping_at_1280x800(qtbot, window):
    view = _compare_all(qtbot, window)
    canvas = view.comparison.canvas
    boxes = [item for item in canvas.ci.items if isinstance(item, pg.ViewBox)]
    titles = [item for item in canvas.ci.items if isinstance(item, pg.LabelItem)]
    assert len(boxes) == len(titles) == len(METHODS)
    for item in boxes + titles:  # every cell lies on the canvas, none squeezed
        rect = canvas.mapFromScene(item.sceneBoundingRect()).boundingRect()
        assert canvas.rect().contains(rect), (rect, canvas.rect())
    assert all(min(b.width(), b.height()) >= 149 for b in boxes)
    area = canvas.parentWidget().parentWidget()  # the scroll area's viewport, then the scroll area
    assert isinstance(area, QScrollArea)
    hidden = canvas.height() - area.viewport().height()
    assert hidden <= 0 or area.verticalScrollBar().maximum() >= hidden  # what is below is reachable
    assert canvas.width() <= area.viewport().width() or area.horizontalScrollBar().maximum() > 0
    window.resize(1920, 1080)  # room for three columns: the cells move there, still all on the canvas
    qtbot.wait(200)
    assert view.comparison.columns == 3
    for item in boxes + titles:
        assert canvas.rect().contains(canvas.mapFromScene(item.sceneBoundingRect()).boundingRect())


def test_save_figure_of_compare_all_draws_it_and_its_svg_renders_the_same_elsewhere(qtbot, window, tmp_path):
    view = _compare_all(qtbot, window)
    png = window.save_figure(str(tmp_path / "all.png"), scale=1.0).read_bytes()
    assert _rgb(png).shape[1] >= 3 * 240  # every column, whatever the window's width
    svg = window.save_figure(str(tmp_path / "all.svg")).read_bytes()
    _renders_the_same(svg, png)
    assert "the figure" in window.banner.text() and view.comparison.found


def test_save_figure_of_a_map_has_no_controls_and_its_svg_renders_the_same_elsewhere(qtbot, window, tmp_path):
    """The old figure rendered the tab: its Method combo and buttons in the picture, and in librsvg or
    CairoSVG the curves as bands as tall as the plot. Now the map, its colour bar, its curves and caption."""
    from PySide6.QtCore import QPoint

    window.resize(1280, 800)
    view = window.views.attribution
    window.tabs.setCurrentWidget(view)
    curves = (Scored("deletion", np.linspace(0.9, 0.1, 51), 0.5), Scored("insertion", np.full(51, 0.5), 0.5))
    found = Attribution("ig", np.random.default_rng(0).standard_normal((3, 32, 32)).astype(np.float32), "3", 3,
                        details=(("steps", 50), ("quadrature", "gausslegendre")), curves=curves, sign="signed",
                        completeness_gap=0.01)
    view.show_attribution(_picture(), found, None)
    qtbot.wait(200)
    png = window.save_figure(str(tmp_path / "map.png"), scale=1.0).read_bytes()
    rgb = _rgb(png)
    combo = _rgb(bytes(_grab_png(view.method)))
    at = view.method.mapTo(view, QPoint(0, 0))
    h, w = combo.shape[:2]
    assert not np.array_equal(rgb[at.y():at.y() + h, at.x():at.x() + w], combo)  # no Method combo in it
    svg = window.save_figure(str(tmp_path / "map.svg")).read_bytes()
    assert b"non-scaling-stroke" not in svg
    other = _elsewhere(svg)
    assert 1 <= _stroke_width(other, INSERTION) <= 4  # the flat insertion curve: a 2-px line, not a band
    assert 1 <= _stroke_width(rgb, INSERTION) <= 4
    _renders_the_same(svg, png)

    from inspector.gui.figures.figure import attribution_figure, caption_of

    figure = attribution_figure(view, caption_of(window.state, layer=False))
    assert rgb.shape[:2] == (figure.height, figure.width) != (view.height(), view.width())
    assert png == figure.png()  # the figure alone
    cell = figure.cells[0]
    assert cell.title.startswith("ig for class 3") and cell.sign == "signed" and len(cell.curves) == 2
    assert "completeness gap" in " ".join(cell.lines) and figure.caption.startswith(window.state.model.source)


def _grab_png(widget) -> bytes:
    from inspector.gui.figures.encoded import encoded

    return encoded(widget.grab(), "PNG")


def test_the_other_tabs_svg_draws_its_curves_as_plain_strokes(qtbot):
    """A tab still saved as on screen (its pyqtgraph plots with cosmetic pens) gives an SVG whose curves are
    plain strokes in pixel coordinates: CairoSVG draws what Qt draws."""
    from PySide6.QtWidgets import QVBoxLayout, QWidget

    from inspector.gui.figures.figure import figure_bytes

    holder = QWidget()
    qtbot.addWidget(holder)
    plot = pg.PlotWidget()
    plot.setBackground("w")
    QVBoxLayout(holder).addWidget(plot)
    plot.plot(np.linspace(0, 1, 20), np.full(20, 0.5), pen=pg.mkPen("#54a24b", width=2))
    plot.setYRange(0, 1)
    holder.resize(400, 240)
    holder.show()
    qtbot.wait(100)
    svg = figure_bytes(holder, "a caption", ".svg")
    assert 1 <= _stroke_width(_elsewhere(svg), INSERTION) <= 4
    _renders_the_same(svg, figure_bytes(holder, "a caption", ".png", 1.0))
    holder.hide()


def test_one_file_menu_entry_saves_figures_and_says_what(window):
    file_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&File")
    saving = [a for a in file_menu.actions() if "figure" in a.text().lower() or "view" in a.text().lower()]
    assert len(saving) == 1, [a.text() for a in saving]
    action = saving[0]
    assert action.shortcut().toString() == "Ctrl+Shift+S" and "SVG" in action.text()
    assert "Compare all" in action.toolTip() and "no controls" in action.toolTip()
