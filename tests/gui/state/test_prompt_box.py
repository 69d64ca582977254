"""Issue 56 item 1 in the app: a Prompt box beside the Target chooser for a CLIP or SigLIP folder; prompts typed
there (several separated by |) become the text: target the run explains."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

transformers = pytest.importorskip("transformers")

sys.path.insert(0, str(Path(__file__).parents[2] / "unit" / "sources"))
from clip_folders import clip_folder, reference_logits  # noqa: E402


@pytest.fixture
def clip(tmp_path):
    from transformers.utils import logging

    logging.disable_progress_bar()  # its tqdm bars start a monitor thread the leak check would catch
    model, tok = clip_folder(tmp_path / "clip")
    return tmp_path / "clip", model, tok


def test_prompts_typed_in_the_box_are_the_target(ui, qtbot, window, clip):
    import torch
    from PySide6.QtCore import Qt

    folder, model, tok = clip
    assert not any(a.isVisible() for a in window.prompt_actions)  # the demo classifier takes no prompts
    window.open_hf_folder(str(folder))
    qtbot.waitUntil(lambda: window.state.model is not None and window.state.model.task == "image-text",
                    timeout=60_000)
    assert all(a.isVisible() for a in window.prompt_actions)
    window.prompt_box.setText("a dog | a cat|a car")
    qtbot.keyClick(window.prompt_box, Qt.Key_Return)
    target = 'text:"a dog"|"a cat"|"a car"'
    assert window.state.target == target
    qtbot.waitUntil(lambda: window.state.outcome is not None and window.state.outcome.result.target == target,
                    timeout=60_000)
    result = window.state.outcome.result
    with torch.no_grad():  # the first prompt's probability among the three, by hand on the run's input
        expected = torch.softmax(reference_logits(model, tok, False, ["a dog", "a cat", "a car"],
                                                  torch.from_numpy(result.input)), dim=1)[0, 0]
    assert result.objective == pytest.approx(float(expected), rel=1e-5)
    assert window.target_combo.currentText() == target  # the chooser shows it as typed


def test_a_malformed_prompt_is_said_and_the_target_stays(ui, qtbot, window, clip):
    from PySide6.QtCore import Qt

    window.open_hf_folder(str(clip[0]))
    qtbot.waitUntil(lambda: window.state.model is not None and window.state.model.task == "image-text",
                    timeout=60_000)
    before = window.state.target
    window.prompt_box.setText('"a dog')
    qtbot.keyClick(window.prompt_box, Qt.Key_Return)
    assert window.state.target == before
    assert "closing quote is missing" in window.statusBar().currentMessage()


def test_the_box_shows_a_text_target_set_elsewhere(ui, qtbot, window, clip):
    window.open_hf_folder(str(clip[0]))
    qtbot.waitUntil(lambda: window.state.model is not None and window.state.model.task == "image-text",
                    timeout=60_000)
    window.state.set_target('text:"a \\"red\\" car"|"a cat"')
    assert window.prompt_box.text() == '"a \\"red\\" car"|"a cat"'
    window.state.set_target('text:"a dog"|"a cat"')
    assert window.prompt_box.text() == "a dog | a cat"
