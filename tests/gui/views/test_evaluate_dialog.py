"""The Evaluate… dialog offers the methods Compare all computes for a class, every metric of the evaluation's metric
table as it stands when the dialog opens (a metric registered since is offered), and the protocols with their steps
(greyed where the protocol fixes them); it says in one line what keeps it from being accepted."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog

from inspector.core.evaluate.metrics import METRIC_ROWS, Metric, register, unregister
from inspector.core.records.methods import compared
from inspector.core.records.protocols import PROTOCOLS
from inspector.gui.views.evaluation.dialog import EvaluateDialog


def test_it_offers_the_tables_and_defaults(qtbot):
    register(Metric("test-spread", ("low", "high"), "nowhere:nothing", "a test's metric"))
    try:
        dialog = EvaluateDialog()
        qtbot.addWidget(dialog)
        assert list(dialog.methods) == list(compared(boxes=False))
        assert list(dialog.metrics) == list(METRIC_ROWS) and "test-spread" in dialog.metrics
        assert "a test's metric" in dialog.metrics["test-spread"].toolTip()
    finally:
        unregister("test-spread")
    assert [dialog.protocol.itemData(i) for i in range(dialog.protocol.count())] == list(PROTOCOLS)
    data, out, methods, metrics, protocol, steps = dialog.choices()
    assert (methods, metrics, protocol, steps) == (("saliency", "gradcam"), ("deletion", "insertion"), "inspector",
                                                   PROTOCOLS["inspector"].steps)
    dialog.protocol.setCurrentIndex(dialog.protocol.findData("rise2018"))  # 224 pixels a step: no K to choose
    assert not dialog.steps.isEnabled() and dialog.choices()[4:] == ("rise2018", None)
    dialog.protocol.setCurrentIndex(dialog.protocol.findData("inspector"))
    assert dialog.steps.isEnabled() and dialog.choices()[5] == 50


def test_the_last_choices_come_back(qtbot, tmp_path):
    last = (str(tmp_path), str(tmp_path / "out"), ("gradcam",), ("insertion",), "inspector", 7)
    dialog = EvaluateDialog(last=last)
    qtbot.addWidget(dialog)
    assert dialog.choices() == last


def test_it_says_what_is_missing(qtbot, tmp_path):
    dialog = EvaluateDialog()
    qtbot.addWidget(dialog)
    dialog.data.setText("")
    dialog.buttons.accepted.emit()
    assert dialog.result() != QDialog.Accepted and dialog.why.text() == "Choose the folder of images to evaluate over."
    dialog.data.setText(str(tmp_path / "nowhere"))
    dialog.buttons.accepted.emit()
    assert dialog.why.text() == f"{tmp_path / 'nowhere'} is not a folder."
    dialog.data.setText(str(tmp_path))
    for box in dialog.methods.values():
        box.setChecked(False)
    dialog.buttons.accepted.emit()
    assert dialog.why.text() == "Tick at least one method."
    dialog.methods["ig"].setChecked(True)
    for box in dialog.metrics.values():
        box.setChecked(False)
    dialog.buttons.accepted.emit()
    assert dialog.why.text() == "Tick at least one metric."
    dialog.metrics["deletion"].setChecked(True)
    dialog.out.setText("")
    dialog.buttons.accepted.emit()
    assert dialog.why.text() == "Choose the folder to write the evaluation to."
    dialog.out.setText(str(tmp_path / "out"))
    dialog.buttons.accepted.emit()
    assert dialog.result() == QDialog.Accepted
    assert dialog.choices() == (str(tmp_path), str(tmp_path / "out"), ("ig",), ("deletion",), "inspector", 50)
