"""Issue 41, item 12: a torchvision detector with random weights shows its top boxes at chance (20 identical
"bowl 0.01" boxes) and the app says why: random weights, scores at chance, the threshold set to 0 for them."""

from __future__ import annotations

from inspector.core.records.requests import ModelRequest


def test_a_random_detector_says_its_boxes_are_at_chance(qtbot, window, ui):
    state = window.state
    state.request_model(ModelRequest("ssdlite320_mobilenet_v3_large", "random", seed=3))
    qtbot.waitUntil(lambda: state.model is not None and state.model.task == "detection", timeout=120_000)
    assert window.banner.text() == (
        "ssdlite320_mobilenet_v3_large has random weights (seed 3): every box scores near chance, so the score "
        "threshold is 0 here to show its top boxes. Load pretrained weights or a checkpoint to see what it detects.")
    assert window.banner.notice.level == "info"
