"""`bench --detection`'s rows read as docs/performance.md shows them (its baseline is checked in
tests/unit/detection/test_box_maps.py, against the engine's Grad-CAM)."""

from __future__ import annotations

from inspector.bench.detection import format_row


def test_rows_read_well():
    row = {"model": "m", "gradcam_s": 0.2, "plain_gradcam_s": 0.1, "gradcam_ratio": 2.0, "drise_masks_per_s": 9.0,
           "plain_masks_per_s": 10.0, "drise_ratio": 0.9}
    assert format_row(row).split() == ["m", "gradcam", "200", "ms", "vs", "plain", "100", "ms", "=", "2.00x",
                                       "(target", "<=", "1.3)", "drise", "9.00", "masks/s", "vs", "plain", "loop",
                                       "10.00", "=", "0.90x", "(target", ">=", "0.9)"]
