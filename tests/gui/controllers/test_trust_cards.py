"""Issue 55 item 5 in the app: "Check these maps" under Compare all makes a trust card per map on the worker, whose
numbers are the core's own checks run directly on the same input and seed (faithfulness.scored under the protocol
chosen, ROAD, sanity.mprt, sanity.random_logit); Esc stops it and the maps stay; a click on a card opens the
randomisation strip, the original and one map per layer; a check a map cannot take is one line in the banner. (On a
remote engine: tests/gui/worker/test_remote_trust.py.)"""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

from inspector.core import load_input, load_model
from inspector.core.attribution import attribute
from inspector.core.attribution.sanity.random_logit import random_logit
from inspector.core.attribution.sanity.randomisation import mprt
from inspector.core.attribution.scores.faithfulness import scored

SEED = 5


def _compared(qtbot, window, methods):
    view = window.views.attribution
    window.tabs.setCurrentWidget(view)
    view.compare_methods(methods)
    qtbot.waitUntil(lambda: not view.comparing, timeout=60_000)
    panel = view.comparison.trust
    assert set(view.comparison.found) == set(methods) and panel.check.isEnabled()
    return view, panel


@pytest.mark.numeric
def test_the_cards_are_the_core_checks_on_the_same_input_and_seed(qtbot, window, tiny_source, image_file):
    _view, panel = _compared(qtbot, window, ("saliency", "gradcam"))
    trust = window.analysis.trust.trust
    phases = []
    window.worker.sigPhase.connect(phases.append)
    panel.protocol.setCurrentText("rise2018")
    panel.seed.setValue(SEED)
    with qtbot.waitSignal(trust.sigEnded, timeout=120_000) as ended:
        panel.check.click()
    assert ended.args == [""] and set(panel.cards) == {"saliency", "gradcam"}
    model = load_model(tiny_source)
    x = load_input(image_file, model.preprocess, model.input_shape)
    index = window.state.outcome.result.target_index
    for method in ("saliency", "gradcam"):
        card = panel.cards[method].card
        found = attribute(model, x, method, index)
        games = {c.metric: c.auc for c in scored(model, x, found, ("deletion", "insertion"),
                                                  protocol="rise2018").curves}
        road = {c.metric: c.auc for c in scored(model, x, found, ("road",), road_seed=SEED).curves}
        for metric, value in {**games, **road}.items():
            assert card.auc(metric) == pytest.approx(value, abs=1e-6)
        assert card.protocol == "rise2018" and card.seed == SEED and not card.seed_drawn
        by_hand = mprt(model, x, method, index, seed=SEED)
        assert card.mprt.layers == by_hand.layers and card.mprt.seed == SEED and card.mprt.mode == "cascading"
        np.testing.assert_allclose(card.mprt.curve, by_hand.curve, atol=1e-6)
        assert card.mprt.verdict == by_hand.verdict
        other = random_logit(model, x, method, index, seed=SEED)
        assert card.random_logit.other_index == other.other_index
        assert card.random_logit.similarity.spearman_abs == pytest.approx(other.similarity.spearman_abs, abs=1e-6)
        assert [c.check for c in card.checked] == ["deletion and insertion", "ROAD", "MPRT", "random-logit"]
        assert all(c.seconds > 0 and not c.refused for c in card.checked)
        text = " ".join(label.text() for label in panel.cards[method].labels)
        assert "(protocol rise2018)" in text and "(σ 0.01)" in text and f"seed {SEED}" in panel.cards[method].title.text()
        assert f"ins {games['insertion']:.3f}" in text and "MPRT cascading: " in text
        assert f"{float(by_hand.curve[-1]):.2f} {'<' if by_hand.changes else '≥'} 0.5" in text
        xs, ys = panel.cards[method].curve.getData()
        np.testing.assert_allclose(ys, by_hand.curve, atol=1e-6)
        assert list(xs) == list(range(len(by_hand.layers) + 1))
    said = [p for p in phases if p.startswith("Checking the maps (gradcam): MPRT step ")]
    assert said and said[-1] == "Checking the maps (gradcam): MPRT step 4 of 4 (Esc cancels)"
    assert "2 of 2 maps checked" in panel.status.text()


def test_a_click_on_a_card_opens_the_strip_with_the_original_and_a_map_per_layer(qtbot, window):
    _view, panel = _compared(qtbot, window, ("gradcam",))
    with qtbot.waitSignal(window.analysis.trust.trust.sigEnded, timeout=120_000):
        panel.check.click()
    card = panel.cards["gradcam"]
    qtbot.mouseClick(card, Qt.LeftButton)
    strip = window.analysis.trust.strip
    try:
        layers = card.card.mprt.layers
        assert layers == ("fc", "features.3", "features.1", "features.0")  # Tiny's four, the logits first
        assert len(strip.images) == len(layers) + 1 == 5
        for step, image in enumerate(strip.images):  # each step's |map| (a Grad-CAM map is one (H, W) picture)
            assert card.card.mprt.maps[step].ndim == 2
            np.testing.assert_allclose(image.image, np.abs(card.card.mprt.maps[step]), rtol=1e-6)
        assert "original" in strip.captions[0].text and "fc" in strip.captions[1].text
        assert f"seed {card.card.seed}" in strip.title.text()
    finally:
        strip.close()


def test_esc_stops_the_checks_and_the_maps_stay(qtbot, window):
    view, panel = _compared(qtbot, window, ("saliency", "gradcam", "guided"))
    maps = dict(view.comparison.found)
    first = []

    def cancel_once(text):  # on the worker's thread (a direct connection): Esc's cancel as MPRT starts its steps
        if "MPRT step" in text and not first:
            first.append(text)
            window.worker.cancel()

    window.worker._sigPhase.connect(cancel_once, Qt.DirectConnection)
    try:
        with qtbot.waitSignal(window.analysis.trust.trust.sigEnded, timeout=120_000) as ended:
            panel.check.click()
    finally:
        window.worker._sigPhase.disconnect(cancel_once)
    assert "cancelled" in ended.args[0]
    assert not panel.cards and set(panel.failed) == {"saliency"}  # the first map's card was stopped, none after it
    assert panel.status.text().startswith("Stopped: ") and panel.check.isEnabled()
    assert view.comparison.found == maps and all(m in view.comparison.cells for m in maps)  # every map stays


def test_a_check_a_map_cannot_take_is_one_line_in_the_banner(qtbot, window):
    _view, panel = _compared(qtbot, window, ("eigencam", "saliency"))
    with qtbot.waitSignal(window.analysis.trust.trust.sigEnded, timeout=120_000):
        panel.check.click()
    card = panel.cards["eigencam"].card
    assert card.random_logit is None and card.mprt is not None and card.auc("road-morf") is not None
    line = ("Warning: eigencam: random-logit not made: eigencam explains no class, so there is no other class to compare "
            "it with: random-logit needs a method that explains a class.")
    assert window.banner.text() == line and "\n" not in window.banner.text()
    assert "not made: eigencam explains no class" in panel.cards["eigencam"].labels[3].text()
    assert set(panel.cards) == {"eigencam", "saliency"}  # the other checks, and the other map, were made
