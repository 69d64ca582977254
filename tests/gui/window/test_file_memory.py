"""Issue 25, item 14: file dialogs open where the last file of their kind was chosen (never the working
folder), the atlas Build dialog offers the last folders, File > Open recent lists what ran, and a resumed
atlas build's rate counts only the images of this run."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog

from inspector.gui.common import file_dialogs
from inspector.gui.views.atlas_view import BuildDialog


def test_each_kind_of_dialog_opens_where_its_last_file_was_chosen(qtbot, window, tmp_path, monkeypatch):
    asked = []

    def fake_save(parent, title, start, filters):
        asked.append(start)
        return str(tmp_path / "sessions" / "mine.inspector.json"), filters

    (tmp_path / "sessions").mkdir()
    monkeypatch.setattr(QFileDialog, "getSaveFileName", fake_save)
    assert file_dialogs.folder("session") == str(Path.home())  # nothing chosen yet: home, not the working folder
    file_dialogs.save_file(window, "session", "Save session", "session.inspector.json")
    file_dialogs.save_file(window, "session", "Save session", "session.inspector.json")
    assert asked == [str(Path.home() / "session.inspector.json"), str(tmp_path / "sessions" / "session.inspector.json")]
    assert file_dialogs.folder("export") == str(Path.home())  # another kind keeps its own
    assert window.settings.value("folders/session") == str(tmp_path / "sessions")


def test_the_build_dialog_offers_the_last_folders(qtbot, window, tmp_path):
    file_dialogs.remember("atlas-data", str(tmp_path), folder_itself=True)
    file_dialogs.remember("atlas-out", str(tmp_path / "atlas-out"), folder_itself=True)  # not made yet
    dialog = BuildDialog(["conv1"], window)
    assert dialog.data.text() == str(tmp_path) and dialog.out.text() == str(tmp_path / "atlas-out")
    dialog.deleteLater()


def test_open_recent_lists_the_files_that_ran(ui, qtbot, window, image_file, tiny_source):
    from inspector.gui.window.menus import fill_recent

    fill_recent(window)
    texts = [a.text() for a in window.recent_menu.actions()]
    assert texts[:2] == [f"Input: {image_file}", f"Model: {tiny_source}"]
    window.state.store.add_recent("input", "/nowhere/gone.png")  # a file that is not there is never offered
    fill_recent(window)
    assert "Input: /nowhere/gone.png" not in [a.text() for a in window.recent_menu.actions()]


def test_a_resumed_atlas_build_counts_only_this_runs_images(monkeypatch):
    import time

    from inspector.gui.worker import atlas as worker_atlas

    phases = []
    clock = iter([100.0, 100.0, 102.0])
    monkeypatch.setattr(time, "perf_counter", lambda: next(clock))
    progress = worker_atlas.atlas_progress(phases.append, lambda *_: None)
    progress(400, 600)  # resumed at 400 of 600
    progress(500, 600)  # 100 more in 2 s
    assert phases[-1] == "Atlas: 500 of 600 images (50.0/s, 2 s left; Esc cancels)"
