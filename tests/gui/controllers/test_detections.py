"""A detector in the window: its boxes drawn over the input with a score slider, listed in the predictions
panel, and a click on a box (on the picture or in the list) makes that detection the target for everything."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import torch
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor

TOY = Path(__file__).parents[2] / "unit" / "detection" / "toy_detector.py"  # boxes and scores checkable by hand


def _toy(tmp_path):
    """(the source of the toy detector, its module as the test's own independent copy)."""
    path = tmp_path / "toy_detector.py"
    path.write_text(TOY.read_text())
    spec = importlib.util.spec_from_file_location("toy_for_gui", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return f"{path}:ToyDetector", module


def _picture_point(view, x: float, y: float) -> QPoint:
    """Where input pixel (x, y) is on the input view's picture."""
    pixmap, label = view.picture.pixmap(), view.picture
    h, w = view.rgb.shape[:2]
    left, top = (label.width() - pixmap.width()) / 2, (label.height() - pixmap.height()) / 2
    return QPoint(round(left + x / w * pixmap.width()), round(top + y / h * pixmap.height()))


def test_boxes_are_drawn_and_listed_and_a_click_on_one_explains_it(ui, qtbot, open_window, tmp_path, image_file):
    source, toy = _toy(tmp_path)
    window = open_window(source, image_file)
    result = window.first_outcome.result
    with torch.no_grad():
        scores = toy.ToyDetector().box_scores(torch.from_numpy(result.input)[0]).tolist()
    ranks = sorted(range(3), key=lambda i: -scores[i])  # BOXES order, best first
    assert result.target == "box:0" and result.target_detection == 0  # auto: the best box
    assert [d.box for d in result.detections] == [toy.BOXES[i] for i in ranks]
    view, table = window.input_view, window.predictions
    assert view.score_row.isVisible() and window.target_combo.currentText() == "auto (the best box)"
    view.score_slider.setValue(0)  # every box
    assert table.rowCount() == 3 and "3 of 3 detections shown" in view.caption.text()
    assert [table.item(r, 0).text() for r in range(3)] == [f"box:{k} class {toy.LABELS[i]} ({toy.LABELS[i]})"
                                                          for k, i in enumerate(ranks)]
    assert [float(table.item(r, 1).text()) for r in range(3)] == [round(scores[i], 3) for i in ranks]
    view.score_slider.setValue(round(scores[ranks[1]] * 100) + 1)  # only the best is left, in both
    assert table.rowCount() == 1 and "1 of 3 detections shown" in view.caption.text()
    view.score_slider.setValue(0)

    # a click inside box 1 (12, 4, 28, 14): it becomes the target, by its box and class
    qtbot.mouseClick(view.picture, Qt.LeftButton, pos=_picture_point(view, 20, 9))
    result = ui.expect_result(qtbot, window).result
    assert window.state.target == result.target == "box:12,4,28,14@2"
    assert result.target_detection == ranks.index(1) and result.objective == np.float32(scores[1])
    grad = result["conv:grad_output"][0]  # box 1's score reads channel 1 only
    assert np.abs(grad[1]).max() > 0 and np.abs(np.delete(grad, 1, axis=0)).max() == 0
    assert table.selectedItems()[0].row() == ranks.index(1)
    image = view.picture.pixmap().toImage()  # its box in yellow: the left edge, 3 pixels wide
    scale = image.width() / 32
    assert QColor(image.pixel(round(12 * scale) + 1, round(9 * scale))).name() == "#ffd400"

    # a click on a row of the list: box 2 (4, 16, 14, 30)
    row = ranks.index(2)
    qtbot.mouseClick(table.viewport(), Qt.LeftButton, pos=table.visualItemRect(table.item(row, 0)).center())
    result = ui.expect_result(qtbot, window).result
    assert result.target == "box:4,16,14,30@1" and result.target_detection == row


def test_a_classifier_after_a_detector_drops_the_box_target(ui, qtbot, open_window, tmp_path, image_file,
                                                           tiny_source):
    from inspector.core.records.requests import ModelRequest

    source, _toy_module = _toy(tmp_path)
    window = open_window(source, image_file)
    window.state.set_target("box:12,4,28,14@2")
    assert ui.expect_result(qtbot, window).result.target == "box:12,4,28,14@2"
    window.state.request_model(ModelRequest(tiny_source))
    result = ui.expect_result(qtbot, window).result  # not "box:... is for object detectors"
    assert window.state.target == "auto" and result.detections is None and not window.input_view.score_row.isVisible()
    assert window.target_combo.currentText() == "top-1" or window.target_combo.target() == "auto"


def test_the_attribution_tab_explains_the_clicked_box(ui, qtbot, open_window, tmp_path, image_file):
    """Saliency of box 1 in the Attribution tab: the map of that box's score alone (the toy's box 1 reads its
    own pixels only); the tab offers the detections as targets."""
    source, _toy_module = _toy(tmp_path)
    window = open_window(source, image_file)
    window.state.set_target("box:12,4,28,14@2")
    ui.expect_result(qtbot, window)
    window.state.set_view("attribution")
    view = window.views.attribution
    texts = [view.target.itemText(i) for i in range(view.target.count())]
    assert texts[0] == "target of the run" and len(texts) == 4 and texts[1].startswith("box:0 class ")
    view.method.setCurrentText("saliency")
    view.compute.click()
    qtbot.waitUntil(lambda: view.map is not None and "saliency" in view.caption.text(), timeout=30_000)
    rank = window.state.outcome.result.target_detection
    assert view.caption.text().startswith(f"saliency for box:{rank} (class 2 ")  # the toy has no class names
    grad = view.map  # |d score / d input| of box 1: nothing outside its box grown by the conv's pixel
    outside = np.ones((32, 32), bool)
    outside[3:15, 11:29] = False
    assert grad.shape == (32, 32) and grad[outside].max() == 0 and grad[~outside].max() > 0


def test_a_clicked_box_is_forgotten_on_another_image(ui, qtbot, open_window, tmp_path, image_file, gui_files):
    """A box clicked on one image names no detection of the next: the target goes back to auto and the next
    image runs (on the demo detector the next image failed before: "no detection of class 3 matches the box")."""
    source, _toy_module = _toy(tmp_path)
    window = open_window(source, image_file)
    window.detections.choose(1)
    clicked = ui.expect_result(qtbot, window).result
    assert window.state.target.startswith("box:") and "," in window.state.target
    window.state.set_input(str(gui_files / "other.png"))
    result = ui.expect_result(qtbot, window).result
    assert window.state.target == "auto" and result.target == "box:0" and result.detections
    assert window.target_combo.currentText() == "auto (the best box)" and clicked.target_detection == 1


def test_the_compare_tab_marks_the_boxes_an_edit_made_appear_and_vanish(ui, qtbot, open_window, tmp_path, image_file,
                                                                        tiny_source, monkeypatch):
    """Scaling the conv's output by -1 turns each score s into sigmoid(-mean) = 1 - s: seen from 0.5, every box
    shown before vanishes (its new score still listed) and every box hidden before appears, in the table and
    in the picture (green for an appeared box). Run again, the boxes are drawn once, with the result's boxes
    (they were drawn a first time in the result's first turn, the runs before over its input)."""
    from inspector.core.detection.picture import APPEARED
    from inspector.core.edits import Edit
    from inspector.core.common.keys import Key

    source, toy = _toy(tmp_path)
    window = open_window(source, image_file)
    with torch.no_grad():
        scores = toy.ToyDetector().box_scores(torch.from_numpy(window.first_outcome.result.input)[0]).tolist()
    assert all(abs(s - 0.5) > 1e-3 for s in scores)
    window.input_view.score_slider.setValue(50)
    window.state.set_view("compare")
    window.state.editing.add(Edit(Key("conv", "output"), "scale", (("k", -1.0),)))
    outcome = ui.expect_result(qtbot, window)
    compare = window.views.compare
    qtbot.waitUntil(lambda: compare.table.rowCount() == 3, timeout=10_000)
    assert compare.boxes.isVisible() and compare.table.horizontalHeaderItem(3).text() == "Change"
    rows = sorted([compare.table.item(r, c).text() for c in range(4)] for r in range(3))
    assert rows == sorted([f"class {toy.LABELS[i]} ({toy.LABELS[i]})", f"{s:.3f}", f"{1 - s:.3f}",
                           "vanished" if s >= 0.5 else "appeared"] for i, s in enumerate(scores))
    kinds = sorted(c.kind for c in compare.boxes.changes)
    assert kinds == sorted("vanished" if s >= 0.5 else "appeared" for s in scores)
    assert "boxes from score 0.50" in compare.boxes.caption.text()
    drawn = compare.boxes.drawn  # what the view shows
    assert np.array_equal(compare.boxes.image.image, drawn)
    scale = drawn.shape[1] / 32
    for i, (x0, y0, x1, y1) in enumerate(toy.BOXES):  # an appeared box's bottom edge, drawn 3 pixels wide inwards
        if scores[i] < 0.5:
            assert tuple(drawn[round(y1 * scale) - 1, round((x0 + x1) / 2 * scale)]) == APPEARED
    assert outcome.baseline is not None and outcome.baseline.detections is not None

    import inspector.gui.views.compare.box_changes_view as boxes_view

    draws, draw = [], boxes_view.draw_changes
    monkeypatch.setattr(boxes_view, "draw_changes", lambda *a, **k: draws.append(a[1:3]) or draw(*a, **k))
    window.state.run()
    again = ui.expect_result(qtbot, window)
    assert draws == [(outcome.baseline.detections, again.result.detections)]  # once, the new run's boxes
    np.testing.assert_array_equal(compare.boxes.drawn, drawn)  # the same runs: the same picture

    from inspector.core.records.requests import ModelRequest

    window.state.set_view("layer")  # a classifier next, run while the Compare tab is hidden: no boxes left there
    window.state.request_model(ModelRequest(tiny_source))
    assert ui.expect_result(qtbot, window).result.detections is None
    assert not compare.boxes.isVisibleTo(compare) and compare.boxes.changes == []


MASKED = '''

class MaskedToy(ToyDetector):
    """The toy, answering as Mask and Keypoint R-CNN do: each box filled as its mask, 17 keypoints at its centre."""

    def forward(self, images):
        out = super().forward(images)
        for image, found in zip(images, out):
            boxes = found["boxes"].tolist()
            masks = torch.zeros(len(boxes), 1, *image.shape[-2:])
            points = torch.zeros(len(boxes), 17, 3)
            for d, (x0, y0, x1, y1) in enumerate(boxes):
                masks[d, 0, int(y0):int(y1), int(x0):int(x1)] = 1.0
                points[d, :] = torch.tensor([(x0 + x1) / 2, (y0 + y1) / 2, 1.0])
            found["masks"], found["keypoints"] = masks, points
        return out
'''


def test_masks_and_keypoints_are_drawn_over_the_input(ui, qtbot, open_window, tmp_path, image_file):
    from inspector.core.detection.picture import CHOSEN, MASK_ALPHA, colour_of

    path = tmp_path / "masked_toy.py"
    path.write_text(TOY.read_text() + MASKED)
    window = open_window(f"{path}:MaskedToy", image_file)
    result, view = window.first_outcome.result, window.input_view
    assert result.extras["detections:masks"].shape == (3, 32, 32) and view.masks is not None
    assert "masks tinted; keypoints dotted" in view.caption.text()
    view.score_slider.setValue(0)
    rank = [d.box for d in result.detections].index((12.0, 4.0, 28.0, 14.0))
    colour = CHOSEN if rank == result.target_detection else colour_of(2)
    image = view.picture.pixmap().toImage()
    scale = image.width() / 32
    x, y = 14, 12  # inside box 1, away from its edges, its tag and its keypoints
    expected = tuple(round(v * (1 - MASK_ALPHA) + c * MASK_ALPHA) for v, c in zip(view.rgb[y, x], colour))
    assert QColor(image.pixel(round((x + 0.5) * scale), round((y + 0.5) * scale))).getRgb()[:3] == expected
    cx, cy = 20, 9  # its centre: the keypoints' dot
    assert QColor(image.pixel(round(cx * scale), round(cy * scale))).getRgb()[:3] == colour


def test_each_box_is_explained_on_its_own_side_by_side(ui, qtbot, open_window, tmp_path, image_file):
    """"Each box" with saliency: one cell per box shown, each the map of that box's score alone (the toy's box
    reads its own pixels, grown by the conv's one: nothing outside), each on its own scale, its box outlined;
    Compare all on a detector asks for every method that follows a box, each scored by that box's score."""
    from inspector.core.records.methods import compared

    source, toy = _toy(tmp_path)
    window = open_window(source, image_file)
    result = window.first_outcome.result
    window.input_view.score_slider.setValue(0)  # all three boxes
    window.state.set_view("attribution")
    view = window.views.attribution
    assert view.each_box.isVisible()
    view.method.setCurrentText("saliency")
    view.each_box.click()
    comparison = view.comparison
    qtbot.waitUntil(lambda: not view.comparing, timeout=60_000)
    assert not comparison.failed and len(comparison.found) == 3
    for k, d in enumerate(result.detections):
        name = f"box:{k} {d.name} {d.score:.2f}"
        found = comparison.found[name]
        assert found.method == "saliency" and found.target_detection == k
        x0, y0, x1, y1 = (int(v) for v in d.box)
        outside = np.ones((32, 32), bool)
        outside[max(y0 - 1, 0):y1 + 1, max(x0 - 1, 0):x1 + 1] = False
        assert found.map[..., outside].max() == 0 and np.abs(found.map).max() > 0, name
    assert "3 of 3 boxes, each map on its own scale" in comparison.status.text()

    view.compare.click()
    qtbot.waitUntil(lambda: not view.comparing, timeout=120_000)
    assert comparison.methods == compared(boxes=True) and not comparison.failed, comparison.failed
    for method, found in comparison.found.items():  # scored by the box's score, but EigenCAM's (no box)
        assert bool(found.curves) == (method != "eigencam"), method
        assert all("box:" in curve.score_of for curve in found.curves)
