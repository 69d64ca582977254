"""File > Open concepts… and Attribution > Open evaluation… (`OpensJobFolders`): each asks for a folder in a dialog
keeping its own last folder, chosen on the engine's machine, and opens the folder chosen in its job's view; a dialog
closed without a folder opens nothing."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtGui import QAction

from inspector.core import load_model
from inspector.core.concepts import learn_concepts
from inspector.core.evaluate import read_summary, run_evaluation
from inspector.demo.shapes import render
from inspector.gui.common import file_dialogs


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """A concepts folder (K=2 of the demo's relu3) and an evaluation's folder, both over 4 generated shapes."""
    root = tmp_path_factory.mktemp("open_job_folders")
    data = root / "data"
    data.mkdir()
    rng = np.random.default_rng(5)
    for i in range(4):
        render(i, rng).save(data / f"{i}.png")
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


def test_open_concepts_asks_on_the_engines_machine_and_opens_the_folder(qtbot, open_window, folders, monkeypatch):
    concepts, _ = folders
    window = open_window("demo", "sample:star")
    controller = window.concepts
    asked = chosen(monkeypatch, "")
    trigger(window, "Open concepts…")
    assert asked == [("concepts-out", "Open concepts (a folder with dictionary.safetensors)", True)]
    qtbot.wait(50)
    assert controller.state.opened is None  # closed without a folder: nothing opened
    asked = chosen(monkeypatch, str(concepts))
    trigger(window, "Open concepts…")
    qtbot.waitUntil(lambda: controller.state.opened is not None, timeout=30_000)
    assert len(asked) == 1 and str(controller.state.opened.folder) == str(concepts)
    assert controller.dock.isVisible()


def test_open_evaluation_asks_on_the_engines_machine_and_shows_its_summary(qtbot, open_window, folders, monkeypatch):
    _, evaluation = folders
    window = open_window("demo", "sample:star")
    controller = window.evaluation
    asked = chosen(monkeypatch, "")
    trigger(window, "Open evaluation…")
    assert asked == [("evaluation-out", "Open an evaluation (a folder with summary.json)", True)]
    assert controller.state.shown is None  # closed without a folder: nothing opened
    asked = chosen(monkeypatch, str(evaluation))
    trigger(window, "Open evaluation…")
    assert len(asked) == 1 and controller.state.shown.out_dir == str(evaluation)
    view = controller.view
    assert view.isVisible() and view.shown_rows() == read_summary(evaluation)["summary"]
    view.close()
