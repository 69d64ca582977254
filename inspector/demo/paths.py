"""Locate the bundled ``resources`` folder (source checkout or PyInstaller bundle)."""

from __future__ import annotations

import sys
from pathlib import Path


def resources_dir() -> Path:
    """Return the ``resources`` directory shipped with the application."""
    if getattr(sys, "frozen", False) and hasattr(sys, "_MEIPASS"):
        return Path(sys._MEIPASS) / "resources"  # type: ignore[attr-defined]
    return Path(__file__).resolve().parents[2] / "resources"


def demo_dir() -> Path:
    """Directory holding the demo weights (``demo.safetensors``) and metadata."""
    return resources_dir() / "demo"


def samples_dir() -> Path:
    """Directory holding the sample images and tensors."""
    return resources_dir() / "samples"
