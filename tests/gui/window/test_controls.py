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


def test_a_chosen_target_longer_than_its_box_reads_from_its_start(qtbot):
    """A detector's target 'box:0: detection 1 by score' in a box narrower than the words showed
    ': detection 1 by score' (the line edit's cursor at the end scrolls the start away): a choice made by the
    program or from the list is shown from its first letter; text being typed keeps its cursor."""
    combo = TargetCombo()
    qtbot.addWidget(combo)
    combo.setFixedWidth(120)
    combo.set_labels(None, boxes=True)
    combo.set_target("box:0")
    edit = combo.lineEdit()
    assert edit.text() == "box:0: detection 1 by score"
    assert edit.cursorPosition() == 0
    combo.setCurrentIndex(3)  # from the list
    assert edit.text() == "box:2: detection 3 by score" and edit.cursorPosition() == 0
    combo.set_target("box:1,2,3,4@traffic light")  # as typed, from a session
    assert edit.cursorPosition() == 0


def test_typing_into_the_target_chooser_keeps_its_cursor(qtbot):
    """The cursor is homed only for text the program or the list set: letters typed go where they are typed."""
    from PySide6.QtCore import Qt

    combo = TargetCombo()
    qtbot.addWidget(combo)
    combo.setCompleter(None)
    combo.set_labels(None, boxes=True)
    combo.lineEdit().clear()
    qtbot.keyClicks(combo.lineEdit(), "box:3")
    assert combo.lineEdit().text() == "box:3" and combo.lineEdit().cursorPosition() == 5
    qtbot.keyClick(combo.lineEdit(), Qt.Key_Home)
    qtbot.keyClicks(combo.lineEdit(), "x")
    assert combo.lineEdit().text() == "xbox:3"
