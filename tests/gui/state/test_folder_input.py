"""Issue 13: a folder as the input, stepped with keys, buttons and a slider; unreadable files skipped."""

from __future__ import annotations

import numpy as np
from PIL import Image
from PySide6.QtCore import Qt

# Each image is one flat grey; the tiny model's input is the picture / 255 (no normalisation), so
# the mean of a run's input says which image ran.
GREYS = {"a/1.png": 20, "b.png": 90, "c/broken.png": None, "d.png": 200}


def make_folder(root, broken=True):
    for rel, grey in GREYS.items():
        if grey is None and not broken:
            continue
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if grey is None:
            path.write_bytes(b"not a png")
        else:
            Image.fromarray(np.full((40, 40, 3), grey, np.uint8)).save(path)
    (root / "notes.txt").write_text("not an image")
    return root


def grey_of(outcome) -> float:
    return float(np.round(outcome.result.input.mean() * 255))


def test_a_folder_steps_with_keys_buttons_and_slider_keeping_ticks_and_edits(ui, qtbot, window, tmp_path):
    from inspector.core.edits import parse_edit

    folder = make_folder(tmp_path / "shots", broken=False)
    window.state.set_ticks({"features.0", "fc"})
    window.state.set_edits([parse_edit("features.0:output=scale(2)")])
    ui.expect_result(qtbot, window)
    window.state.folder.open(str(folder))
    outcome = ui.expect_result(qtbot, window)
    assert grey_of(outcome) == 20
    bar = window.folder_bar
    assert bar.isVisible() and bar.label.text() == "1 of 3: a/1.png" and bar.slider.maximum() == 2
    assert not bar.previous.isEnabled()
    qtbot.keyClick(window, Qt.Key_PageDown)  # -> b.png
    outcome = ui.expect_result(qtbot, window)
    assert grey_of(outcome) == 90 and bar.label.text() == "2 of 3: b.png"
    # the model, the ticks and the edit stayed: features.0's output is doubled
    assert {c.key.layer for c in outcome.result.captures.values()} == {"features.0", "fc"}
    edited = outcome.result.captures["features.0:output"].array
    plain = outcome.baseline.captures["features.0:output"].array
    np.testing.assert_allclose(edited, 2 * plain, rtol=1e-6)
    assert window.state.model.source.endswith(":Tiny")
    bar.slider.setValue(2)  # dragged to the end
    outcome = ui.expect_result(qtbot, window)
    assert grey_of(outcome) == 200 and bar.label.text() == "3 of 3: d.png" and not bar.next.isEnabled()
    qtbot.keyClick(window, Qt.Key_Left)
    assert grey_of(ui.expect_result(qtbot, window)) == 90
    bar.previous.click()
    assert grey_of(ui.expect_result(qtbot, window)) == 20
    # the input chooser shows the folder, not each file
    assert window.input_combo.currentText() == str(folder)


def test_an_unreadable_file_is_skipped_with_a_message(ui, qtbot, window, tmp_path):
    folder = make_folder(tmp_path / "shots")
    (folder / "b.png").write_bytes(b"")  # now 2 of 4 files are unreadable: b.png (empty), c/broken.png
    (folder / "e.png").write_bytes(b"")
    window.state.folder.open(str(folder))
    assert grey_of(ui.expect_result(qtbot, window)) == 20
    window.state.folder.step(1)  # b.png and c/broken.png fail: on to d.png
    outcome = ui.expect_result(qtbot, window)
    assert grey_of(outcome) == 200 and window.folder_bar.label.text() == "4 of 5: d.png"
    banner = window.banner.text()
    assert banner.startswith("Warning: Skipped 2 unreadable files: b.png: b.png is empty (0 bytes)") and "c/broken.png" in banner
    window.state.folder.step(1)  # e.png fails at the end: back to d.png, which is shown again
    qtbot.waitUntil(lambda: window.banner.text().startswith("Warning: Skipped e.png: e.png is empty (0 bytes)"))
    assert window.state.input == str(folder / "d.png") and window.folder_bar.label.text() == "4 of 5: d.png"
    window.state.set_input("sample:star")  # issue 41, item 8: the folder left, what was said of its files goes
    assert window.banner.notice is None and window.banner.isHidden()


def test_a_folder_with_no_image_or_a_dropped_folder(ui, qtbot, window, tmp_path, image_file):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert not window.state.folder.open(str(empty))
    assert "No images in" in window.banner.text() and window.state.input == image_file
    assert not window.folder_bar.isVisible()
    folder = make_folder(tmp_path / "shots")
    window.state.set_input(str(folder))  # a folder dropped, pasted or typed opens it
    assert grey_of(ui.expect_result(qtbot, window)) == 20
    window.state.set_input(image_file)  # any other input leaves the folder
    ui.expect_result(qtbot, window)
    assert window.state.folder.current is None and not window.folder_bar.isVisible()
    assert not window.next_image_action.isEnabled()
