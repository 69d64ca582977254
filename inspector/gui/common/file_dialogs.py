"""Every file dialog of the app, with a memory: each kind of file (models, inputs, sessions, exports,
atlas folders, ...) opens where the last one of its kind was chosen — never in the process's working
folder (sessions and exports used to land in the repository). (The files opened last, File > Open
recent, are the settings store's: `state.settings.SettingsStore.recent`.)

The window hands its QSettings over once (`use`); the memory lives there ("folders/KIND").
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


def remembered(kind: str) -> str:
    """The folder last chosen for `kind`, if it is still there ("" otherwise)."""
    saved = str(_settings.value(f"folders/{kind}", "") or "") if _settings is not None else ""
    return saved if saved and (Path(saved).is_dir() or Path(saved).parent.is_dir()) else ""


def folder(kind: str) -> str:
    """Where a dialog for `kind` opens: the folder last chosen for it (if it is still there), else home."""
    saved = remembered(kind)
    return saved if saved and Path(saved).is_dir() else str(Path.home())


def remember(kind: str, path: str, folder_itself: bool = False) -> None:
    """`path` was chosen for `kind`: its folder (or, with `folder_itself`, the path, a folder to be made)."""
    if _settings is not None and path:
        p = Path(path)
        _settings.setValue(f"folders/{kind}", str(p if p.is_dir() or folder_itself else p.parent))


def open_file(parent, kind: str, title: str, filters: str = "") -> str:
    path, _ = QFileDialog.getOpenFileName(parent, title, folder(kind), filters)
    remember(kind, path)
    return path


def save_file(parent, kind: str, title: str, name: str, filters: str = "") -> str:
    path, _ = QFileDialog.getSaveFileName(parent, title, str(Path(folder(kind)) / name), filters)
    remember(kind, path)
    return path


def choose_folder(parent, kind: str, title: str, start: str = "") -> str:
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
