"""`network-inspector bench --handoffs [-v] [--no-ray]`: how many objects a change passes through before it is shown.

Two paths are traced with `sys.setprofile` (every Python call, Qt's signal deliveries included,
since a slot's frame is entered from the frame that emitted):

  edit -> Compare   the Compare tab on screen, an edit switched off by its check box in the edits
                    panel (as a user clicks it), until the Compare tab has drawn the new result;
  atlas -> json     `network-inspector atlas ... --ray` (or without Ray when it is not installed),
                    from the command's entry to atlas.json on disk.

A *hand-off* is a call from one object of the project to another (a different class, or a
different module for plain functions), counted once per caller and called function however many
times it repeats (a loop over 16 channels is one hand-off); calls inside one object, into
libraries, and generated code (comprehensions, lambdas, dataclass methods) are not counted. For
the edit path only the app's own objects count (`inspector.gui`: the engine's work happens on
the worker thread, which is not traced). The report lists each hand-off in order, so a reader sees the path, and says which
panels drew before the visible one. Numbers depend only on the code, not on the machine.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

PACKAGE = "inspector"
#: Timers that fire on their own schedule, not because of the change being traced.
IGNORED = ("inspector.gui.common.gc_collector",)


def _owner(frame) -> str | None:
    """`module:Class` (or `module` for a function) of a frame in the project; None outside it, and
    for the bench itself and generated code (comprehensions, lambdas, dataclass methods)."""
    module = frame.f_globals.get("__name__", "")
    code = frame.f_code
    if not module.startswith(PACKAGE + ".") or module.startswith(PACKAGE + ".bench") \
            or code.co_name.startswith("<") or code.co_filename.startswith("<"):
        return None
    qualname = getattr(code, "co_qualname", code.co_name)
    head = qualname.split(".")[0]
    return f"{module}:{head}" if "." in qualname and head[:1].isupper() else module


class Tracer:
    """Records the hand-offs between the project's objects while it is on."""

    def __init__(self, prefix: str = PACKAGE + ".", visible: str | None = None) -> None:
        self.prefix, self.visible = prefix, visible
        self.until_visible: int | None = None  # hand-offs before the visible view's first drawing
        self.handoffs: list[tuple[str, str]] = []
        self.calls: list[str] = []  # every project function entered, in order (for the drawing order)
        self._seen: set[tuple[str, str]] = set()

    def _profile(self, frame, event, _arg) -> None:
        if event != "call":
            return
        callee = _owner(frame)
        if callee is None:
            return
        code = frame.f_code
        self.calls.append(f"{callee}.{code.co_name}")
        if self.visible and self.until_visible is None and self.calls[-1].endswith(self.visible):
            self.until_visible = len(self.handoffs) + 1
        back = frame.f_back
        while back is not None and _owner(back) is None and back.f_globals.get("__name__", "").startswith(PACKAGE):
            back = back.f_back  # through comprehensions and lambdas to the function they are in
        caller = _owner(back) if back is not None else None
        if caller is not None and caller.startswith(PACKAGE + ".cli"):
            caller = "(event loop)"  # a queued signal (from the worker thread) or a timer, delivered
        edge = (caller, f"{callee}.{code.co_name}")
        if callee.startswith(IGNORED):
            return
        if caller is not None and caller != callee and callee.startswith(self.prefix) and edge not in self._seen:
            self._seen.add(edge)
            self.handoffs.append(edge)

    def __enter__(self) -> "Tracer":
        sys.setprofile(self._profile)
        return self

    def __exit__(self, *_exc) -> None:
        sys.setprofile(None)


