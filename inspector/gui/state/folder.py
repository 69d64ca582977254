"""A folder of images as the input, stepped through one run at a time (`AppState.folder`).

Each step is one latest-wins run on the loaded model with the same ticks and edits; a file
that cannot be read is skipped (with a message) in the direction of the last step. On a remote engine the
folder is the server's: its images are listed there (`request_listing`, "nested": the same rule and order).
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from inspector.core.common.errors import InspectorError


class FolderState(QObject):
    """Signals
    -------
    sigShown(object): the FolderInput being stepped through (its `index` the image shown), or None.
    """

    sigShown = Signal(object)

    def __init__(self, app) -> None:
        super().__init__(app)
        self.app = app  # the AppState whose input this is
        self.current = None  # the FolderInput shown
        self._step = 1  # the direction of the last step (a file that fails is skipped that way)
        self._skipped: list[str] = []  # images skipped since the last step the user took
        self._asked: str | None = None  # a remote engine's folder whose listing is awaited
        if app.engine_url is not None:
            app.worker.sigAnswer.connect(self._on_listing)

    def root(self) -> str | None:
        return self.current.root if self.current is not None else None

    def open(self, path: str) -> bool:
        """Step through the images in `path` (nested folders too), starting at the first (on a remote engine:
        once the server has listed them)."""
        from inspector.core.inputs.folders import FolderInput  # torch: kept out of the window's start

        if self.app.engine_url is not None:
            self._asked = path
            self.app.worker.request_listing(path, "nested")
            return True
        try:
            folder = FolderInput.open(path)
        except InspectorError as exc:
            self.app.notify("error", f"{exc} Still showing {self.app.input or 'nothing'}.")
            return False
        self._step, self._skipped = 1, []
        self._show(folder)
        return True

    def _on_listing(self, lane: str, _run_id: int, found) -> None:
        """The server's images below the folder asked for (or its one line): stepped through as one here."""
        from inspector.core.inputs.folders import FolderInput

        if lane != "files-nested" or self._asked is None:
            return
        asked, self._asked = self._asked, None
        if not isinstance(found, dict) or not found["entries"]:
            said = found.message if not isinstance(found, dict) else f"No images in {asked} on the server."
            self.app.notify("error", f"{said} Still showing {self.app.input or 'nothing'}.")
            return
        if found["more"]:
            self.app.notify("warning", f"{asked} holds {len(found['entries']) + found['more']} images: the first "
                                       f"{len(found['entries'])} are stepped through.", about="folder")
        self._step, self._skipped = 1, []
        self._show(FolderInput(found["path"], tuple(entry[0] for entry in found["entries"])))

    def close(self) -> None:
        if self.current is not None:
            self.current = None
            self.sigShown.emit(None)

    def go_to(self, index: int) -> None:
        """Show image `index` of the folder (one latest-wins run; model, ticks and edits stay)."""
        folder = self.current
        if folder is None:
            return
        target = folder.at(index)
        if target.index == folder.index and self.app.input == folder.path:
            return
        self._step, self._skipped = (1 if target.index >= folder.index else -1), []
        self._show(target)

    def step(self, delta: int) -> None:
        if self.current is not None:
            self.go_to(self.current.index + delta)

    def _show(self, folder) -> None:
        self.current = folder
        self.sigShown.emit(folder)
        self.app.use_input(folder.path, shown=folder.root)

    def skip_unreadable(self, failure) -> bool:
        """A folder image that could not be read: say so and go on to the next one the same way."""
        folder, app = self.current, self.app
        if folder is None or failure.kind != "InputError" or app.input != folder.path:
            return False
        self._skipped.append(f"{folder.relative}: {failure.message}")
        many = len(self._skipped) > 1
        app.notify("warning", f"Skipped {len(self._skipped)} unreadable files: " + "; ".join(self._skipped)
                   if many else f"Skipped {self._skipped[0]}", about="folder")  # goes when the folder is left
        following = folder.index + self._step
        if 0 <= following < len(folder):
            self._show(folder.at(following))
        elif app.good_input:  # the end of the folder: back to the last image that ran
            back = folder.index_of(app.good_input)
            app.input = app.good_input
            self.current = folder.at(back) if back is not None else None
            self.sigShown.emit(self.current)
            app.sigInputShown.emit(folder.root if back is not None else app.input)
        return True
