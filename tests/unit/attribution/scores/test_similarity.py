"""The similarity measures of the sanity checks (scores.similarity): Spearman's rank correlation worked out by
hand on tiny arrays and against scipy, SSIM by hand on a 3 x 3 picture and against scikit-image's
`structural_similarity`, and a map compared with itself giving exactly 1."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import spearmanr
from skimage.metrics import structural_similarity

from inspector.core.attribution.scores.similarity import (
    ranks,
    similarity,
    spearman,
    ssim,
)


def test_ranks_average_ties():
    assert ranks(np.array([3.0, 1.0, 3.0, 2.0])).tolist() == [3.5, 1.0, 3.5, 2.0]


@pytest.mark.numeric
def test_spearman_by_hand():
    # no ties: 1 - 6 * sum(d^2) / (n (n^2 - 1)), d = (0, 1, 1, 0): 1 - 12 / 60
    assert spearman(np.array([1.0, 2, 3, 4]), np.array([1.0, 3, 2, 4])) == pytest.approx(0.8, abs=1e-15)
    # a tie: ranks (1.5, 1.5, 3, 4) and (1, 2, 3, 4), centred: sum of products 4.5, squares 4.5 and 5
    assert spearman(np.array([1.0, 1, 2, 3]), np.array([1.0, 2, 3, 4])) == pytest.approx(4.5 / np.sqrt(22.5), abs=1e-15)
    assert spearman(np.array([1.0, 2, 3]), np.array([3.0, 2, 1])) == pytest.approx(-1.0, abs=1e-15)


@pytest.mark.numeric
def test_spearman_equals_scipys_with_and_without_ties():
    rng = np.random.default_rng(0)
    for a, b in ((rng.normal(size=(9, 7)), rng.normal(size=(9, 7))),
                 (rng.integers(0, 4, 60).astype(float), rng.integers(0, 5, 60).astype(float))):
        assert spearman(a, b) == pytest.approx(spearmanr(a.ravel(), b.ravel()).statistic, abs=1e-12)


def test_a_constant_map_keeps_no_order():
    changing = np.arange(9.0).reshape(3, 3)
    assert spearman(np.zeros((3, 3)), changing) == 0.0
    assert spearman(changing, np.full((3, 3), 2.0)) == 0.0
    assert spearman(np.zeros((3, 3)), np.ones((3, 3))) == 1.0


@pytest.mark.numeric
def test_ssim_by_hand_on_one_window():
    # 3 x 3: one window. Zeros against ones: means 0 and 1, no variance, so (C1 * C2) / ((1 + C1) * C2)
    c1 = 0.01 ** 2
    assert ssim(np.zeros((3, 3)), np.ones((3, 3))) == pytest.approx(c1 / (1 + c1), rel=1e-12)
    # a picture against 1 - it: means 4/9 and 5/9, each the sample variance v, covariance -v
    a = np.array([[0.0, 1, 0], [1, 0, 1], [0, 1, 0]])
    v, c2 = np.var(a, ddof=1), 0.03 ** 2
    luminance = (2 * 20 / 81 + c1) / (16 / 81 + 25 / 81 + c1)
    assert ssim(a, 1 - a) == pytest.approx(luminance * (c2 - 2 * v) / (c2 + 2 * v), rel=1e-12)


@pytest.mark.numeric
@pytest.mark.parametrize("shape", [(8, 8), (12, 9), (5, 5), (3, 4), (32, 32)])
def test_ssim_equals_scikit_images(shape):
    rng = np.random.default_rng(sum(shape))
    a = rng.random(shape)
    b = np.clip(a + 0.4 * rng.normal(size=shape), 0, 1)
    side = min(7, *shape)
    side -= 1 - side % 2  # the largest odd window that fits, at most skimage's default 7
    assert ssim(a, b) == pytest.approx(structural_similarity(a, b, data_range=1.0, win_size=side), abs=1e-12)


def test_ssim_has_no_value_under_three_pixels_a_side():
    assert ssim(np.ones((2, 9)), np.ones((2, 9))) is None


@pytest.mark.numeric
def test_a_map_is_exactly_like_itself():
    rng = np.random.default_rng(1)
    for m in (rng.normal(size=(3, 10, 10)), rng.random((16, 16)), np.zeros((4, 4)), rng.normal(size=12)):
        same = similarity(m, m.copy())
        assert same.spearman_abs == 1.0 and same.spearman_signed == 1.0
        assert same.ssim == (1.0 if m.ndim > 1 else None)


@pytest.mark.numeric
def test_similarity_compares_the_pictures():
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=(3, 9, 9)), rng.normal(size=(3, 9, 9))
    pa, pb = a.sum(axis=0), b.sum(axis=0)  # the project's picture: summed over channels
    found = similarity(a, b)
    assert found.spearman_signed == pytest.approx(spearmanr(pa.ravel(), pb.ravel()).statistic, abs=1e-6)
    assert found.spearman_abs == pytest.approx(spearmanr(np.abs(pa).ravel(), np.abs(pb).ravel()).statistic, abs=1e-6)
    sa, sb = np.abs(pa) / np.abs(pa).max(), np.abs(pb) / np.abs(pb).max()
    assert found.ssim == pytest.approx(structural_similarity(sa, sb, data_range=1.0), abs=1e-6)
    # a map and its negative: the same |map|, the reversed signed order
    flipped = similarity(a, -a)
    assert flipped.spearman_abs == 1.0 and flipped.spearman_signed == pytest.approx(-1.0, abs=1e-12)
