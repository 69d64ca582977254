"""What an edit or a second model did to the boxes: matched one to one by IoU within a class, worked by hand."""

from __future__ import annotations

import numpy as np
import pytest

from inspector.core.detection.changes import BoxChange, box_changes, summary
from inspector.core.detection.picture import APPEARED, MOVED, VANISHED, draw_changes
from inspector.core.records.detections import Detection

BEFORE = [Detection((0, 0, 10, 10), 1, "person", 0.9), Detection((20, 20, 40, 40), 3, "car", 0.8),
          Detection((50, 50, 60, 60), 18, "dog", 0.7), Detection((62, 70, 98, 80), 17, "cat", 0.6)]
AFTER = [Detection((0, 0, 10, 10), 1, "person", 0.85),  # the same box: kept
         Detection((25, 20, 45, 40), 3, "car", 0.75),  # 15 of 20 columns shared: IoU 300 / 500 = 0.6, moved
         Detection((90, 90, 99, 99), 16, "bird", 0.55),  # nothing of its class before: appeared
         Detection((0, 0, 10, 10), 3, "car", 0.52),  # on the person's box but another class: appeared
         Detection((50, 50, 60, 60), 18, "dog", 0.3)]  # the dog, now under the score shown: vanished


def test_each_object_is_kept_moved_appeared_or_vanished():
    changes = box_changes(BEFORE, AFTER, 0.5)
    assert changes == [BoxChange("kept", 0, 0, 1.0), BoxChange("moved", 1, 1, pytest.approx(0.6)),
                       BoxChange("appeared", None, 2, 0.0), BoxChange("appeared", None, 3, 0.0),
                       BoxChange("vanished", 2, 4, 1.0),  # still found, at 0.3: its new score is kept
                       BoxChange("vanished", 3, None, 0.0)]  # the cat is gone
    assert summary(changes) == "1 kept, 1 moved, 2 appeared, 2 vanished"
    # seen as the window shows them, the best `most` of each run: here the person alone
    assert box_changes(BEFORE, AFTER, 0.5, most=1) == [BoxChange("kept", 0, 0, 1.0)]
    assert box_changes(BEFORE, AFTER, 0.5, most=2) == changes[:2]  # the person and the car, on both sides
    as_json = changes[4].to_dict(BEFORE, AFTER)
    assert as_json["kind"] == "vanished" and as_json["before"]["score"] == 0.7 and as_json["after"]["rank"] == 4


def test_matching_is_one_to_one_best_overlap_first_and_follows_the_score_shown():
    before = [Detection((0, 0, 10, 10), 1, "a", 0.9), Detection((0, 0, 10, 12), 1, "a", 0.8)]
    after = [Detection((0, 0, 10, 11), 1, "a", 0.9)]
    # IoU with the second (110 / 120 = 0.917) beats the first's (100 / 110 = 0.909): it takes the box
    assert box_changes(before, after, 0.5) == [BoxChange("kept", 1, 0, pytest.approx(110 / 120)),
                                               BoxChange("vanished", 0, None, 0.0)]
    # the same runs seen from 0.85: the second box is hidden, so the shown pair is matched first: kept
    assert box_changes(before, after, 0.85) == [BoxChange("kept", 0, 0, pytest.approx(100 / 110))]
    assert box_changes([], [], 0.5) == []


def test_the_picture_marks_each_change_in_its_colour():
    picture = np.full((160, 160, 3), 128, np.uint8)  # room right of the bird for its tag (a tag lies inside the
    # picture: in 100 pixels the bird's moved left over the cat's bottom edge)
    drawn = draw_changes(picture, BEFORE, AFTER, box_changes(BEFORE, AFTER, 0.5))
    assert drawn.shape == picture.shape
    assert tuple(drawn[40, 35]) == MOVED  # the moved car's bottom edge, at its new place
    assert tuple(drawn[99, 95]) == APPEARED  # the bird's bottom edge
    cat_bottom = [tuple(p) for p in drawn[80, 64:96]]  # the cat's bottom edge: red dashes, not a line
    assert VANISHED in cat_bottom and any(p != VANISHED for p in cat_bottom)


def test_a_shown_box_that_moved_is_matched_to_its_shown_partner_before_a_hidden_one():
    """From an independent review: A (0.9) overlaps B (0.3, hidden) by 0.72 and C (0.8, shown) by 0.70; matched
    by IoU alone, A 'vanished' and C 'appeared' where the viewer sees one box that moved."""
    a = Detection((0, 0, 100, 100), 1, "a", 0.9)
    b = Detection((0, 0, 100, 72), 1, "a", 0.3)  # IoU 7200 / 10000 = 0.72 with A
    c = Detection((0, 30, 100, 100), 1, "a", 0.8)  # IoU 7000 / 10000 = 0.70 with A
    assert box_changes([a], [c, b], 0.5) == [BoxChange("moved", 0, 0, pytest.approx(0.7))]
