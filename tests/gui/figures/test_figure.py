"""Issue 25, viewing: a saved figure is the view on screen at a chosen scale (PNG) or in vectors (SVG),
with a caption under it naming model, weights, input, layer and edits. (The Attribution tab's figure is
drawn from its data instead, issue 39 item 8: tests/gui/figures/test_figure_drawn.py.)"""

from __future__ import annotations

from PIL import Image

from inspector.gui.figures.figure import caption_of


def test_png_at_a_scale_and_svg_with_the_caption(ui, qtbot, window, tmp_path):
    window.state.editing.add_text("features.0:output=scale(2)")
    ui.expect_result(qtbot, window)
    caption = caption_of(window.state)
    assert caption.startswith(f"{window.state.model.source} (") and "input image.png" in caption
    assert caption.endswith("edits: features.0:output=scale(k=2)") and f"layer {window.state.layer}" in caption
    view = window.tabs.currentWidget()
    png = window.save_figure(str(tmp_path / "fig.png"), scale=2.0)
    with Image.open(png) as im:
        assert im.width == 2 * view.width() and im.height > 2 * view.height()  # the caption strip under it
        bottom = im.convert("L").crop((0, 2 * view.height(), im.width, im.height))
        assert bottom.getextrema()[0] < 100  # dark caption text on white
    svg = window.save_figure(str(tmp_path / "fig.svg"))
    text = svg.read_text(encoding="utf-8")
    assert text.lstrip().startswith("<?xml") and "<svg" in text and "scale(k=2)" in text
    assert window.save_figure(str(tmp_path / "fig.jpg")) is None and "name a .png or .svg" in window.banner.text()


def test_integrated_gradients_in_the_attribution_tab_show_their_completeness_gap(qtbot, window):
    """Issue 26, first step: ig is one of the tab's methods, and its caption says how complete the map is."""
    view = window.views.attribution
    window.tabs.setCurrentWidget(view)
    with qtbot.waitSignal(window.state.analysis.sigAttribution, timeout=60_000):
        view.method.setCurrentText("ig")
        view.compute.click()
    assert view.caption.text().startswith("ig for class") and "completeness gap" in view.caption.text()
    assert "50 steps, gausslegendre" in view.caption.text() and view.map.shape == (3, 32, 32)
    assert not view.layer.isEnabled()


def test_smoothgrad_in_the_attribution_tab_says_its_noise(qtbot, window):
    view = window.views.attribution
    with qtbot.waitSignal(window.state.analysis.sigAttribution, timeout=60_000):
        view.method.setCurrentText("smoothgrad")
        view.compute.click()
    assert "smoothgrad of saliency: 25 noisy copies, noise sigma" in view.caption.text() and "noise seed" in view.caption.text()
    assert view.values.shape == (32, 32)
