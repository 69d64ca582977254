"""CompareView: its own layer picker, one colour bar for baseline and edited, a symmetric one for
the difference, the same mosaic grid in all three columns, and hover values."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPointF

from inspector.core.common.keys import parse_key
from inspector.core.engine.result import Capture, Prediction, RunResult
from inspector.gui.views.compare.view import CompareView


def result(act: np.ndarray, grad: np.ndarray, weight: np.ndarray, edits=(), logits=(2.0, 1.0, float("nan"))):
    caps = {k: Capture(parse_key(k), None, a) for k, a in
            (("conv:output", act), ("conv:grad_output", grad), ("conv.weight:grad", weight))}
    out = np.array([logits], np.float32)
    preds = [Prediction(i, f"c{i}", 0.5, float(v)) for i, v in enumerate(logits)]
    return RunResult(captures=caps, input_grad=grad[:, :3] * 0.1, output=out, predictions=preds, edits=list(edits))


@pytest.fixture
def view(qtbot):
    v = CompareView()
    qtbot.addWidget(v)
    v.resize(1100, 900)
    QWidget_show(v)
    qtbot.waitExposed(v)
    return v


def QWidget_show(widget) -> None:  # CompareView.show is the comparison; this is the widget's
    from PySide6.QtWidgets import QWidget
    QWidget.show(widget)


@pytest.fixture(scope="module")
def pair():
    rng = np.random.default_rng(7)
    act = rng.random((1, 6, 5, 5), dtype=np.float32)
    grad = rng.standard_normal((1, 6, 5, 5)).astype(np.float32)
    weight = rng.standard_normal((6, 2, 3, 3)).astype(np.float32)
    edited_act = act.copy()
    edited_act[0, 4] = 0.0  # channel 4 zeroed
    return result(act, grad, weight), result(edited_act, grad * 3, weight, ["conv:output=zero_channels([4])"])


def test_layer_picker_is_filled_and_reports_the_users_choice(qtbot, view):
    with qtbot.assertNotEmitted(view.sigLayerChosen):
        view.set_layers(["conv1", "layer1.0.conv1", "fc"], "layer1.0.conv1")
    assert [view.layer.itemText(i) for i in range(view.layer.count())] == ["conv1", "layer1.0.conv1", "fc"]
    assert view.layer.currentText() == "layer1.0.conv1"
    with qtbot.waitSignal(view.sigLayerChosen) as blocker:
        view.layer.setCurrentIndex(2)
    assert blocker.args == ["fc"]


def test_shared_and_symmetric_colour_bars_on_one_grid(view, pair):
    base, edited = pair
    view.show(base, edited, "conv:output", "conv:grad_output")
    images = {k: im.image for k, im in view.images.items()}
    # 6 maps of 5 x 5: 3 columns (ceil(sqrt(6))), 2 rows, 1 pixel apart -> 11 x 17 in every column
    for col in ("baseline", "edited", "difference"):
        assert images["activation", col].shape == (11, 17)
    np.testing.assert_array_equal(images["activation", "baseline"][6:11, 6:11], base.captures["conv:output"].array[0, 4])
    np.testing.assert_array_equal(images["activation", "edited"][6:11, 6:11], np.zeros((5, 5)))
    np.testing.assert_array_equal(images["activation", "difference"][6:11, 6:11],
                                  -base.captures["conv:output"].array[0, 4])
    shared = view.grid.bars["activation", "shared"].levels()
    assert tuple(view.images["activation", "baseline"].levels) == pytest.approx(shared)
    assert tuple(view.images["activation", "edited"].levels) == pytest.approx(shared)
    lo, hi = view.grid.bars["gradient", "difference"].levels()
    assert lo == pytest.approx(-hi) and hi > 0
    assert tuple(view.images["gradient", "difference"].levels) == pytest.approx((lo, hi))
    # the three columns of a row pan together
    views = [view.grid.views["activation", col] for col in ("baseline", "edited", "difference")]
    assert views[0].width() == pytest.approx(views[2].width(), abs=1) and views[0].height() == views[2].height()
    views[1].setRange(xRange=(2, 8), yRange=(1, 5), padding=0)
    x, y = views[1].viewRange()
    assert x[0] <= 2 and x[1] >= 8 and y[0] <= 1 and y[1] >= 5
    for other in (views[0], views[2]):
        assert np.allclose(other.viewRange(), [x, y], atol=1e-6)
    # weights of the gradient row follow the panel's filter tiling (2 kernels of 3 x 3 in a row)
    view.show(base, edited, "conv:output", "conv.weight:grad")
    assert view.grid.shown["gradient"].mosaic.kernels is not None
    assert view.images["gradient", "baseline"].image.shape == view.images["gradient", "difference"].image.shape
    assert view.table.item(2, 1).text() == "NaN"  # a NaN logit gives NaN probabilities, spelled out
    rows = view.table.rowCount()
    assert rows == 3 and {view.table.item(r, 0).toolTip() for r in range(rows)} == {"c0", "c1", "c2"}  # elided: said


def test_hover_gives_the_three_values(view, pair):
    base, edited = pair
    view.show(base, edited, "conv:output", "conv:grad_output")
    scene = view.grid.views["activation", "edited"].mapViewToScene(QPointF(7.5, 8.5))  # channel 4, (2, 1)
    view.grid._on_mouse_moved(scene)
    b = base.captures["conv:output"].array[0, 4, 2, 1]
    assert view.hover.text() == (f"conv:output   channel 4   y 2, x 1   baseline {b:.5g}   edited 0   "
                                 f"difference {-b:.5g}")


def test_a_click_on_a_channel_in_any_column_names_the_key_and_the_channel(qtbot, view, pair):
    from PySide6.QtCore import Qt

    base, edited = pair
    view.show(base, edited, "conv:output", "conv:grad_output")
    grid = view.grid
    # channel 4 is the second row's second tile of the 3-column grid of 5 x 5 maps: pixels (6..10, 6..10)
    for row, col, key in (("activation", "difference", "conv:output"), ("gradient", "baseline", "conv:grad_output")):
        scene = grid.views[row, col].mapViewToScene(QPointF(8.5, 7.5))
        with qtbot.waitSignal(view.sigChannelClicked) as blocker:
            qtbot.mouseClick(grid.viewport(), Qt.LeftButton, pos=grid.mapFromScene(scene))
        assert blocker.args == [key, 4]
    gap = grid.views["activation", "edited"].mapViewToScene(QPointF(5.5, 2.5))  # the gap column between tiles
    with qtbot.assertNotEmitted(view.sigChannelClicked):
        qtbot.mouseClick(grid.viewport(), Qt.LeftButton, pos=grid.mapFromScene(gap))


def test_drawn_in_turns_a_row_a_turn_then_done_once_and_a_newer_drawing_takes_over(qtbot, view, pair):
    """With `done` (a new result), each row is worked out in one event-loop turn and drawn in the next, so the
    window answers (and paints) between them; done() comes once, after the caption; a newer drawing stops the
    old one, whose done() still comes (the window waits on it), and the newer one ends drawn whole."""
    from PySide6.QtCore import QTimer

    base, edited = pair
    calls, between = [], []
    view.show(base, edited, "conv:output", "conv:grad_output", done=lambda: calls.append("first"))
    assert set(view.grid.shown) == set() and calls == []  # the first row worked out now, drawn a turn later
    qtbot.waitUntil(lambda: set(view.grid.shown) == {"activation"}, timeout=2000)
    QTimer.singleShot(0, lambda: between.append(set(view.grid.shown)))  # an event the window handles meanwhile
    qtbot.waitUntil(lambda: calls == ["first"], timeout=2000)
    assert between and between[0] != {"activation", "gradient", "input gradient"}
    assert set(view.grid.shown) == {"activation", "gradient", "input gradient"}
    assert view.caption.text().startswith("Edits: conv:output=zero_channels([4])")
    np.testing.assert_array_equal(view.grid.shown["gradient"].images[2], view.grid.shown["gradient"].images[1]
                                  - view.grid.shown["gradient"].images[0])  # edited - baseline
    view.show(base, edited, "conv:output", "conv:grad_output", done=lambda: calls.append("second"))
    view.show(edited, base, "conv:output", "conv:grad_output", done=lambda: calls.append("third"))
    assert calls == ["first", "second"]  # the second was taken over at once, and said so
    qtbot.waitUntil(lambda: calls == ["first", "second", "third"], timeout=2000)
    qtbot.wait(50)
    assert calls == ["first", "second", "third"]  # once each
    shown = view.grid.shown["activation"].images
    assert shown[2][np.isfinite(shown[2])].max() > 0  # third drawing: base as "edited", channel 4 comes back


def test_rows_worked_out_in_one_turn_and_drawn_in_the_next_are_the_rows_drawn_at_once(view, pair, monkeypatch):
    """Issue 52, item 8: a row's mosaics and levels are worked out in one turn (numbers only, nothing drawn) and
    drawn and painted in the next (together they were the detector's longest turn on the Compare tab); the
    pictures, levels and colour bars in the end are those of drawing every row at once."""
    import inspector.gui.views.compare.view as compare_view

    base, edited = pair
    grid = view.grid
    view.show(base, edited, "conv:output", "conv:grad_output")  # at once
    at_once = {key: (item.image.copy(), tuple(item.levels)) for key, item in grid.images.items()}
    bars = {key: tuple(bar.levels()) for key, bar in grid.bars.items()}
    caption = view.caption.text()
    grid.clear_all()

    turns = []  # what each turn did: ("prepare" | "draw", row)
    monkeypatch.setattr(compare_view, "after_paint", lambda _owner, step: turns.append(step))  # run one by one here
    done, did = [], []
    real_prepare, real_draw = grid.prepare_row, grid.draw_row
    monkeypatch.setattr(grid, "prepare_row", lambda *a: did.append(("prepare", a[0])) or real_prepare(*a))
    monkeypatch.setattr(grid, "draw_row", lambda *a: did.append(("draw", a[0])) or real_draw(*a))
    view.show(base, edited, "conv:output", "conv:grad_output", done=lambda: done.append(True))
    each = [list(did)]
    while turns and not done:
        did.clear()
        turns.pop(0)()
        each.append(list(did))
    rows = ["activation", "gradient", "input gradient"]
    assert each == [[("prepare", r)] if i % 2 == 0 else [("draw", r)] for r in rows for i in (0, 1)] + [[]]
    assert done == [True] and not turns
    for key, (image, lv) in at_once.items():
        np.testing.assert_array_equal(grid.images[key].image, image)
        assert tuple(grid.images[key].levels) == lv
    assert {key: tuple(bar.levels()) for key, bar in grid.bars.items()} == bars
    assert view.caption.text() == caption
