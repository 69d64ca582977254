"""The window-on-a-remote-engine tests' server: the remote tests' own helpers (tests/unit/remote/conftest.py:
`engine_server`, a real `network-inspector serve` on 127.0.0.1), loaded from their file once."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def remote_servers():
    """tests/unit/remote/conftest.py as a module (its `engine_server`)."""
    path = Path(__file__).parents[2] / "unit" / "remote" / "conftest.py"
    spec = importlib.util.spec_from_file_location("remote_servers_for_gui", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (its dataclass looks itself up there)
    spec.loader.exec_module(module)
    return module
