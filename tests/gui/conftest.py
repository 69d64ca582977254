"""GUI fixtures: settings in a temp INI, a leak checker, small models, and windows that clean up.

Every test here runs offscreen (tests/conftest.py). The autouse `no_leaks` fixture fails
a test that leaves a QThread running, a QTimer active, a Python thread alive, a top-level
widget visible, or one of our own top-level widgets undeleted.
"""

from __future__ import annotations

import gc
import json
import threading
from pathlib import Path

import numpy as np
import pytest
import shiboken6
from PIL import Image
from PySide6.QtCore import QEvent, QSettings, QThread, QTimer
from PySide6.QtWidgets import QApplication, QWidget

from inspector.demo.paths import demo_dir

MODELS_PY = '''
"""Small models for the GUI tests (written to a temp folder, loaded as file.py:Name)."""
import threading
import time

import torch
from torch import nn

DELETED_IN = []  # names of the threads that freed a Canary


class Tiny(nn.Module):
    """Conv/BatchNorm/ReLU(inplace)/Linear on 32x32 RGB; fixed weights."""

    input_shape = (1, 3, 32, 32)
    labels = [f"class{i}" for i in range(10)]
    width = 8

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        w = self.width
        self.features = nn.Sequential(
            nn.Conv2d(3, w, 3, padding=1), nn.BatchNorm2d(w), nn.ReLU(inplace=True),
            nn.Conv2d(w, 2 * w, 3, padding=1), nn.ReLU(inplace=True))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten()
        self.fc = nn.Linear(2 * w, 10)

    def forward(self, x):
        return self.fc(self.flatten(self.pool(self.features(x))))


class Unseeded(nn.Module):
    """PyTorch's default (random) initialisation: the weights depend on the seed it is built under."""

    input_shape = (1, 3, 32, 32)

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.fc = nn.Linear(4, 5)

    def forward(self, x):
        return self.fc(self.conv(x).mean(dim=(2, 3)))


class TinyViT(nn.Module):
    """A 4 x 4 patch grid after a class token, one nn.MultiheadAttention (2 heads), on 32x32 RGB."""

    input_shape = (1, 3, 32, 32)
    labels = ["a", "b", "c"]

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.patch_embed = nn.Conv2d(3, 8, 8, stride=8)
        self.patch_embed.grid_size = (4, 4)  # as timm's PatchEmbed says it
        self.num_prefix_tokens = 1
        self.cls = nn.Parameter(torch.randn(1, 1, 8))
        self.attn = nn.MultiheadAttention(8, 2, batch_first=True)
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        t = self.patch_embed(x).flatten(2).transpose(1, 2)
        t = torch.cat([self.cls.expand(t.shape[0], -1, -1), t], dim=1)
        t = t + self.attn(t, t, t, need_weights=False)[0]
        return self.head(t[:, 0])


class TinySeg(nn.Module):
    """Per-pixel logits of 3 classes at the input's 32 x 32 (a segmentation without torchvision)."""

    input_shape = (1, 3, 32, 32)
    labels = ["background", "cat", "dog"]

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(3, 3, 3, padding=1)

    def forward(self, x):
        return self.conv(x)


class ChannelsLast(nn.Module):
    """A convolution, then a LayerNorm over channels on its (N, H, W, C) permutation: a channels-last 4-D output
    of a non-square map (8 x 12, 5 channels), as Swin's and ConvNeXt's blocks have."""

    input_shape = (1, 3, 8, 12)

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(3, 5, 3, padding=1)
        self.norm = nn.LayerNorm(5)
        self.fc = nn.Linear(5, 3)

    def forward(self, x):
        y = self.norm(self.conv(x).permute(0, 2, 3, 1))
        return self.fc(y.mean(dim=(1, 2)))


class Wide(Tiny):
    width = 12


class Fussy(Tiny):
    """Builds and loads fine (the layer tree runs on zeros), raises on any other input."""

    def forward(self, x):
        if float(x.detach().abs().sum()) > 0:
            raise ValueError("Fussy only takes all-zero inputs")
        return super().forward(x)


class Poison(nn.Module):
    """Multiplies by NaN: every value after it is NaN."""

    def forward(self, x):
        return x * float("nan")


class Nan(Tiny):
    """Tiny with a NaN poured in after features.3: the first non-finite capture is poison:output."""

    def __init__(self):
        super().__init__()
        self.poison = Poison()

    def forward(self, x):
        return self.fc(self.flatten(self.pool(self.poison(self.features(x)))))


class Canary:
    """Lives in a reference cycle, so only the cyclic garbage collector frees it."""

    def __init__(self):
        self.me = self

    def __del__(self):
        DELETED_IN.append(threading.current_thread().name)


class Litter(Tiny):
    """Leaves cyclic garbage in every forward, then allocates well past the collection threshold."""

    def forward(self, x):
        Canary()
        junk = [[] for _ in range(20000)]
        del junk
        return super().forward(x)


class Nap(nn.Module):
    """Sleeps 0.2 s per call when gradients are on (real runs), not while the tree is built."""

    def forward(self, x):
        if torch.is_grad_enabled():
            time.sleep(0.2)
        return x


class Slow(nn.Module):
    input_shape = (1, 3, 32, 32)
    labels = [f"class{i}" for i in range(10)]

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.naps = nn.Sequential(Nap(), Nap(), Nap(), Nap())
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten()
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        return self.fc(self.flatten(self.pool(self.naps(self.conv(x)))))
'''

