"""Wires the Concepts dock into the window: the view's asks to the ConceptsState (open, build, pick, page, edit),
the state's records to the view, Esc to the build's cancel, and the dock's visibility to the readings (the image's
concepts are read only while the dock is on screen)."""

from __future__ import annotations

from pathlib import Path

from inspector.core.common.keys import layer_of

from ..common.concepts_sign import LayerSign, layer_sign
from ..state.concepts import ConceptsState
from ..views.concepts.build import BuildConceptsDialog
from ..views.concepts.page import ConceptPage
from .folder_job import OpensJobFolders, wire_build


class ConceptsController(OpensJobFolders):
    OPENS = ("concepts-out", "Open concepts (a folder with dictionary.safetensors)")

    def __init__(self, window, view, dock) -> None:
        self.window, self.view, self.dock = window, view, dock
        app = window.state
        self.state = state = ConceptsState(app, window.settings)
        self.page: ConceptPage | None = None
        view.backdrop = lambda: window.input_view.rgb
        wire_build(state, view, self.build_dialog)
        view.sigOpen.connect(self.open_dialog)
        view.sigPicked.connect(state.select)
        view.sigPage.connect(self.show_page)
        view.sigEdit.connect(lambda op, k: state.add_edit(op, k))
        state.sigOpened.connect(self._on_opened)
        state.sigRead.connect(lambda read: view.show_reading(read, any(e.enabled for e in app.edits)))
        app.sigEditsSet.connect(lambda edits: view.say_edited(any(e.enabled for e in edits)))  # a reading stays
        state.sigSelected.connect(view.show_picked)
        state.sigMap.connect(view.show_map)
        state.sigPage.connect(self._on_page)
        state.sigSaid.connect(view.say)
        window.cancel_action.triggered.connect(state.cancel)  # Esc stops a build too
        app.sigModelLoaded.connect(lambda info, _ticks: setattr(view, "labels", list(info.labels or ()) or None))
        dock.visibilityChanged.connect(state.set_shown)

    # -- asking the user -------------------------------------------------------------------------------
    def build_dialog(self) -> None:
        app = self.state.app
        if app.model is None:
            self.view.say("Load a model first: concepts are learned on the loaded model.", True)
            return
        layers = [l.path for l in app.model.tree.layers if l.path]
        choices = BuildConceptsDialog(layers, layer_of(app.layer) if app.layer else None, self.window,
                                      self.layer_sign).ask()
        if choices is not None:
            self.build(*choices)

    def layer_sign(self, layer: str) -> LayerSign:
        """Whether NMF can learn `layer` of the loaded model, as far as the last run and the layer's type say."""
        app = self.state.app
        kind = next((l.type_name for l in app.model.tree.layers if l.path == layer), "") if app.model else ""
        return layer_sign(layer, kind, app.outcome)

    def build(self, data_dir: str, layer: str, k: int, method: str, sparsity: int | None, out_dir: str) -> bool:
        self.raise_view()
        return self.state.build(data_dir, layer, k, method, sparsity, out_dir)

    def show_page(self, concept: int) -> None:
        """Concept `concept`'s page: its record's top images at once, its picture as it comes (read here, or sent
        by a remote engine)."""
        opened = self.state.opened
        if opened is None:
            return
        if self.page is None:
            self.page = ConceptPage(self.window)
            self.page.sigUse.connect(self._use_image)
        self.page.show_concept(opened.folder, opened.record, concept)
        self.page.show()
        self.page.raise_()
        self.state.page(concept)

    def _on_page(self, picture) -> None:
        page = self.page
        if page is not None and (picture.folder, picture.concept) == (page.folder, page.concept):
            page.show_picture(picture.rgb, picture.why)

    def _use_image(self, image: str) -> None:
        """Run on the page's top image. Here, a file gone is said at once; on a remote engine the path is sent and
        the server says in one line when it is gone (or was never in its data root)."""
        opened = self.state.opened
        root = opened.record.get("data", {}).get("root", "") if opened is not None else ""
        path = Path(root) / image if root and image else None
        if path is None or (not self.state.remote and not path.is_file()):
            self.state.app.notify("error", f"{image} is not in {root or 'an unknown folder'} any more: it cannot "
                                           f"become the input.")
            return
        self.state.app.set_input(str(path))

    def _on_opened(self, opened) -> None:
        self.view.show_opened(opened)
        if opened is not None and self.page is not None:
            self.page.close()

    def dialog_parent(self):
        return self.view

    def raise_view(self):
        """The Concepts dock, shown and raised."""
        self.dock.show()
        self.dock.raise_()
        return self.view
