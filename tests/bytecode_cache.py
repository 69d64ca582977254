"""Bytecode of the installed packages for every process the tests start, where Python may not write it.

With PYTHONDONTWRITEBYTECODE set and an install that did not compile its packages (`uv sync` without
UV_COMPILE_BYTECODE=1), each of the suite's ~100 interpreters (the two workers, the CLI programs, the `serve`
processes, Ray's workers, the fresh processes the import checks start) compiled torch's, torchvision's and Qt's
sources again: `import torch, torchvision` and the app took 13.7 s of CPU here, 5.7 s from bytecode.

So the suite's first run compiles what those processes import once, in one probe process, into a cache beside the
environment's packages (PYTHONPYCACHEPREFIX=<environment>/pycache), and every process of the run reads it. The
processes themselves still write nothing (PYTHONDONTWRITEBYTECODE stays): a module a test writes is never cached,
so a file rewritten within the same second is never read from stale bytecode. A cached file whose source changed
(mtime or size) is compiled from source as before. Nothing is done where Python writes bytecode anyway, where the
install compiled it, or where PYTHONPYCACHEPREFIX is set already (set it to an empty folder to measure without).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

#: What the suite's processes import (module, its distribution): the engine, the app, the server, the CLI,
#: the optional families and pytest's own plugins (the two workers and the pytest runs a test starts).
PROBED = (
    ("torch", "torch"), ("torchvision.ops", "torchvision"), ("torchvision.models.detection", "torchvision"),
    ("torchvision.transforms.v2", "torchvision"), ("numpy", "numpy"), ("PIL.Image", "pillow"),
    ("safetensors.torch", "safetensors"), ("PySide6.QtWidgets", "PySide6"), ("pyqtgraph", "pyqtgraph"),
    ("websockets.asyncio.server", "websockets"), ("timm", "timm"), ("ray.data", "ray"),
    ("sklearn.decomposition", "scikit-learn"), ("pytest", "pytest"), ("xdist.plugin", "pytest-xdist"),
    ("pytestqt.plugin", "pytest-qt"), ("psutil", "psutil"),
    *((f"transformers.{name}", "transformers") for name in (
        "modeling_utils", "models.auto.modeling_auto", "models.vit.modeling_vit", "models.clip.modeling_clip",
        "models.detr.modeling_detr")),
    ("inspector.cli.dispatch", None), ("inspector.gui.window.main_window", None), ("inspector.gui.app", None),
    ("inspector.remote.server", None), ("inspector.core.api", None),
)

#: Run with the cache as PYTHONPYCACHEPREFIX and bytecode writing on: Python's library (read from the cache too
#: once it is set, instead of its own __pycache__) and every module the probed ones import.
_PROBE = r"""
import compileall, importlib, re, sys, sysconfig
skipped = re.compile(r"[/\\](test|tests|idlelib|tkinter|turtledemo|lib2to3|ensurepip|site-packages)[/\\]")
compileall.compile_dir(sysconfig.get_paths()["stdlib"], quiet=2, rx=skipped)
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except Exception:  # an optional family not installed, or one that fails here: its tests say so
        pass
"""


def _wanted() -> Path | None:
    """The cache folder, or None where no cache is wanted (see the module's text)."""
    if not sys.flags.dont_write_bytecode or os.environ.get("PYTHONPYCACHEPREFIX") or sys.prefix == sys.base_prefix:
        return None
    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None or (Path(spec.origin).parent / "__pycache__").is_dir():
        return None
    return Path(sys.prefix) / "pycache"


def use_bytecode_cache() -> None:
    """Fill the cache where its stamp (Python's and the probed packages' versions, the probe) is not this one's,
    then point this process and every process it starts at it."""
    cache = _wanted()
    if cache is None:
        return
    modules = [name for name, dist in PROBED if importlib.util.find_spec(name.split(".")[0]) is not None]
    versions = {}
    for _, dist in PROBED:
        if dist:
            try:
                versions[dist] = metadata.version(dist)
            except metadata.PackageNotFoundError:
                pass
    stamp, want = cache / "probed.json", json.dumps({"python": sys.version, "packages": versions,
                                                      "modules": modules, "probe": _PROBE}, sort_keys=True)
    try:
        fresh = stamp.read_text(encoding="utf-8") != want
    except OSError:
        fresh = True
    if fresh and not os.environ.get("PYTEST_XDIST_WORKER"):
        try:
            cache.mkdir(exist_ok=True)
        except OSError:  # an environment this user may not write: compiled at each start, as before
            return
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        probe = subprocess.run([sys.executable, "-c", _PROBE, *modules], env={**env, "PYTHONPYCACHEPREFIX": str(cache)},
                               capture_output=True, timeout=600)
        if probe.returncode == 0:
            stamp.write_text(want, encoding="utf-8")
    if cache.is_dir():
        os.environ["PYTHONPYCACHEPREFIX"] = str(cache)
        sys.pycache_prefix = str(cache)
