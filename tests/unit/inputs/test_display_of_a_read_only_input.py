"""An input that came over the engine protocol is a read-only view of the frame's bytes: drawn as a picture it
gives the same pixels as a writable copy, without torch's "not writable" warning (seen in `attribute --engine`)."""

from __future__ import annotations

import warnings

import numpy as np

from inspector.core.sources.preprocess import Preprocess


def test_a_read_only_input_is_drawn_without_a_warning_and_as_a_writable_one():
    preprocess = Preprocess()
    x = np.random.default_rng(0).standard_normal((1, 3, 8, 8)).astype(np.float32)
    read_only = np.frombuffer(x.tobytes(), dtype=np.float32).reshape(x.shape)
    assert not read_only.flags.writeable
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        shown = preprocess.to_display(read_only)
    expected = np.clip(x[0].transpose(1, 2, 0) * np.array(preprocess.std) + np.array(preprocess.mean), 0, 1)
    np.testing.assert_array_equal(shown, (expected * 255 + 0.5).astype(np.uint8))
