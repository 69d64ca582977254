"""One definition of which versions produced what the user sees (manifests and the About box)."""

from __future__ import annotations

import platform
import subprocess
import sys
from importlib import metadata

import numpy

from inspector.core.storage.versions import versions


def test_manifest_versions_are_the_installed_ones():
    found = versions()
    assert list(found) == ["python", "torch", "torchvision", "numpy", "inspector"]
    assert found["python"] == platform.python_version()
    assert found["numpy"] == numpy.__version__ == metadata.version("numpy")
    assert found["torchvision"] == metadata.version("torchvision")
    assert found["inspector"] == metadata.version("network-inspector")


def test_the_window_asks_without_importing_torch():
    code = ("import sys\n"
            "from inspector.core.storage.versions import versions\n"
            "found = versions(('torch', 'numpy'), unloaded='not loaded yet')\n"
            "import numpy\n"
            "print(found['torch'], 'torch' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["not", "loaded", "yet", "False"], done.stderr
