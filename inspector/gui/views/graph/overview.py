"""The Graph tab's overview: the whole graph, small, in the view's lower right corner, with the part on screen
outlined; a click or a drag moves the view there. Shown only while the graph is larger than the view, and only as
large as the graph's shape needs (a tall chain is a narrow strip, not a box of white over the nodes), at most
SIZE and a quarter of the view's width and a third of its height.

It draws the layout's boxes and frames itself, as plain rectangles from the layout's records (not the scene's
items): a graph of thousands of nodes costs a few milliseconds here, and moving the view redraws only this corner.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QWidget

from .items import FILL, FRAME_BORDER, FRAME_FILL

SIZE = (190, 150)  # the most it takes, in pixels
LEAST = 40  # the least of either side
SEEN = QColor(20, 100, 220)


class Overview(QWidget):
    def __init__(self, view) -> None:
        super().__init__(view)
        self.view = view
        self.setFixedSize(LEAST, LEAST)
        self.setToolTip("The whole graph: the blue frame is the part on screen (click or drag to move)")
        self.setCursor(Qt.PointingHandCursor)
        self.hide()

    # -- where -----------------------------------------------------------------------
    def place(self) -> None:
        self.follow()

    def size_for(self, content: QRectF) -> tuple[int, int]:
        """The widget's size for a graph spanning `content`: its shape, within SIZE and the view's share."""
        v = self.view.viewport().rect()
        most_w, most_h = min(SIZE[0], max(LEAST, v.width() // 4)), min(SIZE[1], max(LEAST, v.height() // 3))
        w, h = content.width() + 16, content.height() + 16
        k = min((most_w - 2) / max(w, 1), (most_h - 2) / max(h, 1))
        return max(LEAST, min(most_w, round(w * k) + 2)), max(LEAST, min(most_h, round(h * k) + 2))

    def follow(self) -> None:
        """Shown while the graph does not fit the view, sized to it in the corner; the part on screen redrawn."""
        content = self.view.content()
        wanted = not content.isEmpty() and not self.seen().contains(content)
        self.setVisible(wanted)
        if wanted:
            size = self.size_for(content)
            if size != (self.width(), self.height()):
                self.setFixedSize(*size)
            v = self.view.viewport().geometry()
            self.move(v.right() - self.width() - 6, v.bottom() - self.height() - 6)
            self.raise_()
            self.update()

    def seen(self) -> QRectF:
        """The part of the scene on screen."""
        return self.view.mapToScene(self.view.viewport().rect()).boundingRect()

    def _scale(self) -> tuple[float, QPointF]:
        """Scene -> widget: the factor and the offset that fit the graph inside this widget, centred."""
        content = self.view.content().adjusted(-8, -8, 8, 8)
        k = min((self.width() - 2) / max(content.width(), 1), (self.height() - 2) / max(content.height(), 1))
        offset = QPointF((self.width() - content.width() * k) / 2 - content.left() * k,
                         (self.height() - content.height() * k) / 2 - content.top() * k)
        return k, offset

    def to_scene(self, point: QPointF) -> QPointF:
        k, offset = self._scale()
        return (point - offset) / k

    def from_scene(self, point: QPointF) -> QPointF:
        k, offset = self._scale()
        return point * k + offset

    # -- drawing and the mouse ----------------------------------------------------------------
    def paintEvent(self, _event) -> None:  # noqa: N802 - Qt's names from here on
        painter = QPainter(self)
        painter.fillRect(self.rect(), Qt.white)
        painter.setPen(QPen(QColor(138, 150, 168), 1))
        painter.drawRect(self.rect().adjusted(0, 0, -1, -1))
        layout = self.view.scene().layout if self.view.scene() is not None else None
        if layout is None:
            return
        k, offset = self._scale()
        painter.translate(offset)
        painter.scale(k, k)
        painter.setPen(QPen(FRAME_BORDER, 0))
        painter.setBrush(FRAME_FILL)
        for f in layout.frames.values():
            painter.drawRect(QRectF(f.x, f.y, f.width, f.height))
        painter.setPen(Qt.NoPen)
        for node_id, b in layout.boxes.items():
            kind = layout.graph.node(node_id).kind
            painter.setBrush(FILL.get(kind, FILL["function"]).darker(115))
            painter.drawRect(QRectF(b.x, b.y, b.width, b.height))
        painter.setPen(QPen(SEEN, 0))
        painter.setBrush(QColor(20, 100, 220, 40))
        painter.drawRect(self.seen())

    def _go(self, event) -> None:
        self.view.centerOn(self.to_scene(event.position()))

    def mousePressEvent(self, event) -> None:
        if event.button() == Qt.LeftButton:
            self._go(event)

    def mouseMoveEvent(self, event) -> None:
        if event.buttons() & Qt.LeftButton:
            self._go(event)

    def wheelEvent(self, event) -> None:
        self.view.wheelEvent(event)
