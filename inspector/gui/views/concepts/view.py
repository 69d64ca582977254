"""The Concepts view (a dock): a concept dictionary's view of the image on screen.

Open a dictionary folder (`network-inspector concepts` wrote it, or Build… here); for the image on screen and the
dictionary's layer it shows the image's concept coefficients as a sorted bar chart, their relevance for the run's
class (gradient x coefficient) as a second one, and for the concept picked (a click on either chart's bar) its map
over the input and the input map of its relevance (CRP-style). Page… opens the concept's top images; Ablate and
Scale add its edit (the Compare tab shows the effect). It shows what the state sends; it holds no tensor.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from .bars import ConceptBars
from .page import OverlayMap
from ..folder_job import FolderJobControls
from ..number_format import fmt

EMPTY = ("No concept dictionary yet. A concept is a direction in a layer's channels (a mix of them) learned over a "
         "folder of images. Open a folder that the command network-inspector concepts wrote, or Build… one from a "
         "layer of this model; then this shows which concepts the image holds, where, and how much each drives the "
         "class.")  # plain text: a QLabel shows backticks as they are
COEFFICIENTS = "Coefficients (mean over positions)"


class ConceptsView(QWidget, FolderJobControls):
    """Signals
    -------
    sigOpen(): ask for a folder to open.
    sigBuild(): ask for what to build.
    sigCancel(): stop the build.
    sigPicked(int): the concept clicked.
    sigPage(int): open this concept's page.
    sigEdit(str, float): add the picked concept's edit: "ablate", or "scale" by the number.
    """

    sigOpen = Signal()
    sigBuild = Signal()
    sigCancel = Signal()
    sigPicked = Signal(int)
    sigPage = Signal(int)
    sigEdit = Signal(str, float)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.opened = None
        self.reading = None
        self.picked: int | None = None
        self.backdrop = lambda: None  # the window sets it: the picture the model saw, (H, W, 3) uint8
        self.labels: list[str] | None = None  # the loaded model's class names
        layout = self._job_layout("Open dictionary…", "Open a folder holding dictionary.safetensors and "
                                  "concepts.json (made by `network-inspector concepts` or Build…)", "Learn concepts of "
                                  "a layer of the loaded model over a folder of images", words=True)
        self.info = QLabel(EMPTY)
        self.info.setWordWrap(True)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setVisible(False)
        self.concept_label = QLabel("Concept —")
        self.page_button = QToolButton(text="Page…")  # tool buttons: no style's minimum width, the row fits the dock
        self.page_button.setToolTip("The concept's top images over the folder, the region where it is strongest "
                                    "outlined")
        self.ablate_button = QToolButton(text="Ablate")
        self.ablate_button.setToolTip("Add the edit that removes this concept from the layer's output "
                                      "(x - c d); the Compare tab shows its effect")
        self.scale_button = QToolButton(text="Scale ×")
        self.scale_button.setToolTip("Add the edit that scales this concept's component by k (x + (k - 1) c d)")
        self.k = QDoubleSpinBox(minimum=-100.0, maximum=100.0, value=2.0, singleStep=0.5, decimals=2)
        self.k.setToolTip("k of Scale: the concept's component times k (0 removes it, 1 leaves it)")
        layout.addWidget(self.info)
        layout.addWidget(self.message)
        self.blank = QWidget()  # in the charts' place while no dictionary is open: the text above says what to do
        layout.addWidget(self.blank, 1)
        self._charts: QSplitter | None = None  # the charts and maps: made when a dictionary first opens
        self.open_button.clicked.connect(self.sigOpen.emit)
        self.build_button.clicked.connect(self.sigBuild.emit)
        self.page_button.clicked.connect(lambda: self.picked is not None and self.sigPage.emit(self.picked))
        self.ablate_button.clicked.connect(lambda: self.sigEdit.emit("ablate", 0.0))
        self.scale_button.clicked.connect(lambda: self.sigEdit.emit("scale", self.k.value()))
        self._set_concept_enabled(False)

    # The four charts and maps (pyqtgraph: 0.1 s of the window's start) are made when a dictionary first opens,
    # or when something asks for one; until then the dock holds its buttons and the text that says what to do.
    @property
    def split(self) -> QSplitter:
        if self._charts is None:
            self._charts = self._make_charts()
        return self._charts

    @property
    def made(self) -> bool:
        """Whether the charts and maps are made yet."""
        return self._charts is not None

    @property
    def coefficients(self) -> ConceptBars:
        return self.split.widget(0)

    @property
    def relevance(self) -> ConceptBars:
        return self.split.widget(1)

    @property
    def concept_map(self) -> OverlayMap:
        return self._made_maps()[0]

    @property
    def relevance_map(self) -> OverlayMap:
        return self._made_maps()[1]

    def _made_maps(self) -> tuple[OverlayMap, OverlayMap]:
        self.split  # noqa: B018  (makes them)
        return self._maps

    def _make_charts(self) -> QSplitter:
        coefficients = ConceptBars(COEFFICIENTS)
        relevance = ConceptBars("Relevance for the class")
        concept_map, relevance_map = self._maps = (OverlayMap(), OverlayMap())
        coefficients.setToolTip("Each concept's coefficient on this image, averaged over the layer's positions, "
                                "largest first; click a bar to see that concept")
        relevance.setToolTip("Gradient × coefficient summed over the positions: how much each concept drives the "
                             "run's class (the Target in the toolbar); click a bar to see that concept")
        concept_map.setToolTip("The concept's coefficient at each position of the layer, upsampled to the input and "
                               "drawn over it")
        relevance_map.setToolTip("CRP-style: the class's gradient taken through this concept only, back to the input "
                                 "(gradient × input; red drives the class, blue against it)")
        self.concept_label.setWordWrap(True)
        concept_row = QHBoxLayout()  # under the bars: what to do with the concept picked
        for w in (self.page_button, self.ablate_button, self.scale_button, self.k):
            concept_row.addWidget(w)
        concept_row.addStretch(1)
        picked = QWidget()  # the concept picked: its numbers, its actions, its two maps
        picked_layout = QVBoxLayout(picked)
        picked_layout.setContentsMargins(0, 0, 0, 0)
        picked_layout.addWidget(self.concept_label)
        picked_layout.addLayout(concept_row)
        maps_row = QHBoxLayout()
        maps_row.addWidget(concept_map)
        maps_row.addWidget(relevance_map)
        picked_layout.addLayout(maps_row, 1)
        split = QSplitter(Qt.Vertical)
        for w in (coefficients, relevance, picked):
            split.addWidget(w)
        split.setChildrenCollapsible(False)
        for i, (stretch, size) in enumerate(((2, 150), (2, 150), (3, 260))):
            split.setStretchFactor(i, stretch)
        split.setSizes([150, 150, 260])
        for bars in (coefficients, relevance):
            bars.sigPicked.connect(self.sigPicked.emit)
        layout = self.layout()
        layout.insertWidget(layout.indexOf(self.blank), split, 1)
        split.setVisible(False)
        return split

    # -- what the state says -------------------------------------------------------------------
    def show_opened(self, opened) -> None:
        """The dictionary opened (None: none for the loaded model)."""
        self.opened, self.reading, self.picked = opened, None, None
        self._clear_reading()
        if opened is not None or self.made:
            self.split.setVisible(opened is not None)
        self.blank.setVisible(opened is None)
        if opened is None:
            self.info.setText(EMPTY)
            self.info.setToolTip("")
            return
        fit = opened.record.get("fit", {}) if opened.record else {}
        figures = ""
        if "variance_explained" in fit:
            figures = (f" · variance explained {fmt(fit['variance_explained'], '.1%')} on held-out images (PCA with "
                       f"the same K: {fmt(fit.get('pca_variance_explained', float('nan')), '.1%')})")
        images = f" over {opened.record['images']} images" if opened.record.get("images") else ""
        self.info.setText(f"<b>{opened.layer}</b> · {opened.method} · K={opened.k} · learned on "
                          f"{opened.model or 'an unnamed model'}{images}{figures}")
        self.info.setToolTip(opened.folder)

    def say(self, text: str, error: bool = False) -> None:
        self.message.setVisible(bool(text))
        self.message.setText(f"<span style='color:#b00'>{text}</span>" if error else text)
        if text and error:
            self._clear_reading()

    def show_reading(self, read, edited: bool = False) -> None:
        """The concepts of the image on screen; `edited`: the run has edits on, which the reading (the model as
        loaded) leaves out, and the charts' titles say so."""
        self.reading = read
        self.coefficients.show_values(read.coefficients, self.picked)
        if read.relevance is not None:
            self.relevance.show_values(read.relevance, self.picked)
        else:
            self.relevance.clear_values()
        self.say_edited(edited)
        self.relevance_map.clear_map()

    def say_edited(self, edited: bool) -> None:
        """The charts' titles: of the model without the edits where the run has some on (a reading is of the model
        as loaded)."""
        read = self.reading
        if read is None:  # (no reading: the charts may not be made yet)
            return
        unedited = ", model without the edits" if edited else ""
        self.coefficients.setTitle(f"{COEFFICIENTS}{unedited}", size="9pt")
        self.relevance.setTitle(f"Relevance for class {self.class_name(read.target)}{unedited}"
                                if read.relevance is not None else "Relevance: no class to take", size="9pt")

    def show_picked(self, concept: int) -> None:
        """Concept `concept`'s map over the input, from the reading on screen (its relevance map comes later)."""
        read = self.reading
        if read is None or not 0 <= concept < len(read.coefficients):
            return
        changed = concept != self.picked
        self.picked = concept
        for bars in (self.coefficients, self.relevance):
            bars.set_picked(concept)
        self._set_concept_enabled(True)
        self.concept_label.setText(f"<b>Concept {concept}</b>: coefficient {fmt(read.coefficients[concept], '.4g')}"
                                   + ("" if read.relevance is None else
                                      f", relevance {fmt(read.relevance[concept], '.4g')}"))
        h, w = read.grid.shape[1:]
        self.concept_map.show_map(read.maps[concept], self.backdrop(), f"Concept {concept}")
        self.concept_map.setToolTip(f"Concept {concept}'s coefficient at each of the layer's {h}×{w} positions, "
                                    f"upsampled to the input and drawn over it (0 to its largest value)")
        if changed:
            self.relevance_map.clear_map("Its relevance: …" if read.target is not None else "")

    def class_name(self, index: int | None) -> str:
        if index is None:
            return "—"
        labels = self.labels
        return f"{index} ({labels[index]})" if labels and 0 <= index < len(labels) else str(index)

    def show_map(self, found) -> None:
        if found.map is None:
            self.relevance_map.clear_map(f"no relevance map: {found.why}")
            return
        self.relevance_map.show_map(found.map, self.backdrop(), "Its relevance", signed=True)
        self.relevance_map.setToolTip(f"CRP-style: class {self.class_name(found.target)}'s gradient taken through "
                                      f"concept {found.concept} only, back to the input (gradient × input; red drives "
                                      f"the class, blue against it; colours top out at the 99th percentile)")

    def _clear_reading(self) -> None:
        self.reading = None
        self.concept_label.setText("Concept —")
        self._set_concept_enabled(False)
        if not self.made:
            return  # nothing drawn yet
        for bars in (self.coefficients, self.relevance):
            bars.clear_values()
        self.concept_map.clear_map()
        self.relevance_map.clear_map()

    def _set_concept_enabled(self, on: bool) -> None:
        for w in (self.page_button, self.ablate_button, self.scale_button, self.k):
            w.setEnabled(on)

    def heat_values(self) -> np.ndarray | None:
        """The concept map drawn (tests read it)."""
        return self.concept_map.values