SLOW_TICKS = {"conv", "naps.0", "naps.1", "naps.2", "naps.3", "fc"}
RESULT_TIMEOUT_MS = 60_000


# -- files ---------------------------------------------------------------------------
@pytest.fixture(scope="session")
def gui_files(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("gui_models")
    (folder / "models.py").write_text(MODELS_PY)
    rng = np.random.default_rng(0)
    for name, (h, w) in {"image.png": (40, 48), "other.png": (36, 36)}.items():
        pixels = (rng.random((h, w, 3)) * 255).astype(np.uint8)
        Image.fromarray(pixels).save(folder / name)
    np.save(folder / "zeros.npy", np.zeros((1, 3, 32, 32), np.float32))
    (folder / "broken.png").write_bytes(b"this is not a png at all")
    return folder


def source(gui_files: Path, name: str) -> str:
    return f"{gui_files / 'models.py'}:{name}"


@pytest.fixture(scope="session")
def tiny_source(gui_files) -> str:
    return source(gui_files, "Tiny")


@pytest.fixture(scope="session")
def slow_source(gui_files) -> str:
    return source(gui_files, "Slow")


@pytest.fixture(scope="session")
def image_file(gui_files) -> str:
    return str(gui_files / "image.png")


def has_demo() -> bool:
    return (demo_dir() / "demo.safetensors").is_file() and (demo_dir() / "demo.json").is_file()




# -- settings --------------------------------------------------------------------------
@pytest.fixture
def settings_path(tmp_path) -> Path:
    return tmp_path / "settings" / "inspector.ini"


@pytest.fixture
def settings(settings_path) -> QSettings:
    """QSettings in a temp INI file: a test never reads or writes the user's config."""
    settings_path.parent.mkdir(parents=True, exist_ok=True)
    return QSettings(str(settings_path), QSettings.IniFormat)


# -- leak checking -------------------------------------------------------------------
def _live_qt() -> tuple[list[QThread], list[QTimer]]:
    """Every live QThread and QTimer wrapper (a type-cached scan of the garbage collector's objects)."""
    threads, timers, _windows = _live_wrappers()
    return threads, timers


def _live_wrappers() -> tuple[list[QThread], list[QTimer], list[QWidget]]:
    """Live QThread, QTimer and top-level QWidget wrappers that Python made. Top-level widgets are
    found here rather than through QApplication.topLevelWidgets(), which would wrap Qt's own
    internal windows too (popups, completers) -- and crashed doing so once many windows had come
    and gone."""
    threads, timers, windows, kinds = [], [], [], {}
    for obj in gc.get_objects():
        t = type(obj)
        kind = kinds.get(t)
        if kind is None:
            kind = kinds[t] = (1 if issubclass(t, QThread) else 2 if issubclass(t, QTimer)
                               else 3 if issubclass(t, QWidget) else 0)
        if kind and shiboken6.isValid(obj):
            if kind == 3:
                if obj.isWindow():
                    windows.append(obj)
            else:
                (threads if kind == 1 else timers).append(obj)
    return threads, timers, windows


def running_qthreads_and_active_qtimers() -> tuple[list[QThread], list[QTimer]]:
    threads, timers = _live_qt()
    return [t for t in threads if t.isRunning()], [t for t in timers if t.isActive()]


def _flush_deletes() -> None:
    app = QApplication.instance()
    for _ in range(3):
        app.processEvents()
        QApplication.sendPostedEvents(None, QEvent.DeferredDelete)


def find_leaks(before: dict) -> list[str]:
    """What a test left behind, compared with the snapshot `before` taken at its start."""
    _flush_deletes()
    problems = []
    threads, timers = running_qthreads_and_active_qtimers()
    for t in threads:
        if id(t) not in before["qthreads"]:
            problems.append(f"QThread {t.objectName() or t!r} still running")
    for t in timers:
        if id(t) not in before["qtimers"]:
            parent = t.parent()
            problems.append(f"QTimer active (interval {t.interval()} ms, parent {type(parent).__name__})")
    for t in threading.enumerate():
        if t.ident not in before["threads"] and not isinstance(t, threading._DummyThread):
            t.join(1.0)
            if t.is_alive():
                problems.append(f"Python thread {t.name} still alive")
    for w in _live_wrappers()[2]:
        if w.isVisible():
            problems.append(f"top-level widget {type(w).__name__} still visible")
        elif type(w).__module__.startswith("inspector.") and id(w) not in before["widgets"]:
            problems.append(f"top-level widget {type(w).__name__} closed but never deleted")
    return problems


def snapshot() -> dict:
    threads, timers = running_qthreads_and_active_qtimers()
    return {
        "qthreads": {id(t) for t in threads},
        "qtimers": {id(t) for t in timers},
        "threads": {t.ident for t in threading.enumerate()},
        "widgets": {id(w) for w in _live_wrappers()[2]},
    }


def _clean_up() -> None:
    for w in _live_wrappers()[2]:
        if w.isVisible():
            w.close()
        if type(w).__module__.startswith("inspector."):
            w.deleteLater()
    threads, timers = running_qthreads_and_active_qtimers()
    for t in timers:
        t.stop()
    for t in threads:
        t.quit()
        t.wait(5000)
    _flush_deletes()


@pytest.fixture(autouse=True)
def no_leaks(qapp):
    """Fail the test if it leaves a thread, timer or top-level widget behind."""
    before = snapshot()
    yield
    problems = find_leaks(before)
    if problems:
        _clean_up()
        pytest.fail("test leaked: " + "; ".join(problems), pytrace=False)


# -- windows -------------------------------------------------------------------------
def wait_outcome(qtbot, window, timeout: int = RESULT_TIMEOUT_MS):
    """The next RunOutcome shown, or the message of the next failure shown (a str)."""
    got = []
    window.sigResultShown.connect(got.append)
    window.sigFailedShown.connect(got.append)
    try:
        qtbot.waitUntil(lambda: bool(got), timeout=timeout)
    finally:
        window.sigResultShown.disconnect(got.append)
        window.sigFailedShown.disconnect(got.append)
    return got[0]


def expect_result(qtbot, window, timeout: int = RESULT_TIMEOUT_MS):
    got = wait_outcome(qtbot, window, timeout)
    if isinstance(got, str):
        pytest.fail(f"expected a result, the window showed: {got}")
    return got


def expect_failure(qtbot, window, timeout: int = RESULT_TIMEOUT_MS) -> str:
    got = wait_outcome(qtbot, window, timeout)
    if not isinstance(got, str):
        pytest.fail(f"expected a failure, got a result for run {got.run_id}")
    return got


def close_window(window) -> None:
    """Close as the user would (closeEvent stops the worker), then delete."""
    if not shiboken6.isValid(window):
        return
    window.close()
    thread = window.worker_thread.thread
    assert thread.isFinished(), "closing the window left the worker thread running"
    window.deleteLater()


@pytest.fixture
def open_window(qtbot, settings):
    """open_window(source, input, ticks=None, settings=None, expect='result') -> MainWindow.

    Writes model, input and ticks into the settings (None leaves what is there), opens a
    shown MainWindow that restores them, waits for the first result (or failure, or
    nothing with expect=None), and closes every window it opened at teardown.
    """
    from inspector.gui.window.main_window import MainWindow

    opened = []

    def open_(src=None, input=None, ticks=None, settings_=None, expect="result"):
        s = settings_ if settings_ is not None else settings
        if src is not None:
            s.setValue("model/source", src)
        if input is not None:
            s.setValue("input", input)
        if ticks is not None:
            s.setValue(f"ticks/{src}", json.dumps(sorted(ticks)))
        s.sync()
        window = MainWindow(settings=s, ask_trust=lambda _name, _what: True)
        opened.append(window)
        window.show()
        if expect == "result":
            window.first_outcome = expect_result(qtbot, window)
        elif expect == "failure":
            window.first_failure = expect_failure(qtbot, window)
        return window

    yield open_
    for window in opened:
        close_window(window)


@pytest.fixture
def window(open_window, tiny_source, image_file):
    """A MainWindow on the tiny model and a 48x40 noise image, first result drawn."""
    return open_window(tiny_source, image_file)


class _Helpers:
    """The helpers above, for test modules (tests/ is not a package, so no imports from here)."""

    SLOW_TICKS = SLOW_TICKS
    expect_result = staticmethod(expect_result)
    expect_failure = staticmethod(expect_failure)
    wait_outcome = staticmethod(wait_outcome)
    source = staticmethod(source)
    snapshot = staticmethod(snapshot)
    find_leaks = staticmethod(find_leaks)
    has_demo = staticmethod(has_demo)


@pytest.fixture(scope="session")
def ui() -> type[_Helpers]:
    return _Helpers


@pytest.fixture
def make_panel(qtbot):
    """make_panel(diverging=False) -> a shown 900x800 TensorPanel, closed at teardown."""
    from inspector.gui.views.tensor_panel import TensorPanel

    def make(diverging: bool = False) -> TensorPanel:
        panel = TensorPanel("Gradient" if diverging else "Activation", diverging=diverging)
        qtbot.addWidget(panel)
        panel.resize(900, 800)
        panel.show()
        qtbot.waitExposed(panel)
        return panel
    return make
