"""Issue 12 in the app: a transformers model folder opened from the File menu, its weights offered,
its token grid and attention heads shown like any ViT's."""

from __future__ import annotations

import numpy as np
import pytest

transformers = pytest.importorskip("transformers")


@pytest.fixture
def hf_folder(tmp_path):
    import torch
    from transformers.utils import logging

    logging.disable_progress_bar()  # its tqdm bars start a monitor thread the leak check would catch
    config = transformers.ViTConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=4, intermediate_size=64,
                                    image_size=32, patch_size=8, num_labels=2, id2label={0: "no", 1: "yes"},
                                    label2id={"no": 0, "yes": 1})
    torch.manual_seed(0)
    transformers.ViTForImageClassification(config).eval().save_pretrained(tmp_path / "vit")
    transformers.ViTImageProcessor(size={"height": 32, "width": 32}).save_pretrained(tmp_path / "vit")
    return tmp_path / "vit"


def test_a_save_pretrained_folder_opens_from_the_file_menu(ui, qtbot, window, hf_folder, monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    from inspector.core.records.tokens import TokenGrid

    monkeypatch.setattr(QFileDialog, "getExistingDirectory", staticmethod(lambda *a, **k: str(hf_folder)))
    action = next(a for a in window.menuBar().actions()[0].menu().actions()
                  if a.text() == "Open Hugging Face model folder…")
    action.trigger()
    qtbot.waitUntil(lambda: window.state.model is not None and window.state.model.kind == "hf", timeout=60_000)
    info = window.state.model
    assert info.source == f"hf:{hf_folder}" and info.labels == ("no", "yes")
    assert info.tokens == TokenGrid(4, 4, 1)
    weights = [window.weights_combo.itemText(i) for i in range(window.weights_combo.count())]
    assert weights == ["pretrained (folder)", "random, new seed", "random, seed…", "checkpoint…"]
    attention = "vit.layers.0.attention"
    window.state.set_ticks({attention})
    window.layer_combo.setCurrentIndex(window.layer_combo.findData(attention))
    window.grad_site_combo.setCurrentText("attention (per head)")
    window.state.select_grad_site(window.grad_site_combo.currentText())
    key = f"{attention}:attention"
    qtbot.waitUntil(lambda: window.state.outcome is not None and key in window.state.outcome.result.captures,
                    timeout=60_000)
    probs = window.state.outcome.result.captures[key].array
    assert probs.shape == (1, 4, 17, 17)
    np.testing.assert_allclose(probs.sum(axis=-1), 1.0, rtol=1e-5)
    panel = window.gradient_panel
    qtbot.waitUntil(lambda: panel.maps is not None and len(panel.maps) == 4, timeout=10_000)
    np.testing.assert_array_equal(panel.maps[0], probs[0, 0, 0, 1:].reshape(4, 4))  # the class token's row


def test_a_folder_without_config_says_so(window, tmp_path):
    window.open_hf_folder(str(tmp_path))
    assert "has no config.json" in window.banner.text()
