"""The one rule from a map to its picture (inspector.core.records.signs), worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from inspector.core.records.signs import SIGNS, default_sign, picture_of, ranked_by

# two channels of a 2 x 2 map; their sum is [[3, -5], [0, 1]]
MAP = np.array([[[1.0, -2.0], [4.0, 0.5]], [[2.0, -3.0], [-4.0, 0.5]]])


def test_each_sign_by_hand():
    np.testing.assert_array_equal(picture_of(MAP, "signed"), [[3, -5], [0, 1]])
    np.testing.assert_array_equal(picture_of(MAP, "positive"), [[3, 0], [0, 1]])
    np.testing.assert_array_equal(picture_of(MAP, "negative"), [[0, 5], [0, 0]])
    np.testing.assert_array_equal(picture_of(MAP, "absolute"), [[3, 5], [0, 1]])
    # an (H, W) map is its own channel sum; NaN and infinities draw as 0
    np.testing.assert_array_equal(picture_of(np.array([[np.nan, -np.inf], [2.0, -1.0]]), "absolute"),
                                  [[0, 0], [2, 1]])


def test_bad_signs_and_shapes_are_one_line_errors():
    with pytest.raises(ValueError, match="positive, negative, absolute, signed"):
        picture_of(MAP, "abs")
    with pytest.raises(ValueError, match=r"\(H, W\) or \(C, H, W\)"):
        picture_of(np.zeros(5), "signed")


def test_defaults_follow_what_the_map_means():
    assert [default_sign(m) for m in ("ig", "occlusion", "guided", "guided-gradcam")] == ["signed"] * 4
    assert [default_sign(m) for m in ("saliency", "gradcam", "eigencam", "rollout", "drise")] == ["positive"] * 5
    # SmoothGrad's mean keeps the sign of what it smooths; squares and variances are non-negative
    assert default_sign("smoothgrad", "ig") == "signed" and default_sign("smoothgrad", "saliency") == "positive"
    assert default_sign("vargrad", "ig") == "positive" and default_sign("smoothgrad-sq", "guided") == "positive"
    assert all(ranked_by(s) for s in SIGNS)
