"""A map's trust card (issue 55 item 5): a compact panel of the evidence "Check these maps" made for one cell of
Compare all (a core `TrustCard`): deletion and insertion under the protocol named, ROAD most and least relevant
first, MPRT's verdict with a small plot of its Spearman(|map|) per step (the threshold dashed), random-logit's
similarity, each with its settings (protocol, seed, threshold) and the time it took. A check the map cannot take
says why in its line. A click on the card opens the randomisation strip (sigOpened)."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QLabel, QVBoxLayout

from ..number_format import fmt

WIDTH = 300  # a card's width on screen: two side by side in the Attribution tab at 1280 pixels
PLOT_HEIGHT = 58
_REFUSED = "#b35c00"
#: What each line's numbers are, in words (its tooltip).
TIPS = (("Deletion (lower is better) and insertion (higher is better) AUCs of the class's probability, under the "
        "protocol named (pixels in the order of the map as drawn)"),
        ("ROAD (Rong et al. 2022): the class's probability with the most (MoRF, lower is better) or least (LeRF, "
        "higher is better) relevant 10-90 % of the pixels imputed; noisy linear imputation, noise sigma "
        "{card.road_noise:g}, seed {card.seed}"),
        ("MPRT (Adebayo et al. 2018): the map made again as the model's layers are re-initialised from the logits "
        "down (seed {card.seed}); Spearman rank correlation of |map| with the original at each step, the dashed line "
        "the threshold {card.threshold:g}. A map that explains the model changes."),
        ("Random-logit: the map of another class drawn from seed {card.seed}, and the Spearman rank correlation of "
        "its |map| with the class's. A map that explains the class differs."))


def check_line(card, check: str, words: str) -> str:
    """`words` (the check's numbers and settings), or why the check was refused, with its time."""
    done = card.of(check)
    if done is None:
        return f"{check}: not made"
    if done.refused:
        return f"<span style='color:{_REFUSED}'>{check} not made: {done.refused}</span>"
    return f"{words} <span style='color:gray'>{done.seconds:.2f}&nbsp;s</span>"


def lines(card) -> list[str]:
    """The card's lines, each check's numbers with the settings they were made under (rich text; the seed of them
    all is in the title)."""
    auc = {c.metric: c.auc for c in card.curves}
    games = (f"del {fmt(auc['deletion'], '.3f')} · ins {fmt(auc['insertion'], '.3f')} "
             f"<small>(protocol {card.protocol})</small>") if "deletion" in auc else ""
    road = (f"ROAD MoRF {fmt(auc['road-morf'], '.3f')} · LeRF {fmt(auc['road-lerf'], '.3f')} "
            f"<small>(σ {card.road_noise:g})</small>") if "road-morf" in auc else ""
    m = card.mprt
    mprt = ""
    if m is not None:
        value = fmt(float(m.curve[m.decided_by]), ".2f")
        words = {True: "changes", False: "<b>does not change</b>", None: "undefined"}[m.changes]
        sign = {True: "<", False: "≥", None: "vs"}[m.changes]
        mprt = f"MPRT {m.mode}: {words} <small>(ρ|map| {value} {sign} {m.threshold:g})</small>"
    r = card.random_logit
    logit = (f"random-logit: ρ|map| {fmt(r.similarity.spearman_abs, '.2f')} <small>(class {r.other_index} vs "
             f"{r.target_index})</small>") if r is not None else ""
    return [check_line(card, "deletion and insertion", games), check_line(card, "ROAD", road),
            check_line(card, "MPRT", mprt), check_line(card, "random-logit", logit)]


class TrustCardView(QFrame):
    """Signals
    -------
    sigOpened(str): the card was clicked: open its randomisation strip (the cell's name).
    """

    sigOpened = Signal(str)

    def __init__(self, name: str, card, parent=None) -> None:
        super().__init__(parent)
        self.name, self.card = name, card
        self.setFrameShape(QFrame.StyledPanel)
        self.setFixedWidth(WIDTH)
        self.setCursor(Qt.PointingHandCursor)
        self.setToolTip("Click: the maps under cascading randomisation (the randomisation strip)")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.setSpacing(2)
        total = sum(c.seconds for c in card.checked)
        self.title = QLabel(f"<b>{name}</b> · seed {card.seed}{' (drawn)' if card.seed_drawn else ''} "
                            f"<span style='color:gray'>· checked in {total:.1f} s</span>")
        layout.addWidget(self.title)
        self.labels = []
        for i, text in enumerate(lines(card)):
            label = QLabel(text)
            label.setWordWrap(True)
            label.setTextInteractionFlags(Qt.NoTextInteraction)
            label.setToolTip(TIPS[i].format(card=card))
            layout.addWidget(label)
            self.labels.append(label)
            if i == 2:
                self.plot = self._mprt_plot()
                layout.addWidget(self.plot)
        self.setFixedHeight(layout.totalHeightForWidth(WIDTH))  # every wrapped line whole, never squeezed

    def _mprt_plot(self) -> pg.PlotWidget:
        """Spearman(|map|) at each step of MPRT (0: the original), the threshold dashed; empty without MPRT."""
        plot = pg.PlotWidget()
        plot.setFixedHeight(PLOT_HEIGHT)
        plot.setMouseEnabled(False, False)
        plot.setMenuEnabled(False)
        plot.hideButtons()
        plot.setAttribute(Qt.WA_TransparentForMouseEvents)  # a click anywhere on the card opens the strip
        item = plot.getPlotItem()
        item.getAxis("left").setWidth(26)
        item.getAxis("left").setTicks([[(0.0, "0"), (0.5, ".5"), (1.0, "1")]])
        item.getAxis("bottom").setHeight(16)
        m = self.card.mprt
        self.curve = None
        if m is None:
            plot.setVisible(False)
            return plot
        steps = np.arange(len(m.curve))
        self.curve = item.plot(steps, m.curve, pen=pg.mkPen("#4c78a8", width=2), symbol="o", symbolSize=4,
                               symbolBrush="#4c78a8")
        item.addLine(y=m.threshold, pen=pg.mkPen("#e45756", style=Qt.DashLine))
        low = min(0.0, float(np.nanmin(m.curve))) if np.isfinite(m.curve).any() else 0.0
        item.setYRange(low, 1.0, padding=0.05)
        item.setXRange(0, max(1, len(steps) - 1), padding=0.03)
        last = len(steps) - 1
        item.getAxis("bottom").setTicks([[(i, str(i)) for i in range(0, last + 1, max(1, last // 4))]])
        return plot

    def mousePressEvent(self, event) -> None:
        if event.button() == Qt.LeftButton:
            self.sigOpened.emit(self.name)
        super().mousePressEvent(event)