def trace_edit_to_compare() -> dict:
    """Toggle an edit with the Compare tab on screen; trace until the Compare tab has drawn it."""
    from PySide6.QtCore import QSettings, Qt

    from inspector.core.edits import Edit
    from inspector.core.common.keys import Key

    from .gui_harness import _qt_app, _wait_until

    _qt_app()
    from inspector.gui.window.main_window import MainWindow

    folder = tempfile.mkdtemp(prefix="inspector-handoffs-")
    settings = QSettings(str(Path(folder) / "settings.ini"), QSettings.IniFormat)
    window = MainWindow(settings, restore=False, ask_trust=lambda *_: True)
    window.show()
    try:
        _wait_until(lambda: window.outcome is not None, 120)
        compare = _compare_view(window)
        window.tabs.setCurrentWidget(compare)
        _wait_until(lambda: window.state.phase == "", 60)
        drawn = []
        original = type(compare).show

        def show(self, *args, **kwargs):
            drawn.append(time.perf_counter())
            return original(self, *args, **kwargs)

        type(compare).show = show
        try:
            panel, layer = _edits_panel(window), window.state.ticked()[0]
            before = window.state.outcome
            panel.text.setText(str(Edit(Key(layer, "output"), "scale", (("k", 2.0),))))
            panel.text.returnPressed.emit()  # typed in and Enter: not traced
            _wait_until(lambda: window.state.outcome is not before and drawn, 120)
            _wait_until(lambda: window.state.phase == "", 60)
            before = window.state.outcome
            drawn.clear()
            with Tracer(PACKAGE + ".gui", "CompareView.show") as tracer:
                panel.list.item(0).setCheckState(Qt.Unchecked)  # the user switches it off
                _wait_until(lambda: window.state.outcome is not before and drawn, 120)
                _wait_until(lambda: window.state.phase == "", 60)
        finally:
            type(compare).show = original
    finally:
        window.close()
    return _report("edit -> Compare", tracer, "CompareView.show")


def _compare_view(window):
    views = getattr(window, "views", None)  # before the views were the window's: the Edits controller's
    return views.compare if views is not None else window.edits.compare


def _edits_panel(window):
    views = getattr(window, "views", None)
    return views.edits_panel if views is not None else window.edits.panel


def trace_atlas(command: Callable[[list[str]], int], ray: bool = True) -> dict:
    """`atlas` on the demo model over 8 generated images, to atlas.json; `command(argv)` runs the
    atlas command (the CLI passes its own: the benchmarks sit below the CLI)."""
    import numpy as np
    from PIL import Image

    root = Path(tempfile.mkdtemp(prefix="inspector-handoffs-atlas-"))
    data = root / "images"
    data.mkdir()
    rng = np.random.default_rng(0)
    for i in range(8):
        Image.fromarray(rng.integers(0, 255, (64, 64, 3), dtype=np.uint8)).save(data / f"{i}.png")
    args = ["atlas", "--data", str(data), "--layers", "conv1", "--out", str(root / "atlas"), "--top", "3",
            "--batch", "4"]
    if ray:
        args.append("--ray")
    with Tracer() as tracer:
        code = command(args[1:])
    if code != 0 or not (root / "atlas" / "atlas.json").exists():
        raise RuntimeError(f"atlas exited with {code}")
    return _report("atlas --ray -> atlas.json" if ray else "atlas -> atlas.json", tracer, None)


def _report(name: str, tracer: Tracer, visible: str | None) -> dict:
    objects = sorted({o for pair in tracer.handoffs for o in (pair[0], pair[1].rsplit(".", 1)[0])})
    before = []
    if visible is not None:
        first = next((i for i, c in enumerate(tracer.calls) if c.endswith(visible)), len(tracer.calls))
        before = sorted({c for c in tracer.calls[:first] if c.endswith(("show_capture", "show_missing"))})
    return {"path": name, "handoffs": len(tracer.handoffs), "objects": len(objects),
            "until_visible": tracer.until_visible,
            "drawn_before_visible": before, "list": [f"{a} -> {b}" for a, b in tracer.handoffs]}


def run_handoffs(atlas_command: Callable[[list[str]], int], ray: bool = True, verbose: bool = False) -> list[dict]:
    rows = [trace_edit_to_compare(), trace_atlas(atlas_command, ray)]
    for row in rows:
        until = f" ({row['until_visible']} until the visible view draws)" if row["until_visible"] else ""
        print(f"{row['path']}: {row['handoffs']} hand-offs between {row['objects']} objects{until}")
        if row["drawn_before_visible"]:
            print(f"  drawn before the visible view: {', '.join(row['drawn_before_visible'])}")
        if verbose:
            for line in row["list"]:
                print(f"    {line}")
    return rows

