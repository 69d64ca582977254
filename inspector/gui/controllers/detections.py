"""A detector's boxes in the window: a click on a box (on the input or in the predictions list) makes that
detection the target, and the input's score slider decides what both show."""

from __future__ import annotations

from PySide6.QtCore import QObject

from inspector.core.detection.picture import pick_at
from inspector.core.records.detections import box_target


class DetectionsController(QObject):
    def __init__(self, state, input_view, predictions) -> None:
        super().__init__(state)
        self.state, self.input_view = state, input_view
        input_view.sigMinScore.connect(predictions.set_min_score)
        predictions.sigDetectionPicked.connect(self.choose)

    def click(self, fy: float, fx: float) -> bool:
        """A click at (fy, fx), fractions of the input picture: True when the result on screen is a
        detector's (the smallest box shown under the click, if any, becomes the target)."""
        outcome = self.state.outcome
        if outcome is None or outcome.result.detections is None or outcome.result.input is None:
            return False
        h, w = outcome.result.input.shape[-2:]
        rank = pick_at(outcome.result.detections, fx * w, fy * h, self.input_view.min_score)
        if rank is not None:
            self.choose(rank)
        return True

    def choose(self, rank: int) -> None:
        """Detection `rank` of the result on screen becomes the target: by its box and class, so that it is
        followed when edits move the boxes; everything re-runs for it."""
        outcome = self.state.outcome
        if outcome is None or not outcome.result.detections or not 0 <= rank < len(outcome.result.detections):
            return
        chosen = box_target(outcome.result.detections[rank])
        self.state.set_target(chosen)  # the Target chooser shows it (sigTargetShown)
