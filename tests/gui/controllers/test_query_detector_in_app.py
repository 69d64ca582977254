"""A query-based detector (a tiny DETR from an `hf:` folder) in the window: its boxes are transformers' own answer,
listed best first, and a click on one makes that query's score the target, explained in the Attribution tab."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch
from PySide6.QtCore import Qt

HELPER = Path(__file__).parents[2] / "unit" / "detection" / "query_detectors.py"


def _helper():
    spec = importlib.util.spec_from_file_location("query_detectors_for_gui", HELPER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_clicked_detr_box_is_its_query_explained(ui, qtbot, open_window, tmp_path, image_file):
    helper = _helper()
    helper.save_detector("detr", tmp_path / "detr", confident=True)
    window = open_window(f"hf:{tmp_path / 'detr'}", image_file)
    result = window.first_outcome.result
    theirs = helper.reference("detr", tmp_path / "detr", torch.from_numpy(result.input), 0.5)  # the folder's
    ranks = torch.argsort(theirs["scores"], descending=True, stable=True).tolist()  # threshold, the processor's
    assert result.target == "box:0" and len(result.detections) == len(ranks) >= 3
    assert [d.score for d in result.detections] == pytest.approx([float(theirs["scores"][i]) for i in ranks], rel=1e-5)
    assert [d.box for d in result.detections] == [pytest.approx(theirs["boxes"][i].tolist(), rel=1e-5, abs=1e-4)
                                                  for i in ranks]
    view, table = window.input_view, window.predictions
    view.score_slider.setValue(0)  # every box listed
    assert view.score_row.isVisible() and table.rowCount() == len(ranks)

    qtbot.mouseClick(table.viewport(), Qt.LeftButton, pos=table.visualItemRect(table.item(2, 0)).center())
    result = ui.expect_result(qtbot, window).result
    assert result.target.startswith("box:") and "," in result.target and result.target_detection == 2
    assert result.objective == pytest.approx(float(theirs["scores"][ranks[2]]), rel=1e-5)  # that query's score

    window.state.set_view("attribution")
    attribution = window.views.attribution
    attribution.method.setCurrentText("saliency")
    attribution.compute.click()
    qtbot.waitUntil(lambda: attribution.map is not None and "saliency" in attribution.caption.text(), timeout=30_000)
    assert attribution.caption.text().startswith("saliency for box:2 ")
    assert attribution.map.shape == result.input.shape[-2:] and attribution.map.max() > 0
