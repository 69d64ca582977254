"""The concept dictionary the Concepts view shows (`ConceptsState`, beside the AppState).

A dictionary folder (written by `network-inspector concepts`, or built here) is opened in the worker and checked
against the loaded model; the folder is remembered per model (settings `concepts/MODEL`) and opened again when that
model loads. While the view is on screen, each result on a new input (or model, or target) has its concepts read
in the worker (`worker_concepts.ConceptJobs`), latest wins; picking a concept asks for its relevance map. The state
holds plain records, never a tensor or a module.

On a remote engine (`app.engine_url`) the folder is the server's: a remembered one is asked for there (the server
says in one line when it is gone), and a concept's page comes from there as pixels.
"""

from __future__ import annotations

from itertools import count
from pathlib import Path

from PySide6.QtCore import Signal

from inspector.core.edits import CONCEPT_OPS, Edit, make_edit
from inspector.core.common.errors import SpecError
from inspector.core.common.keys import Key
from inspector.core.records.failure import Failure, failure

from ..worker.concepts import BuildConceptsRequest, ConceptsRequest
from .folder_job import FolderJobState

SETTINGS_KEY = "concepts/{source}"
BUILD_STAGES = "Concepts: "  # how the build's own phases begin (worker_concepts.STAGES, build_progress)


