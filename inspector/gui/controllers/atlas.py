"""Wires the Atlas dock into the window: the state's atlas signals, the build's progress, and a click
on a channel of any mosaic — the Layer tab's and the Compare tab's (its top images, where the open
atlas has the layer)."""

from __future__ import annotations

from PySide6.QtCore import QObject

from inspector.core.common.errors import SpecError
from inspector.core.common.keys import layer_of, parse_key

from ..views.atlas_view import BuildDialog
from .folder_job import wire_build


class AtlasController(QObject):
    def __init__(self, state, view, dock, panels, compare) -> None:
        super().__init__(state)
        self.state, self.view, self.dock = state, view, dock
        atlas = state.atlas
        view.sigOpen.connect(atlas.open)
        view.sigChannel.connect(atlas.pictures)
        view.sigUse.connect(atlas.use_image)
        wire_build(atlas, view, self.build_dialog)  # Build…, Cancel and the build's progress
        atlas.sigOpened.connect(self._on_atlas)
        atlas.sigPictures.connect(view.show_pictures)
        atlas.sigOwner.connect(view.set_owner)
        for panel in panels:
            panel.sigChannelClicked.connect(self._on_mosaic_channel)
        compare.sigChannelClicked.connect(self._on_compare_channel)

    def open_dialog(self) -> None:
        self.view.ask_open()

    def build_dialog(self) -> None:
        """The build dialog for the ticked layers; the atlas built over the folders chosen."""
        layers = self.state.ticked()
        if not layers:
            self.view.info.setText("Tick the layers the atlas is for in the Modules tree first.")
            return
        choices = BuildDialog(layers, self.view).ask()
        if choices is not None and choices[0] and choices[1]:
            self.state.atlas.build(*choices)

    def offer_concepts(self, build) -> None:
        """Beside Build…, "Build concepts…" (`build`: the Concepts dock's dialog, over a folder of images too)."""
        from PySide6.QtWidgets import QPushButton

        button = QPushButton("Build concepts…")
        button.setToolTip("Learn concepts (directions mixing channels) of a layer over a folder of images; the "
                          "Concepts dock shows them")
        button.clicked.connect(build)
        row = self.view.buttons_row  # Open atlas…, Build…, Cancel
        row.insertWidget(row.indexOf(self.view.build_button) + 1, button)

    def _on_atlas(self, opened) -> None:
        self.view.show_atlas(opened)
        self._raise()

    def _on_mosaic_channel(self, channel: int) -> None:
        if self.state.atlas.not_of() is not None:
            return  # another model's atlas: its channel N is not this model's channel N
        if self.view.show_channel(layer_of(self.state.layer or ""), channel):
            self._raise()

    def _on_compare_channel(self, key: str, channel: int) -> None:
        try:
            layer = parse_key(key).layer
        except SpecError:
            return
        if layer and self.state.atlas.not_of() is None and self.view.show_channel(layer, channel):
            self._raise()

    def _raise(self) -> None:
        self.dock.show()
        self.dock.raise_()
