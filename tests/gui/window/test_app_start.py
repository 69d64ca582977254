"""Starting the app on a Linux desktop without Qt's xcb libraries says what to install, not abort."""

import ctypes.util
import sys

import pytest

from inspector.gui import app


@pytest.fixture
def x11(monkeypatch):
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setenv("DISPLAY", ":0")


def test_missing_xcb_cursor_is_named(x11, monkeypatch, capsys):
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: None)
    assert "libxcb-cursor0" in app.missing_platform_library()
    assert app.run_app([]) == 1
    assert "apt install libxcb-cursor0 libxcb-icccm4" in capsys.readouterr().err


def test_present_library_or_other_platform_is_fine(x11, monkeypatch):
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: f"lib{name}.so.0")
    assert app.missing_platform_library() is None
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: None)
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    assert app.missing_platform_library() is None
