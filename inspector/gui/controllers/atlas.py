"""Wires the Atlas dock into the window: the state's atlas signals, the build's progress, and a click
on a channel of any mosaic — the Layer tab's and the Compare tab's (its top images, where the open
atlas has the layer)."""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt

from inspector.core.errors import SpecError
from inspector.core.keys import parse_key

from ..views.atlas_view import AtlasView


class AtlasController(QObject):
    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        s = self.state = window.state
        self.view = window.atlas_view = AtlasView()
        self.dock = window.atlas_dock = window._dock("Atlas", self.view, Qt.RightDockWidgetArea)
        view = self.view
        view.ticked = s.ticked
        view.sigOpen.connect(s.open_atlas)
        view.sigBuild.connect(s.build_atlas)
        view.sigCancel.connect(s.cancel)
        view.sigChannel.connect(s.atlas_pictures)
        view.sigUse.connect(s.use_atlas_image)
        s.sigAtlas.connect(self._on_atlas)
        s.sigAtlasPictures.connect(view.show_pictures)
        s.sigAtlasBuilding.connect(view.set_building)
        s.worker.sigAtlasProgress.connect(view.set_progress)
        for panel in (window.activation_panel, window.gradient_panel):
            panel.sigChannelClicked.connect(self._on_mosaic_channel)
        window.edits.compare.sigChannelClicked.connect(self._on_compare_channel)

    def open_dialog(self) -> None:
        self.view.ask_open()

    def _on_atlas(self, opened) -> None:
        self.view.show_atlas(opened)
        self._raise()

    def _on_mosaic_channel(self, channel: int) -> None:
        layer = (self.state.layer or "").partition("#")[0]
        if self.view.show_channel(layer, channel):
            self._raise()

    def _on_compare_channel(self, key: str, channel: int) -> None:
        try:
            layer = parse_key(key).layer
        except SpecError:
            return
        if layer and self.view.show_channel(layer, channel):
            self._raise()

    def _raise(self) -> None:
        self.dock.show()
        self.dock.raise_()
