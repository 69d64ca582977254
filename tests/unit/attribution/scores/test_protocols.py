"""Issue 55 item 1: named protocols for deletion and insertion. `rise2018` equals the RISE reference code's loop
(Petsiuk et al., BMVC 2018, github eclique/RISE evaluation.py, CausalMetric.single_run), written again here by
hand in torch, on the demo model and on torchvision's resnet18 with random weights; the protocols' step counts by
hand; a bad protocol or a step count a protocol fixes is one line before any pass."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.ndimage import gaussian_filter
from torch import nn

from inspector.core import load_input, load_model
from inspector.core.attribution import attribute
from inspector.core.attribution.record import Attribution
from inspector.core.attribution.scores.faithfulness import faithfulness, scored
from inspector.core.common.errors import SpecError
from inspector.core.records.protocols import PROTOCOLS, check_protocol


def reference_kernel(klen: int, nsig: float, channels: int) -> torch.Tensor:
    """evaluation.py's gkern: a Dirac delta under scipy's gaussian_filter, one kernel on the channel diagonal."""
    inp = np.zeros((klen, klen))
    inp[klen // 2, klen // 2] = 1
    k = gaussian_filter(inp, nsig)
    kern = np.zeros((channels, channels, klen, klen))
    for c in range(channels):
        kern[c, c] = k
    return torch.from_numpy(kern.astype("float32"))


def reference_game(model: nn.Module, img: torch.Tensor, explanation: np.ndarray, mode: str,
                   step: int = 224) -> np.ndarray:
    """CausalMetric.single_run by hand: the model under a softmax, the class its top-1 on the unmodified image,
    `step` pixels a step in the order np.flip(np.argsort(explanation)), changed in place one step at a time."""
    softmax = nn.Sequential(model, nn.Softmax(dim=1))
    _, channels, height, width = img.shape
    hw = height * width
    with torch.no_grad():
        c = int(softmax(img).argmax(1)[0])
        blur = nn.functional.conv2d(img, reference_kernel(11, 5, channels), padding=11 // 2)
        n_steps = (hw + step - 1) // step
        start, finish = (img.clone(), torch.zeros_like(img)) if mode == "del" else (blur, img.clone())
        scores = np.empty(n_steps + 1)
        salient_order = np.flip(np.argsort(explanation.reshape(-1, hw), axis=1), axis=-1)
        for i in range(n_steps + 1):
            scores[i] = float(softmax(start)[0, c])
            if i < n_steps:
                coords = torch.from_numpy(salient_order[0, step * i:step * (i + 1)].copy())
                start.view(channels, hw)[:, coords] = finish.view(channels, hw)[:, coords]
    return scores


def reference_auc(arr: np.ndarray) -> float:
    return float((arr.sum() - arr[0] / 2 - arr[-1] / 2) / (arr.shape[0] - 1))


@pytest.mark.numeric
def test_rise2018_equals_the_reference_loop_on_the_demo():
    model = load_model("demo")
    x = load_input("sample:star", model.preprocess, model.input_shape)
    found = attribute(model, x, "saliency")  # the top-1 class, as the reference takes it; a map without ties
    assert len(np.unique(found.map)) == found.map.size
    curves = {c.metric: c for c in scored(model, x, found, ("deletion", "insertion"), protocol="rise2018").curves}
    for metric, mode in (("deletion", "del"), ("insertion", "ins")):
        expected = reference_game(model.module, x, found.map, mode)
        assert len(expected) == 20  # 64 x 64 = 4096 pixels: ceil(4096 / 224) = 19 steps
        np.testing.assert_allclose(curves[metric].scores, expected, rtol=1e-5, atol=1e-7)
        assert curves[metric].auc == pytest.approx(reference_auc(expected), rel=1e-5)
        assert curves[metric].protocol == "rise2018"
        assert dict(curves[metric].settings) == {
            "pixels a step": 224, "steps": 19, "deletion to": "zeros of the model's input",
            "insertion from": "the input blurred (Gaussian, kernel 11, sigma 5, zero padding)"}
        assert curves[metric].at[1] == 224 / 4096 and curves[metric].at[-1] == 1.0
        assert curves[metric].score_of == f"probability of class {found.target_index}"


@pytest.mark.numeric
def test_rise2018_equals_the_reference_loop_on_resnet18_with_random_weights():
    from torchvision.models import resnet18

    torch.manual_seed(0)
    model = resnet18(weights=None).eval()
    x = torch.randn(1, 3, 64, 64, generator=torch.Generator().manual_seed(1))
    saliency = np.random.default_rng(2).standard_normal((64, 64)).astype(np.float32)  # signed, no ties
    with torch.no_grad():
        top = int(model(x).argmax(1)[0])
    curves = faithfulness(model, x, saliency, top, protocol="rise2018", sign="signed")
    for metric, mode in (("deletion", "del"), ("insertion", "ins")):
        expected = reference_game(model, x, saliency, mode)
        np.testing.assert_allclose(curves[metric].scores, expected, rtol=1e-5, atol=1e-9)
        assert curves[metric].auc == pytest.approx(reference_auc(expected), rel=1e-5)


def test_the_protocols_step_counts_by_hand():
    inspector, rise = PROTOCOLS["inspector"], PROTOCOLS["rise2018"]
    assert inspector.step_counts(42, 5) == [0, 8, 16, 25, 33, 42]  # floor(i * 42 / 5)
    assert len(inspector.step_counts(4096)) == 51  # K = 50 by default
    assert rise.step_counts(4096) == [224 * i for i in range(19)] + [4096]
    assert rise.step_counts(448) == [0, 224, 448]
    assert inspector.takes_baseline and not rise.takes_baseline
    with pytest.raises(SpecError, match="fixes its steps"):
        rise.step_counts(4096, 10)
    with pytest.raises(SpecError, match=r"^Unknown protocol 'rise'\. Protocols: inspector, rise2018\.$"):
        check_protocol("rise")


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.body = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                  nn.Linear(4, 5))

    def forward(self, x):
        return self.body(x)


def test_bad_protocol_settings_are_one_line_errors_before_a_pass():
    model = Small().eval()
    calls = []
    model.register_forward_hook(lambda *_: calls.append(1))
    x = torch.randn(1, 3, 6, 7)
    saliency = np.zeros((6, 7), np.float32)
    for kwargs, words in [({"protocol": "rise"}, "Unknown protocol 'rise'"),
                          ({"protocol": "rise2018", "steps": 5}, "fixes its steps"),
                          ({"protocol": "inspector", "steps": 0}, "at least 1")]:
        with pytest.raises(SpecError, match=words) as refused:
            faithfulness(model, x, saliency, 0, **kwargs)
        assert "\n" not in str(refused.value)
    with pytest.raises(SpecError, match="scores a class's probability"):  # a map of no class: nothing to score
        scored(model, x, Attribution("saliency", saliency, "sum", None), ("deletion",), protocol="rise2018")
    assert calls == []


def test_a_session_keeps_each_curves_protocol_and_settings():
    import json

    from inspector.core.session.stored import attribution_of, stored_of

    model = load_model("demo")
    x = load_input("sample:star", model.preprocess, model.input_shape)
    found = scored(model, x, attribute(model, x, "saliency"), ("insertion", "road"), protocol="rise2018",
                   road_percentages=(50,), road_seed=3)
    back = attribution_of(json.loads(json.dumps(stored_of(found))))
    assert [c.metric for c in back.curves] == ["insertion", "road-morf", "road-lerf"]
    for kept, made in zip(back.curves, found.curves):
        assert (kept.protocol, kept.settings, kept.at, kept.auc) == (made.protocol, made.settings, made.at, made.auc)
        assert kept.said() == made.said()
    assert back.curves[1].said().endswith("noise sigma 0.01; seed 3")
