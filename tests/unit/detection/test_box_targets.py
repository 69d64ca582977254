"""Box targets: a detector's detections read best first, and the score of one box as the objective, checked
against plain PyTorch (hooks and `scores[k].backward()`) on a hand-checkable detector and on torchvision's."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from toy_detector import BOXES, LABELS, NAMES, ToyDetector

from inspector.core import RunSpec, SpecError, parse_target
from inspector.core.detection.thresholds import score_threshold, set_score_threshold
from inspector.core.target.objective import Target
from inspector.core.records.detections import iou
from inspector.core.engine.runner import run


def _x(seed=1, size=(32, 32)):
    return torch.rand(1, 3, *size, generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize(("text", "target", "shown"), [
    ("box:0", Target("box", 0), "box:0"),
    (" BOX:12 ", Target("box", 12), "box:12"),
    ("box:1,2,30.5,40", Target("box", None, (1.0, 2.0, 30.5, 40.0)), "box:1,2,30.5,40"),
    ("box:1,2,30,40@3", Target("box", None, (1.0, 2.0, 30.0, 40.0), 3), "box:1,2,30,40@3"),
    ("box:1,2,30,40@Traffic Light", Target("box", None, (1.0, 2.0, 30.0, 40.0), "Traffic Light"),
     "box:1,2,30,40@Traffic Light"),
])
def test_box_targets_parse_and_print_back(text, target, shown):
    assert parse_target(text) == target and str(target) == shown and parse_target(shown) == target


@pytest.mark.parametrize(("text", "says"), [
    ("box:", "box:K takes a detection's rank"), ("box:-1", "box:K takes"), ("box:1,2,3", "box:K takes"),
    ("box:a,b,c,d", "box:K takes"), ("box:5,2,3,9", "X0 < X1"), ("box:1,2,3,4@", "a class"),
    ("box:1@2", "box:K takes"),
])
def test_malformed_box_targets_are_one_line(text, says):
    with pytest.raises(SpecError, match=says):
        parse_target(text)


def _expected_ranks(model, x):
    with torch.no_grad():
        scores = model.box_scores(x[0])
    return torch.argsort(scores, descending=True).tolist(), scores


@pytest.mark.parametrize("k", [0, 1, 2])
def test_box_k_is_the_kth_score_and_its_gradient_stays_in_its_box(k):
    model, x = ToyDetector().eval(), _x()
    ranks, scores = _expected_ranks(model, x)
    spec = RunSpec.make(["conv"], "output,grad_output", target=f"box:{k}", input_grad=True)
    result = run(model, x, spec, NAMES)
    which = ranks[k]  # the box in BOXES order
    assert result.target == f"box:{k}" and result.target_detection == k and result.target_index == LABELS[which]
    assert result.objective == pytest.approx(float(scores[which]), abs=1e-7)
    assert [d.box for d in result.detections] == [BOXES[i] for i in ranks]
    assert [d.name for d in result.detections] == [NAMES[LABELS[i]] for i in ranks]
    np.testing.assert_allclose(result.output[:, 4], scores[ranks].numpy(), rtol=1e-6)
    # plain autograd on the same weights
    xx = x.clone().requires_grad_(True)
    model.box_scores(xx[0])[which].backward()
    np.testing.assert_allclose(result.input_grad, xx.grad.numpy(), rtol=1e-5, atol=1e-9)
    # only the box's own pixels (grown by the conv's one pixel) move its score; its channel alone
    x0, y0, x1, y1 = (int(v) for v in BOXES[which])
    outside = np.ones((32, 32), bool)
    outside[max(y0 - 1, 0):y1 + 1, max(x0 - 1, 0):x1 + 1] = False
    assert np.abs(result.input_grad[0][:, outside]).max() == 0 and np.abs(result.input_grad).max() > 0
    grad_out = result["conv:grad_output"][0]
    assert np.abs(np.delete(grad_out, which, axis=0)).max() == 0 and np.abs(grad_out[which]).max() > 0


def test_a_box_in_pixels_picks_the_best_overlap_and_a_class_narrows_it():
    model, x = ToyDetector().eval(), _x()
    ranks, scores = _expected_ranks(model, x)
    near_first = (2.0, 3.0, 10.0, 11.0)  # box 0 moved down a pixel: 8x7 shared of two 8x8 boxes
    assert iou(near_first, BOXES[0]) == pytest.approx((8 * 7) / (64 + 64 - 56))
    result = run(model, x, RunSpec.make(["conv"], "output", target="box:2,3,10,11"), NAMES)
    assert result.target_detection == ranks.index(0) and result.objective == pytest.approx(float(scores[0]))
    assert result.target == "box:2,3,10,11"
    # only box 0 (class 1) is near it: among class 2 nothing overlaps at all
    with pytest.raises(SpecError, match=r"no detection of class square matches the box \(best IoU 0.00"):
        run(model, x, RunSpec.make(["conv"], "output", target="box:2,3,10,11@square"), NAMES)
    # by name or index, any case: box 1 is the square
    for label in ("square", "SQUARE", "2"):
        result = run(model, x, RunSpec.make(["conv"], "output", target=f"box:12,4,28,14@{label}"), NAMES)
        assert result.target_detection == ranks.index(1) and result.target_index == 2
    with pytest.raises(SpecError, match="no class named 'sqare'. Did you mean square"):
        run(model, x, RunSpec.make(["conv"], "output", target="box:12,4,28,14@sqare"), NAMES)


def test_box_errors_say_how_many_detections_there_are_and_the_threshold():
    model, x = ToyDetector().eval(), _x()
    with pytest.raises(SpecError, match=r"made 3 detection\(s\) above the score threshold 0, box:0 to box:2"):
        run(model, x, RunSpec.make(["conv"], "output", target="box:3"), NAMES)
    with pytest.raises(SpecError, match="is for classifiers; this model detects objects. Use box:K"):
        run(model, x, RunSpec.make(["conv"], "output", target="top1"), NAMES)
    set_score_threshold(model, 1.0)  # nothing scores 1 (a sigmoid)
    assert score_threshold(model) == 1.0
    with pytest.raises(SpecError, match="detected nothing above the score threshold 1; lower it"):
        run(model, x, RunSpec.make(["conv"], "output", target="box:0"), NAMES)
    result = run(model, x, RunSpec.make(["conv"], "output,grad_output"), NAMES)  # auto: captured, said so
    assert result.detections == [] and result.objective == 0.0 and result.target == "auto"
    assert any("detected nothing above its score threshold 1" in w for w in result.warnings)
    assert np.abs(result["conv:grad_output"]).max() == 0
    with pytest.raises(SpecError, match="between 0 and 1"):
        set_score_threshold(model, 1.5)


def test_a_box_target_on_a_classifier_is_refused():
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(12, 4)).eval()
    with pytest.raises(SpecError, match=r"is for object detectors; this model does not detect objects \(its output "
                                        r"is \(1, 4\)"):
        run(model, torch.rand(1, 3, 2, 2), RunSpec.make(["1"], "output", target="box:0"))
    with pytest.raises(SpecError, match="keeps none"):
        set_score_threshold(model, 0.5)


def test_torchvision_faster_rcnn_box_target_equals_plain_hooks_and_backward():
    """fasterrcnn_mobilenet_v3_large_320_fpn with seeded random weights (threshold 0, so it detects): the
    captures of a box:K run equal plain forward hooks and `scores[k].backward()` on the same weights."""
    from inspector.core import capture, load_model

    loaded = load_model("fasterrcnn_mobilenet_v3_large_320_fpn", seed=0)
    assert loaded.task == "detection" and score_threshold(loaded.module) == 0.0 and loaded.labels[1] == "person"
    x = _x(2, (120, 160))
    layers = ["backbone.body.16", "rpn.head.conv", "roi_heads.box_head.fc7"]
    result = capture(loaded, x, layers, "output,grad_output", target="box:3", input_grad=True)

    module, outputs, grads, handles = loaded.module, {}, {}, []
    for path in layers:  # the RPN's head runs once per FPN level (3 here): path:site#CALL
        def keep(_m, _i, out, path=path):
            calls = sum(1 for k in outputs if k.startswith(f"{path}:"))
            key = f"{path}:output" + (f"#{calls}" if calls else "")
            outputs[key] = out.detach().clone()
            out.register_hook(lambda g: grads.__setitem__(key.replace(":output", ":grad_output"), g.detach().clone()))
        handles.append(module.get_submodule(path).register_forward_hook(keep))
    xx = x.clone().requires_grad_(True)
    try:
        first = module([xx[0]])[0]
    finally:
        for handle in handles:
            handle.remove()
    order = torch.argsort(first["scores"].detach(), descending=True, stable=True)
    first["scores"][order[3]].backward()
    assert result.objective == pytest.approx(float(first["scores"][order[3]].detach()), rel=1e-6)
    assert len(result.detections) == len(first["scores"]) == 100
    np.testing.assert_allclose(result.output[:, :4], first["boxes"][order].detach().numpy(), rtol=1e-5, atol=1e-4)
    assert result.detections[3].box == pytest.approx(tuple(first["boxes"][order[3]].tolist()), rel=1e-5)
    assert result.detections[3].name == loaded.labels[int(first["labels"][order[3]])]
    assert len(outputs) == 1 + 3 + 1
    for key in outputs:
        np.testing.assert_allclose(result[key], outputs[key].numpy(), rtol=1e-5, atol=1e-6)
    # torchvision detaches the proposals: a box's score sends no gradient into the RPN, in both
    assert set(grads) == {"backbone.body.16:grad_output", "roi_heads.box_head.fc7:grad_output"}
    assert not any(k.startswith("rpn.") and "grad" in k for k in result.arrays())
    assert any("No gradient reached rpn.head.conv" in w for w in result.warnings)
    for key, grad in grads.items():
        np.testing.assert_allclose(result[key], grad.numpy(), rtol=1e-4, atol=1e-9)
        assert np.abs(grad.numpy()).max() > 0
    np.testing.assert_allclose(result.input_grad, xx.grad.numpy(), rtol=1e-4, atol=1e-9)


def test_masks_and_keypoints_are_kept_best_first_in_the_capture_file(tmp_path):
    """Mask and Keypoint R-CNN's extras follow the detections' order by score (one (H, W) mask each)."""

    class WithExtras(ToyDetector):
        def forward(self, images):
            out = super().forward(images)
            for found in out:
                n = len(found["scores"])
                found["masks"] = torch.arange(n, dtype=torch.float32).reshape(n, 1, 1, 1).expand(n, 1, 32, 32)
                found["keypoints"] = torch.arange(n, dtype=torch.float32).reshape(n, 1, 1).expand(n, 17, 3)
                order = torch.tensor([2, 0, 1])  # scores no longer best first: the file puts them so
                for key in found:
                    found[key] = found[key][order]
            return out

    model, x = WithExtras().eval(), _x()
    result = run(model, x, RunSpec.make(["conv"], "output"), NAMES)
    first = model(x)[0]
    best = torch.argsort(first["scores"].detach(), descending=True).tolist()
    path = tmp_path / "c.npz"
    result.save_npz(path)
    with np.load(path) as arrays:
        assert arrays["detections:masks"].shape == (3, 32, 32) and arrays["detections:keypoints"].shape == (3, 17, 3)
        assert [int(arrays["detections:masks"][k, 0, 0]) for k in range(3)] == [int(first["masks"][i, 0, 0, 0])
                                                                                   for i in best]
        assert [int(arrays["detections:keypoints"][k, 0, 0]) for k in range(3)] == [int(first["keypoints"][i, 0, 0])
                                                                                       for i in best]
        np.testing.assert_allclose(arrays["output"][:, 4], first["scores"][best].detach().numpy())
