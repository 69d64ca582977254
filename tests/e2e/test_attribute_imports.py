"""Issue 54: `attribute --method ig` loads what it uses. Run as a user runs it (its own process, `-X importtime`),
it imports no module of the graph's drawing (before, the graph command's help imported five of them to say a
picture's sizes) and nothing of the app."""

from __future__ import annotations

import re
import subprocess
import sys

def test_attribute_ig_imports_no_graph_drawing_and_no_app(tmp_path):
    out = tmp_path / "map.npy"
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "inspector.cli", "attribute", "--model", "demo",
                           "--method", "ig", "--steps", "8", "--input", "sample:star", "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert out.is_file()
    imported = set(re.findall(r"\|\s+(inspector(?:\.\w+)*)\s*$", done.stderr, re.MULTILINE))
    assert "inspector.core.attribution.quadrature" in imported  # the reading sees what ran (IG's quadrature)
    assert [m for m in imported if m.startswith("inspector.core.graph.draw")] == []
    assert [m for m in imported if m.startswith("inspector.gui")] == []
