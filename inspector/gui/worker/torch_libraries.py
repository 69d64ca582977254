"""Load PyTorch's shared libraries without holding the GIL, before the worker imports the engine.

`import torch` loads about 2 GB of shared libraries (libtorch, CUDA's) through ctypes and the import
system, which hold the GIL while the dynamic loader maps them and runs their constructors: the GUI
thread, which needs the GIL for every Python slot and pyqtgraph paint, stalls for up to 300 ms at a
time while the window is first drawn. A foreign call through ctypes releases the GIL, so loading
the same libraries first with libc's `dlopen` (RTLD_GLOBAL, as torch loads them) does that work
while the GUI thread runs; `import torch` then finds them loaded. Measured on 2 cores: the longest
gap of a 5 ms heartbeat on another thread while torch is imported, 285-294 ms without, 62-85 ms with.

Linux only (elsewhere, and whenever a library does not load, `import torch` does its own loading).
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import sys
import sysconfig


def torch_libraries() -> list[str]:
    """The two files whose loading brings in every library torch needs: its global dependencies
    (CUDA's, through their run paths) and its extension module (libtorch and friends)."""
    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        return []
    root = os.path.dirname(spec.origin)
    names = (os.path.join(root, "lib", "libtorch_global_deps.so"),
             os.path.join(root, "_C" + (sysconfig.get_config_var("EXT_SUFFIX") or ".so")))
    return [name for name in names if os.path.isfile(name)]


def preload_torch_libraries() -> int:
    """dlopen torch's libraries with the GIL released; how many loaded (0 where this does not apply)."""
    if not sys.platform.startswith("linux") or "torch" in sys.modules:
        return 0
    try:
        libc = ctypes.CDLL(None)
        dlopen = libc.dlopen
    except (OSError, AttributeError):
        return 0
    dlopen.restype = ctypes.c_void_p
    dlopen.argtypes = [ctypes.c_char_p, ctypes.c_int]
    flags = os.RTLD_NOW | os.RTLD_GLOBAL
    return sum(bool(dlopen(os.fsencode(name), flags)) for name in torch_libraries())
