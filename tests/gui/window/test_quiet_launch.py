"""Issue 52 item 7: a launch writes nothing to stderr that the user cannot act on. Every launch and `--self-test`
wrote Qt's "QWidget::setMinimumSize: (/QScrollArea) Negative sizes (0,-1) are not possible" (and its setMaximumSize
twin): the message banner sized its empty message area to QLabel.heightForWidth, which is -1 without text."""

from __future__ import annotations


def test_the_banner_without_a_message_is_sized_quietly(qtbot, qtlog):
    from inspector.gui.views.message_banner import MessageBanner

    banner = MessageBanner()
    qtbot.addWidget(banner)
    banner.resize(600, 40)
    banner.show()
    qtbot.waitExposed(banner)
    assert banner.label.text() == "" and banner.message_area.height() == 0
    assert [r.message for r in qtlog.records if "Negative sizes" in r.message] == []

