"""Percentile clipping of attribution maps and the weight tiling of inspector.core.pictures.mosaic."""

from __future__ import annotations

import numpy as np


from inspector.core.pictures.clipping import clip_levels
from inspector.core.pictures.mosaic import is_parameter, make_mosaic, weight_maps


def test_a_few_huge_pixels_do_not_set_the_top_of_the_range():
    values = np.tile(np.arange(100, dtype=np.float32), (10, 1))  # 1000 values 0..99, ten of each
    values[0, :5] = 1e6  # one each of 0..4 become huge: 995 ordinary values, then five of 1e6
    lo, hi = clip_levels(values, 99.0)
    # the 99th percentile is at sorted index 0.99 * 999 = 989.01; indices 985..994 all hold 99
    assert (lo, hi) == (0.0, 99.0)
    assert clip_levels(values, 100.0) == (0.0, 1e6)
    assert clip_levels(np.full((4, 4), 2.0), 99.0) == (2.0, 3.0)


def test_signed_levels_are_symmetric_at_the_percentile_of_the_magnitude():
    values = np.array([-4.0, -1.0, 0.0, 1.0, 2.0])
    assert clip_levels(values, 100.0, signed=True) == (-4.0, 4.0)  # |-4| is the largest
    # |v| sorted: 0, 1, 1, 2, 4; the 50th percentile is the middle one: 1
    assert clip_levels(values, 50.0, signed=True) == (-1.0, 1.0)
    assert clip_levels(np.zeros((2, 2)), 99.0, signed=True) == (-1.0, 1.0)


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


def test_tokens_on_the_models_patch_grid_become_channel_maps():
    from inspector.core.pictures.mosaic import capture_maps
    from inspector.core.records.tokens import TokenGrid, prefix_tokens

    grid = TokenGrid(2, 3, prefix=1)  # class token, then 2 x 3 patches in row-major order
    tokens = np.arange(1 * 7 * 4, dtype=np.float32).reshape(1, 7, 4)  # (B, 1 + 6, C=4)
    maps, kernels = capture_maps("blocks.0:output", tokens, grid)
    assert kernels is None and maps.shape == (4, 2, 3)
    # channel c of patch (y, x) is token 1 + 3y + x: value (1 + 3y + x) * 4 + c
    assert maps[2, 1, 0] == (1 + 3 * 1 + 0) * 4 + 2 and maps[0, 0, 2] == 3 * 4
    np.testing.assert_array_equal(prefix_tokens(tokens, grid), [[0, 1, 2, 3]])
    no_prefix = tokens[:, 1:]
    np.testing.assert_array_equal(capture_maps("k", no_prefix, grid)[0], maps)  # N = H*W fits too
    assert capture_maps("k", tokens[:, :5], grid)[0].shape == (1, 5, 4)  # N fits no grid: one image as before


def test_channels_last_blocks_are_channel_maps():
    from inspector.core.pictures.mosaic import as_maps

    nhwc = np.random.default_rng(0).random((1, 5, 5, 8), dtype=np.float32)  # (B, H, W, C) of a ConvNeXt block
    maps = as_maps(nhwc)
    assert maps.shape == (8, 5, 5)
    np.testing.assert_array_equal(maps[3], nhwc[0, :, :, 3])
    nchw = np.zeros((1, 8, 5, 5), dtype=np.float32)
    assert as_maps(nchw).shape == (8, 5, 5)  # square maps in dims 2-3: channels first, as ever


def test_token_grid_comes_from_the_model():
    from inspector.core import load_model
    from inspector.core.records.tokens import TokenGrid
    from inspector.core.sources.grids import token_grid

    assert token_grid(load_model("timm:vit_tiny_patch16_224", seed=0).module) == TokenGrid(14, 14, 1)
    assert token_grid(load_model("vit_b_16", seed=0).module) == TokenGrid(14, 14, 1)
    assert token_grid(load_model("demo").module) is None


def test_attention_is_one_map_per_head_of_what_the_query_token_attends_to():
    from inspector.core.pictures.mosaic import capture_maps
    from inspector.core.records.tokens import TokenGrid, query_at

    grid = TokenGrid(2, 2, prefix=1)
    probs = np.arange(1 * 3 * 5 * 5, dtype=np.float32).reshape(1, 3, 5, 5)  # 3 heads, 1 + 4 tokens
    maps, _ = capture_maps("blocks.0.attn:attention", probs, grid, query=2)
    assert maps.shape == (3, 2, 2)
    np.testing.assert_array_equal(maps[1], probs[0, 1, 2, 1:].reshape(2, 2))  # query 2's row, patches only
    np.testing.assert_array_equal(capture_maps("a:attention", probs, grid)[0][0], probs[0, 0, 0, 1:].reshape(2, 2))
    full, _ = capture_maps("a:attention", probs[:, :, :4, :4], grid)  # N fits no grid: N x N per head
    assert full.shape == (3, 4, 4)
    assert query_at(grid, 0.1, 0.9) == 1 + 0 * 2 + 1 and query_at(grid, 0.99, 0.0) == 1 + 1 * 2 + 0
