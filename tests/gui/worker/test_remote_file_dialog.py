"""Issue 53 item 4: on a remote engine the file choosers browse the server's data root (`ServerDialog`, listings by the
protocol's `list`), against a real `network-inspector serve` on 127.0.0.1: the dialog lists the server's folders as
os.listdir does, goes in and up, refuses a folder outside the root in the server's one line, and gives back the server
path; a file chooser offers the files its filter names. From the window: the atlas's Build… browses the server, and the
atlas built over the folder chosen there is built on the server. In process the native dialogs stay."""

from __future__ import annotations

import os

import numpy as np
import pytest
from PIL import Image
from PySide6.QtCore import QSettings, Qt, QTimer
from PySide6.QtWidgets import QApplication, QDialogButtonBox

WAIT_MS = 60_000


@pytest.fixture(scope="module")
def served(tmp_path_factory, remote_servers):
    top = tmp_path_factory.mktemp("browsed")
    (top / "outside").mkdir()
    with remote_servers.engine_server(top / "server") as server:
        root = server.root
        (root / "images" / "cats").mkdir(parents=True)
        rng = np.random.default_rng(3)
        for i in range(4):
            Image.fromarray((rng.random((40, 48, 3)) * 255).astype(np.uint8)).save(root / "images" / f"{i}.png")
        (root / "images" / "notes.txt").write_text("not an image")
        (root / "weights.safetensors").write_bytes(b"w" * 21)
        (root / "model.py").write_text("x = 1\n")
        server.outside = top / "outside"
        yield server


@pytest.fixture
def engine(qtbot, served):
    from inspector.gui.worker.remote import RemoteWorkerThread

    thread = RemoteWorkerThread(served.url, token=served.token)
    qtbot.waitUntil(lambda: thread.worker.hello is not None or bool(thread.worker.lost), timeout=WAIT_MS)
    assert not thread.worker.lost, thread.worker.lost
    yield thread.worker
    assert thread.stop()


def _listed(qtbot, dialog, path: str) -> list[str]:
    qtbot.waitUntil(lambda: dialog.browsing.waiting is None and dialog.browsing.path == path, timeout=WAIT_MS)
    return [dialog.list.topLevelItem(i).text(0) for i in range(dialog.list.topLevelItemCount())]


def _item(dialog, name: str):
    return next(dialog.list.topLevelItem(i) for i in range(dialog.list.topLevelItemCount())
                if dialog.list.topLevelItem(i).text(0) == name)


def test_the_server_dialog_lists_goes_in_and_up_and_gives_back_the_server_path(qtbot, served, engine):
    from inspector.gui.common.server_dialog import ServerDialog

    root = served.root
    dialog = ServerDialog(engine, "Folder of images", folders=True)
    qtbot.addWidget(dialog)
    dialog.show()
    # the data root: its folders, and (a folder chooser) its images only: none here
    assert _listed(qtbot, dialog, str(root)) == ["images"]
    assert dialog.path.text() == str(root) and not dialog.up.isEnabled()
    assert dialog.said.text() == f"Data root on the server: {root}."
    dialog.every.setChecked(True)  # All files: every entry, as os.listdir has them (folders first)
    assert _listed(qtbot, dialog, str(root)) == ["images", "model.py", "weights.safetensors"]
    assert sorted(_listed(qtbot, dialog, str(root))) == sorted(os.listdir(root))
    dialog.every.setChecked(False)
    qtbot.waitUntil(lambda: dialog.browsing.waiting is None and dialog.list.topLevelItemCount() == 1, timeout=WAIT_MS)
    # in: the folder's folders and images, with their sizes from os.stat
    dialog.list.itemDoubleClicked.emit(_item(dialog, "images"), 0)
    shown = _listed(qtbot, dialog, str(root / "images"))
    assert shown == ["cats", "0.png", "1.png", "2.png", "3.png"]
    size = os.stat(root / "images" / "0.png").st_size
    assert _item(dialog, "0.png").text(1) == (f"{size} B" if size < 1024 else f"{size / 1024:.1f} KB")
    assert dialog.up.isEnabled()
    # a folder outside the root, typed: the server's one line; the folder shown stays
    dialog.path.setText(str(served.outside))
    dialog.path.returnPressed.emit()
    qtbot.waitUntil(lambda: dialog.browsing.waiting is None and "refused" in dialog.said.text(), timeout=WAIT_MS)
    assert dialog.said.text() == (f"The folder {served.outside} is outside this server's data root ({root}): "
                                  f"refused.")
    assert dialog.browsing.path == str(root / "images")
    # up, then in again; OK with a folder selected gives back its server path
    dialog.up.click()
    _listed(qtbot, dialog, str(root))
    _item(dialog, "images").setSelected(True)
    dialog.buttons.button(QDialogButtonBox.Ok).click()
    assert dialog.result() == ServerDialog.Accepted and dialog.chosen == str(root / "images")


