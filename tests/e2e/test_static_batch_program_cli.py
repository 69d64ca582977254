"""Issue 40, item 6: `network-inspector attribute --trust` on a `.pt2` program exported with torch.export's default
static batch (1) runs integrated gradients and the deletion and insertion metrics, its copies one at a time, and
gives the map and curves of the eager module it was exported from."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import torch
from torch import nn

from inspector.core import attribute
from inspector.core.sources.loaded import LoadedModel


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.head = nn.Linear(4, 3)

    def forward(self, x):
        return self.head(torch.relu(self.conv(x)).mean((2, 3)))


def test_attribute_runs_a_static_batch_program_with_metrics(tmp_path):
    module = Tiny().eval()
    x = torch.rand(1, 3, 16, 16, generator=torch.Generator().manual_seed(4))
    torch.export.save(torch.export.export(module, (torch.rand(1, 3, 16, 16),)), str(tmp_path / "tiny.pt2"))
    np.save(tmp_path / "x.npy", x.numpy())
    done = subprocess.run([sys.executable, "-m", "inspector", "attribute", "--model", str(tmp_path / "tiny.pt2"),
                           "--trust", "--input", str(tmp_path / "x.npy"), "--method", "ig", "--steps", "5",
                           "--metrics", "deletion,insertion", "--metric-steps", "4", "--json",
                           "--out", str(tmp_path / "map.npy")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)
    assert said["settings"]["batch"] == 1
    expected = attribute(LoadedModel(module, "tiny"), x, "ig", options={"steps": 5}, metrics=("deletion", "insertion"),
                         metric_steps=4)
    assert said["settings"]["batch"] < dict(expected.details)["batch"]  # the eager module ran its points together
    found = np.load(tmp_path / "map.npy")
    np.testing.assert_allclose(found, expected.map, rtol=1e-4, atol=1e-4 * float(np.abs(expected.map).max()))
    for curve in expected.curves:
        np.testing.assert_allclose(said["metrics"][curve.metric]["scores"], curve.scores, rtol=1e-5, atol=1e-7)
