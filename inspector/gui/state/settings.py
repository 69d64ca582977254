"""What the app remembers between launches (QSettings): only what actually loaded and ran.

A model, weights or input that failed is never written. Trust is never remembered: a
saved source that runs code is loaded at the next launch only after the trust prompt, and
a saved choice that no longer loads falls back to the demo with a message (the state does that).
"""

from __future__ import annotations

import json
from pathlib import Path

from inspector.core.inputs.samples import list_samples
from inspector.core.records.requests import ModelRequest


def _file_of(path: str) -> str:
    """The file of a recent entry: FILE.py for the model source FILE.py:Name."""
    head, sep, _name = path.rpartition(":")
    return head if sep and head.lower().endswith(".py") else path


class SettingsStore:
    def __init__(self, settings) -> None:
        self.s = settings

    def save_model(self, info) -> None:
        r = info.request
        self.s.setValue("model/source", r.source)
        self.s.setValue("model/weights", r.weights or "")
        self.s.setValue("model/seed", "" if info.seed is None else int(info.seed))

    def save_input(self, source: str, device: str) -> None:
        self.s.setValue("input", source)
        self.s.setValue("device", device)

    def save_ticks(self, source: str, ticks) -> None:
        self.s.setValue(f"ticks/{source}", json.dumps(sorted(ticks)))

    RECENT = 10  # files offered in File > Open recent

    def recent(self) -> list[tuple[str, str]]:
        """(kind, path) of the model files and inputs that ran last, newest first, those still there."""
        try:
            items = json.loads(str(self.s.value("recent", "[]") or "[]"))
        except ValueError:
            return []
        return [(k, p) for k, p in items if isinstance(k, str) and isinstance(p, str) and Path(_file_of(p)).exists()]

    def add_recent(self, kind: str, path: str) -> None:
        """`path` ran ("model": a model file or FILE.py:Name; "input": an image, video or array file)."""
        if path and Path(_file_of(path)).exists():
            items = [(kind, path)] + [(k, p) for k, p in self.recent() if (k, p) != (kind, path)]
            self.s.setValue("recent", json.dumps(items[:self.RECENT]))

    def ticks(self, source: str) -> set[str] | None:
        saved = self.s.value(f"ticks/{source}")
        if not saved:
            return None
        try:
            return set(json.loads(str(saved)))
        except (ValueError, TypeError):
            return None

    @staticmethod
    def first_sample() -> str:
        names = list_samples()
        return f"sample:{names[0]}" if names else ""

    def saved_request(self) -> ModelRequest:
        weights = self.s.value("model/weights")
        request = ModelRequest(str(self.s.value("model/source", "demo")), str(weights) if weights else None)
        seed = self.s.value("model/seed", "")
        seed = "" if seed is None else str(seed)  # 0 is a seed (`or ""` lost it: random weights came back reseeded)
        if seed.isdigit():
            request = ModelRequest(request.source, request.weights, seed=int(seed))
        return request

    def restore(self, state) -> None:
        """Device, input and model of the last session; code runs only after the trust prompt."""
        from inspector.core.sources.trust import carries_code

        state.set_device(str(self.s.value("device", "cpu")))
        saved_input = self.s.value("input")
        if saved_input:
            state.set_input(str(saved_input))
        request = self.saved_request()
        if carries_code(request.source):
            what = "was open last time; loading it runs code from that file"
            if state.open_trusted(request, request.source, what):
                return
            request = ModelRequest()
        state.request_model(request)

    def save(self, state) -> None:
        self.s.sync()

    def window(self) -> tuple:
        return self.s.value("window/geometry"), self.s.value("window/state")

    def save_window(self, geometry, window_state) -> None:
        self.s.setValue("window/geometry", geometry)
        self.s.setValue("window/state", window_state)
