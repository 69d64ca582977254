"""Issue 25, item 15: the worker loads torch's shared libraries through libc's dlopen (a ctypes foreign
call, which releases the GIL) before it imports torch; `import torch` then finds them loaded."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROBE = """
import sys
from inspector.gui.worker.torch_libraries import preload_torch_libraries, torch_libraries
names = torch_libraries()
maps = lambda: open('/proc/self/maps').read()
before = 'libtorch_cpu.so' in maps()
n = preload_torch_libraries()
print(len(names), n, before, 'libtorch_cpu.so' in maps(), 'torch' in sys.modules)
import torch
print(float(torch.arange(4.0).sum()), preload_torch_libraries())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="dlopen and /proc/self/maps: Linux")
def test_torchs_libraries_are_loaded_before_torch_is_imported():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, check=True)
    first, second = out.stdout.strip().splitlines()[-2:]
    # both files found and loaded; libtorch_cpu (a dependency of torch's extension) mapped before any import
    assert first == "2 2 False True False"
    assert second == "6.0 0"  # torch works on them; once imported, nothing more to do
