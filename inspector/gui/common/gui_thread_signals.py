"""Signals emitted on another thread, heard on the GUI thread whoever listens.

Qt runs a QObject's slot in that object's thread, but a plain callable (a lambda, the bound method of a Python
object such as pytest-qt's signal blocker) in the thread that emits. A callable that the worker's signal ran on
the worker thread stopped the GUI thread's timers from there ("QObject::killTimer: Timers cannot be stopped from
another thread") and, when it held the last reference to them, destroyed them there ("QObject::~QObject: Timers
cannot be stopped from another thread"): the process crashed under load.

So an object that emits off the GUI thread (the worker, its concept jobs, the graph's layout thread, a video
feed) declares its signals private, `_sigX`, and emits those; `HeardOnGuiThread` gives it a face made on the GUI
thread with the public `sigX`, each fed by a queued connection, so every listener of `obj.sigX` runs on the GUI
thread, in the order emitted.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

_FACES: dict[type, tuple[type, tuple[str, ...]]] = {}


def face_class(cls: type) -> tuple[type, tuple[str, ...]]:
    """A QObject class with a signal `sigX` for each signal `_sigX` of `cls` (made once a class), and their names."""
    found = _FACES.get(cls)
    if found is None:
        signals = {}
        for klass in reversed(cls.__mro__):
            for name, value in vars(klass).items():
                if name.startswith("_sig") and isinstance(value, Signal):
                    signals[name[1:]] = value
        found = _FACES[cls] = (type(f"{cls.__name__}Signals", (QObject,), dict(signals)), tuple(signals))
    return found


class HeardOnGuiThread:
    """Mix into a QObject whose `_sigX` signals are emitted off the GUI thread; call `hear_on_gui_thread()` in its
    `__init__`, on the GUI thread. Then `obj.sigX` is the face's signal, emitted on the GUI thread."""

    gui: QObject

    def hear_on_gui_thread(self) -> None:
        cls, names = face_class(type(self))
        self.gui = face = cls()
        for name in names:
            getattr(self, "_" + name).connect(getattr(face, name))

    def __getattr__(self, name: str):
        if name.startswith("sig"):
            gui = self.__dict__.get("gui")
            if gui is not None and name in face_class(type(self))[1]:
                return getattr(gui, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
