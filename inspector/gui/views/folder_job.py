"""The two pieces a folder job's dock is built of, the Atlas view's and the Concepts view's alike.

`FolderJobControls` (mixed into the view): Open…, Build… and Cancel in a row above a progress bar (and, where the
job says its progress in words, a line under it); `set_building`, `set_progress` and `set_progress_text` show what
the job's state (`FolderJobState`) sends. `FolderJobDialog`: the build dialog's pattern: the images folder and the
output folder (offered as last chosen, the output named after the images folder when it is picked first), the
job's own rows, a line saying what is wrong, Build and Cancel; the folders are remembered when it is accepted.
Both docks ask for a build the same way: Build… emits the view's `sigBuild()`, the job's controller opens the
dialog (`ask`: its choices, or None) and hands the choices to the state's `build`.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
)

from inspector.gui.common import file_dialogs


class FolderJobControls:
    """Mixed into a QWidget: the job's buttons and progress (`_job_layout` makes them and the widget's layout)."""

    def _job_layout(self, open_text: str, open_tip: str, build_tip: str, unit: str = "",
                    words: bool = False) -> QVBoxLayout:
        """The widget's layout, holding the row of buttons, the progress bar (its text "N of M `unit`" where a
        unit is given) and, with `words`, the line the progress is said in. Cancel emits `sigCancel`."""
        self.open_button = QPushButton(open_text)
        self.open_button.setToolTip(open_tip)
        self.build_button = QPushButton("Build…")
        self.build_button.setToolTip(build_tip)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setVisible(False)
        self.cancel_button.clicked.connect(self.sigCancel.emit)
        self.progress = QProgressBar()
        self.progress.setVisible(False)
        self._unit = unit
        self.progress_text = QLabel() if words else None
        self.buttons_row = QHBoxLayout()
        for w in (self.open_button, self.build_button, self.cancel_button):
            self.buttons_row.addWidget(w)
        self.buttons_row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(self.buttons_row)
        layout.addWidget(self.progress)
        if self.progress_text is not None:
            self.progress_text.setWordWrap(True)
            self.progress_text.setVisible(False)
            layout.addWidget(self.progress_text)
        return layout

    def set_building(self, building: bool) -> None:
        self.build_button.setEnabled(not building)
        self.cancel_button.setVisible(building)
        self.progress.setVisible(building)
        if self.progress_text is not None:
            self.progress_text.setVisible(building)
        if building:
            self.progress.setRange(0, 0)
            if self.progress_text is not None:
                self.progress_text.setText("Starting…")

    def set_progress(self, done: int, total: int) -> None:
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        if self._unit:
            self.progress.setFormat(f"{done} of {total} {self._unit}")

    def set_progress_text(self, text: str) -> None:
        if self.progress_text is not None:
            self.progress_text.setText(text)


class FolderJobDialog(QDialog):
    """`job`: the job's name ("atlas", "concepts"): the folders are remembered as JOB-data and JOB-out (the images
    folder falls back on `data_also`'s), and the output folder offered is IMAGES-JOB beside the images folder.
    A subclass adds its own rows to `form` between `_folder_rows()` and `_finish()`, and says in `problem()` what
    keeps the dialog from being accepted."""

    def __init__(self, job: str, title: str, parent=None, data_also: str = "") -> None:
        super().__init__(parent)
        self.job = job
        self.setWindowTitle(title)
        data = file_dialogs.remembered(f"{job}-data", self) or (file_dialogs.remembered(data_also, self)
                                                                if data_also else "")
        self.data = QLineEdit(data)  # the folders of the last build (the server's, on a remote engine)
        self.out = QLineEdit(file_dialogs.remembered(f"{job}-out", self))
        self.form = QFormLayout(self)

    def _folder_rows(self) -> None:
        file_dialogs.add_folder_rows(self.form, (("Images folder", self.data, self._browse_data),
                                                 ("Output folder", self.out, self._browse_out)))

    def _finish(self, width: int) -> None:
        """The line that says what is wrong, Build and Cancel; `width` pixels wide."""
        self.buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        self.buttons.button(QDialogButtonBox.Ok).setText("Build")
        self.buttons.accepted.connect(self._accept)
        self.buttons.rejected.connect(self.reject)
        self.why = QLabel(" ")
        self.why.setStyleSheet("color: #b00;")
        self.form.addRow(self.why)
        self.form.addRow(self.buttons)
        self.resize(width, self.sizeHint().height())

    def problem(self) -> str:
        """What keeps the choices from being built ("": nothing)."""
        return ""

    def choices(self) -> tuple:
        """What to build, as the job's state's `build` takes it."""
        raise NotImplementedError

    def ask(self) -> tuple | None:
        """Shown until the user builds (its `choices()` back) or cancels (None); deleted after."""
        try:
            return self.choices() if self.exec() == QDialog.Accepted else None
        finally:
            self.deleteLater()

    def _accept(self) -> None:
        why = self.problem()
        self.why.setText(why or " ")
        if why:
            return
        data, out = self.data.text().strip(), self.out.text().strip()
        if data and out:  # offered next time
            file_dialogs.remember(f"{self.job}-data", data, folder_itself=True, parent=self)
            file_dialogs.remember(f"{self.job}-out", out, folder_itself=True, parent=self)
        self.accept()

    def _browse_data(self) -> None:
        path = file_dialogs.choose_folder(self, f"{self.job}-data", "Folder of images (nested folders too)",
                                          self.data.text(), engine=True)
        if path:
            self.data.setText(path)
            if not self.out.text():
                self.out.setText(str(Path(path).parent / f"{Path(path).name}-{self.job}"))

    def _browse_out(self) -> None:
        path = file_dialogs.choose_folder(self, f"{self.job}-out", f"Folder to write the {self.job} to",
                                          self.out.text(), engine=True)
        if path:
            self.out.setText(path)
