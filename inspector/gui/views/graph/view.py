"""The Graph tab's canvas: the wheel zooms about the mouse, a drag pans, a double click on empty space fits the
whole graph; a click on a node, its tick box or a group's +/- is said by a signal (the controller acts on it);
an overview in the corner shows the whole graph and the part on screen (click or drag it to move there).

Signals
-------
sigNodeClicked(str): a node's box was clicked (its id in the closed view drawn).
sigTickClicked(str): a node's tick box was clicked (its module path).
sigGroupToggled(str): a group's +/- was clicked, a closed group or an open group's title double-clicked.
sigMenuAsked(str, QPoint): a right click on a node (its id) at this global position.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QGraphicsView

from .items import FrameItem, NodeItem
from .overview import Overview

READABLE = 0.8  # the least zoom a first view starts at: 11 px text drawn at 9 px
MOST = 1.25  # a small graph is not blown up past this when it is fitted
ZOOM_RANGE = (0.03, 4.0)


class GraphView(QGraphicsView):
    sigNodeClicked = Signal(str)
    sigTickClicked = Signal(str)
    sigGroupToggled = Signal(str)
    sigMenuAsked = Signal(str, QPoint)

    def __init__(self, scene, parent=None) -> None:
        super().__init__(scene, parent)
        self.setRenderHints(QPainter.Antialiasing | QPainter.TextAntialiasing)
        self.setTransformationAnchor(QGraphicsView.AnchorUnderMouse)
        self.setResizeAnchor(QGraphicsView.AnchorViewCenter)
        self.setDragMode(QGraphicsView.NoDrag)
        self.setViewportUpdateMode(QGraphicsView.SmartViewportUpdate)
        self.viewport().setMouseTracking(True)  # the cursor says what a click does
        self.viewport().setCursor(Qt.OpenHandCursor)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)  # a drag pans; the overview shows where
        self.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self._pan_from: QPointF | None = None
        self.overview = Overview(self)
        for bar in (self.horizontalScrollBar(), self.verticalScrollBar()):
            bar.valueChanged.connect(self._moved)

    # -- zoom and placement -----------------------------------------------------------
    def zoom(self) -> float:
        return self.transform().m11()

    def set_zoom(self, zoom: float) -> None:
        zoom = min(max(zoom, ZOOM_RANGE[0]), ZOOM_RANGE[1])
        factor = zoom / self.zoom()
        self.scale(factor, factor)
        self._moved()

    def content(self) -> QRectF:
        scene = self.scene()
        layout = scene.layout if scene is not None else None
        return QRectF(0, 0, layout.width, layout.height) if layout is not None else QRectF()

    def fit_all(self) -> None:
        """The whole graph in view (as small as it takes)."""
        rect = self.content()
        if rect.isEmpty():
            return
        self.fitInView(rect.adjusted(-12, -12, 12, 12), Qt.KeepAspectRatio)
        if self.zoom() > MOST:
            self.set_zoom(MOST)
            self.centerOn(rect.center())
        self._moved()

    def first_view(self, start: str | None = None) -> None:
        """A graph's first view: fitted when that is readable; else as wide as fits (never under READABLE),
        the top of the graph (its input, node `start`) in view."""
        rect = self.content()
        if rect.isEmpty():
            return
        vw, vh = self.viewport().width() - 24, self.viewport().height() - 24
        fit = min(vw / max(rect.width(), 1), vh / max(rect.height(), 1))
        if fit >= READABLE:
            self.fit_all()
            return
        zoom = min(max(vw / max(rect.width(), 1), READABLE), 1.0)
        self.set_zoom(zoom)
        at = self.scene().rect_of(start) if start else None
        x = at.center().x() if at is not None and rect.width() * zoom > vw else rect.center().x()
        top = (at.top() if at is not None else rect.top()) - 12
        self.centerOn(QPointF(x, top + vh / 2 / zoom))
        self._moved()

    def centre_on(self, rect: QRectF) -> None:
        """Bring `rect` (scene) to the middle, zoomed in to READABLE when it was smaller."""
        if self.zoom() < READABLE:
            self.set_zoom(READABLE)
        self.centerOn(rect.center())
        self._moved()

    def _moved(self, *_args) -> None:
        self.overview.follow()

    # -- the mouse ------------------------------------------------------------------------
    def item_at(self, pos) -> tuple[object, str]:
        """The node or frame under viewport position `pos` and the part of it hit ('' on empty space)."""
        for item in self.items(pos):
            if isinstance(item, (NodeItem, FrameItem)):
                return item, item.part_at(item.mapFromScene(self.mapToScene(pos)))
        return None, ""

    def wheelEvent(self, event) -> None:  # noqa: N802 - Qt's names from here on
        steps = event.angleDelta().y() or event.angleDelta().x()
        if not steps:
            return
        self.set_zoom(self.zoom() * 1.0015 ** steps)
        event.accept()

    def mousePressEvent(self, event) -> None:
        if event.button() != Qt.LeftButton:
            super().mousePressEvent(event)
            return
        item, part = self.item_at(event.position().toPoint())
        if isinstance(item, NodeItem):
            if part == "tick":
                self.sigTickClicked.emit(item.node.path)
            elif part == "toggle":
                self.sigGroupToggled.emit(item.node.id)
            else:
                self.sigNodeClicked.emit(item.node.id)
            return
        if isinstance(item, FrameItem) and part == "toggle":
            self.sigGroupToggled.emit(item.record.id)
            return
        self._pan_from = event.position()
        self.viewport().setCursor(Qt.ClosedHandCursor)

    def mouseMoveEvent(self, event) -> None:
        if self._pan_from is not None:
            d = event.position() - self._pan_from
            self._pan_from = event.position()
            self.horizontalScrollBar().setValue(self.horizontalScrollBar().value() - round(d.x()))
            self.verticalScrollBar().setValue(self.verticalScrollBar().value() - round(d.y()))
            return
        item, part = self.item_at(event.position().toPoint())
        clickable = isinstance(item, NodeItem) or (isinstance(item, FrameItem) and part in ("toggle", "title"))
        self.viewport().setCursor(Qt.PointingHandCursor if clickable else Qt.OpenHandCursor)
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event) -> None:
        if self._pan_from is not None:
            self._pan_from = None
            self.viewport().setCursor(Qt.OpenHandCursor)
            return
        super().mouseReleaseEvent(event)

    def mouseDoubleClickEvent(self, event) -> None:
        if event.button() != Qt.LeftButton:
            return
        item, part = self.item_at(event.position().toPoint())
        if isinstance(item, NodeItem) and item.is_group and part == "body":
            self.sigGroupToggled.emit(item.node.id)
        elif isinstance(item, FrameItem) and part == "title":
            self.sigGroupToggled.emit(item.record.id)
        elif item is None or isinstance(item, FrameItem):
            self.fit_all()

    def contextMenuEvent(self, event) -> None:
        item, _part = self.item_at(event.pos())
        if isinstance(item, NodeItem):
            self.sigMenuAsked.emit(item.node.id, event.globalPos())
        elif isinstance(item, FrameItem):
            self.sigMenuAsked.emit(item.record.id, event.globalPos())
        event.accept()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.overview.place()
