"""Gradient flow names its layers and its y axis; statistics and predictions spell out NaN/Inf."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt

from inspector.core.common.keys import parse_key
from inspector.core.engine.diagnostics import FlowRow
from inspector.core.engine.result import Capture, Prediction, RunResult
from inspector.core.engine.stats import TensorStats
from inspector.gui.views.diagnostics_views import GradientFlowView, StatsTable
from inspector.gui.views.layer_plot import short_name
from inspector.gui.views.side_panels import PredictionsView

NAN, INF = float("nan"), float("inf")


@pytest.fixture
def show(qtbot):
    def show(widget):
        qtbot.addWidget(widget)
        widget.resize(1000, 600)
        widget.show()
        qtbot.waitExposed(widget)
        return widget
    return show


def test_short_names_keep_the_end_of_the_path():
    assert short_name("layer4.2.conv3:grad_output") == "layer4.2.conv3"
    assert short_name("features.denseblock4.denselayer16.conv2:grad_output") == "…conv2"
    assert short_name("encoder.layers.encoder_layer_11.mlp.0:grad_output") == "…mlp.0"
    assert short_name("layer1.0.conv1.weight:grad") == "…0.conv1.weight"
    assert short_name("layer1.0.relu:grad_output#1") == "layer1.0.relu#1"


def test_flow_names_layers_on_x_and_the_measure_on_y(qtbot, show):
    view = show(GradientFlowView())
    keys = [f"stage{i // 3}.block{i % 3}.conv:grad_output" for i in range(30)]
    rows = [FlowRow(k, i, 10.0 ** -(i / 5), 10.0 ** -(i / 5 + 1), False, False) for i, k in enumerate(keys)]
    view.show_result(RunResult(), rows, {})
    major, minor = view.plot.getAxis("bottom")._tickLevels
    # at most 12 names always drawn, every k-th, as many as fit side by side; the rest on level 2
    fit = view.labels_that_fit()
    assert 2 <= fit <= 12
    step = -(-30 // fit)
    assert major == [(float(i), short_name(keys[i])) for i in range(0, 30, step)]
    assert len(major) + len(minor) == 30 and (1.0, "…block1.conv") in minor
    view.resize(420, 600)
    qtbot.waitUntil(lambda: len(view.plot.getAxis("bottom")._tickLevels[0]) < len(major), timeout=2000)
    assert view.plot.getAxis("left").labelText == "gradient L2 norm"
    view.measure.setCurrentText("mean |grad|")
    assert view.plot.getAxis("left").labelText == "mean |gradient|"
    assert view.mean_curve.isVisible() and not view.norm_curve.isVisible()
    vb = view.plot.getPlotItem().getViewBox()
    view._on_mouse_moved(vb.mapViewToScene(QPointF(7.2, -1.0)))
    assert view.hover.text() == f"{keys[7]}   L2 norm {10 ** -1.4:.4g}   mean |grad| {10 ** -2.4:.4g}"


def test_statistics_table_spells_out_nan_and_sorts_it_last(show):
    def cap(key, mean, nan, inf):
        return Capture(parse_key(key), TensorStats((1, 4), "float32", mean, 1.0, 0.0, 1.0, 1.0, 0.0, nan, inf), None)
    caps = {c.name: c for c in (cap("a:output", 2.0, 0, 0), cap("b:output", NAN, 4, 0), cap("c:output", -1.0, 0, 2))}
    table = show(StatsTable())
    table.show_result(RunResult(captures=caps))
    t = table.table
    columns = [t.horizontalHeaderItem(c).text() for c in range(t.columnCount())]
    key_col, mean_col, inf_col = columns.index("key"), columns.index("mean"), columns.index("inf")
    t.sortItems(mean_col, Qt.AscendingOrder)
    assert [t.item(r, mean_col).text() for r in range(3)] == ["-1", "2", "NaN"]
    assert [t.item(r, key_col).text() for r in range(3)] == ["c:output", "a:output", "b:output"]
    assert t.item(0, inf_col).text() == "2" and t.item(0, inf_col).foreground().color() == Qt.red


def test_predictions_spell_out_nan_and_inf(show):
    view = show(PredictionsView())
    out = np.array([[NAN, INF, 1.0, NAN]], np.float32)
    preds = [Prediction(1, "cat", NAN, INF), Prediction(2, "dog", 0.25, -INF), Prediction(3, "eel", 0.125, 1.5)]
    view.show_result(RunResult(output=out, predictions=preds))
    cells = [[view.item(r, c).text() for c in range(3)] for r in range(3)]
    assert cells == [["cat (1)", "NaN", "Inf"], ["dog (2)", "25.00%", "-Inf"], ["eel (3)", "12.50%", "1.500"]]
    assert view.toolTip() == "The output holds NaN 2  Inf 1 of 4 values"


def test_the_statistics_table_keeps_its_place_and_order_when_refilled(qtbot):
    """Issue 25, item 12: a re-run refills the table; the scroll position and the sort stay."""
    import torch
    from torch import nn

    from inspector.core.engine.runner import RunSpec, run

    model = nn.Sequential(*[nn.Linear(8, 8) for _ in range(40)])
    result = run(model, torch.ones(1, 8), RunSpec.make([str(i) for i in range(40)], "output,grad_output", (), "sum"))
    table = StatsTable()
    qtbot.addWidget(table)
    table.resize(400, 300)
    table.show()
    table.show_result(result)
    table.table.sortItems(2, Qt.DescendingOrder)
    qtbot.waitUntil(lambda: table.table.verticalScrollBar().maximum() > 15, timeout=2_000)
    table.table.verticalScrollBar().setValue(15)
    table.table.horizontalScrollBar().setValue(2)
    first = [table.table.item(r, 0).text() for r in range(5)]
    table.show_pending("Working out the statistics of every capture…")  # a re-run empties it first
    table.show_result(result)
    qtbot.waitUntil(lambda: table.table.verticalScrollBar().value() == 15, timeout=2_000)
    assert table.table.verticalScrollBar().value() == 15 and table.table.horizontalScrollBar().value() == 2
    assert [table.table.item(r, 0).text() for r in range(5)] == first and np.all(np.array(first) != "")


def test_a_layers_several_gradients_are_told_apart(qtbot, show):
    """Issue 52 item 7: with grad_output and grad_input captured, each layer had two dots one above the other, the
    same colour and symbol, its name once: nothing said which was which. Each site is its own curve (its symbol),
    named in the legend; the layer is named once on the axis."""
    view = show(GradientFlowView())
    rows = [FlowRow(f"l{i}:{site}", i + 1, 10.0 ** -(i + k), 10.0 ** -(i + k + 1), False, False)
            for i in range(3) for k, site in enumerate(("grad_output", "grad_input"))]
    view.show_result(RunResult(), rows, {})
    legend = view.plot.getPlotItem().legend
    assert [label.text for _sample, label in legend.items] == ["L2 norm, grad_output", "L2 norm, grad_input"]
    out, into = view.curve("L2 norm", "grad_output"), view.curve("L2 norm", "grad_input")
    assert list(out.xData) == [1, 2, 3] and list(into.yData) == pytest.approx([10.0 ** -1, 10.0 ** -2, 10.0 ** -3])
    assert out.opts["symbol"] != into.opts["symbol"]
    major, minor = view.plot.getAxis("bottom")._tickLevels
    assert sorted(major + minor) == [(1.0, "l0"), (2.0, "l1"), (3.0, "l2")]
    view.show_result(RunResult(), [r for r in rows if r.key.endswith("grad_output")], {})
    assert [label.text for _sample, label in legend.items] == ["L2 norm"]  # one site: the measure alone
