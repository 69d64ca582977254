"""Issue 43 item 3: the Concepts dock. A dictionary of the demo's relu3 (learned by the real learn_concepts on a few
generated shapes, K=4) opened in the app: the bars are read_concepts' coefficients and relevance sorted, a click on
a bar draws that concept's map over the input (checked against the reading's map upsampled here by hand) and its
relevance map; a dictionary of another model is refused naming both, a damaged one said so; the folder is
remembered for the model; Ablate adds the edit as the Edits dock's form writes it."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPointF

from inspector.core import load_input, load_model
from inspector.core.concepts import learn_concepts, load_dictionary
from inspector.core.concepts.on_image import concept_relevance_map, read_concepts
from inspector.demo.shapes import render


class Click:
    def __init__(self, pos):
        self._pos = pos

    def scenePos(self):
        return self._pos


@pytest.fixture(scope="module")
def learned(tmp_path_factory):
    """A dictionary of the demo's relu3: K=4 over 8 generated shapes (one of each class)."""
    root = tmp_path_factory.mktemp("concepts_view")
    data = root / "data"
    data.mkdir()
    rng = np.random.default_rng(0)
    for i in range(8):
        render(i, rng).save(data / f"{i:02d}.png")
    loaded = load_model("demo")
    learn_concepts(loaded, data, "relu3", root / "c", k=4, epochs=2, top=2)
    return root / "c"