def test_a_file_chooser_offers_the_files_its_filter_names(qtbot, served, engine):
    from inspector.gui.common.server_dialog import ServerDialog

    dialog = ServerDialog(engine, "Weights", folders=False, filters="Weights (*.safetensors *.pt *.pth *.bin)")
    qtbot.addWidget(dialog)
    dialog.show()
    assert _listed(qtbot, dialog, str(served.root)) == ["images", "weights.safetensors"]
    dialog.buttons.button(QDialogButtonBox.Ok).click()  # nothing selected: not a file
    assert dialog.isVisible() and dialog.said.text() == "Choose a file (double-click a folder to open it)."
    dialog.list.itemDoubleClicked.emit(_item(dialog, "weights.safetensors"), 0)
    assert dialog.result() == ServerDialog.Accepted and dialog.chosen == str(served.root / "weights.safetensors")


def _drive(steps, qtbot_timeout_s: float = 60.0) -> list[str]:
    """Run `steps` (functions of the modal dialog on top, each True once done) as the modal dialogs come up, from a
    timer (the dialogs' own event loops run it); every modal dialog is rejected past the timeout. What happened."""
    import time

    done, deadline = [], time.monotonic() + qtbot_timeout_s

    def turn() -> None:
        modal = QApplication.activeModalWidget()
        if time.monotonic() > deadline:
            done.append("timed out")
            while QApplication.activeModalWidget() is not None:
                QApplication.activeModalWidget().reject()
            return
        if steps and modal is not None and steps[0](modal):
            done.append(steps.pop(0).__name__)
        if steps:
            QTimer.singleShot(50, turn)

    QTimer.singleShot(50, turn)
    return done


def test_the_atlas_build_browses_the_server_and_builds_there(qtbot, ui, served, tmp_path):
    """Build… > Browse… (images folder) opens the server dialog; the folder chosen there, and the output folder named
    after it, are the server's; Build builds the atlas there (its folder on the server, its tops over the 4 images)."""
    from inspector.gui.common.server_dialog import ServerDialog
    from inspector.gui.views.atlas_view import BuildDialog
    from inspector.gui.window.main_window import MainWindow

    if not ui.has_demo():
        pytest.skip("the demo model's files are not installed")
    settings = QSettings(str(tmp_path / "inspector.ini"), QSettings.IniFormat)
    settings.setValue("model/source", "demo")
    settings.setValue("input", "sample:star")
    settings.setValue("ticks/demo", '["conv1"]')
    window = MainWindow(settings=settings, ask_trust=lambda _n, _w: True, engine=served.url,
                        token_file=str(served.root.parent / "token"))
    try:
        window.show()
        ui.expect_result(qtbot, window)
        assert window.engine_files is window.worker

        def browse_images(modal) -> bool:
            if isinstance(modal, BuildDialog):
                QTimer.singleShot(0, modal._browse_data)  # Browse…: a modal of its own, from its own turn
                return True
            return False

        def into_images(modal) -> bool:
            if isinstance(modal, ServerDialog) and modal.browsing.waiting is None and modal.browsing.listing:
                modal.list.itemDoubleClicked.emit(_item(modal, "images"), 0)
                return True
            return False

        def choose_it(modal) -> bool:
            if isinstance(modal, ServerDialog) and modal.browsing.waiting is None \
                    and modal.browsing.path.endswith("images"):
                modal.buttons.button(QDialogButtonBox.Ok).click()
                return True
            return False

        def build(modal) -> bool:
            if isinstance(modal, BuildDialog) and modal.data.text():
                modal.top.setValue(2)
                modal.buttons.button(QDialogButtonBox.Ok).click()
                return True
            return False

        happened = _drive([browse_images, into_images, choose_it, build])
        window.atlas.build_dialog()  # the dialogs' loops run the steps
        assert happened == ["browse_images", "into_images", "choose_it", "build"], happened
        atlas = window.state.atlas
        qtbot.waitUntil(lambda: atlas.opened is not None or not atlas.building, timeout=WAIT_MS)
        assert atlas.opened is not None, window.banner.text()
        out = served.root / "images-atlas"
        assert atlas.opened.out_dir == str(out) and (out / "atlas.json").is_file()  # written on the server
        tops = atlas.opened.atlas["layers"]["conv1"]["top"]
        assert all(len(t) == 2 for t in tops)
        assert {e["image"] for t in tops for e in t} <= {f"{i}.png" for i in range(4)}
        assert settings.value("engine-folders/atlas-data") == str(served.root / "images")  # the server's, apart
        assert settings.value("folders/atlas-data") is None
    finally:
        window.close()
        assert window.worker_thread.thread.isFinished()
        window.deleteLater()


