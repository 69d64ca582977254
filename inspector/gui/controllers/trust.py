"""Wires "Check these maps" (the Attribution tab's TrustPanel, under Compare all) to the trust state: the cells of
the comparison shown, each with the map it made, are checked on the worker; their cards come into the panel; a
check a map cannot take is one line in the banner (the card says it too); a click on a card opens its
randomisation strip."""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt

from inspector.gui.state.trust import TrustState


class TrustController(QObject):
    def __init__(self, state, attribution) -> None:
        super().__init__(state)
        self.state, self.attribution = state, attribution
        self.panel = attribution.comparison.trust
        self.trust = TrustState(state, state.worker)
        self.strip = None  # the randomisation strip open (a dialog)
        self._refused: list[str] = []  # the checks the maps could not take, said in the banner at the end
        self.panel.check.clicked.connect(lambda: self.check_maps())
        self.panel.sigOpened.connect(self.open_strip)
        self.trust.sigCard.connect(self._on_card)
        self.trust.sigCardFailed.connect(self.panel.fail)
        self.trust.sigEnded.connect(self._on_ended)
        attribution.sigCompare.connect(lambda _cells: self._forget())
        state.analysis.sigCompareEnded.connect(lambda _why: self._offer())  # after the view heard it
        state.sigModelLoaded.connect(lambda *_a: self._forget())

    def _offer(self) -> None:
        """The button is offered once a comparison has maps and none is being made or checked."""
        comparison = self.attribution.comparison
        self.panel.check.setEnabled(bool(comparison.found) and not self.attribution.comparing
                                    and not self.trust.checking)

    def _forget(self) -> None:
        self.trust.forget()
        self.panel.clear()
        self._offer()

    def check_maps(self) -> bool:
        """Check every map of the comparison shown (the cells whose maps came), in its order."""
        view, comparison = self.attribution, self.attribution.comparison
        names = tuple(name for name in comparison.methods if name in comparison.found)
        if not names or view.comparing:
            return False
        cells = {}
        for name in names:
            method, target = comparison.asks[name]
            method, target, layer, options = view.cell_request(method, target)
            cells[name] = {"method": method, "target": target, "layer": layer, "options": options,
                           "original": comparison.found[name]}
        self._refused = []
        self.panel.start(names)
        return self.trust.check(cells, self.panel.protocol.currentData(), self.panel.seed_value())

    def _on_card(self, name: str, card) -> None:
        self.panel.add(name, card)
        self._refused += [f"{name}: {c.check} not made: {c.refused}" for c in card.checked if c.refused]

    def _on_ended(self, why: str) -> None:
        self.panel.end(why, enabled=bool(self.attribution.comparison.found))
        if self._refused:  # one line in the banner: the first, and how many more the cards say
            more = len(self._refused) - 1
            self.state.notify("warning", self._refused[0] + (f" (and {more} more: see the cards)" if more else ""))
            self._refused = []

    def open_strip(self, name: str) -> None:
        """The randomisation strip of `name`'s card (its MPRT); a card without MPRT says why in the banner."""
        from inspector.gui.views.attribution.randomisation_strip import (
            RandomisationStrip,
        )

        view = self.panel.cards.get(name)
        if view is None:
            return
        if view.card.mprt is None:
            done = view.card.of("MPRT")
            self.state.notify("info", f"{name} has no randomisation strip: MPRT was not made"
                                      + (f" ({done.refused})" if done and done.refused else "") + ".")
            return
        if self.strip is not None:
            self.strip.close()
            self.strip.deleteLater()
        self.strip = RandomisationStrip(name, view.card.mprt, self.attribution.window())
        self.strip.setAttribute(Qt.WA_DeleteOnClose)
        self.strip.destroyed.connect(lambda *_a: setattr(self, "strip", None))
        self.strip.show()
