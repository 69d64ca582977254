"""What an engine transport says to the window, whatever carries the engine: the signals the local worker and the
remote one both emit off the GUI thread (heard on it through `HeardOnGuiThread`'s face, as `sigX`). Each
transport's docstring says what they carry."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal


class EngineSignals(QObject):
    _sigEngineReady = Signal(object)
    _sigLoaded = Signal(object)
    _sigResult = Signal(object)
    _sigStatsUpdate = Signal(object)
    _sigAnswer = Signal(str, int, object)
    _sigFailed = Signal(object)
    _sigProgress = Signal(int, int)
    _sigPhase = Signal(str)
    _sigBusy = Signal(bool)
    _sigAtlasProgress = Signal(int, int)
