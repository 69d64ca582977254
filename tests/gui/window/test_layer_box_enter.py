"""Issue 41, item 11: part of a layer's name and Enter in the Layer box picks the one layer holding it, and says in
the status bar when several or none do (it did nothing and said nothing)."""

from __future__ import annotations

from PySide6.QtCore import Qt


def _type(qtbot, combo, text: str) -> None:
    combo.lineEdit().clear()
    qtbot.keyClicks(combo.lineEdit(), text)
    qtbot.keyClick(combo.lineEdit(), Qt.Key_Return)


def test_enter_picks_the_single_match_or_says_why_not(qtbot, window):
    combo = window.layer_combo
    names = [combo.itemText(i) for i in range(combo.count())]
    assert names[:3] == ["features.0", "features.3", "fc"], names  # the tiny model's ticked layers
    _type(qtbot, combo, "fc")  # whole: as before
    assert window.state.layer == "fc"
    _type(qtbot, combo, "res.3")
    assert combo.currentText() == "features.3" and window.state.layer == "features.3"
    _type(qtbot, combo, "feat")
    assert window.state.layer == "features.3"  # unchanged
    assert window.statusBar().currentMessage() == ("2 layers hold 'feat' (features.0, features.3): type more of the "
                                                   "name, or pick one from the list.")
    _type(qtbot, combo, "conv9")
    assert window.statusBar().currentMessage() == "No layer holds 'conv9': type part of a layer's name (conv, layer4.2)."
    assert window.state.layer == "features.3"