class ConceptsState(FolderJobState):
    """Signals (and FolderJobState's: sigBuilding, sigProgress of the build's stage, sigBuildText)
    -------
    sigOpened(object): an OpenedConcepts (or None: no dictionary for the loaded model).
    sigRead(object): the ConceptsRead of the image on screen.
    sigMap(object): the ConceptMap of the concept picked.
    sigSelected(int): the concept picked (its map is drawn from the last reading).
    sigSaid(str, bool): one line for the view (True: an error); "" takes it down.
    sigPage(object): the ConceptPagePicture of the page asked for (`page`): its pixels, or why there are none.
    """

    sigOpened = Signal(object)
    sigRead = Signal(object)
    sigMap = Signal(object)
    sigSelected = Signal(int)
    sigSaid = Signal(str, bool)
    sigPage = Signal(object)  # (asked for by `page`: read here at once, or sent by a remote engine)

    def __init__(self, app, settings) -> None:
        jobs = app.worker_thread.concept_jobs()
        super().__init__(app, BUILD_STAGES, jobs.sigProgress, app.worker.sigPhase)
        self.settings, self.jobs = settings, jobs
        self.opened = None  # the OpenedConcepts shown
        self.reading = None  # the ConceptsRead of the image on screen
        self.selected: int | None = None
        self.shown = False  # the view is on screen: readings are asked for
        self._ids = count(1)
        self._read_id = self._open_id = 0
        self._page_asked = None  # (run id, folder, concept) of the page asked of a remote engine
        self._asked = None  # the key of the last reading asked for
        self.jobs.sigAnswer.connect(self._on_answer)
        app.sigModelLoaded.connect(lambda info, _ticks: self._on_model(info))
        app.sigResult.connect(lambda _outcome: self.ensure())

    # -- the dictionary --------------------------------------------------------------------
    def open(self, folder: str) -> bool:
        """Open the dictionary in `folder` for the loaded model (refused, in the view and the banner, when it is
        another model's or damaged)."""
        if self.app.model is None:
            self.sigSaid.emit("Load a model first: a dictionary is opened for the loaded model.", True)
            return False
        self._open_id = next(self._ids)
        self.sigSaid.emit(f"Opening {folder} …", False)
        self.jobs.request(ConceptsRequest("open", str(folder), self.app.model.request, run_id=self._open_id))
        return True

    @property
    def remote(self) -> bool:
        """The engine is a server's: the folders named are its own, not this machine's."""
        return self.app.engine_url is not None

    def remembered(self, source: str) -> str:
        return str(self.settings.value(SETTINGS_KEY.format(source=source), "") or "")

    def _on_model(self, info) -> None:
        if self.opened is not None and self.opened.model == info.source:
            self._asked = None
            return  # the same model again (weights, device): its dictionary stays
        self.opened = self.reading = self.selected = None
        self._asked = None
        folder = self.remembered(info.source)
        self.sigOpened.emit(None)
        if folder and (self.remote or Path(folder).is_dir()):  # (a server says in one line when it is gone)
            self.open(folder)
        else:
            self.sigSaid.emit("", False)

    def _on_answer(self, kind: str, _run_id: int, found) -> None:
        if kind == "build" and isinstance(found, Failure):
            kind = "build failed"
        answered = {"open": self._on_opened, "read": self._on_read, "map": self._on_map, "page": self._on_page,
                    "build": self._on_built, "build failed": self._on_build_failed}.get(kind)
        if answered is not None:
            answered(found)

    def _on_opened(self, opened) -> None:
        if isinstance(opened, Failure):
            if opened.run_id == self._open_id:
                self.sigSaid.emit(f"Not opened: {opened.message}", True)
                self.app.notify("error", f"Concepts not opened: {opened.message}", about="model")  # it goes with
                # the model it was about (a dictionary of another model stayed refused on the screen of its own)
            return
        if opened is None or self.app.model is None:
            return
        self.opened, self.reading, self.selected, self._asked = opened, None, None, None
        self.settings.setValue(SETTINGS_KEY.format(source=self.app.model.source), opened.folder)
        self.sigOpened.emit(opened)
        self.sigSaid.emit("", False)
        self.ensure()

    def missing_layer(self) -> str:
        """One line when the loaded model lacks the dictionary's layer ("" when it has it)."""
        info, opened = self.app.model, self.opened
        if info is None or opened is None or opened.layer in {l.path for l in info.tree.layers}:
            return ""
        return f"{info.source} has no layer {opened.layer} (the dictionary's): it shows no concepts."

    # -- readings ----------------------------------------------------------------------------------
    def set_shown(self, shown: bool) -> None:
        """The view came on screen (read what is on screen now) or went (nothing is read meanwhile)."""
        self.shown = shown
        if shown:
            self.ensure()

    def key(self):
        """(folder, model request, input, target) of the result on screen: what a reading is of."""
        app = self.app
        if self.opened is None or app.model is None or app.outcome is None or app.shown_choice is None:
            return None
        live = app.live
        if live.feed is not None and live.shown_frame is not None:
            name = f"{live.feed.source}@frame {live.shown_frame.index}"
        else:
            name = app.shown_choice[0]
        return self.opened.folder, app.model.request, name, self.target()

    def target(self) -> int | None:
        """The class the relevance is for: the run's target (its predicted class under auto); None for a
        detector (its output is boxes, not classes)."""
        app = self.app
        if app.outcome is None or app.model is None or app.model.task == "detection":
            return None
        return app.outcome.result.target_index

    def ensure(self) -> None:
        """Ask for the concepts of the image on screen unless they were asked for already."""
        if not self.shown or self.opened is None:
            return
        missing = self.missing_layer()
        if missing:
            self.sigSaid.emit(missing, True)
            return
        key = self.key()
        if key is None or key == self._asked:
            return
        if self.app.live.playing:
            self.sigSaid.emit("Concepts are read on a paused video's frame (pause it to read this one).", False)
            return
        self._asked = key
        self._read_id = next(self._ids)
        live = self.app.live
        frame = live.shown_frame.rgb if live.feed is not None and live.shown_frame is not None else None
        self.sigSaid.emit(f"Reading the concepts of {key[2]} …", False)
        self.jobs.request(ConceptsRequest("read", key[0], key[1], key[2], key[3], self.selected,
                                          self.app.usable_device(), self._read_id, frame))

    def _on_read(self, read) -> None:
        if isinstance(read, Failure):
            if read.run_id == self._read_id:
                self._asked = None  # asked again by the next result
                if read.cancelled:
                    return
                self.sigSaid.emit(f"No concepts: {read.message}", True)
            return
        if read.run_id != self._read_id:
            return
        self.reading = read
        if self.selected is None or self.selected >= len(read.coefficients):
            self.selected = int(read.coefficients.argmax())
            self._ask_map()
        self.sigSaid.emit("", False)
        self.sigRead.emit(read)
        self.sigSelected.emit(self.selected)

    def select(self, concept: int) -> None:
        """Pick concept `concept`: its map from the reading at once, its relevance map from the worker."""
        if self.reading is None or not 0 <= concept < len(self.reading.coefficients):
            return
        self.selected = int(concept)
        self.sigSelected.emit(self.selected)
        self._ask_map()

    def _ask_map(self) -> None:
        key, read = self._asked, self.reading
        if key is None or read is None or read.target is None:
            return
        live = self.app.live
        frame = live.shown_frame.rgb if live.feed is not None and live.shown_frame is not None else None
        self.jobs.request(ConceptsRequest("map", key[0], key[1], key[2], read.target, self.selected,
                                          self.app.usable_device(), read.run_id, frame))

    def _on_map(self, found) -> None:
        if self.reading is not None and found.run_id == self.reading.run_id and found.concept == self.selected:
            self.sigMap.emit(found)

    # -- a concept's page ---------------------------------------------------------------------------------
    def page(self, concept: int) -> bool:
        """Concept `concept`'s page of the dictionary opened, as sigPage: read here from the folder at once, or asked
        of a remote engine (the folder is there)."""
        from inspector.core.records.concepts import ConceptPagePicture

        opened, info = self.opened, self.app.model
        if opened is None or info is None:
            return False
        if self.remote:
            run_id = next(self._ids)
            self._page_asked = (run_id, opened.folder, int(concept))
            self.jobs.request(ConceptsRequest("page", opened.folder, info.request, concept=int(concept),
                                              run_id=run_id))
            return True
        from inspector.core.concepts.reading import page_picture

        try:
            picture = page_picture(opened.folder, int(concept))
        except Exception as exc:  # noqa: BLE001 - said in the page's place
            picture = ConceptPagePicture(opened.folder, int(concept), None,
                                         f"No page: {failure(exc, 'concepts').message}")
        self.sigPage.emit(picture)
        return True

    def _on_page(self, found) -> None:
        from inspector.core.records.concepts import ConceptPagePicture

        asked = self._page_asked
        if asked is None:
            return
        if isinstance(found, Failure):
            if found.run_id == asked[0]:
                self._page_asked = None
                self.sigPage.emit(ConceptPagePicture(asked[1], asked[2], None, f"No page: {found.message}"))
            return
        if (found.folder, found.concept) == asked[1:]:
            self._page_asked = None
            self.sigPage.emit(found)

    # -- editing -----------------------------------------------------------------------------------------
    def concept_edit(self, op: str, k: float = 2.0) -> Edit | None:
        """The edit of the picked concept (None: none picked), built as a record and checked as its text would be
        (`make_edit`): LAYER:output=ablate_concept(id=I, dict='DIR') or scale_concept(id=I, k=K, dict='DIR')."""
        if self.opened is None or self.selected is None:
            return None
        key, i, folder = Key(self.opened.layer, "output"), self.selected, self.opened.folder
        if op == "ablate":
            return make_edit(key, "ablate_concept", id=i, dict=folder)
        return make_edit(key, "scale_concept", id=i, k=float(k), dict=folder)

    def add_edit(self, op: str, k: float = 2.0) -> bool:
        """Add the picked concept's ablation (or scaling by `k`) to the edits, in the place of an edit of the same
        concept (Ablate then Scale stacked a scaling of a component already removed: it did nothing); the Compare
        tab shows its effect at the dictionary's layer (ticked and selected)."""
        try:
            edit = self.concept_edit(op, k)
        except SpecError as exc:
            self.app.editing.sigMessage.emit(str(exc), True)
            return False
        if edit is None:
            return False
        concept = {n: v for n, v in edit.args if n in ("id", "dict")}
        self.app.editing.put(edit, lambda e: e.key == edit.key and e.op in CONCEPT_OPS
                             and {n: v for n, v in e.args if n in ("id", "dict")} == concept)
        if self.app.layer != self.opened.layer:  # Compare shows the layer the concept is taken out of
            self.app.tick_and_show(self.opened.layer)
        self.app.set_view("compare")
        return True

    # -- building ----------------------------------------------------------------------------------------
    def build(self, data_dir: str, layer: str, k: int, method: str, sparsity: int | None, out_dir: str) -> bool:
        """Learn `k` concepts of `layer` over the images in `data_dir` (`method` nmf, or sae with `sparsity`
        active per position) into `out_dir`, in the worker; opened when done."""
        app = self.app
        if app.model is None:
            self.sigSaid.emit("Load a model first: concepts are learned on the loaded model.", True)
            return False
        if self.building:
            return False
        self.sigSaid.emit(f"Learning {k} concepts of {layer} ({method}) over {data_dir} …", False)
        request = BuildConceptsRequest(app.model.request, str(data_dir), layer, int(k), method, str(out_dir),
                                       app.usable_device(), sparsity)
        self._begin_build(lambda: self.jobs.request(request))
        return True

    def _stop_build(self) -> None:
        self.jobs.cancel()

    def _on_built(self, folder: str) -> None:
        self._end_build("done")
        self.app.notify("info", f"Concepts learned into {folder}.")
        self.open(folder)

    def _on_build_failed(self, failed: Failure) -> None:
        self._end_said(failed, "Build again with the same choices to go on where it stopped.", "Not built",
                       "Concepts not built")