def bilinear(grid: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """(h, w) -> (H, W) by hand: half-pixel centres, coordinates clamped at the edges."""
    h, w = grid.shape
    H, W = size

    def weights(n_out, n_in):
        at = np.clip((np.arange(n_out) + 0.5) * n_in / n_out - 0.5, 0, n_in - 1)
        lo = np.floor(at).astype(int)
        hi = np.minimum(lo + 1, n_in - 1)
        return lo, hi, at - lo

    y0, y1, fy = weights(H, h)
    x0, x1, fx = weights(W, w)
    g = grid.astype(np.float64)
    top = g[y0][:, x0] * (1 - fx) + g[y0][:, x1] * fx
    bottom = g[y1][:, x0] * (1 - fx) + g[y1][:, x1] * fx
    return top * (1 - fy)[:, None] + bottom * fy[:, None]


def opened_on(qtbot, window, folder):
    """The Concepts dock on screen with `folder` opened and the image's concepts read."""
    controller = window.concepts
    controller.open(str(folder))
    view = controller.view
    qtbot.waitUntil(lambda: view.reading is not None, timeout=30_000)
    return controller, view


def test_the_bars_are_the_reading_sorted_and_a_click_draws_that_concepts_map(qtbot, open_window, learned):
    window = open_window("demo", "sample:star")
    controller, view = opened_on(qtbot, window, learned)
    loaded = load_model("demo")
    x = load_input("sample:star", loaded.preprocess, loaded.input_shape)
    d = load_dictionary(learned)
    target = int(loaded.module(x).argmax())  # the run's target: the predicted class
    truth = read_concepts(loaded, x, d, target=target)
    assert view.reading.target == target == window.state.outcome.result.target_index
    np.testing.assert_allclose(view.coefficients.heights(), np.sort(truth.coefficients.numpy())[::-1], rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(view.relevance.heights(), np.sort(truth.relevance.numpy())[::-1], rtol=1e-4,
                               atol=1e-6)
    assert "relu3" in view.info.text() and "K=4" in view.info.text()
    # the strongest concept is picked first; a click on the third bar picks the third strongest
    order = np.argsort(-truth.coefficients.numpy(), kind="stable")
    assert view.picked == order[0]
    bars = view.coefficients
    third = bars.getViewBox().mapViewToScene(QPointF(2, bars.heights()[2] / 2))
    bars._on_mouse_clicked(Click(third))
    concept = int(order[2])
    assert view.picked == concept and controller.state.selected == concept
    expected = bilinear(truth.maps[concept].numpy(), tuple(x.shape[-2:]))
    np.testing.assert_allclose(view.heat_values(), expected, rtol=1e-4, atol=1e-5)
    assert view.concept_map.picture.image is not None  # drawn over the picture the model saw
    crp = concept_relevance_map(loaded, x, d, concept, target).numpy()
    qtbot.waitUntil(lambda: view.relevance_map.values is not None, timeout=20_000)
    np.testing.assert_allclose(view.relevance_map.values, crp, rtol=1e-4, atol=1e-6)
    # colours: the concept's map from 0 to its largest value; the relevance map symmetric about 0, to the 99th
    # percentile of |value|
    assert view.concept_map.levels == pytest.approx((0.0, expected.max()), rel=1e-5)
    top = np.percentile(np.abs(crp.astype(np.float64)), 99)
    assert view.relevance_map.levels == pytest.approx((-top, top), rel=1e-5)
    # the page: its picture as written, its top images listed
    view.page_button.click()
    page = controller.page
    assert page.isVisible() and not page.picture.pixmap().isNull() and f"Concept {concept}" in page.windowTitle()
    page.use.click()  # its top image becomes the input
    top = controller.state.opened.record["concepts"][concept]["top"][0]["image"]
    assert window.state.input == str(learned.parent / "data" / top)
    page.close()
    # Ablate adds the edit the Edits dock's form would write, and the Compare tab comes up on the dictionary's layer
    window.state.select_layer("conv1")
    view.ablate_button.click()
    edit = window.state.edits[-1]
    assert str(edit) == f"relu3:output=ablate_concept(id={concept}, dict={str(learned)!r})"
    assert window.state.view == "compare" and window.state.layer == "relu3" and "relu3" in window.state.ticks
    qtbot.waitUntil(lambda: window.views.compare.layer.currentText() == "relu3", timeout=20_000)


def test_another_models_dictionary_is_refused_naming_both_and_a_damaged_one_said(qtbot, window, learned, tmp_path):
    controller, view = window.concepts, window.concepts.view
    controller.open(str(learned))
    qtbot.waitUntil(lambda: view.message.isVisible() and "Not opened" in view.message.text(), timeout=20_000)
    text = view.message.text()
    tiny = window.state.model.source
    assert "learned on model demo" in text and f"not {tiny}" in text
    assert view.opened is None and controller.state.remembered(tiny) == ""
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    (damaged / "dictionary.safetensors").write_bytes(b"not a safetensors file")
    controller.open(str(damaged))
    qtbot.waitUntil(lambda: "damaged" in view.message.text(), timeout=20_000)
    assert str(damaged) in view.message.text()


def test_a_dictionary_of_other_weights_of_the_same_model_is_refused_by_the_dock(qtbot, window, tmp_path):
    """Issue 52 item 3: the dock's dictionary is checked against the loaded model's weights, not only its name
    (the worker checked `loaded.source`: a dictionary learned on another checkpoint of Tiny opened without a word)."""
    import torch
    from PIL import Image

    data = tmp_path / "data"
    data.mkdir()
    rng = np.random.default_rng(0)
    for i in range(4):
        Image.fromarray((rng.random((32, 32, 3)) * 255).astype(np.uint8)).save(data / f"{i}.png")
    tiny = window.state.model.source
    other = load_model(tiny)  # Tiny's architecture, another checkpoint: one weight changed
    with torch.no_grad():
        other.module.features[0].weight[0, 0, 0, 0] += 1.0
    learn_concepts(other, data, "features.2", tmp_path / "c", method="sae", k=2, sparsity=1, epochs=1, top=1)
    controller, view = window.concepts, window.concepts.view
    controller.open(str(tmp_path / "c"))
    qtbot.waitUntil(lambda: view.message.isVisible() and "Not opened" in view.message.text(), timeout=30_000)
    assert "weights" in view.message.text() and view.opened is None, view.message.text()


def test_the_folder_is_remembered_for_the_model_and_a_model_without_its_layer_says_so(qtbot, open_window, learned,
                                                                                     settings):
    window = open_window("demo", "sample:star")
    opened_on(qtbot, window, learned)
    assert window.concepts.state.remembered("demo") == str(learned)
    window.close()
    again = open_window("demo", "sample:star")
    view = again.concepts.view
    again.concepts.raise_view()
    qtbot.waitUntil(lambda: view.reading is not None, timeout=30_000)
    assert view.opened.folder == str(learned)
    # the same dictionary's layer renamed: the model has no such layer
    state = again.concepts.state
    from dataclasses import replace

    state.opened = replace(state.opened, layer="no_such_layer")
    state._asked = None
    state.ensure()
    assert view.message.text().endswith("demo has no layer no_such_layer (the dictionary's): it shows no concepts."
                                        "</span>")
    assert view.reading is None and not view.coefficients.heights().size


def test_the_concepts_are_not_read_while_the_dock_is_hidden(qtbot, open_window, learned):
    window = open_window("demo", "sample:star")
    state = window.concepts.state
    state.open(str(learned))
    qtbot.waitUntil(lambda: state.opened is not None, timeout=20_000)
    window.side_dock.raise_()  # the Concepts dock behind the others
    qtbot.waitUntil(lambda: not state.shown, timeout=5_000)
    assert state.reading is None and state._asked is None
    window.concepts.raise_view()
    qtbot.waitUntil(lambda: state.reading is not None, timeout=30_000)
    assert state.reading.coefficients.shape == (4,) and state._asked is not None


def test_a_new_input_is_read_again_when_its_run_ends(qtbot, open_window, learned):
    window = open_window("demo", "sample:star")
    _, view = opened_on(qtbot, window, learned)
    first = view.reading
    window.state.set_input("sample:ring")
    qtbot.waitUntil(lambda: view.reading is not first, timeout=30_000)
    loaded = load_model("demo")
    x = load_input("sample:ring", loaded.preprocess, loaded.input_shape)
    truth = read_concepts(loaded, x, load_dictionary(learned), target=int(loaded.module(x).argmax()))
    assert window.state.outcome.result.target_index == view.reading.target
    np.testing.assert_allclose(view.coefficients.heights(), np.sort(truth.coefficients.numpy())[::-1], rtol=1e-5,
                               atol=1e-6)
    assert not np.allclose(view.reading.coefficients, first.coefficients)


def test_another_model_closes_the_dictionary_and_coming_back_opens_it_again(qtbot, open_window, learned, tiny_source):
    from inspector.core.records.requests import ModelRequest

    window = open_window("demo", "sample:star")
    _, view = opened_on(qtbot, window, learned)
    window.state.request_model(ModelRequest(tiny_source, trust=True))
    qtbot.waitUntil(lambda: window.state.model.source == tiny_source, timeout=30_000)
    assert view.opened is None and view.reading is None and view.info.text().startswith("No concept dictionary")
    assert not view.split.isVisible()
    window.state.request_model(ModelRequest("demo"))
    qtbot.waitUntil(lambda: view.reading is not None, timeout=30_000)
    assert view.opened.folder == str(learned) and view.opened.model == "demo"


def test_a_vits_concepts_are_on_its_patch_grid(qtbot, open_window, gui_files, ui, image_file, tmp_path):
    """TinyViT (a class token and a 4 x 4 patch grid, conftest.py): a sparse autoencoder of its attention's tokens;
    the dock's maps are the 4 x 4 grid (the class token left out) upsampled to the 32 x 32 input."""
    from PIL import Image

    vit = ui.source(gui_files, "TinyViT")
    data = tmp_path / "data"
    data.mkdir()
    rng = np.random.default_rng(3)
    for i in range(6):
        Image.fromarray((rng.random((32, 32, 3)) * 255).astype(np.uint8)).save(data / f"{i}.png")
    loaded = load_model(vit, trust=True)
    learn_concepts(loaded, data, "attn", tmp_path / "c", method="sae", k=4, sparsity=2, epochs=2, top=1,
                   pictures=False)
    window = open_window(vit, image_file)
    _, view = opened_on(qtbot, window, tmp_path / "c")
    x = load_input(image_file, loaded.preprocess, loaded.input_shape)
    truth = read_concepts(loaded, x, load_dictionary(tmp_path / "c"), target=view.reading.target)
    assert view.reading.grid.shape == (4, 4, 4) and tuple(truth.maps.shape) == (4, 4, 4)
    np.testing.assert_allclose(view.reading.grid, truth.maps.numpy(), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(view.heat_values(), bilinear(truth.maps[view.picked].numpy(), (32, 32)), rtol=1e-4,
                               atol=1e-6)


def test_the_charts_are_made_when_a_dictionary_first_opens_not_with_the_window(qtbot, open_window, learned):
    """Issue 41 item 19 (start-up): the dock's four pyqtgraph charts and maps (0.1 s) are not made while the window
    is built; the first dictionary opened makes them, in the dock, under the buttons."""
    import pyqtgraph as pg

    window = open_window("demo", "sample:star")
    view = window.concepts.view
    assert not view.made and not view.findChildren(pg.GraphicsView)
    assert view.info.isVisibleTo(view) and view.blank.isVisibleTo(view)
    opened_on(qtbot, window, learned)
    assert view.made and len(view.findChildren(pg.GraphicsView)) == 4
    assert view.split.isVisibleTo(view) and not view.blank.isVisibleTo(view)
    layout = view.layout()
    assert layout.indexOf(view.split) == layout.indexOf(view.blank) - 1  # in the charts' place
    assert view.coefficients.heights().size == 4


def test_a_concepts_new_edit_takes_the_place_of_its_old_one_and_the_bars_say_they_are_unedited(qtbot, open_window,
                                                                                               learned):
    """Issue 52 item 7: Ablate then Scale on one concept stacked a scaling of a component the ablation had already
    removed (it did nothing); the new edit now takes the old one's place, in its row, and an edit of another concept
    or layer stays. The charts read the model as loaded: with edits on, their titles say so."""
    window = open_window("demo", "sample:star", {"relu3", "fc"})
    controller, view = opened_on(qtbot, window, learned)
    assert view.coefficients.getPlotItem().titleLabel.text == "Coefficients (mean over positions)"
    window.state.editing.add_text("fc:output=scale(k=1.0)")
    picked = view.picked
    view.ablate_button.click()
    view.k.setValue(3.0)
    view.scale_button.click()
    folder = str(learned)
    assert [str(e) for e in window.state.edits] == [
        "fc:output=scale(k=1.0)", f"relu3:output=scale_concept(id={picked}, k=3.0, dict={folder!r})"]
    other = (picked + 1) % 4
    controller.state.select(other)
    view.ablate_button.click()
    assert len(window.state.edits) == 3
    assert str(window.state.edits[2]).startswith(f"relu3:output=ablate_concept(id={other}")
    title = view.coefficients.getPlotItem().titleLabel.text
    assert title == "Coefficients (mean over positions), model without the edits"
    assert view.relevance.getPlotItem().titleLabel.text.endswith(", model without the edits")
    window.state.editing.all_off()
    assert view.coefficients.getPlotItem().titleLabel.text == "Coefficients (mean over positions)"


def test_a_refused_dictionary_is_not_said_once_its_own_model_is_back(qtbot, window, learned, ui):
    """Issue 52 item 7: the red banner refusing the demo's dictionary on another model stayed after going back to
    the demo (whose dictionary it is). It is about the model loaded then, and goes when another one is asked for."""
    from inspector.core.records.requests import ModelRequest

    window.concepts.open(str(learned))
    qtbot.waitUntil(lambda: window.banner.isVisible() and "Concepts not opened" in window.banner.text(),
                    timeout=20_000)
    window.state.request_model(ModelRequest("demo"))
    ui.expect_result(qtbot, window)
    assert not window.banner.isVisible()


def test_a_concept_pages_tiles_are_numbered_as_its_caption_lists_them(qtbot, tmp_path):
    """Issue 52 item 7: the caption lists the top images #1, #2, ... and the tiles said no number. Each tile now has
    its number in its corner (a page of three 96 px tiles 4 px apart, shown at twice its size: tiles 200 px apart)."""
    from PIL import Image

    from inspector.gui.views.concepts.page import ConceptPage

    page = Image.new("RGB", (3 * 96 + 2 * 4, 96), (255, 255, 255))
    for k, colour in enumerate(((200, 40, 40), (40, 200, 40), (40, 40, 200))):
        page.paste(Image.new("RGB", (96, 96), colour), (k * 100, 0))
    page.save(tmp_path / "concept_000.png")
    record = {"layer": "relu3", "concepts": [{"id": 0, "top": [{"image": f"{k}.png", "score": 1.0 - k / 10}
                                                                for k in range(3)]}]}
    dialog = ConceptPage()
    qtbot.addWidget(dialog)
    dialog.show_concept(str(tmp_path), record, 0, tmp_path / "concept_000.png")
    image = dialog.picture.pixmap().toImage()
    assert (image.width(), image.height()) == (592, 192)
    for k, colour in enumerate(((200, 40, 40), (40, 200, 40), (40, 40, 200))):
        corner, middle = image.pixelColor(k * 200 + 1, 1), image.pixelColor(k * 200 + 96, 96)
        assert middle.getRgb()[:3] == colour  # the tile itself
        assert sum(corner.getRgb()[:3]) < sum(colour) // 2, k  # its number's dark label over its corner
    assert "#1 0.png" in dialog.caption.text() and "#3 2.png" in dialog.caption.text()
