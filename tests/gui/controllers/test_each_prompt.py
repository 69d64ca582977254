"""Issue 56 item 1 in the Attribution tab: a CLIP folder run with several prompts offers Each prompt, the chosen
method once a prompt side by side; each cell's map is the one `attribute` makes for that prompt's probability
among the same prompts (its prompt first), and the Class chooser's prompt entries explain those targets."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

transformers = pytest.importorskip("transformers")

sys.path.insert(0, str(Path(__file__).parents[2] / "unit" / "sources"))
from clip_folders import clip_folder  # noqa: E402

PROMPTS = 'text:"a dog"|"a cat"|"a car"'
FIRST = {'"a dog"': 'text:"a dog"|"a cat"|"a car"', '"a cat"': 'text:"a cat"|"a dog"|"a car"',
         '"a car"': 'text:"a car"|"a dog"|"a cat"'}  # each cell's target, by hand


@pytest.fixture
def clip(tmp_path):
    from transformers.utils import logging

    logging.disable_progress_bar()  # its tqdm bars start a monitor thread the leak check would catch
    clip_folder(tmp_path / "clip")
    return tmp_path / "clip"


@pytest.mark.numeric
def test_each_prompt_is_attribute_with_that_prompt_first(ui, qtbot, open_window, image_file, clip):
    import torch

    from inspector.core import attribute, load_model

    window = open_window(f"hf:{clip}", image_file)
    view = window.views.attribution
    assert not view.each_prompt.isVisibleTo(view)  # no prompts yet
    window.state.set_target(PROMPTS)
    result = ui.expect_result(qtbot, window).result
    assert result.target == PROMPTS
    window.state.set_view("attribution")
    assert view.each_prompt.isVisibleTo(view) and view.each_prompt.isEnabled()
    chooser = {view.target.itemText(i).split(" (")[0]: view.target.itemData(i) for i in range(1, view.target.count())}
    assert chooser == {p.strip('"'): t for p, t in FIRST.items()}  # not the prompt's rank as a class index

    view.method.setCurrentText("saliency")
    view.each_prompt.click()
    qtbot.waitUntil(lambda: not view.comparing, timeout=60_000)
    comparison = view.comparison
    assert comparison.methods == tuple(FIRST) and not comparison.failed
    loaded, x = load_model(f"hf:{clip}"), torch.from_numpy(result.input)
    maps = {}
    for name, target in FIRST.items():
        found = comparison.found[name]
        assert (found.method, found.target) == ("saliency", target)
        maps[name] = attribute(loaded, x, "saliency", target).map
        np.testing.assert_allclose(found.map, maps[name], rtol=1e-5, atol=1e-8)
    assert not np.allclose(maps['"a dog"'], maps['"a cat"'])  # each prompt its own map
    assert comparison.caption_lines(comparison.found['"a cat"'])[0] == 'for "a cat" among "a dog", "a car"'
    assert comparison.status.text() == "3 of 3 prompts, each map on its own scale."


def test_each_prompt_is_off_for_one_prompt_and_a_class_agnostic_method(ui, qtbot, open_window, image_file, clip):
    window = open_window(f"hf:{clip}", image_file)
    view = window.views.attribution
    window.state.set_target('text:"a dog"|"a cat"')
    ui.expect_result(qtbot, window)
    assert view.each_prompt.isVisibleTo(view)
    view.method.setCurrentText("rollout")  # class-agnostic: one map whatever the prompt
    assert not view.each_prompt.isEnabled()
    window.state.set_target('text:"a dog"')  # one prompt: its score, nothing to set against
    ui.expect_result(qtbot, window)
    assert not view.each_prompt.isVisibleTo(view)
