"""File > Open concepts… and Attribution > Open evaluation… (`OpensJobFolders`): each asks for a folder in a dialog
keeping its own last folder, chosen on the engine's machine, and opens the folder chosen in its job's view; a dialog
closed without a folder opens nothing."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QAction

from inspector.core import load_model
from inspector.core.concepts import learn_concepts
from inspector.core.evaluate import read_summary, run_evaluation
from inspector.gui.common import file_dialogs


@pytest.fixture(scope="module")
def folders(tmp_path_factory, shapes):
    """A concepts folder (K=2 of the demo's relu3) and an evaluation's folder, both over 4 generated shapes."""
    root = tmp_path_factory.mktemp("open_job_folders")
    data = shapes(root / "data", 4, seed=5)
    learn_concepts(load_model("demo"), data, "relu3", root / "concepts", k=2, epochs=2, top=1, pictures=False)
    run_evaluation(load_model("demo"), data, ["saliency"], ["deletion"], root / "evaluation", steps=2)
    return root / "concepts", root / "evaluation"


def chosen(monkeypatch, folder):
    """The file dialog, answered with `folder` ("" for a dialog closed without one); what it was asked, kept."""
    asked = []

    def choose(parent, kind, title, start="", engine=False):
        asked.append((kind, title, engine))
        return folder

    monkeypatch.setattr(file_dialogs, "choose_folder", choose)
    return asked


def trigger(window, text: str) -> None:
    next(a for a in window.findChildren(QAction) if a.text() == text).trigger()


@pytest.mark.parametrize("menu, setting, title", [
    ("Open concepts…", "concepts-out", "Open concepts (a folder with dictionary.safetensors)"),
    ("Open evaluation…", "evaluation-out", "Open an evaluation (a folder with summary.json)"),
])
def test_each_asks_on_the_engines_machine_and_a_dialog_closed_opens_nothing(qtbot, open_window, monkeypatch, menu,
                                                                             setting, title):
    window = open_window("demo", "sample:star")
    asked = chosen(monkeypatch, "")
    trigger(window, menu)
    assert asked == [(setting, title, True)]
    qtbot.wait(50)
    assert window.concepts.state.opened is None and window.evaluation.state.shown is None


def test_open_concepts_opens_the_folder_chosen_in_its_dock(qtbot, open_window, folders, monkeypatch):
    concepts, _ = folders
    window = open_window("demo", "sample:star")
    asked = chosen(monkeypatch, str(concepts))
    trigger(window, "Open concepts…")
    state = window.concepts.state
    qtbot.waitUntil(lambda: state.opened is not None, timeout=30_000)
    assert len(asked) == 1 and str(state.opened.folder) == str(concepts) and window.concepts.dock.isVisible()


def test_open_evaluation_shows_the_summary_of_the_folder_chosen(open_window, folders, monkeypatch):
    _, evaluation = folders
    window = open_window("demo", "sample:star")
    asked = chosen(monkeypatch, str(evaluation))
    trigger(window, "Open evaluation…")
    assert len(asked) == 1 and window.evaluation.state.shown.out_dir == str(evaluation)
    view = window.evaluation.view
    assert view.isVisible() and view.shown_rows() == read_summary(evaluation)["summary"]
    view.close()
