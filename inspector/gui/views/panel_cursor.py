"""The mouse over a TensorPanel's maps (`PanelCursorMixin`): the hover line reads out the channel and value under
it (a filter's weight, a head's attention, the prefix tokens), a click enlarges a channel, and the pixel under it
is sent to the other side (sigCursor) and the other side's is read out and marked here (`show_cursor`)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject

from inspector.core.pictures.mosaic import is_parameter

from .number_format import fmt


class PanelCursorMixin:
    """For TensorPanel: needs `mosaic`, `maps`, `kernels`, `key`, `prefix`, `channel`, `view`, `zoom`, `hover`,
    `canvas`, `_zoom`, `_is_attention` and its signals."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Leave and watched in (self.canvas, self.zoom.canvas):
            self._left()
        return False

    def _left(self) -> None:
        """The mouse is off the maps: no position or value is read out any more, here or on the other side."""
        self._hover_at = None
        self.hover.setText(" ")
        self.zoom.mark(None)
        self.sigCursor.emit(None)

    def _image_point(self, scene_pos):
        if self.mosaic is None or not self.view.sceneBoundingRect().contains(scene_pos):
            return None
        point = self.view.mapSceneToView(scene_pos)
        return point.y(), point.x()

    def _channel_under(self, scene_pos):
        point = self._image_point(scene_pos)
        return None if point is None else self.mosaic.channel_at(*point)

    def _readout(self, channel: int, y: int, x: int) -> str:
        """What the hover line says about pixel (y, x) of `channel` (not for weights: see _on_mouse_moved)."""
        value = fmt(self.maps[channel, y, x], ".5g")
        if is_parameter(self.key):  # Linear weights: out x in
            return f"out {y}   in {x}   value {value}"
        if self._is_attention(self.key):  # a row per query token, a column per key token
            return f"head {channel}   query {y}, key {x}   attention {value}"
        extra = ""
        if self.prefix is not None:  # the class (and register) tokens, kept apart from the grid
            extra = "   prefix token" + ("s" if len(self.prefix) > 1 else "") + " " + \
                ", ".join(fmt(v, ".5g") for v in self.prefix[:, channel])
        return f"channel {channel}   y {y}, x {x}   value {value}{extra}"

    def _on_mouse_moved(self, scene_pos) -> None:
        self._hover_at = scene_pos
        hit = self._channel_under(scene_pos)
        if hit is None:  # between tiles or off the maps
            self.hover.setText(" ")
            return
        channel, y, x = hit
        if self.kernels is not None:
            kernel = self.mosaic.kernel_at(*self._image_point(scene_pos))
            if kernel is None:
                return
            f, i, ky, kx = kernel
            self.hover.setText(f"filter {f}   in {i}   y {ky}, x {kx}   value {fmt(self.maps[channel, y, x], '.5g')}")
            return
        self.hover.setText(self._readout(channel, y, x))
        self._cursor_at(channel, y, x)

    def _on_zoom_moved(self, pixel) -> None:
        """The mouse over the enlarged channel: read the pixel out and tell the other side."""
        if pixel is None or self.maps is None or self.channel is None:
            self.zoom.mark(None)
            self.sigCursor.emit(None)
            return
        y, x = pixel
        self.hover.setText(self._readout(self.channel, y, x))
        self._cursor_at(self.channel, y, x)

    def _cursor_at(self, channel: int, y: int, x: int) -> None:
        self.zoom.mark((y, x) if channel == self.channel else None)
        self.sigCursor.emit((channel, y, x, tuple(self.maps.shape)))

    def show_cursor(self, where) -> None:
        """The other side's cursor: (channel, y, x, its maps' shape) read out and marked here when these
        maps have the same shape (None: it left)."""
        if where is None:
            self.zoom.mark(None)
            if self.hover.text().endswith("(the other side's cursor)"):
                self.hover.setText(" ")
            return
        channel, y, x, shape = where
        if self.maps is None or self.kernels is not None or tuple(self.maps.shape) != tuple(shape):
            return
        self.hover.setText(self._readout(channel, y, x) + "   (the other side's cursor)")
        self.zoom.mark((y, x) if channel == self.channel else None)

    def _on_mouse_clicked(self, event) -> None:
        hit = self._channel_under(event.scenePos())
        if hit is None:
            return
        self._zoom(hit[0])
        self.sigChannelClicked.emit(hit[0])
        self.sigChannelZoomed.emit(hit[0])