def test_sizes_filters_and_what_ok_gives_back():
    """The dialog's Qt-free part, on a listing written here."""
    from inspector.gui.common.server_browsing import Row, ServerBrowsing, patterns_of, sized

    assert [sized(n) for n in (812, 3482, 12 * 2**20, 5 * 2**40)] == ["812 B", "3.4 KB", "12.0 MB", "5.0 TB"]
    assert patterns_of("Weights (*.safetensors *.pt *.pth *.bin)") == ("*.safetensors", "*.pt", "*.pth", "*.bin")
    asked = []
    files = ServerBrowsing(lambda path, show: asked.append((path, show)), folders=False, patterns=("*.pt",))
    files.open("x")
    assert asked == [("x", "all")] and files.waiting == "x" and files.chosen(None) == ""
    files.answered({"root": "/r", "default_root": True, "path": "/r/x", "parent": "/r", "sep": "/", "more": 1,
                    "outside": 2, "entries": [["a", True, None], ["m.PT", False, 3], ["n.txt", False, 1]]})
    assert [r.name for r in files.rows()] == ["a", "m.PT"] and files.waiting is None
    assert files.chosen(Row("m.PT", False, 3)) == "/r/x/m.PT" and files.chosen(Row("a", True, None)) == ""
    assert files.where() == ("Data root on the server: /r (the folder it was started in: no --data-root); 1 more "
                             "entry not listed; 2 links out of the data root left out.")
    assert files.up() and asked[-1] == ("/r", "all")
    folders = ServerBrowsing(lambda path, show: asked.append((path, show)), folders=True)
    folders.open("")
    assert asked[-1] == ("", "images")
    folders.answered({"root": "/r", "default_root": False, "path": "/r", "parent": None, "sep": "/", "more": 0,
                      "outside": 0, "entries": [["a", True, None], ["i.png", False, 3]]})
    assert folders.chosen(None) == "/r" and folders.chosen(Row("a", True, None)) == "/r/a" and not folders.up()
    folders.open("/etc")
    folders.answered(type("Failure", (), {"message": "The folder /etc is outside this server's data root"})())
    assert folders.said.startswith("The folder /etc") and folders.path == "/r"  # the folder shown stays
    folders.open("/r/a")
    folders.open("/r/b")  # asked while /r/a is: asked once /r/a's answer came, which is not shown
    assert asked[-1] == ("/r/a", "images") and folders.waiting == "/r/a"
    folders.answered({**folders.listing, "path": "/r/a", "parent": "/r", "entries": []})
    assert asked[-1] == ("/r/b", "images") and folders.waiting == "/r/b" and folders.path == "/r"


def test_in_process_the_choosers_are_the_native_ones(window):
    from inspector.gui.common import file_dialogs

    assert window.engine_files is None and file_dialogs.engine_files(window.views.atlas) is None
