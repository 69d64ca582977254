"""Under Compare all: "Check these maps" (the trust cards, made only when pressed: they cost passes), the protocol
its deletion and insertion are scored under (records.protocols), the seed every draw is made from ("drawn": a new
one, shown on each card), and the cards, one per method in the comparison's order, in as many columns as the
width holds (the cards scroll)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from inspector.core.records.protocols import DEFAULT_PROTOCOL, PROTOCOLS

from .trust_card import WIDTH, TrustCardView

DRAWN = -1  # the seed box's "drawn": a new seed for each press


class TrustPanel(QWidget):
    """Signals
    -------
    sigOpened(str): a card was clicked (the cell's name): its randomisation strip.
    """

    sigOpened = Signal(str)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.check = QPushButton("Check these maps")
        self.check.setToolTip("For each map shown: deletion and insertion under the protocol chosen, ROAD, MPRT "
                              "(cascading randomisation of the model's layers) and random-logit, each timed. It "
                              "makes many maps (a dozen or more a method): it runs only when pressed; Esc stops it.")
        self.check.setEnabled(False)
        self.protocol = QComboBox()
        for name, protocol in PROTOCOLS.items():
            self.protocol.addItem(name, name)
            self.protocol.setItemData(self.protocol.count() - 1, protocol.source, Qt.ToolTipRole)
        self.protocol.setCurrentIndex(max(self.protocol.findData(DEFAULT_PROTOCOL), 0))
        self.protocol.setToolTip("How deletion and insertion are scored (hover an entry for its settings)")
        self.seed = QSpinBox()
        self.seed.setRange(DRAWN, 2**31 - 1)
        self.seed.setSpecialValueText("drawn")
        self.seed.setValue(DRAWN)
        self.seed.setToolTip("The seed of ROAD's noise, MPRT's re-initialisation and random-logit's class "
                             "(drawn: a new one, said on each card)")
        self.status = QLabel(" ")
        self.status.setWordWrap(True)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.check)
        for label, widget in (("Protocol", self.protocol), ("Seed", self.seed)):
            row.addWidget(QLabel(label))
            row.addWidget(widget)
        row.addWidget(self.status, 1)
        self.grid = QGridLayout()
        self.grid.setContentsMargins(0, 0, 0, 0)
        self.grid.setAlignment(Qt.AlignLeft | Qt.AlignTop)
        holder = QWidget()
        holder.setLayout(self.grid)
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setWidget(holder)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)  # as many columns as fit; rows scroll
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.scroll, 1)
        self.names: tuple[str, ...] = ()  # the cells being checked, in order
        self.cards: dict[str, TrustCardView] = {}
        self.failed: dict[str, str] = {}
        self._failed_labels: dict[str, QLabel] = {}
        self._placed_in = 1  # the columns the cards are in
        self._cards_shown = True
        self._show_cards(False)  # shown with the first card

    def seed_value(self) -> int | None:
        return None if self.seed.value() == DRAWN else self.seed.value()

    def clear(self) -> None:
        """No cards (a new comparison, another model)."""
        for card in self.cards.values():
            self.grid.removeWidget(card)
            card.deleteLater()
        for label in self._failed_labels.values():
            self.grid.removeWidget(label)
            label.deleteLater()
        self.names, self.cards, self.failed, self._failed_labels = (), {}, {}, {}
        self._show_cards(False)
        self.status.setText(" ")

    def start(self, names: tuple[str, ...]) -> None:
        """Checking `names` (the cells shown), one after another."""
        self.clear()
        self.names = tuple(names)
        self.check.setEnabled(False)
        self.status.setText(f"Checking {len(self.names)} maps…")

    def add(self, name: str, card) -> None:
        """Cell `name`'s card came."""
        view = TrustCardView(name, card)
        view.sigOpened.connect(self.sigOpened)
        self.cards[name] = view
        self._place(name, view)
        self._say()

    def fail(self, name: str, message: str) -> None:
        """Cell `name` has no card: why, in its place."""
        self.failed[name] = message
        label = QLabel(f"<b>{name}</b>: not checked: {message}")
        label.setWordWrap(True)
        label.setFixedWidth(WIDTH)
        label.setAlignment(Qt.AlignTop)
        self._failed_labels[name] = label
        self._place(name, label)
        self._say()

    def end(self, why: str, enabled: bool) -> None:
        """The checks are over: all came (`why` ""), or they stopped (Esc: `why` says so)."""
        self.check.setEnabled(enabled)
        if why:
            self.status.setText(f"Stopped: {why} The maps and the cards made stay.")

    def _columns(self) -> int:
        room = self.width() - self.scroll.verticalScrollBar().sizeHint().width() - 4
        return max(1, room // (WIDTH + self.grid.horizontalSpacing() + 2))

    def _place(self, name: str, widget: QWidget) -> None:
        index = self.names.index(name) if name in self.names else len(self.cards) + len(self.failed) - 1
        self._placed_in = self._columns()
        row, col = divmod(index, self._placed_in)
        self.grid.addWidget(widget, row, col, Qt.AlignTop)
        self._show_cards(True)

    def resizeEvent(self, event) -> None:
        """As many columns as the width holds."""
        super().resizeEvent(event)
        placed = {**self.cards, **self._failed_labels}
        if placed and self._columns() != self._placed_in:
            for widget in placed.values():
                self.grid.removeWidget(widget)
            for name in [n for n in self.names if n in placed]:
                self._place(name, placed[name])

    def _show_cards(self, shown: bool) -> None:
        """The cards' area, or none: the button's row only. Shown, it takes the room of a row of cards from the
        maps above it (the splitter it is in), at most half."""
        if shown == self._cards_shown:
            return
        self._cards_shown = shown
        self.scroll.setVisible(shown)
        self.setMaximumHeight(16777215 if shown else self.layout().itemAt(0).sizeHint().height())
        split = self.parentWidget()
        if shown and isinstance(split, QSplitter) and split.count() == 2:
            total = sum(split.sizes())
            want = min(max(card.height() for card in self.cards.values()) + 60 if self.cards else 200, total // 2)
            split.setSizes([total - want, want])

    def _say(self) -> None:
        done = len(self.cards) + len(self.failed)
        self.status.setText(f"{done} of {len(self.names)} maps checked" + (
            "; click a card for its randomisation strip." if done == len(self.names) else "…"))
