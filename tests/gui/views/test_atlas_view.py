"""Issue 13: the Atlas view. Open an atlas from disk; a click on a mosaic channel shows its top images
with the argmax region outlined and the score; one click makes one the input; build one from the
loaded model and the ticked layers over a folder in the worker (progress, cancel, resume)."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import torch
from PIL import Image
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor

from inspector.core.inputs.files import input_preprocess


class Click:
    def __init__(self, pos):
        self._pos = pos

    def scenePos(self):
        return self._pos


def click_channel(panel, channel: int) -> None:
    row, col = panel.mosaic.origin(channel)
    panel._on_mouse_clicked(Click(panel.view.mapViewToScene(QPointF(col + 1.5, row + 1.5))))


def make_images(folder, n=5):
    """n 32x32 noise pictures (the tiny model's input size: its preprocessing leaves them as they are)."""
    rng = np.random.default_rng(7)
    names = []
    for i in range(n):
        rel = f"{'cats' if i % 2 else 'dogs'}/{i}.png"
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray((rng.random((32, 32, 3)) * 255).astype(np.uint8)).save(folder / rel)
        names.append(rel)
    return names


def hand_written_atlas(out, data, model):
    """An atlas in the atlas.json format, written by hand, of `model` (a ModelInfo): features.0 with 8
    channels, channel 1's top 2 are dogs/0.png (score 5.0 at y 4, x 5) and cats/1.png (2.5 at y 0, x 0)."""
    out.mkdir()
    top = [[{"image": "cats/3.png", "score": 1.0, "y": 0, "x": 0}] for _ in range(8)]
    top[1] = [{"image": "dogs/0.png", "score": 5.0, "y": 4, "x": 5}, {"image": "cats/1.png", "score": 2.5, "y": 0, "x": 0}]
    atlas = {"model": "Tiny", "images": 5, "skipped": [{"path": "bad.png", "reason": "not an image"}],
             "layers": {"features.0": {"channels": 8, "top": top, "mean": [0.5 * c for c in range(8)],
                                       "std": [1.0] * 8, "frac_positive": [0.25] * 8}}}
    (out / "atlas.json").write_text(json.dumps(atlas))
    (out / "atlas.job.json").write_text(json.dumps({"key": "hand", "arguments": {
        "model": model.source, "weights": model.weights, "seed": model.seed, "data": str(data),
        "preprocess": input_preprocess(model.preprocess, model.input_shape).to_dict()}}))
    (out / "thumbnails").mkdir()
    # a 3x3 receptive field at stride 1: position (4, 5) -> box left 4, top 3, right 7, bottom 6
    (out / "thumbnails" / "regions.json").write_text(json.dumps({"features.0": {
        "input": [32, 32], "map": [32, 32], "stride": [1.0, 1.0], "size": [3, 3], "offset": [0.0, 0.0],
        "kind": "receptive field"}}))


def open_hand_written_atlas(qtbot, window, tmp_path):
    """(the image folder, the Atlas view) once the window has opened hand_written_atlas over make_images."""
    data = tmp_path / "data"
    make_images(data)
    out = tmp_path / "atlas"
    qtbot.waitUntil(lambda: window.state.model is not None, timeout=20_000)
    hand_written_atlas(out, data, window.state.model)
    window.state.atlas.open(str(out))
    view = window.views.atlas
    qtbot.waitUntil(lambda: view.opened is not None, timeout=20_000)
    return data, view


def test_an_atlas_from_disk_a_mosaic_click_and_use_as_input(ui, qtbot, window, tmp_path):
    data, view = open_hand_written_atlas(qtbot, window, tmp_path)
    assert "Tiny" in view.info.text() and "5 images, 1 skipped" in view.info.text()
    assert [view.layer.itemText(i) for i in range(view.layer.count())] == ["features.0"]
    window.state.select_layer("features.0")
    click_channel(window.activation_panel, 1)
    qtbot.waitUntil(lambda: bool(view.cells) and view.cells[0][1].text().startswith("#1 score 5"), timeout=20_000)
    assert view.channel.value() == 1 and window.atlas_dock.isVisible()
    picture, caption, use = view.cells[0]
    assert caption.text() == "#1 score 5<br>dogs/0.png" and view.cells[1][1].text() == "#2 score 2.5<br>cats/1.png"
    assert not view.cells[2][0].isVisible() if len(view.cells) > 2 else True
    assert view.stats.text().startswith("Channel 1 over the images: mean 0.5, std 1, positive 25.0%")
    # the picture is dogs/0.png as the model saw it, the argmax's 3x3 region outlined in yellow
    image = picture.pixmap().toImage()
    scale = image.width() / 32
    assert QColor(image.pixel(round(4 * scale) + 1, round(3 * scale))).name() == "#ffd400"
    centre = np.asarray(Image.open(data / "dogs/0.png"))[20, 20]
    got = QColor(image.pixel(round(20.5 * scale), round(20.5 * scale)))
    assert abs(got.red() - int(centre[0])) < 40  # smooth scaling, the same picture
    use.click()
    outcome = ui.expect_result(qtbot, window)
    assert window.state.input == str(data / "dogs/0.png")
    expected = np.asarray(Image.open(data / "dogs/0.png"), np.float32).transpose(2, 0, 1) / 255
    np.testing.assert_allclose(outcome.result.input[0], expected, atol=1e-6)



def test_a_click_on_a_compare_tab_mosaic_opens_the_atlas_at_that_channel(ui, qtbot, window, tmp_path):
    from inspector.core.edits import parse_edit

    _, view = open_hand_written_atlas(qtbot, window, tmp_path)
    compare = window.views.compare
    window.tabs.setCurrentWidget(compare)
    window.state.select_layer("features.0")
    window.state.set_edits([parse_edit("features.0:output=scale(2)")])
    qtbot.waitUntil(lambda: "activation" in compare.grid.shown, timeout=20_000)
    shown = compare.grid.shown["activation"]
    assert shown.key == "features.0:output"
    row, col = shown.mosaic.origin(1)
    point = compare.grid.views["activation", "difference"].mapViewToScene(QPointF(col + 1.5, row + 1.5))
    compare.grid._on_mouse_clicked(Click(point))
    qtbot.waitUntil(lambda: bool(view.cells) and view.cells[0][1].text().startswith("#1 score 5"), timeout=20_000)
    assert view.channel.value() == 1 and window.atlas_dock.isVisible()
    assert view.cells[1][1].text() == "#2 score 2.5<br>cats/1.png"

def test_the_atlas_view_draws_the_argmax_box_where_the_region_is():
    from inspector.gui.views.atlas_view import picture_pixmap

    rgb = np.zeros((32, 32, 3), np.uint8)
    image = picture_pixmap(rgb, (4, 3, 7, 6), size=64).toImage()  # 2x: the box at (8, 6) to (14, 12)
    assert QColor(image.pixel(8, 6)).name() == "#ffd400" and QColor(image.pixel(13, 11)).name() == "#ffd400"
    assert QColor(image.pixel(10, 9)).name() == "#000000" and QColor(image.pixel(30, 30)).name() == "#000000"


def brute_force_top(source_file, data, names, layer_index=0):
    """Per channel of features.0: the images ranked by the channel's maximum (plain PyTorch)."""
    spec = importlib.util.spec_from_file_location("gui_models_for_atlas", source_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = module.Tiny().eval()
    x = torch.stack([torch.from_numpy(np.asarray(Image.open(data / n), np.float32).transpose(2, 0, 1) / 255)
                     for n in names])
    with torch.no_grad():
        maps = model.features[layer_index](x)  # (N, 8, 32, 32)
    scores = maps.flatten(2).amax(2)  # (N, 8)
    return scores.numpy()


def test_building_an_atlas_in_the_worker_cancel_and_resume(ui, qtbot, window, tmp_path, gui_files):
    data = tmp_path / "data"
    names = make_images(data, n=6)
    out = tmp_path / "built"
    window.state.set_ticks({"features.0"})
    ui.expect_result(qtbot, window)
    progress = []
    window.state.atlas.sigProgress.connect(lambda done, total: progress.append((done, total)))
    # cancelled after its first batch: the banner says so, the view leaves its building state. The cancel is
    # made on the worker's thread, as the batch ends: one made on the GUI thread when the progress arrives
    # could come after all six tiny images were done (it did, once, under load). So this one listener hears the
    # worker thread's own signal (`_sigAtlasProgress`; listeners of `sigAtlasProgress` run on the GUI thread)
    worker = window.state.worker

    def cancel_after_the_first(done, _total):
        if done == 1:
            worker.cancel()

    worker._sigAtlasProgress.connect(cancel_after_the_first, Qt.DirectConnection)
    assert window.state.atlas.build(str(data), str(out), top=3, batch=1)
    assert window.views.atlas.cancel_button.isVisible()
    qtbot.waitUntil(lambda: not window.state.atlas.building, timeout=60_000)
    assert "Atlas cancelled after" in window.banner.text() and window.state.atlas.opened is None
    assert not window.views.atlas.cancel_button.isVisible()
    worker._sigAtlasProgress.disconnect(cancel_after_the_first)
    window.state.atlas.sigProgress.disconnect()
    window.state.atlas.sigProgress.connect(window.views.atlas.set_progress)
    window.state.atlas.sigProgress.connect(lambda done, total: progress.append((done, total)))
    progress.clear()
    assert window.state.atlas.build(str(data), str(out), top=3, batch=1)  # resumes where it stopped
    qtbot.waitUntil(lambda: window.state.atlas.opened is not None, timeout=60_000)
    assert progress[0][0] >= 1 and progress[-1] == (6, 6)
    atlas = window.state.atlas.opened.atlas
    scores = brute_force_top(gui_files / "models.py", data, sorted(names))
    order = sorted(names)
    tol = 1e-5 * np.abs(scores).max()  # float32 rounding of a 27-term convolution, at the layer's scale
    for c in range(8):
        ranked = np.argsort(-scores[:, c], kind="stable")[:3]
        got = atlas["layers"]["features.0"]["top"][c]
        np.testing.assert_allclose([e["score"] for e in got], scores[ranked, c], rtol=1e-5, atol=tol)
        for e, i in zip(got, ranked):  # the reference's image, or one that ties it within rounding
            assert e["image"] == order[i] or abs(scores[order.index(e["image"]), c] - scores[i, c]) <= 2 * tol
    assert window.views.atlas.layer.currentText() == "features.0" and window.atlas_dock.isVisible()
    qtbot.waitUntil(lambda: bool(window.views.atlas.cells) and window.views.atlas.cells[0][0].pixmap() is not None
                    and not window.views.atlas.cells[0][0].pixmap().isNull(), timeout=20_000)


def test_another_models_atlas_is_said_to_be_so_and_never_shown_as_its_channels(ui, qtbot, window, tmp_path,
                                                                                 gui_files):
    """Issue 25, item 1: an atlas of Tiny, then Wide loaded (its features.0 has channels too): the dock says
    plainly whose atlas it is and a click on Wide's channel 1 does not show Tiny's channel 1; back on Tiny
    the warning goes and the click works again."""
    from inspector.core.records.requests import ModelRequest

    _, view = open_hand_written_atlas(qtbot, window, tmp_path)
    tiny = window.state.model.request
    assert not view.owner.isVisible() and window.state.atlas.not_of() is None
    window.state.request_model(ModelRequest(f"{gui_files / 'models.py'}:Wide", trust=True))
    ui.expect_result(qtbot, window)  # listening from the request on: a wait in between missed a quick run
    assert window.state.model.source.endswith(":Wide")
    assert view.owner.isVisible() and "Not the loaded model's atlas" in view.owner.text()
    assert f"it was built on {tiny.source}" in view.owner.text() and ":Wide" in view.owner.text()
    view.channel.setValue(0)
    window.state.select_layer("features.0")
    click_channel(window.activation_panel, 1)
    qtbot.wait(300)
    assert view.channel.value() == 0  # the click did not open Tiny's channel 1 as if it were Wide's
    window.state.request_model(tiny)
    ui.expect_result(qtbot, window)
    assert window.state.model.source == tiny.source
    assert not view.owner.isVisible()
    click_channel(window.activation_panel, 1)
    qtbot.waitUntil(lambda: view.channel.value() == 1, timeout=5_000)
