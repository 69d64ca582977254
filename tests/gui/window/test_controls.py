"""The toolbar's target chooser: classifier targets, and segmentation targets for dense models."""

from __future__ import annotations

from inspector.gui.common.controls import TargetCombo


def test_target_choices_for_a_classifier_and_for_a_segmentation(qtbot):
    combo = TargetCombo()
    qtbot.addWidget(combo)
    combo.setCompleter(None)  # typed text below is set programmatically: no completion popup to leave open
    combo.set_labels(["bg", "cat"])
    assert [combo.itemData(i) for i in range(combo.count())] == ["top1", "sum", "output", "0", "1"]
    combo.set_labels(["bg", "cat"], dense=True)
    assert [combo.itemData(i) for i in range(combo.count())] == ["auto", "seg:0", "seg:1", "sum"]
    assert combo.itemText(2) == "seg:1: cat, all pixels"
    combo.setEditText("seg:1@10,20,30,40")  # a box, typed
    assert combo.target() == "seg:1@10,20,30,40"
    combo.setEditText("1: cat")
    assert combo.target() == "1"
    combo.set_target("seg:1")
    assert combo.currentIndex() == 2 and combo.target() == "seg:1"
    combo.set_target("seg:0@1,2,3,4")  # from a session: shown as typed, read back the same
    assert combo.target() == "seg:0@1,2,3,4"


def test_the_model_chooser_offers_the_bundled_models_the_shuffled_twin_among_them(qtbot):
    from inspector.gui.common.controls import ModelCombo

    combo = ModelCombo()
    qtbot.addWidget(combo)
    items = [combo.itemText(i) for i in range(combo.count())]
    assert items[:3] == ["demo", "demo-detector", "demo-shuffled"]
    with qtbot.waitSignal(combo.sigChosen) as chosen:
        combo.activated.emit(2)
    assert chosen.args == ["demo-shuffled"]
