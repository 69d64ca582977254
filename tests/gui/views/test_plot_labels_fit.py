"""Issue 41, item 16: Gradient flow's legend lists only the series drawn (a hidden one showed a crossed-out icon);
the divergence plot names its first divergent layer outside the points (its label sat on them) and its y title is
one that fits the axis ("rel. L2 differen" was cut at the Compare tab's height)."""

from __future__ import annotations

import pyqtgraph as pg
import pytest
from PySide6.QtCore import QRectF
from PySide6.QtGui import QFontMetrics

from inspector.core.compare.diff import DiffRow, ModelDiff
from inspector.core.engine.diagnostics import FlowRow
from inspector.core.engine.result import RunResult
from inspector.gui.views.diagnostics_views import GradientFlowView
from inspector.gui.views.compare.divergence_view import DivergenceView


def test_the_flow_legend_lists_only_the_series_drawn(qtbot):
    view = GradientFlowView()
    qtbot.addWidget(view)
    view.show_result(RunResult(), [FlowRow(f"l{i}:grad_output", i, 10.0 ** -i, 10.0 ** (-i - 1), False, False)
                                   for i in range(4)], {})
    legend = view.plot.getPlotItem().legend
    listed = lambda: [label.text for _sample, label in legend.items]  # noqa: E731
    for measure, names in (("L2 norm", ["L2 norm"]), ("mean |grad|", ["mean |grad|"]),
                           ("both", ["L2 norm", "mean |grad|"]), ("L2 norm", ["L2 norm"])):
        view.measure.setCurrentText(measure)
        assert listed() == names, measure
        assert view.norm_curve.isVisibleTo(view.plot.getPlotItem()) == ("L2 norm" in names)


def resnet_like_diff() -> ModelDiff:
    """resnet18's layers, activations equal up to layer4.1.conv2 and apart from it on (the first divergent)."""
    names = ["conv1", "bn1", "relu", "maxpool"] + [f"layer{s}.{b}.{p}" for s in range(1, 5) for b in range(2)
                                                   for p in ("conv1", "bn1", "conv2", "bn2")] + ["fc"]
    apart = names.index("layer4.1.conv2")
    rows = []
    for i, name in enumerate(names):
        rows.append(DiffRow(f"{name}:output", 0.0 if i < apart else 0.1 * (i - apart + 1), 1.0, 0.0))
        rows.append(DiffRow(f"{name}:grad_output", 10.0 ** (-4 + i * 0.1), 1.0, 0.1, forward=False))
    return ModelDiff("layer4.1.conv2:output", 1e-3, rows, [], [], [])


def texts_over_the_points(view: DivergenceView) -> list[str]:
    """The visible text items of the plot whose rectangles meet the points' bounding area (scene pixels)."""
    vb = view.plot.getPlotItem().getViewBox()
    curves = (view.forward_curve, view.grad_curve)
    (x0, x1), (y0, y1) = ((min(c.dataBounds(ax)[0] for c in curves), max(c.dataBounds(ax)[1] for c in curves))
                          for ax in (0, 1))  # as drawn: y in log10
    points = vb.mapViewToScene(QRectF(x0, y0, x1 - x0, y1 - y0)).boundingRect()
    return [item.toPlainText() for item in view.plot.scene().items()
            if isinstance(item, pg.TextItem) and item.isVisible() and item.sceneBoundingRect().intersects(points)]


@pytest.fixture
def strip(qtbot):
    """The divergence plot at the size of the Compare tab's strip under the mosaics (1280 x 800)."""
    view = DivergenceView()
    qtbot.addWidget(view)
    view.resize(420, 170)
    view.show()
    qtbot.waitExposed(view)
    view.show_diff(resnet_like_diff())
    qtbot.wait(50)
    return view


def test_the_first_divergent_is_named_outside_the_points(strip):
    assert strip.first_line.isVisible() and texts_over_the_points(strip) == []
    assert "first divergent: layer4.1.conv2" in strip.legend.text()  # above the plot


def test_the_y_title_fits_its_axis(qtbot, strip):
    axis = strip.plot.getAxis("left")

    def title_fits() -> bool:
        return QFontMetrics(axis.label.font()).horizontalAdvance(axis.labelText) <= axis.geometry().height()
    qtbot.waitUntil(title_fits, timeout=2000)
    assert axis.labelText.startswith("rel. L2")
    strip.resize(700, 420)
    qtbot.waitUntil(lambda: axis.labelText == "rel. L2 difference", timeout=2000)  # room for the whole title
    assert title_fits()


def test_the_wrapped_legend_the_plot_and_the_line_under_it_do_not_overlap(qtbot):
    """The Compare tab at 1280 x 800 against a second model: the legend naming the first divergent wraps to two
    lines; the plot lies under it and the hover line under the plot. Failed before: the legend was counted one line
    high, and the plot covered the hover line ("First divergent: …" half hidden under the axis)."""
    from PySide6.QtWidgets import QWidget

    from inspector.gui.views.compare.view import CompareView

    tab = CompareView()
    qtbot.addWidget(tab)
    tab.set_against("demo (other.pt)")
    tab.resize(656, 590)  # the Compare tab's size in a 1280 x 800 window
    QWidget.show(tab)
    qtbot.waitExposed(tab)
    view = tab.divergence
    view.show_diff(resnet_like_diff())
    line = QFontMetrics(view.legend.font()).height()

    def laid_out() -> bool:
        legend, plot, hover = view.legend.geometry(), view.plot.geometry(), view.hover.geometry()
        return legend.height() >= 2 * line and legend.bottom() < plot.top() and plot.bottom() < hover.top() \
            and hover.bottom() < view.height()
    qtbot.waitUntil(laid_out, timeout=2000)
    assert view.plot.height() >= 130 and view.hover.text().startswith("First divergent: layer4.1.conv2")
