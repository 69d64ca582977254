"""What an independent review of the detection change found, each fixed: two detectors compared on one object,
a bare detector module refused by the methods that follow a class, D-RISE's batch checked, a tiny box's target
still naming that box, and the class filter's message."""

from __future__ import annotations

import pytest
import torch
from toy_detector import BOXES, NAMES, ToyDetector

from inspector.core import RunSpec, SpecError, parse_target
from inspector.core.attribution.drise import drise
from inspector.core.compare.diff import compare_results, same_objective
from inspector.core.records.detections import Detection, box_target, iou
from inspector.core.engine.runner import run


def _x():
    return torch.rand(1, 3, 32, 32, generator=torch.Generator().manual_seed(1))


def test_two_detectors_are_compared_on_the_same_object_whatever_their_counts():
    first, second = ToyDetector().eval(), ToyDetector().eval()
    x = _x()
    spec = RunSpec.make(["conv"], "output,grad_output", target="box:2")  # the worst of three in the first
    a = run(first, x, spec, NAMES)
    chosen = BOXES.index(a.detections[2].box)
    with torch.no_grad():
        second.conv.bias[chosen] += 4.0  # the second model finds it best
        scores = second.box_scores(x[0])
        kept = sorted(scores.tolist())
        second.score_thresh = (kept[0] + kept[1]) / 2  # and keeps two boxes, not three
    target = same_objective(a)
    assert target == parse_target(box_target(a.detections[2]))  # the first model's box, by place and class
    b = run(second, x, RunSpec.make(["conv"], "output,grad_output", target=target), NAMES)
    assert len(b.detections) == 2 and b.target_detection == 0 and b.detections[0].box == BOXES[chosen]
    diff = compare_results(a, b)  # one row per box found: no "different outputs" error, no output row
    assert [row.key for row in diff.rows] == ["conv:output", "conv:grad_output"]
    # what became of each box, worked out from both models' scores of the three fixed boxes
    with torch.no_grad():
        s1, s2 = first.box_scores(x[0]).tolist(), scores.tolist()
    m = 0.5 if max(s1) >= 0.5 else sorted(s1)[0]  # the default view: from 0.5, else the best ten (all three)
    expected = []
    for i, box in enumerate(BOXES):
        shown1, shown2 = s1[i] >= m, s2[i] >= second.score_thresh and s2[i] >= m
        if shown1 or shown2:
            expected.append((box, "kept" if shown1 and shown2 else "appeared" if shown2 else "vanished"))
    found = [((b.detections[c.after] if c.after is not None else a.detections[c.before]).box, c.kind)
             for c in diff.boxes]
    assert diff.min_score == pytest.approx(m) and sorted(found) == sorted(expected)
    assert diff.to_dict()["boxes"]["changes"][0]["after"]["rank"] == 0


@pytest.mark.parametrize("batch", [0, -2, 1.5])
def test_drise_checks_its_batch(batch):
    with pytest.raises(SpecError, match="D-RISE batch is a whole number, at least 1"):
        drise(ToyDetector().eval(), _x(), "box:0", masks=4, batch=batch)


@pytest.mark.parametrize("box", [(99.95, 0.0, 100.05, 1.0), (10.04, 5.0, 10.06, 8.0), (1.23456, 2.0, 30.98765, 40.5)])
def test_a_clicked_box_names_that_box_however_small(box):
    target = parse_target(box_target(Detection(box, 3, "x", 0.9)))
    assert target.label == 3 and iou(target.box, box) >= 0.9


def test_a_class_filter_that_nothing_matches_says_so():
    model = ToyDetector().eval()
    with pytest.raises(SpecError, match=r"detected nothing of class 7 \(3 detection\(s\) of other classes\)"):
        run(model, _x(), RunSpec.make(["conv"], "output", target="box:2,2,10,10@7"), NAMES)
    with pytest.raises(SpecError, match="is for segmentations; this model detects objects"):
        run(model, _x(), RunSpec.make(["conv"], "output", target="seg:1"), NAMES)
