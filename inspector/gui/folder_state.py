"""Part of the app's state (`AppState`): a folder of images as the input, stepped through one run at a time.

Each step is one latest-wins run on the loaded model with the same ticks and edits; a file
that cannot be read is skipped (with a message) in the direction of the last step.
"""

from __future__ import annotations

from inspector.core.errors import InspectorError


class FolderSteps:
    """Mixed into AppState (which has `folder`, `_step`, `input`, `good_input`, `notify`, `_use_input`
    and the signals)."""

    def open_folder(self, path: str) -> bool:
        """Step through the images in `path` (nested folders too), starting at the first."""
        from inspector.core.inputs.folders import FolderInput

        try:
            folder = FolderInput.open(path)
        except InspectorError as exc:
            self.notify("error", f"{exc} Still showing {self.input or 'nothing'}.")
            return False
        self._step, self._skipped = 1, []
        self._show_folder(folder)
        return True

    def go_to(self, index: int) -> None:
        """Show image `index` of the folder (one latest-wins run; model, ticks and edits stay)."""
        folder = self.folder
        if folder is None:
            return
        target = folder.at(index)
        if target.index == folder.index and self.input == folder.path:
            return
        self._step, self._skipped = (1 if target.index >= folder.index else -1), []
        self._show_folder(target)

    def step(self, delta: int) -> None:
        if self.folder is not None:
            self.go_to(self.folder.index + delta)

    def _show_folder(self, folder) -> None:
        self.folder = folder
        self.sigFolderShown.emit(folder)
        self._use_input(folder.path, shown=folder.root)

    def _skip_unreadable(self, failure) -> bool:
        """A folder image that could not be read: say so and go on to the next one the same way."""
        folder = self.folder
        if folder is None or failure.kind != "InputError" or self.input != folder.path:
            return False
        self._skipped.append(f"{folder.relative}: {failure.message}")
        many = len(self._skipped) > 1
        self.notify("warning", f"Skipped {len(self._skipped)} unreadable files: " + "; ".join(self._skipped)
                    if many else f"Skipped {self._skipped[0]}")
        following = folder.index + self._step
        if 0 <= following < len(folder):
            self._show_folder(folder.at(following))
        elif self.good_input:  # the end of the folder: back to the last image that ran
            back = folder.index_of(self.good_input)
            self.input = self.good_input
            self.folder = folder.at(back) if back is not None else None
            self.sigFolderShown.emit(self.folder)
            self.sigInputShown.emit(folder.root if back is not None else self.input)
        return True
