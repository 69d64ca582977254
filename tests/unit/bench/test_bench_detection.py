"""`bench --detection`'s baseline is Grad-CAM itself: the plain computation equals attribute's unscaled map."""

from __future__ import annotations

import numpy as np
import torch

from inspector.bench.detection import format_row, plain_gradcam


def test_the_plain_baseline_computes_the_same_gradcam_and_rows_read_well():
    from inspector.core import load_model
    from inspector.core.attribution import attribute

    loaded = load_model("fasterrcnn_mobilenet_v3_large_320_fpn", seed=0)
    x = torch.rand(1, 3, 96, 96, generator=torch.Generator().manual_seed(0))
    found = attribute(loaded, x, "gradcam", "box:0", "backbone.body.16")
    np.testing.assert_allclose(plain_gradcam(loaded.module, x, "backbone.body.16", 0).numpy(), found.cam,
                               rtol=1e-4, atol=1e-12)
    row = {"model": "m", "gradcam_s": 0.2, "plain_gradcam_s": 0.1, "gradcam_ratio": 2.0, "drise_masks_per_s": 9.0,
           "plain_masks_per_s": 10.0, "drise_ratio": 0.9}
    assert format_row(row).split() == ["m", "gradcam", "200", "ms", "vs", "plain", "100", "ms", "=", "2.00x",
                                       "(target", "<=", "1.3)", "drise", "9.00", "masks/s", "vs", "plain", "loop",
                                       "10.00", "=", "0.90x", "(target", ">=", "0.9)"]
