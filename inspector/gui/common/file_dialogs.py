"""Every file dialog of the app, with a memory: each kind of file (models, inputs, sessions, exports,
atlas folders, ...) opens where the last one of its kind was chosen — never in the process's working
folder (sessions and exports used to land in the repository). (The files opened last, File > Open
recent, are the settings store's: `state.settings.SettingsStore.recent`.)

The window hands its QSettings over once (`use`); the memory lives there ("folders/KIND").

A path the engine reads (a model, weights, an input, a folder of images, an atlas's or concepts' folder: `engine`)
is the server's on a remote engine: there the dialog browses the server's data root (`server_dialog`), and its
folders are remembered apart ("engine-folders/KIND", not checked here: the server says when one is gone).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog

_settings = None

INPUT_FILES = "Images and tensors (*.png *.jpg *.jpeg *.bmp *.tif *.tiff *.webp *.gif *.npy *.pt)"


def use(settings) -> None:
    """Remember folders and recent files in `settings` (the window's QSettings)."""
    global _settings
    _settings = settings


def engine_files(parent):
    """The remote engine whose server the dialogs of `parent`'s window browse (the window's `engine_files`: its
    RemoteWorker); None when the engine runs in this process."""
    widget = parent
    while widget is not None:
        found = getattr(widget, "engine_files", None)
        if found is not None:
            return found
        widget = widget.parentWidget()
    return None


def _on_server(parent, engine: bool):
    return engine_files(parent) if engine and parent is not None else None


def remembered(kind: str, parent=None) -> str:
    """The folder last chosen for `kind`, if it is still there ("" otherwise); the server's, unchecked, where
    `parent`'s window runs on a remote engine."""
    if _on_server(parent, True) is not None:
        return str(_settings.value(f"engine-folders/{kind}", "") or "") if _settings is not None else ""
    saved = str(_settings.value(f"folders/{kind}", "") or "") if _settings is not None else ""
    return saved if saved and (Path(saved).is_dir() or Path(saved).parent.is_dir()) else ""


def folder(kind: str) -> str:
    """Where a dialog for `kind` opens: the folder last chosen for it (if it is still there), else home."""
    saved = remembered(kind)
    return saved if saved and Path(saved).is_dir() else str(Path.home())


def remember(kind: str, path: str, folder_itself: bool = False, parent=None) -> None:
    """`path` was chosen for `kind`: its folder (or, with `folder_itself`, the path, a folder to be made); a server
    path where `parent`'s window runs on a remote engine."""
    if _settings is not None and path and _on_server(parent, True) is not None:
        _settings.setValue(f"engine-folders/{kind}", path if folder_itself else path[:max(path.rfind("/"),
                                                                                          path.rfind("\\"))])
    elif _settings is not None and path:
        p = Path(path)
        _settings.setValue(f"folders/{kind}", str(p if p.is_dir() or folder_itself else p.parent))


def open_file(parent, kind: str, title: str, filters: str = "", engine: bool = False) -> str:
    """A file to open ("": none); `engine`: a file the engine reads (on a remote engine, the server's)."""
    server = _on_server(parent, engine)
    if server is not None:
        from .server_dialog import ServerDialog

        path = ServerDialog(server, title, False, remembered(kind, parent), filters, parent).ask()
        remember(kind, path, parent=parent)
        return path
    path, _ = QFileDialog.getOpenFileName(parent, title, folder(kind), filters)
    remember(kind, path)
    return path


def save_file(parent, kind: str, title: str, name: str, filters: str = "") -> str:
    path, _ = QFileDialog.getSaveFileName(parent, title, str(Path(folder(kind)) / name), filters)
    remember(kind, path)
    return path


def choose_folder(parent, kind: str, title: str, start: str = "", engine: bool = False) -> str:
    """A folder ("": none), shown from `start`; `engine`: a folder the engine reads or writes (on a remote engine,
    the server's)."""
    server = _on_server(parent, engine)
    if server is not None:
        from .server_dialog import ServerDialog

        path = ServerDialog(server, title, True, start or remembered(kind, parent), "", parent).ask()
        remember(kind, path, folder_itself=True, parent=parent)
        return path
    path = QFileDialog.getExistingDirectory(parent, title, start or folder(kind))
    remember(kind, path)
    return path


def add_folder_rows(form, rows) -> None:
    """Rows of a QFormLayout for folders: (label, line edit, slot): the edit and a Browse… button that calls the
    slot (the atlas's and the concepts' Build dialogs)."""
    from PySide6.QtWidgets import QHBoxLayout, QPushButton

    for label, edit, slot in rows:
        row = QHBoxLayout()
        row.addWidget(edit, 1)
        browse = QPushButton("Browse…")
        browse.clicked.connect(slot)
        row.addWidget(browse)
        form.addRow(label, row)
