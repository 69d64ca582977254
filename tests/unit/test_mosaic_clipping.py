"""Percentile clipping of attribution maps and the weight tiling of inspector.core.mosaic."""

from __future__ import annotations

import numpy as np
import pytest

from inspector.core.clipping import clip_levels, magnitude
from inspector.core.mosaic import is_parameter, make_mosaic, weight_maps


def test_a_few_huge_pixels_do_not_set_the_top_of_the_range():
    values = np.tile(np.arange(100, dtype=np.float32), (10, 1))  # 1000 values 0..99, ten of each
    values[0, :5] = 1e6  # one each of 0..4 become huge: 995 ordinary values, then five of 1e6
    lo, hi = clip_levels(values, 99.0)
    # the 99th percentile is at sorted index 0.99 * 999 = 989.01; indices 985..994 all hold 99
    assert (lo, hi) == (0.0, 99.0)
    assert clip_levels(values, 100.0) == (0.0, 1e6)
    assert clip_levels(np.full((4, 4), 2.0), 99.0) == (2.0, 3.0)


def test_magnitude_takes_the_largest_absolute_channel():
    m = np.zeros((3, 2, 2), np.float32)
    m[0, 0, 0], m[1, 0, 0], m[2, 1, 1] = 0.5, -2.0, np.nan
    np.testing.assert_array_equal(magnitude(m), [[2.0, 0.0], [0.0, 0.0]])
    with pytest.raises(ValueError):
        magnitude(np.zeros(5))


def test_weight_tiles_by_hand():
    w = np.arange(2 * 6 * 2 * 2, dtype=np.float32).reshape(2, 6, 2, 2)
    maps, inner = weight_maps(w)
    # 6 kernels of 2 x 2: ceil(sqrt(6)) = 3 columns, 2 rows, 1 pixel apart -> 5 x 8 per filter
    assert maps.shape == (2, 5, 8) and (inner.rows, inner.cols, inner.gap) == (2, 3, 1)
    np.testing.assert_array_equal(maps[1, 3:5, 6:8], w[1, 5])
    assert np.isnan(maps[0, 2]).all() and np.isnan(maps[0, :, 2]).all()
    assert is_parameter("layer1.0.conv1.weight:grad") and not is_parameter("input:grad")
    assert not is_parameter("conv1:grad_output")
    m = make_mosaic(w, key="conv.weight:grad")  # two filters side by side, 2 pixels apart
    assert m.image.shape == (5, 18) and m.kernel_at(4, 10 + 7) == (1, 5, 1, 1)
    assert m.image[4, 17] == w[1, 5, 1, 1]
