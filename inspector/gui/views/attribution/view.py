"""Attribution maps overlaid on the input as the model sees it: a colour bar in the map's own
units, the top of the range clipped at a percentile (a control; a few huge saliency pixels no
longer wash the map out), and an opacity slider. The method's options (AttributionOptions), the
baseline it used beside the map (with what "zero" is for this model), and the deletion and
insertion curves under it when the map was scored."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSlider,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from inspector.core.pictures.clipping import clip_levels
from inspector.core.pictures.fit import covers
from inspector.core.detection.picture import EACH_BOX_MOST
from inspector.core.records.detections import box_target
from inspector.core.records.labels import label_name
from inspector.core.records.methods import METHODS, compared, made_words, method_names
from inspector.core.records.signs import SIGNS, default_sign

from ...common.controls import content_free, searchable
from .each_prompt import EachPrompt
from .options import AttributionOptions
from ..colour_bar import colour_bar
from .faithfulness_plot import FaithfulnessPlot
from ...common.heat_colours import colormap_for, heat_colormap
from .method_comparison import MethodComparison
from ..number_format import fmt
from ..side_panels import rgb_pixmap

BOXES_OFFERED = 10  # a detector's best detections offered as the map's target (a click on a box picks any)


class AttributionView(QWidget):
    """Signals
    -------
    sigRequested(str, str, object, object): method, target, layer (None = found automatically), and the
        method's options (a dict, "metrics" among them; see AttributionOptions.values).
    sigCompare(object): make a comparison: {cell name: (method, target, layer, options)}, in order (the state
        asks for them one after another and hands each back: `add_cell`, `fail_cell`, `end_comparison`).
    """

    sigRequested = Signal(str, str, object, object)
    sigCompare = Signal(object)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.method = content_free(QComboBox(), 10)
        self.method.addItems(list(method_names()))  # the method table, as it is when the tab is made
        self.method.setCurrentText("gradcam")
        self.layer = content_free(searchable(QComboBox()), 9)
        self.auto_layer = "auto (the map the head reads)"  # what "auto" picks for the model (set_choices)
        self.layer.addItem(self.auto_layer, None)
        self.target = content_free(searchable(QComboBox()), 9)
        self.target.addItem("target of the run", "")
        self.opacity = QSlider(Qt.Horizontal)
        self.opacity.setRange(0, 100)
        self.opacity.setValue(50)
        self.opacity.setMinimumWidth(160)
        self.percentile = QDoubleSpinBox()
        self.percentile.setRange(50.0, 100.0)
        self.percentile.setSingleStep(0.5)
        self.percentile.setDecimals(1)
        self.percentile.setValue(99.0)
        self.percentile.setToolTip("Colours top out at this percentile of the map (100: its largest value)")
        self.sign = QComboBox()
        self.sign.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)  # never widens the tab
        self.sign.setMinimumContentsLength(15)
        self.sign.addItem("positive (default)", None)
        for name in SIGNS:
            self.sign.addItem(name, name)
        self.sign.setToolTip("What of the map is drawn and scored: positive, negative or absolute values, or the "
                             "signed value on a diverging scale (default: signed for integrated gradients, occlusion "
                             "and guided maps, positive for the rest). Deletion and insertion remove pixels in the "
                             "order drawn, hottest first.")
        self.compute = QPushButton("Compute")
        self.compare = QPushButton("Compare all")
        self.compare.setToolTip("The same input and class under saliency, Grad-CAM, guided backprop, integrated "
                                "gradients, SmoothGrad and occlusion, side by side, each scored")
        self.each_box = QPushButton("Each box")
        self.each_box.setToolTip(f"The method for each box shown over the input (the best {EACH_BOX_MOST} at most), "
                                 "side by side, each map on its own scale")
        self.each_box.setVisible(False)
        self.each_prompt = EachPrompt(self.method)  # an image-text model's prompts, each explained (offer)
        self.detections = None  # a detector's, of the run on screen
        self.min_score: float | None = None  # the input's slider (None: not moved: the default view)
        self.export = QPushButton("Export…")
        self.export.setToolTip("Save the comparison: the maps (.npz), the settings and scores (.json), the picture "
                               "(.png)")
        self.export.setEnabled(False)
        self.comparison = MethodComparison()
        self.comparing = False  # a comparison is being filled in: results go to it
        self._wanted = None  # (layer, class) a session chose, until the model's are offered
        self.options = AttributionOptions()
        self.scores = self.options.scores
        self.baseline_picture = QLabel()
        self.baseline_picture.setAlignment(Qt.AlignCenter)
        self.baseline_text = QLabel(" ")
        self.baseline_text.setWordWrap(True)
        self.baseline_text.setMaximumWidth(150)
        self.baseline_box = QWidget()
        side = QVBoxLayout(self.baseline_box)
        side.setContentsMargins(0, 0, 0, 0)
        self.baseline_title = QLabel("<b>Baseline</b>")
        side.addWidget(self.baseline_title)
        side.addWidget(self.baseline_picture)
        side.addWidget(self.baseline_text)
        side.addStretch(1)
        self.baseline_box.setVisible(False)
        self.curves = FaithfulnessPlot()
        self.caption = QLabel("Pick a method and press Compute.")
        self.caption.setWordWrap(True)
        self.canvas = pg.GraphicsLayoutWidget()
        self.view = self.canvas.addViewBox(lockAspect=True, invertY=True)
        self.view.setMenuEnabled(False)
        self.picture = pg.ImageItem(axisOrder="row-major")
        self.heat = pg.ImageItem(axisOrder="row-major")
        self.view.addItem(self.picture)
        self.view.addItem(self.heat)
        self.colorbar = colour_bar((0, 1), heat_colormap(), 14)
        self.colorbar.setImageItem(self.heat)
        self.canvas.addItem(self.colorbar, row=0, col=1)
        self.colorbar.setVisible(False)  # shown with a map
        self.map: np.ndarray | None = None
        self.stale = False  # the options changed since the map on screen was made
        self.made_caption = ""
        self.values: np.ndarray | None = None  # the (H, W) picture drawn (records.signs)
        self.shown_sign = "positive"  # the sign of the picture drawn
        row, display = QHBoxLayout(), QHBoxLayout()  # what to compute; how to show it
        for label, widget in (("Method", self.method), ("Layer", self.layer)):  # a layer's path has the row's room
            row.addWidget(QLabel(label))
            row.addWidget(widget, 0 if widget is self.method else 1)
        row.addWidget(self.compute)
        for label, widget in (("Sign", self.sign), ("Clip at %", self.percentile), ("Opacity", self.opacity)):
            display.addWidget(QLabel(label))
            display.addWidget(widget)
        display.addStretch(1)
        actions = QHBoxLayout()  # the class, scoring and the comparisons: the layer's row would cut both names
        actions.addWidget(QLabel("Class"))
        actions.addWidget(self.target, 1)
        actions.addWidget(self.scores)
        actions.addWidget(self.each_box)
        actions.addWidget(self.each_prompt)
        actions.addWidget(self.compare)
        self.comparison.bottom.addWidget(self.export)
        single = QWidget()  # one method: the map, the baseline beside it, the curves under it
        picture_row = QHBoxLayout()
        picture_row.addWidget(self.canvas, 1)
        picture_row.addWidget(self.baseline_box)
        single_layout = QVBoxLayout(single)
        single_layout.setContentsMargins(0, 0, 0, 0)
        single_layout.addLayout(picture_row, 1)
        single_layout.addWidget(self.curves)
        single_layout.addWidget(self.caption)
        self.pages = QStackedWidget()
        self.pages.addWidget(single)
        self.pages.addWidget(self.comparison)
        self.single = single
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.options)
        layout.addLayout(actions)
        layout.addLayout(display)
        layout.addWidget(self.pages, 1)
        self.compute.clicked.connect(self._on_compute)
        self.compare.clicked.connect(lambda: self.compare_methods())  # clicked(bool) is not a list of methods
        self.each_box.clicked.connect(self.explain_each_box)
        self.each_prompt.sigAsks.connect(self.compare_cells)
        self.shown = False  # a map or an error is on screen: a changed choice computes again
        self.method.currentTextChanged.connect(lambda _m: self._on_choice())
        self.sign.activated.connect(lambda _i: self._on_choice())
        for name in ("of", "kind"):  # what SmoothGrad's default sign depends on
            self.options.widgets[name].currentTextChanged.connect(lambda _t: self._fit_choices())
        self.options.widgets["steps"].valueChanged.connect(lambda _v: self._fit_choices())  # auto: its tolerance
        for widget in self.options.widgets.values():  # a map made with other options is out of date
            changed = widget.currentIndexChanged if isinstance(widget, QComboBox) else widget.valueChanged
            changed.connect(lambda *_a: self._mark_out_of_date())
        self.scores.toggled.connect(lambda _on: self._on_choice())
        for combo in (self.layer, self.target):
            combo.activated.connect(lambda _i: self._on_choice())
        self._fit_choices()
        self.opacity.valueChanged.connect(lambda v: self.heat.setOpacity(v / 100))
        self.percentile.valueChanged.connect(lambda _v: self._apply_levels())
        self.heat.setOpacity(0.5)

    def restore(self, choice: dict) -> None:
        """Show a session's choice (method, class, layer, options, scores) without computing; the class and
        layer are chosen once the model's are offered (`set_choices`)."""
        self.shown = False
        for widget in (self.method, self.scores):
            widget.blockSignals(True)
        if self.method.findText(choice.get("method", "")) >= 0:
            self.method.setCurrentText(choice["method"])
        self.scores.setChecked(bool(choice.get("metrics")))
        for widget in (self.method, self.scores):
            widget.blockSignals(False)
        self.options.restore(choice.get("options") or {})
        self.sign.setCurrentIndex(max(self.sign.findData((choice.get("options") or {}).get("sign")), 0))
        self._wanted = (choice.get("layer"), choice.get("target") or "")
        self._fit_choices()

    def set_choices(self, conv_layers: list[str], predictions, auto_layer: str | None = None,
                    detections=None) -> None:
        """The layers and classes to offer (a detector's best boxes, by box and class, instead of classes);
        `auto_layer`: what "auto" picks for this model, in words."""
        keep_layer, keep_target = self.layer.currentData(), self.target.currentData()
        if self._wanted is not None:  # a session's choice, waiting for its model's classes
            keep_layer, keep_target = self._wanted
            self._wanted = None if predictions else self._wanted
        if auto_layer is not None:
            self.auto_layer = auto_layer
        self.layer.clear()
        self.layer.addItem(self.auto_layer, None)
        for path in conv_layers:
            self.layer.addItem(path, path)
        self.target.clear()
        self.target.addItem("target of the run", "")
        for p in predictions:
            self.target.addItem(f"{p.label} ({p.index}) {p.probability:.1%}", str(p.index))
        for k, d in enumerate((detections or [])[:BOXES_OFFERED]):
            self.target.addItem(f"box:{k} {d.name} {d.score:.2f}", box_target(d))
        self.detections = detections
        self.each_box.setVisible(detections is not None)
        self.compare.setToolTip(f"The same input and {'box' if detections is not None else 'class'} under "
                                f"{', '.join(self._compared())}, side by side, each scored")
        for combo, keep in ((self.layer, keep_layer), (self.target, keep_target)):
            i = combo.findData(keep)
            combo.setCurrentIndex(max(i, 0))
        self._fit_choices()

    def _fit_choices(self) -> None:
        """Only the choices the method uses are offered: a layer for Grad-CAM's, a class unless it explains none."""
        method = self.method.currentText()
        self.options.show_for(method)
        of = self.options.widgets["of"].currentText() if method == "smoothgrad" else None
        kind = self.options.widgets["kind"].currentText() if method == "smoothgrad" else method
        default = default_sign(kind, of)
        self.sign.setItemText(0, f"{default} (default)")
        for row in range(1, self.sign.count()):  # the default's own entry is the first one's twin: not listed
            self.sign.view().setRowHidden(row, self.sign.itemData(row) == default)
        if self.sign.currentData() == default:
            self.sign.setCurrentIndex(0)
        row = METHODS.get(method)
        uses_layer, uses_class = row is not None and row.layer, row is None or row.explains == "class"
        self.layer.setEnabled(uses_layer)
        self.layer.setItemText(0, self.auto_layer if uses_layer else "not used")  # short: the box is narrow
        if not uses_layer:
            self.layer.setCurrentIndex(0)
        self.target.setEnabled(uses_class)
        self.each_box.setEnabled(uses_class)  # a class-agnostic map is the same for every box
        self.target.setItemText(0, "target of the run" if uses_class else "(no class: class-agnostic)")

    def _mark_out_of_date(self) -> None:
        """An option changed under a map made with the old one: the map stays, said to be out of date and faded,
        until Compute makes it again (the baseline beside it is the map's, not the chooser's)."""
        if self.map is None or self.stale:
            return
        self.stale = True
        self.heat.setOpacity(0.25 * self.opacity.value() / 100)
        self.caption.setText("<span style='color:#b00'><b>Out of date</b>: the options changed since this map was "
                             "made; press Compute.</span> " + self.made_caption)
        self.baseline_title.setText("<b>Baseline of the map shown</b>")

    def _on_choice(self) -> None:
        self._fit_choices()
        if self.shown:
            self._on_compute()

    def forget(self) -> None:
        """Another model: nothing of the last one's map, error or comparison stays on screen."""
        if self.comparing or self.comparison.methods:
            self.comparison.start((), None)
            self.comparison.status.setText("Another model: press Compare all again.")
        self.comparing = False
        self.export.setEnabled(False)
        self.each_prompt.offer("", self.target)
        self._clear_map()
        self.shown = False
        self.caption.setText("Pick a method and press Compute.")

    def _clear_map(self) -> None:
        self.map = self.values = None
        self.stale = False
        self.picture.clear()
        self.heat.clear()
        self.colorbar.setVisible(False)  # no colour range over an empty view
        self.baseline_box.setVisible(False)
        self.curves.clear_curves()

    def _compared(self) -> tuple[str, ...]:
        return compared(boxes=self.detections is not None)

    def set_min_score(self, value: float) -> None:
        """The score from which the input shows boxes: "Each box" explains those."""
        self.min_score = value

    def explain_each_box(self) -> None:
        """The chosen method for each box shown (boxes_to_explain), one after another, side by side."""
        from inspector.core.detection.picture import boxes_to_explain, default_min_score

        found = self.detections or []
        score = self.min_score if self.min_score is not None else default_min_score(found)
        ranks = boxes_to_explain(found, score)
        if not ranks:
            self.caption.setText(f"No box scores {score:.2f} or more: lower the slider under the input.")
            return
        method = self.method.currentText()
        names = {f"box:{k} {found[k].name} {found[k].score:.2f}": (method, box_target(found[k])) for k in ranks}
        self.compare_cells(names)

    def compare_methods(self, methods: tuple[str, ...] | None = None) -> None:
        """Every method in `methods` (None: those for the model) for the chosen class or box, one after
        another, each scored (a class's probability; a detector's boxes are not)."""
        self.compare_cells({m: (m, None) for m in (methods or self._compared())})

    def compare_cells(self, asks: dict[str, tuple[str, str | None]]) -> None:
        """Show an empty comparison of `asks` (cell name -> (method, target; None: the tab's)) and ask for it."""
        self.comparison.start(tuple(asks), None, asks)
        self.comparing = True
        self.export.setEnabled(False)
        self.pages.setCurrentWidget(self.comparison)
        self.sigCompare.emit({name: self.cell_request(method, target) for name, (method, target) in asks.items()})

    def cell_request(self, method: str, target: str | None) -> tuple:
        """(method, target, layer, options) of a comparison's cell: each box unscored (its maps side by side);
        every other cell scored, over the tab's baseline where the method takes none of its own."""
        unscorable = METHODS[method].explains == "nothing" and self.detections is not None  # explains no box
        metrics = () if target or unscorable else ("deletion", "insertion")
        options = dict(self.options.values(method), metrics=metrics)
        box = self.options.widgets["baseline"]
        if metrics or self.options.uses_baseline(method):  # the scores take one away, as the method does
            options.setdefault("baseline", box.currentData() or box.currentText())
        layer = self.layer.currentData() if target and METHODS[method].layer else None
        return method, target or self.target.currentData() or "", layer, options

    def add_cell(self, name: str, found, picture: np.ndarray | None = None) -> None:
        """A comparison's cell has its map: drawn over `picture` (a detector's: with the box it explains)."""
        self.comparison.add(name, found, picture)

    def fail_cell(self, name: str, message: str) -> None:
        self.comparison.fail(name, message)

    def end_comparison(self, why: str) -> None:
        """The comparison is over: every cell came (`why` ""), or it stopped (Esc: `why` says so)."""
        self.comparing = False
        self.export.setEnabled(bool(self.comparison.found))
        if why:
            self.comparison.status.setText(f"Stopped: {why}")

    def _on_compute(self) -> None:
        method = self.method.currentText()
        if self.comparing:  # the state stops the comparison for this map
            self.end_comparison("another map was asked for.")
        self.pages.setCurrentWidget(self.single)
        self.shown = True
        self.caption.setText(f"Computing {method}…")
        layer = self.layer.currentData() if METHODS[method].layer else None
        self.sigRequested.emit(method, self.target.currentData() or "", layer,
                               {**self.options.values(method), "sign": self.sign.currentData()})

    def show_attribution(self, picture: np.ndarray | None, found, labels, baseline: np.ndarray | None = None) -> None:
        """The map over `picture`; `baseline` (the baseline as a picture, H x W x 3) beside it when the
        method used one; the deletion and insertion curves under it when it was scored. While methods are
        compared, the cells come through `add_cell` instead."""
        self.map = found.map
        self.values = found.picture
        self.heat.setOpacity(self.opacity.value() / 100)
        self.shown_sign = found.shown_sign
        self.colorbar.setColorMap(colormap_for(self.shown_sign))
        if picture is not None and covers(picture.shape, self.values.shape):
            self.picture.setImage(picture, autoLevels=False, levels=(0, 255))
            self.picture.setRect(0, 0, self.values.shape[1], self.values.shape[0])  # a larger one: over the map
        else:
            self.picture.clear()
        self.heat.setImage(self.values, autoLevels=False, levels=self._levels())
        self._apply_levels()
        self.view.autoRange(padding=0.01)
        what = found.target if found.target_index is None else (
            f"class {found.target_index}" + (f" ({label_name(found.target_index, labels)})" if labels else ""))
        if found.target_detection is not None:
            box = found.detections[found.target_detection]
            what = f"box:{found.target_detection} ({box.name} {box.score:.2f})"
        notes = [f"{found.method} for {what}", f"{found.shown_sign} values" + (
            " (blue below 0, red above)" if found.shown_sign == "signed" else "")]
        if found.layer:
            notes.append(f"layer {found.layer}")
        if found.approximation:
            notes.append(found.approximation)
        made = dict(found.details)
        notes += made_words(found.method, made)[:1] if "samples" in made else []
        if found.completeness_gap is not None:
            made = dict(found.details)
            delta = made.get("f(x) - f(baseline)", float("nan"))
            reach = ""
            if "tolerance" in made:  # steps auto: the gap it stops at, in the gap's units
                reach = (f"; steps auto stops at a gap of {fmt(made['tolerance'] * abs(delta), '.3g')} = tolerance "
                         f"{made['tolerance']:g} × |f(x) - f(baseline)|")
            notes.append(f"completeness gap {fmt(found.completeness_gap, '.3g')} (sum of the map vs f(x) - f(baseline) "
                         f"{fmt(delta, '.4g')}; {made.get('steps')} steps, {made.get('quadrature')}{reach})")
        notes += made_words(found.method, made)[1 if "samples" in made else 0:]  # windows, masks
        for curve in found.curves:  # each AUC with the protocol it was scored under (records.protocols)
            notes.append(f"{curve.metric} AUC {fmt(curve.auc, '.3f')}"
                         + (f" (protocol {curve.protocol})" if curve.protocol else ""))
        if found.unreached:
            notes.append("not reached (functional calls): " + "; ".join(found.unreached))
        notes += list(found.notes) + list(found.warnings)
        self.made_caption = " · ".join(notes)  # the caption of the map on screen, as it was made
        self.stale = False
        self.caption.setText(self.made_caption)
        if "baseline is" in made:
            self._show_baseline(baseline, made["baseline is"], "Baseline")
        else:  # a method with none of its own, scored: the baseline its scores took
            self._show_baseline(baseline, made.get("scores' baseline is"), "Scores' baseline")
        self.curves.show_curves(found.curves)

    def _show_baseline(self, picture: np.ndarray | None, text: str | None, title: str = "Baseline") -> None:
        if picture is None or text is None:
            self.baseline_box.setVisible(False)
            return
        self.baseline_title.setText(f"<b>{title}</b>")
        self.baseline_picture.setPixmap(rgb_pixmap(picture, 128))
        self.baseline_text.setText(text)
        self.baseline_box.setVisible(True)

    def _apply_levels(self) -> None:
        """Colours from the map's smallest value to its chosen percentile (the colour bar says which)."""
        if self.values is not None:
            self.colorbar.setLevels(self._levels())
            self.colorbar.setVisible(True)

    def _levels(self) -> tuple[float, float]:
        """The colour range of the picture: a signed one symmetric about 0, the clip applied to |value|."""
        return clip_levels(self.values, self.percentile.value(), signed=self.shown_sign == "signed")

    def show_error(self, message: str) -> None:
        """The method failed: its error, and no map (the last one belonged to another choice)."""
        self._clear_map()
        self.caption.setText(f"<span style='color:#b00'>{message}</span>")
