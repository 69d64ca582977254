"""Which versions produced what the user sees: one definition for the manifests the commands write
and the app's About box. Torch-free: a package that is not imported yet can be reported as such
instead of being imported to ask it."""

from __future__ import annotations

import platform
import sys
from importlib import metadata

#: What produced the numbers: written into every manifest.
ENGINE = ("torch", "torchvision", "numpy")


def versions(packages: tuple[str, ...] = ENGINE, unloaded: str | None = None) -> dict[str, str]:
    """{"python": ..., each package: its installed version, "inspector": ours}; `unloaded`: said of a
    package not imported yet, instead of its installed version (the app's window before the engine)."""
    out = {"python": platform.python_version()}
    for name in packages:
        if unloaded is not None and name not in sys.modules:
            out[name] = unloaded
        else:
            out[name] = _installed(name)
    out["inspector"] = _installed("network-inspector")
    return out


def _installed(name: str) -> str:
    """The installed distribution's version; for a module installed under another name (PySide6
    comes as PySide6-Essentials), the imported module's own."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return str(getattr(sys.modules.get(name), "__version__", None) or "unknown")
