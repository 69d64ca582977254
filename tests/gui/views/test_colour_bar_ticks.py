"""Issue 41, item 16: a colour bar of small values shows its numbers, not only "0". pyqtgraph gave them a fixed
45 pixels and dropped the wider labels ("-2e-06" in an 11-point font); every colour bar of the app is made by
views.colour_bar, as wide as its labels."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtGui import QFont, QImage, QPainter
from PySide6.QtWidgets import QApplication

LOW, HIGH = -3e-6, 5e-6


@pytest.fixture
def big_font(qapp):
    """An 11-point application font (a common desktop default; the tests' offscreen one is 9)."""
    before = QApplication.font()
    font = QFont(before)
    font.setPointSize(11)
    QApplication.setFont(font)
    yield
    QApplication.setFont(before)


def labels_drawn(bar) -> list[str]:
    """The tick labels the bar's axis draws (after a paint, so that its width has followed its labels)."""
    image = QImage(10, 10, QImage.Format_ARGB32)
    painter = QPainter(image)
    try:
        texts = bar.axis.generateDrawSpecs(painter)[2]
    finally:
        painter.end()
    return [text for _rect, _flags, text in texts]


def settle(qtbot, widget, bar) -> list[str]:
    widget.resize(520, 520)
    widget.show()
    qtbot.waitExposed(widget)
    for _ in range(3):  # paint, widen to the labels, paint again
        widget.grab()
        qtbot.wait(10)
    return labels_drawn(bar)


def non_zero(labels: list[str]) -> set[str]:
    return {s for s in labels if float(s) != 0}


def test_a_gradient_panel_s_bar_labels_millionths(qtbot, big_font):
    from inspector.gui.views.tensor_panel import TensorPanel

    panel = TensorPanel("Gradient", True)
    qtbot.addWidget(panel)
    values = np.linspace(LOW, HIGH, 4 * 12 * 12, dtype=np.float32).reshape(1, 4, 12, 12)
    panel.show_capture("conv:grad_output", values, None)
    panel.colorbar.setLevels((LOW, HIGH))
    labels = settle(qtbot, panel, panel.colorbar)
    assert len(non_zero(labels)) >= 2, labels  # before: ['0']
    for text in labels:  # each label is a value inside the bar's range
        assert LOW <= float(text) <= HIGH


def test_the_attribution_and_comparison_bars_label_millionths(qtbot, big_font):
    from inspector.gui.views.compare.grid import CompareGrid
    from inspector.gui.views.attribution.method_comparison import MethodComparison

    grid = CompareGrid()
    qtbot.addWidget(grid)
    small = np.linspace(LOW, HIGH, 12, dtype=np.float32).reshape(1, 3, 2, 2)
    assert grid.show_row("gradient", "conv:grad_output", small, small * 0.5)
    bar = grid.bars["gradient", "shared"]
    bar.setLevels((LOW, HIGH))
    assert len(non_zero(settle(qtbot, grid, bar))) >= 2

    from inspector.core.attribution.record import Attribution

    found = Attribution(method="saliency", target="class 0", target_index=0, map=np.linspace(0, HIGH, 64).reshape(8, 8))
    cells = MethodComparison()
    qtbot.addWidget(cells)
    cells.start(("saliency",), None)
    cells.add("saliency", found)
    _view, bar = cells.cells["saliency"]
    bar.setLevels((LOW, HIGH))
    assert len(non_zero(settle(qtbot, cells, bar))) >= 2


def test_an_all_zero_gradient_is_said_as_0_alone(qtbot, make_panel):
    """Issue 52 item 7: an all-zero gradient was drawn under a bar labelled -1 ... 1 (levels made up for want of a
    range); the bar now says "all 0", and the next gradient with a range gets its numbers back."""
    panel = make_panel(diverging=True)
    panel.show_capture("fc:grad_output", np.zeros((1, 4, 3, 3), np.float32), None)
    assert settle(qtbot, panel, panel.colorbar) == ["all 0"]
    values = np.linspace(-2, 2, 36, dtype=np.float32).reshape(1, 4, 3, 3)
    panel.show_capture("fc:grad_output", values, None)
    labels = settle(qtbot, panel, panel.colorbar)
    assert "all 0" not in labels and {"-1", "1"} <= set(labels)
