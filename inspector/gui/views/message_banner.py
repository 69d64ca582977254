"""A non-modal banner above the tabs: the whole message, selectable, with details and Copy.

Errors stay until the user closes them or a newer message replaces them; confirmations
(info) close themselves after a while. Every message also goes to the hook log. A long message shows
its first MESSAGE_LINES lines and scrolls, and so do the details past DETAILS_LINES: the banner never
takes the panels' room (a long error squeezed the mosaics to about 80 px at 1280x800).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QScrollArea, QVBoxLayout

from ..common.notice import Notice

COLOURS = {"error": ("#fde7e9", "#b3261e"), "warning": ("#fff4ce", "#8a5a00"), "info": ("#e6f2fb", "#0b5394")}
INFO_MS = 12_000
MESSAGE_LINES, DETAILS_LINES = 3, 6  # shown at most; the rest scrolls


class MessageBanner(QFrame):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.notice: Notice | None = None
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextSelectableByMouse | Qt.TextSelectableByKeyboard)
        self.message_area = QScrollArea()  # the message, MESSAGE_LINES high at most
        self.message_area.setWidgetResizable(True)
        self.message_area.setFrameShape(QFrame.NoFrame)
        self.message_area.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.message_area.setWidget(self.label)
        self.message_area.viewport().setAutoFillBackground(False)  # the banner's colour behind the text
        self.label.setAutoFillBackground(False)
        self.action_button = QPushButton()
        self.details_button = QPushButton("Details", checkable=True)
        self.copy_button = QPushButton("Copy")
        self.close_button = QPushButton("✕")
        self.close_button.setToolTip("Close this message")
        self.close_button.setFixedWidth(28)
        self.details = QPlainTextEdit(readOnly=True)
        self.details.setMaximumHeight(self._lines_high(self.details, DETAILS_LINES,
                                                        round(self.details.document().documentMargin())))
        self.details.hide()
        row = QHBoxLayout()
        row.setContentsMargins(6, 4, 4, 4)
        row.addWidget(self.message_area, 1)
        for button in (self.action_button, self.details_button, self.copy_button, self.close_button):
            row.addWidget(button, 0, Qt.AlignTop)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(row)
        layout.addWidget(self.details)
        self.timer = QTimer(self, singleShot=True, interval=INFO_MS)
        self.timer.timeout.connect(self.dismiss)
        self.details_button.toggled.connect(self.details.setVisible)
        self.copy_button.clicked.connect(self.copy)
        self.close_button.clicked.connect(self.dismiss)
        self.action_button.clicked.connect(self._on_action)
        self.hide()

    def show_notice(self, notice: Notice) -> None:
        self.notice = notice
        back, fore = COLOURS.get(notice.level, COLOURS["info"])
        self.setStyleSheet(f"MessageBanner {{ background: {back}; border: 1px solid {fore}; border-radius: 3px; }}"
                           f"QLabel {{ color: {fore}; }}")
        prefix = {"error": "Error: ", "warning": "Warning: "}.get(notice.level, "")
        self.label.setText(prefix + notice.text)
        self._fit_message()
        self.details.setPlainText(notice.details)
        self.details_button.setVisible(bool(notice.details))
        self.details_button.setChecked(False)
        self.action_button.setVisible(notice.action is not None)
        if notice.action is not None:
            self.action_button.setText(notice.action[0])
        self.show()
        if notice.level == "info" and notice.action is None:
            self.timer.start()
        else:
            self.timer.stop()

    @staticmethod
    def _lines_high(widget, lines: int, document: int = 0) -> int:
        """The height of `lines` lines of `widget`'s text, with its margins (a frame's included) and `document`'s."""
        margins = widget.contentsMargins()
        return lines * widget.fontMetrics().lineSpacing() + margins.top() + margins.bottom() + 2 * document

    def _fit_message(self) -> None:
        """The message area as high as its text at its width, MESSAGE_LINES at most (the rest scrolls)."""
        width = self.message_area.viewport().width()
        high = max(self.label.heightForWidth(width), 0)  # -1 without text (Qt warned "Negative sizes" at launch)
        self.message_area.setFixedHeight(min(high, self._lines_high(self.label, MESSAGE_LINES)))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_message()

    def text(self) -> str:
        """The message as shown, with its details: what Copy puts on the clipboard."""
        return self.label.text() + (f"\n\n{self.details.toPlainText()}" if self.details.toPlainText() else "")

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.text())

    def dismiss(self) -> None:
        self.timer.stop()
        self.notice = None
        self.hide()

    def dismiss_about(self, about: str) -> None:
        """Take the message down if it is about `about` (a run's error, once a run worked)."""
        if self.notice is not None and about and self.notice.about == about:
            self.dismiss()

    def _on_action(self) -> None:
        notice = self.notice
        self.dismiss()
        if notice is not None and notice.action is not None:
            notice.action[1]()
