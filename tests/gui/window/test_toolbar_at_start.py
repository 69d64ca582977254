"""Issue 25, item 12: before the first model has loaded, the toolbar shows no weights or target it did not
choose ("random" and "sum of output" were on screen for seconds at start, before "bundled" and "auto")."""

from __future__ import annotations

from inspector.gui.common.controls import TargetCombo, WeightsCombo


def test_the_choosers_show_nothing_they_did_not_choose_before_a_model_loads(qtbot):
    weights, target = WeightsCombo(), TargetCombo()
    qtbot.addWidget(weights)
    qtbot.addWidget(target)
    assert [weights.itemText(i) for i in range(weights.count())] == ["…"]
    assert target.currentText() == "auto" and target.target() == "auto"
