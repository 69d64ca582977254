"""Issue 26: occlusion against a brute-force loop written here and against captum's Occlusion, with the
window cut at the border, over a baseline; bad windows are one-line errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from inspector.core.attribution.occlusion import occlusion, window_starts
from inspector.core.common.errors import SpecError

pytestmark = pytest.mark.numeric


def brute_force(model, x, cls, window, stride, baseline):
    """Every window by hand: occlude, score, spread the drop over the window's pixels, average."""
    _, c, h, w = x.shape
    total, count = np.zeros((h, w)), np.zeros((h, w))
    with torch.no_grad():
        f_x = float(model(x)[0, cls])
        y = 0
        while True:
            x0 = 0
            while True:
                copy = x.clone()
                copy[:, :, y:y + window, x0:x0 + window] = baseline[:, :, y:y + window, x0:x0 + window]
                drop = f_x - float(model(copy)[0, cls])
                total[y:y + window, x0:x0 + window] += drop
                count[y:y + window, x0:x0 + window] += 1
                if x0 + window >= w:
                    break
                x0 += stride
            if y + window >= h:
                break
            y += stride
    return np.broadcast_to(total / count, (c, h, w))


@pytest.mark.parametrize("window, stride", [(3, 2), (4, 4), (5, 3), (11, 1)])
def test_occlusion_equals_a_brute_force_loop(small_net, window, stride):
    model = small_net
    x = torch.randn(1, 3, 11, 11, generator=torch.Generator().manual_seed(1))
    baseline = torch.randn(1, 3, 11, 11, generator=torch.Generator().manual_seed(2))
    found = occlusion(model, x, target=2, window=window, stride=stride, baseline=baseline, batch=5)
    np.testing.assert_allclose(found.map, brute_force(model, x, 2, window, stride, baseline), rtol=1e-5, atol=1e-6)
    assert found.map.shape == (3, 11, 11) and found.target_index == 2 and found.method == "occlusion"


def test_occlusion_equals_captums(small_net):
    captum = pytest.importorskip("captum.attr")
    model = small_net
    x = torch.randn(1, 3, 12, 12, generator=torch.Generator().manual_seed(3))
    found = occlusion(model, x, target=1, window=5, stride=2)  # zero baseline; windows cut at the border
    reference = captum.Occlusion(model).attribute(x, sliding_window_shapes=(3, 5, 5), strides=(3, 2, 2),
                                                  target=1, baselines=0, perturbations_per_eval=16)
    np.testing.assert_allclose(found.map, reference[0].numpy(), rtol=1e-5, atol=1e-6)
    assert dict(found.details) == {"window": 5, "stride": 2, "windows": 25, "batch": 8}  # a CPU: 8 a pass


def test_window_positions_cover_every_pixel():
    assert window_starts(11, 3, 2) == [0, 2, 4, 6, 8]  # the last window ends at 11
    assert window_starts(12, 5, 2) == [0, 2, 4, 6, 8]  # the last, 8..13, is cut at 12
    assert window_starts(10, 10, 3) == [0]


def test_bad_windows_are_one_line_errors(small_net):
    model = small_net
    x = torch.zeros(1, 3, 8, 8)
    for kwargs, words in [({"window": 9}, "larger than the input"), ({"window": 0}, "at least 1"),
                          ({"window": 3, "stride": 4}, "larger than the window"),
                          ({"window": 2, "stride": 1, "baseline": torch.zeros(1, 3, 4, 4)}, "baseline's shape")]:
        with pytest.raises(SpecError, match=words):
            occlusion(model, x, target=0, **kwargs)


def test_the_occluded_copies_take_each_window_from_the_baseline_and_the_rest_from_the_input():
    """`occluded` makes a pass's copies in a few operations; each equals x with one window (cut at the border)
    set from the baseline, as a copy made window by window."""
    from inspector.core.attribution.occlusion import occluded, window_starts

    x = torch.randn(1, 2, 8, 9, generator=torch.Generator().manual_seed(0))
    b = torch.randn(1, 2, 8, 9, generator=torch.Generator().manual_seed(1))
    spots = [(y, x0) for y in window_starts(8, 3, 2) for x0 in window_starts(9, 3, 2)]
    found = occluded(x, b, spots, 3)
    assert found.shape == (len(spots), 2, 8, 9) and (6, 6) in spots  # rows 6-8 of 8: cut at the border
    for copy, (y, x0) in zip(found, spots):
        expected = x[0].clone()
        expected[:, y:y + 3, x0:x0 + 3] = b[0, :, y:y + 3, x0:x0 + 3]
        assert torch.equal(copy, expected)


def test_a_channels_last_image_is_occluded_into_contiguous_copies():
    """The copies are laid out as `x.repeat` laid them out before (contiguous), whatever x's memory format."""
    from inspector.core.attribution.occlusion import occluded

    x = torch.randn(1, 3, 6, 6, generator=torch.Generator().manual_seed(2)).contiguous(
        memory_format=torch.channels_last)
    found = occluded(x, torch.zeros_like(x), [(0, 0), (3, 3)], 3)
    assert found.is_contiguous()
    assert found.stride() == x.repeat(2, 1, 1, 1).stride()
