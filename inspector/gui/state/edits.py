"""The edits list and every change to it (`AppState.editing`): add (from text or a form), switch on
and off, move, delete, delete all, all off, presets, channel or head ablation by clicking, and undo.

The list itself is `AppState.edits` (what runs use); this part only works out the new list and
hands it to `AppState.set_edits`, which re-runs and tells the edits panel (`sigEditsSet`).

Edits belong to a model: each model's list (and its undo history) is kept for it when another one
loads, and comes back with it; a model loaded for the first time starts with none (`for_model`).
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QObject, Signal

from inspector.core.edits import Edit, parse_edit
from inspector.core.edits.guided import approximation_note, split_guided
from inspector.core.edits.presets import PRESETS
from inspector.core.common.errors import SpecError
from inspector.core.common.keys import Key


class EditsState(QObject):
    """Signals
    -------
    sigMessage(str, bool): what the last change did (True: an error, the list unchanged).
    sigUndoable(bool): whether there is a change to undo.
    """

    sigMessage = Signal(str, bool)
    sigUndoable = Signal(bool)

    HISTORY = 100  # changes that can be undone, per model

    def __init__(self, app) -> None:
        super().__init__(app)
        self.app = app
        self.history: list[tuple[Edit, ...]] = []  # earlier lists of the loaded model, the last one last
        self._kept: dict[str, tuple[tuple[Edit, ...], list]] = {}  # source -> (edits, history) of other models

    def remember(self, edits: tuple[Edit, ...]) -> None:
        """`edits` is about to be replaced (AppState.set_edits): it can be gone back to."""
        self.history = [*self.history[-(self.HISTORY - 1):], tuple(edits)]
        self.sigUndoable.emit(True)

    def undo(self) -> bool:
        """Back to the list before the last change; False when there is none."""
        if not self.history:
            return False
        edits = self.history.pop()
        self.app.set_edits(edits, undoable=False)
        self.sigMessage.emit("undone", False)
        self.sigUndoable.emit(bool(self.history))
        return True

    def for_model(self, before: str | None, now: str, given: tuple[Edit, ...] | None = None) -> tuple[Edit, ...]:
        """The edits model `now` runs with: `given` (a session's), else those it had when it was last
        loaded, else none. Model `before`'s list and history are kept for when it comes back."""
        if before is not None:
            self._kept[before] = (tuple(self.app.edits), self.history)
        edits, self.history = self._kept.pop(now, ((), []))
        if given is not None and tuple(given) != edits:
            self.history = [*self.history, edits]
            edits = tuple(given)
        self.sigMessage.emit(" ", False)  # what the last change did was about the other model
        self.sigUndoable.emit(bool(self.history))
        return edits

    @property
    def items(self) -> tuple[Edit, ...]:
        return self.app.edits

    def _set(self, edits) -> None:
        self.app.set_edits(tuple(edits))

    def add(self, edit: Edit) -> None:
        self._set((*self.items, edit))

    def add_text(self, text: str) -> bool:
        """Add the edit written as `KEY=OP(ARGS)`; False (and sigMessage) when it cannot be read."""
        try:
            edit = parse_edit(text)
        except SpecError as exc:
            self.sigMessage.emit(str(exc), True)
            return False
        self.sigMessage.emit(f"added {edit}", False)
        self.add(edit)
        return True

    def put(self, edit: Edit, same) -> bool:
        """Add `edit`, or put it in the place of the first edit `same(edit)` says it takes the place of (its row
        kept); True where one was replaced."""
        edits = list(self.items)
        row = next((i for i, e in enumerate(edits) if same(e)), None)
        if row is None:
            self.sigMessage.emit(f"added {edit}", False)
            self.add(edit)
            return False
        self.sigMessage.emit(f"{edits[row]} replaced by {edit}", False)
        edits[row] = edit
        self._set(edits)
        return True

    def set_enabled(self, row: int, enabled: bool) -> None:
        edits = list(self.items)
        if 0 <= row < len(edits) and edits[row].enabled != enabled:
            edits[row] = replace(edits[row], enabled=enabled)
            self._set(edits)

    def move(self, row: int, step: int) -> int:
        """Move edit `row` up (-1) or down (+1); the row it is at afterwards."""
        edits, other = list(self.items), row + step
        if not (0 <= row < len(edits) and 0 <= other < len(edits)):
            return row
        edits[row], edits[other] = edits[other], edits[row]
        self._set(edits)
        return other

    def delete(self, row: int) -> None:
        edits = list(self.items)
        if 0 <= row < len(edits):
            del edits[row]
            self._set(edits)

    def delete_all(self) -> None:
        self._set(())

    def all_off(self) -> None:
        self._set(replace(e, enabled=False) for e in self.items)

    def apply_preset(self, name: str, layer: str = "", k: float = 2.0) -> bool:
        """Add the edits of preset `name` (on `layer` where it acts on one) for the loaded model."""
        make, one_layer = PRESETS[name]
        model = self.app.model
        layer_types = dict(model.layer_types) if model is not None else {}
        params = list(model.parameter_names) if model is not None else []
        try:
            new = make(layer_types, params, layer, k)
        except SpecError as exc:
            self.sigMessage.emit(str(exc), True)
            return False
        where = f" on {layer}" if one_layer else ""
        _exact, approximated = split_guided((e.key.layer, (layer_types.get(e.key.layer, ""),))
                                            for e in new if e.op == "guided")
        note = approximation_note(approximated, {layer_types.get(p, "") for p in approximated})
        self.sigMessage.emit(f"{name}{where}: {len(new)} edit(s)" + (f"; {note}." if note else ""), False)
        self._set((*self.items, *new))
        return True

    def toggle_channel(self, layer: str, channel: int) -> None:
        """Channel ablation: add or remove `channel` in this layer's zero_channels output edit."""
        self._toggle(Key(layer, "output"), "zero_channels", "channels", channel)

    def toggle_head(self, layer: str, head: int) -> None:
        """Head ablation: add or remove `head` in this attention module's zero_heads edit."""
        self._toggle(Key(layer, "attention"), "zero_heads", "heads", head)

    def _toggle(self, key: Key, op: str, name: str, item: int) -> None:
        edits = list(self.items)
        for row, edit in enumerate(edits):
            if edit.key == key and edit.op == op:
                items = list(dict(edit.args)[name])
                items.remove(item) if item in items else items.append(item)
                if items:
                    edits[row] = replace(edit, args=((name, sorted(items)),))
                else:
                    del edits[row]
                self._set(edits)
                return
        self.add(Edit(key, op, ((name, [item]),)))
