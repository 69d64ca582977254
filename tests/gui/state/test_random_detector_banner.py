"""Issue 41, item 12: a torchvision detector with random weights shows its top boxes at chance (20 identical
"bowl 0.01" boxes) and the app says why: random weights, scores at chance, the model's threshold set to 0 for them
and the picture's at its 10 best."""

from __future__ import annotations

from inspector.core.records.requests import ModelRequest


def test_a_random_detector_says_its_boxes_are_at_chance(qtbot, window, ui):
    state = window.state
    state.request_model(ModelRequest("ssdlite320_mobilenet_v3_large", "random", seed=3))
    qtbot.waitUntil(lambda: state.model is not None and state.model.task == "detection", timeout=120_000)
    assert window.banner.text() == (
        "ssdlite320_mobilenet_v3_large has random weights (seed 3): every box scores near chance, so the model's "
        "own score threshold is 0 here and the picture shows its 10 best boxes (a trained detector's from 0.5; the "
        "slider under the input moves it). Load pretrained weights or a checkpoint to see what it detects.")
    # issue 52 item 7: the two thresholds named apart (it said "threshold is 0" and the picture's tooltip "0.01")
    qtbot.waitUntil(lambda: window.input_view.detections is not None, timeout=120_000)
    tenth = window.input_view.detections[9].score
    assert window.input_view.min_score == tenth < 0.5
    assert window.banner.notice.level == "info"
