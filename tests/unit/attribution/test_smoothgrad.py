"""Issue 26, SmoothGrad: mean, mean of squares and variance of a base map over seeded noisy copies,
checked against a computation by hand (own autograd, the same noise); noise 0 gives the base map exactly."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from inspector.core.attribution import attribute
from inspector.core.attribution.smoothgrad import smoothgrad
from inspector.core.common.errors import RunCancelled, SpecError

pytestmark = pytest.mark.numeric


def small() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 5, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                         nn.Linear(5, 4)).eval()


def by_hand(model, x, target, samples, noise, seed):
    generator = torch.Generator().manual_seed(seed)
    sigma = noise * float(x.max() - x.min())
    maps = []
    for _ in range(samples):
        point = (x + sigma * torch.randn(x.shape, generator=generator)).requires_grad_(True)
        model(point)[0, target].backward()
        maps.append(point.grad[0].abs().amax(dim=0).double().numpy())
    return np.stack(maps)


@pytest.mark.parametrize("kind", ["smoothgrad", "smoothgrad-sq", "vargrad"])
def test_the_three_kinds_equal_a_computation_by_hand(kind):
    model = small()
    x = torch.randn(1, 3, 8, 8, generator=torch.Generator().manual_seed(1))
    found = smoothgrad(model, x, target=2, kind=kind, samples=6, noise=0.2, seed=11)
    maps = by_hand(model, x, 2, 6, 0.2, 11)
    expected = {"smoothgrad": maps.mean(0), "smoothgrad-sq": (maps ** 2).mean(0), "vargrad": maps.var(0)}[kind]
    np.testing.assert_allclose(found.map, expected, rtol=1e-5, atol=1e-9)
    made = dict(found.details)
    assert made["seed"] == 11 and made["sigma"] == pytest.approx(0.2 * float(x.max() - x.min()))
    assert found.target_index == 2 and found.method == kind


def test_a_batch_of_noisy_saliency_copies_is_smoothgrads_own_not_saliencys_option():
    """SmoothGrad's batch and max_memory are its own passes: saliency (the smoothed map) takes neither, and
    asking for a batch failed ("saliency takes no option 'batch'") before."""
    model = small()
    x = torch.randn(1, 3, 8, 8, generator=torch.Generator().manual_seed(1))
    found = attribute(model, x, "smoothgrad", 2, options={"samples": 6, "noise": 0.2, "seed": 11, "batch": 4,
                                                         "max_memory": "64MB"})
    np.testing.assert_allclose(found.map, by_hand(model, x, 2, 6, 0.2, 11).mean(0), rtol=1e-5, atol=1e-9)


@pytest.mark.parametrize("of", ["saliency", "ig"])
def test_noise_zero_gives_the_base_map_exactly(of):
    model = small()
    x = torch.randn(1, 3, 8, 8, generator=torch.Generator().manual_seed(2))
    ig = {"steps": 4} if of == "ig" else {}
    found = smoothgrad(model, x, target=1, of=of, samples=5, noise=0.0, seed=3, **ig)
    base = attribute(model, x, of, 1, options=ig or None).map
    np.testing.assert_array_equal(found.map, base)


def test_a_seed_repeats_and_bad_arguments_are_refused():
    model = small()
    x = torch.randn(1, 3, 8, 8, generator=torch.Generator().manual_seed(4))
    a, b = (smoothgrad(model, x, 0, samples=3, seed=5).map for _ in range(2))
    np.testing.assert_array_equal(a, b)
    with pytest.raises(SpecError, match="smooths saliency, guided, ig"):
        smoothgrad(model, x, of="gradcam")
    with pytest.raises(SpecError, match="Unknown SmoothGrad kind"):
        smoothgrad(model, x, kind="mean")
    with pytest.raises(SpecError, match="noise must be"):
        smoothgrad(model, x, noise=-1.0)


def segmenter() -> nn.Module:
    torch.manual_seed(6)
    return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 3, 1)).eval()


@pytest.mark.parametrize("target, pick", [("seg:1", (1, slice(None), slice(None))),
                                          ("seg:2@1,2,5,7", (2, slice(2, 7), slice(1, 5)))])
def test_a_segmentations_class_map_is_smoothed_as_saliency_explains_it(target, pick):
    """A segmenter's objective is the sum of its class map (in the box): the batched noisy copies took the
    class index as a flat output index (one pixel of class 0's map), and noise 0 refused the class index."""
    model = segmenter()
    x = torch.randn(1, 3, 8, 8, generator=torch.Generator().manual_seed(7))
    generator, sigma = torch.Generator().manual_seed(11), 0.2 * float(x.max() - x.min())
    maps = []
    for _ in range(6):
        point = (x + sigma * torch.randn(x.shape, generator=generator)).requires_grad_(True)
        model(point)[0][pick].sum().backward()
        maps.append(point.grad[0].abs().amax(dim=0).double().numpy())
    found = smoothgrad(model, x, target=target, samples=6, noise=0.2, seed=11)
    np.testing.assert_allclose(found.map, np.mean(maps, axis=0), rtol=1e-5, atol=1e-9)
    assert found.target == target and found.target_index == pick[0]
    still = smoothgrad(model, x, target=target, samples=3, noise=0.0, seed=1)
    np.testing.assert_array_equal(still.map, attribute(model, x, "saliency", target).map)


@pytest.mark.parametrize("takes", [[5], [2, 3], [1, 1, 1, 1, 1]])
def test_the_noise_drawn_ahead_is_one_generators_copies_in_order(takes):
    """`NoiseCopies` draws on a thread what `torch.randn(shape, generator=g)` gives one call after another,
    however the passes take it."""
    import threading

    from inspector.core.attribution.smooth import NoiseCopies

    generator = torch.Generator().manual_seed(9)
    expected = torch.cat([torch.randn((1, 3, 4, 4), generator=generator) for _ in range(5)])
    with NoiseCopies((1, 3, 4, 4), 9, 5) as draws:
        found = torch.cat([draws.take(n) for n in takes])
    assert torch.equal(found, expected)
    assert not any(t.name == "smoothgrad-noise" for t in threading.enumerate())


def test_closing_the_noise_stops_its_thread_while_it_waits_for_room():
    """A run cancelled (or failed) after its first pass: the thread, waiting to hand over more than it may hold
    ahead, ends when the run closes it."""
    import threading

    from inspector.core.attribution import smooth as smoothing

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(smoothing, "AHEAD_BYTES", 2 * 4 * 3 * 4 * 4)  # two copies ahead
        draws = smoothing.NoiseCopies((1, 3, 4, 4), 1, 1000)
        assert draws.take(1).shape == (1, 3, 4, 4)
        draws.close()
    assert not draws._thread.is_alive()
    assert not any(t.name == "smoothgrad-noise" for t in threading.enumerate())


def test_a_failure_to_draw_the_noise_is_raised_by_the_run():
    from inspector.core.attribution.smooth import NoiseCopies

    with NoiseCopies((1, -3, 4), 1, 3) as draws, pytest.raises(RuntimeError, match="negative"):
        draws.take(1)


def test_bad_smoothing_arguments_are_refused_before_the_model_runs():
    """samples, kind and noise were checked after the first saliency pass had run the model."""
    model = small()
    calls = []
    model.register_forward_hook(lambda *_: calls.append(1))
    x = torch.randn(1, 3, 8, 8, generator=torch.Generator().manual_seed(4))
    for bad in ({"samples": 0}, {"kind": "mean"}, {"noise": float("nan")}):
        with pytest.raises(SpecError):
            smoothgrad(model, x, 0, **bad)
    assert calls == []


def test_taking_noise_that_is_not_there_is_an_error_not_a_hang():
    """More copies than were asked for, or any after closing: an error at once (a `get` waited for ever)."""
    from inspector.core.attribution.smooth import NoiseCopies

    draws = NoiseCopies((1, 2), 3, 2)
    assert draws.take(2).shape == (2, 2)
    with pytest.raises(RuntimeError, match="No noise is left"):
        draws.take(1)
    draws.close()
    with pytest.raises(RuntimeError, match="No noise is left"):
        draws.take(1)


class Watched(nn.Module):
    """small(), telling whether each forward of one input asked for its gradient."""

    def __init__(self, head_zero: bool = False) -> None:
        super().__init__()
        self.inner, self.asked = small(), []
        if head_zero:
            with torch.no_grad():
                self.inner[-1].weight.zero_()

    def forward(self, x):
        if x.shape[0] == 1:
            self.asked.append(torch.is_grad_enabled() and x.requires_grad)
        return self.inner(x)


def test_smoothgrad_of_saliency_looks_at_x_with_a_forward_only_and_says_what_saliency_says():
    """The class is resolved on x by one forward without a backward (a saliency pass on x cost 0.2 s of
    resnet50's 4.3 s job; before, x's one forward asked for its gradient); the target and warnings are
    saliency's own, the zero head's warning included, and the map is still the computation by hand."""
    x = torch.randn(1, 3, 8, 8, generator=torch.Generator().manual_seed(1))
    model = Watched()
    found = attribute(model, x, "smoothgrad", None, options={"samples": 6, "noise": 0.2, "seed": 11})
    assert model.asked == [False]
    plain = attribute(model, x, "saliency", None)
    assert (found.target, found.target_index, found.warnings) == (plain.target, plain.target_index, plain.warnings)
    np.testing.assert_allclose(found.map, by_hand(model.inner, x, plain.target_index, 6, 0.2, 11).mean(0),
                               rtol=1e-5, atol=1e-9)

    zero = Watched(head_zero=True)
    found = attribute(zero, x, "smoothgrad", 1, options={"samples": 3, "noise": 0.2, "seed": 1})
    said = attribute(zero, x, "saliency", 1).warnings
    assert any("exactly 0" in w for w in said) and found.warnings == said
    assert not found.map.any()


def test_the_noise_drawn_ahead_is_bounded_by_max_memory():
    """The noise thread holds at most a quarter of --max-memory ahead of the passes (AHEAD_BYTES without it):
    a 1 MB budget for copies of 3 x 64 x 64 float32 (48 KB each) holds 5 of them, 256 MB would hold 5,461."""
    from inspector.core.attribution import smoothgrad as module

    seen = []
    real = module.NoiseCopies

    class Watched(real):
        def __init__(self, *args):
            super().__init__(*args)
            seen.append(self._queue.maxsize)

    module.NoiseCopies = Watched
    try:
        net = torch.nn.Sequential(torch.nn.Conv2d(3, 2, 3), torch.nn.Flatten(), torch.nn.LazyLinear(2)).eval()
        x = torch.rand(1, 3, 64, 64)
        net(x)
        with pytest.raises(RunCancelled):
            module.smoothgrad(net, x, 0, samples=40000, seed=1, max_memory=2**20, cancel=lambda: True)
    finally:
        module.NoiseCopies = real
    assert seen[0] == 2**20 // 4 // (3 * 64 * 64 * 4) == 5
