"""Issue 54, item 1: one pattern for a folder job's dock and build dialog (`gui/views/folder_job`). The Atlas view
and the Concepts view show a build the same way (Cancel in place of Build…, the progress bar; the concepts say the
progress in words too, the atlas counts images on the bar), and both build dialogs offer the output folder beside
the images folder picked, named after the job, and remember both folders when accepted."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog

from inspector.gui.common import file_dialogs
from inspector.gui.views.atlas_view import AtlasView, BuildDialog
from inspector.gui.views.concepts.build import BuildConceptsDialog
from inspector.gui.views.concepts.view import ConceptsView


def shown_building(view) -> tuple:
    return (view.build_button.isEnabled(), view.cancel_button.isHidden(), view.progress.isHidden(),
            view.progress.minimum(), view.progress.maximum(), view.progress.value())


def test_both_docks_show_a_build_the_same_way(qtbot):
    atlas, concepts = AtlasView(), ConceptsView()
    for view in (atlas, concepts):
        qtbot.addWidget(view)
    cancels = []
    atlas.sigCancel.connect(lambda: cancels.append("atlas"))
    concepts.sigCancel.connect(lambda: cancels.append("concepts"))
    idle = [shown_building(v) for v in (atlas, concepts)]
    assert idle[0] == idle[1] and idle[0][:3] == (True, True, True)
    for view in (atlas, concepts):
        view.set_building(True)
    assert shown_building(atlas) == shown_building(concepts) == (False, False, False, 0, 0, -1)
    assert not concepts.progress_text.isHidden() and concepts.progress_text.text() == "Starting…"
    assert atlas.progress_text is None  # the atlas says its rate in the status bar
    for view in (atlas, concepts):
        view.set_progress(2, 5)
        view.set_progress_text("Concepts: fitting")  # the atlas has no line for it: nothing happens
        view.cancel_button.click()
    assert shown_building(atlas) == shown_building(concepts) == (False, False, False, 0, 5, 2)
    assert atlas.progress.format() == "2 of 5 images" and concepts.progress.format() == "%p%"
    assert concepts.progress_text.text() == "Concepts: fitting" and cancels == ["atlas", "concepts"]
    for view in (atlas, concepts):
        view.set_building(False)
    assert shown_building(atlas)[:3] == shown_building(concepts)[:3] == (True, True, True)
    assert concepts.progress_text.isHidden()
    assert [atlas.buttons_row.itemAt(i).widget().text() for i in range(3)] == ["Open atlas…", "Build…", "Cancel"]


def test_both_build_dialogs_offer_and_remember_the_folders(qtbot, settings, tmp_path, monkeypatch):
    monkeypatch.setattr(file_dialogs, "_settings", settings)
    images = tmp_path / "shots"
    images.mkdir()
    monkeypatch.setattr(file_dialogs, "choose_folder", lambda *_a, **_k: str(images))
    atlas, concepts = BuildDialog(["conv1"]), BuildConceptsDialog(["relu3"], "relu3")
    for dialog in (atlas, concepts):
        qtbot.addWidget(dialog)
        assert dialog.data.text() == dialog.out.text() == ""  # nothing remembered yet
        dialog._browse_data()
        assert dialog.data.text() == str(images)
        assert dialog.out.text() == str(tmp_path / f"shots-{dialog.job}")
        dialog.buttons.accepted.emit()
        assert dialog.result() == QDialog.Accepted and dialog.why.text() == " "
    for job in ("atlas", "concepts"):
        assert settings.value(f"folders/{job}-data") == str(images)
        assert settings.value(f"folders/{job}-out") == str(tmp_path / f"shots-{job}")
    again = BuildConceptsDialog(["relu3"], "relu3")
    qtbot.addWidget(again)
    assert (again.data.text(), again.out.text()) == (str(images), str(tmp_path / "shots-concepts"))
    settings.remove("folders/concepts-data")  # the concepts fall back on the atlas's images folder
    fallback = BuildConceptsDialog(["relu3"], "relu3")
    qtbot.addWidget(fallback)
    assert fallback.data.text() == str(images)


def test_both_build_dialogs_are_asked_alike(qtbot, settings, tmp_path, monkeypatch):
    """`ask()`: the choices, as the job's state's `build` takes them, when Build is pressed; None when cancelled."""
    monkeypatch.setattr(file_dialogs, "_settings", settings)
    images = tmp_path / "shots"
    images.mkdir()

    def press(button):
        def exec_(dialog):
            dialog.data.setText(str(images))
            dialog.out.setText(str(tmp_path / "out"))
            getattr(dialog.buttons, button).emit()
            return dialog.result()
        return exec_

    asked = {}
    for press_ in ("accepted", "rejected"):
        monkeypatch.setattr(QDialog, "exec", press(press_))
        asked[press_] = (BuildDialog(["conv1"]).ask(), BuildConceptsDialog(["relu3"], "relu3").ask())
    assert asked["accepted"] == ((str(images), str(tmp_path / "out"), 9, 16),
                                 (str(images), "relu3", 16, "nmf", None, str(tmp_path / "out")))
    assert asked["rejected"] == (None, None)


def test_a_build_is_wired_the_same_between_either_state_and_its_dock(qtbot):
    """`controllers/folder_job.wire_build`: Build… asks, Cancel cancels, and the state's build is shown."""
    from PySide6.QtCore import QObject, Signal

    from inspector.gui.controllers.folder_job import wire_build

    class Job(QObject):
        sigBuilding = Signal(bool)
        sigProgress = Signal(int, int)
        sigBuildText = Signal(str)

        def __init__(self) -> None:
            super().__init__()
            self.cancels = 0

        def cancel(self) -> None:
            self.cancels += 1

    shown = []
    for view in (AtlasView(), ConceptsView()):
        qtbot.addWidget(view)
        job, asked = Job(), []
        wire_build(job, view, lambda asked=asked: asked.append(True))
        view.build_button.click()
        job.sigBuilding.emit(True)
        job.sigProgress.emit(3, 4)
        job.sigBuildText.emit("Queued behind “Running demo”: the build starts when that ends.")
        view.cancel_button.click()
        shown.append((asked, job.cancels, shown_building(view)))
        job.sigBuilding.emit(False)
        assert view.cancel_button.isHidden() and view.build_button.isEnabled()
    assert shown[0] == shown[1] == ([True], 1, (False, False, False, 0, 4, 3))
    assert shown and view.progress_text.text().startswith("Queued behind")  # the concepts' line says it
