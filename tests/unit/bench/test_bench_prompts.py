"""`bench --prompts`: its text-prompt Grad-CAM baseline is the map the engine makes (so the row compares the same
work), and its rows read as a table."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

transformers = pytest.importorskip("transformers")

from inspector.bench.prompts import format_row, plain_prompt_gradcam  # noqa: E402

sys.path.insert(0, str(Path(__file__).parents[1] / "sources"))
from clip_folders import clip_folder  # noqa: E402


@pytest.mark.numeric
def test_the_plain_baseline_makes_the_engines_map(tmp_path):
    from inspector.core import attribute, load_model

    whole, tok = clip_folder(tmp_path / "clip")
    x = torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(3))
    found = attribute(load_model(f"hf:{tmp_path / 'clip'}"), x, "gradcam", 'text:"a red car"')
    plain = plain_prompt_gradcam(whole, tok, x, "a red car", found.layer)
    np.testing.assert_allclose(found.map, plain.numpy(), rtol=1e-4, atol=1e-6)


def test_rows_read_well():
    row = {"row": "legrad", "model": "vit_b_16 (random)", "ours_s": 1.15, "plain_s": 1.0, "ratio": 1.15,
           "target": 1.5}
    assert format_row(row).split() == ["legrad", "vit_b_16", "(random)", "1150", "ms", "vs", "plain", "1000", "ms",
                                       "=", "1.15x", "(target", "<=", "1.5)", "ok"]
    assert format_row({**row, "ratio": 1.6}).split()[-1] == "OVER"
