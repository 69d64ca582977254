"""Live data on the graph: when a run ends and the Graph tab shows a graph, the worker works out the values of the
"Colour by" choice on the graph it recorded (one run's values; with edits on, edited vs baseline; with Against,
the loaded model vs the second one) and the overlay paints them on the items drawn, never laying out again.
Opening or closing a group paints the same numbers on the new view (`for_view` of the closed graph drawn).
While a video plays, the overlay is paced (`inspector.core.graph.values.pace`): one at a time, spaced by its cost,
an answer a frame or more old painted.
"""

from __future__ import annotations

import time
from itertools import count

from PySide6.QtCore import QObject, QTimer

from inspector.core.common.errors import first_line
from inspector.core.graph.draw.overlay import drawn_for
from inspector.core.graph.values.colour_by import COLOUR_BY
from inspector.core.graph.values.pace import Pace
from inspector.core.records.failure import Failure

from ..views.graph.overlay import GraphOverlay
from ..views.graph.overlay_bar import OverlayBar
from .against import side_name

SETTING = "graph/colour_by"


class GraphValuesController(QObject):
    """The overlay of the Graph tab `tab` over what `graphs` (the GraphController) draws."""

    def __init__(self, state, graphs, tab) -> None:
        super().__init__(state)
        self.state, self.graphs, self.tab = state, graphs, tab
        self.bar = OverlayBar(tab)
        place = tab.layout()
        place.insertWidget(place.indexOf(tab.view), self.bar)
        self.painter = GraphOverlay(tab.scene, tab.view, tab.say, self)
        self._ids = count(1)
        self._asked = None  # (request key, request id) of the values asked for
        self.key = None  # the key of `found`
        self.found = None  # the whole graph's GraphValues or GraphComparison
        self.pace = Pace()
        self._later = QTimer(self)  # while a video plays: asks again when the pace allows
        self._later.setSingleShot(True)
        self._later.timeout.connect(self.ensure)
        saved = str(state.store.s.value(SETTING, "none") or "none")
        self.bar.choose(saved if saved in COLOUR_BY else "none")  # the choice of the last session
        self.bar.sigKind.connect(self._on_kind)
        state.sigResult.connect(lambda _outcome: self.ensure())
        state.sigViewShown.connect(lambda _view: self.ensure())
        tab.scene.sigDrawn.connect(self._on_drawn)
        state.graph.sigValues.connect(self._on_values)

    @property
    def kind(self) -> str:
        return self.bar.chosen()

    def choose(self, name: str) -> None:
        """Colour by `name` (a key of COLOUR_BY)."""
        self.bar.choose(name)

    def _on_kind(self, name: str) -> None:
        self.state.store.s.setValue(SETTING, name)
        self.ensure()

    # -- asking ---------------------------------------------------------------------------------
    def request_key(self):
        """What the numbers on screen depend on: the graph, the run on screen, the choice's family and its
        edits, target and second model; None when nothing can be asked yet."""
        s, family = self.state, COLOUR_BY[self.kind].family
        where = self.graphs.key()
        if family is None or self.graphs.graph is None or self.graphs.layout is None or where is None:
            return None
        edits = tuple(e for e in s.edits if e.enabled)
        against = (s.against, s.edits_on) if family == "against" else None
        return (id(self.graphs.graph), where, s.outcome.run_id, family, tuple(map(str, edits)), s.shown_choice[1],
                against)

    def missing(self) -> str:
        """What the choice needs and the app lacks, in words ("" when nothing)."""
        family = COLOUR_BY[self.kind].family
        if family == "edits" and not self.state.edits_active():
            return "Change with edits colours the reach of an edit: add one (or switch one on) in the Edits dock."
        if family == "against" and self.state.against is None:
            return ("Divergence against needs a second model: choose one in the Compare tab's Against (a weights "
                    "file or another model).")
        return ""

    def ensure(self) -> None:
        """Paint what is known for the graph drawn, and ask (through the state) for what is not."""
        if COLOUR_BY[self.kind].family is None:
            self._asked, self.found, self.key, self.pace = None, None, None, Pace()
            self.painter.clear()
            self.bar.show_bar(None)
            return
        if self.state.view != "graph":
            return
        key = self.request_key()
        missing = self.missing()
        if key is None or missing:
            self.painter.clear()
            self.bar.say(missing or "The values are worked out once the graph is drawn.")
            return
        if key == self.key:
            self._paint()
            return
        if self._asked is not None and self._asked[0] == key:
            return
        if self._playing():
            if self._asked is not None and _same_but_run(self._asked[0], key):
                return  # one in flight: its answer is painted (a frame or more old), then the latest asked
            wait = self.pace.wait(time.perf_counter())
            if wait > 0 and _same_but_run(self.key, key) and self.painter.drawn is not None:
                self._later.start(max(1, round(wait * 1000)))  # the last overlay stays painted meanwhile
                return
        if self.key is None or self.key[:2] != key[:2] or self.key[3] != key[3] or self.painter.drawn is None:
            self.painter.clear()  # another graph or choice: the plain look until its numbers come
            self.bar.say("Working out the values of the last run on the graph …")
        run_id = next(self._ids)
        self._asked = (key, run_id)
        self.pace.asked(time.perf_counter())
        s = self.state
        frame = s.live.shown_frame if s.live.feed is not None else None
        names = (side_name(key[1][0]), side_name(s.against)) if s.against is not None else ("first", "second")
        name = f"{key[1][1]}@frame {frame.index}" if frame is not None else key[1][1]
        s.graph.values(key[1][0], name, self.graphs.graph, COLOUR_BY[self.kind].family, key[5], run_id, names,
                       frame.rgb if frame is not None else None)

    def _on_values(self, run_id: int, found) -> None:
        if self._asked is None or run_id != self._asked[1]:
            return  # asked again since (another run, choice or graph)
        key, self._asked = self._asked[0], None
        self.pace.answered(time.perf_counter())
        if isinstance(found, Failure):
            self.painter.clear()
            self.bar.say("Esc cancelled the values; run again to colour the graph." if found.cancelled else
                         f"No values: {first_line(found.message)}", failed=not found.cancelled)
            return
        self.key, self.found = key, found
        now = self.request_key()
        if key == now or (self._playing() and _same_but_run(key, now)):
            self._paint()  # a video's frames moved on meanwhile: the overlay of a frame a little older
        if key != now:
            self.ensure()  # the graph or run changed while the worker worked

    def _playing(self) -> bool:
        """A video is open (its frames' results come one after another)."""
        return self.state.live.feed is not None

    # -- painting -------------------------------------------------------------------------------
    def _on_drawn(self) -> None:
        """A layout was drawn (a new graph, or a group opened or closed): paint the numbers on its nodes."""
        if COLOUR_BY[self.kind].family is None:
            return
        if self.key is not None and self.key == self.request_key():
            self._paint()
        else:
            self.ensure()

    def _paint(self) -> None:
        layout = self.tab.scene.layout
        if layout is None or self.found is None:
            return
        try:
            drawn = drawn_for(self.kind, self.found, layout.graph)
        except Exception as exc:  # noqa: BLE001 - a slot never raises into the event loop
            self.painter.clear()
            self.bar.say(f"Could not draw the values: {first_line(str(exc))}", failed=True)
            return
        self.painter.show(drawn)
        self.bar.show_bar(drawn.overlay.bar, drawn.overlay.legend)


def _same_but_run(a, b) -> bool:
    """Two request keys that differ at most in the run (another frame of the same video, graph and choice)."""
    return a is not None and b is not None and a[:2] == b[:2] and a[3:] == b[3:]
