"""The screenshot tool's Attribution options: --cell METHOD=TARGET names each cell by its method and what it
explains, in the order given; --compare takes only what the tab offers."""

from __future__ import annotations

import pytest

from inspector.gui.screenshot import cell_asks, main


def test_cells_are_named_by_method_and_target_in_order():
    asks = cell_asks(["rollout=3", "legrad=7", 'gradcam=text:"a dog"|"a cat"', "saliency=box:1", "chefer="])
    assert list(asks.items()) == [
        ("rollout for class 3", ("rollout", "3")),
        ("legrad for class 7", ("legrad", "7")),
        ('gradcam for "a dog" among "a cat"', ("gradcam", 'text:"a dog"|"a cat"')),
        ("saliency for box:1", ("saliency", "box:1")),
        ("chefer for the run's target", ("chefer", "")),
    ]


def test_an_unknown_comparison_is_refused_before_the_app_opens(capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["out.png", "--compare", "classes"])
    assert stopped.value.code == 2
    assert "--compare: invalid choice: 'classes' (choose from 'all', 'prompts', 'boxes')" in capsys.readouterr().err
