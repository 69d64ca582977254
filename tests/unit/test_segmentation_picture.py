"""The segmentation picture: the VOC palette, the overlay and the legend (numpy only)."""

import numpy as np

from inspector.core.segmentation import legend, overlay, palette, predicted_classes


def test_palette_is_the_pascal_voc_colour_map():
    colours = palette(21)
    assert tuple(colours[0]) == (0, 0, 0) and tuple(colours[1]) == (128, 0, 0) and tuple(colours[2]) == (0, 128, 0)
    assert tuple(colours[15]) == (192, 128, 128)  # person
    assert tuple(colours[20]) == (0, 64, 128)  # tv/monitor


def test_overlay_tints_all_but_the_background_and_the_legend_counts_pixels():
    logits = np.zeros((1, 3, 2, 4), dtype=np.float32)
    logits[0, 1, :, :2] = 1  # left half: class 1
    classes = predicted_classes(logits)
    np.testing.assert_array_equal(classes, [[1, 1, 0, 0], [1, 1, 0, 0]])
    picture = np.full((4, 8, 3), 100, dtype=np.uint8)  # twice the size: classes resized by nearest
    tinted = overlay(picture, classes, opacity=0.5)
    np.testing.assert_array_equal(tinted[0, 0], [114, 50, 50])  # (100 + 128) / 2, (100 + 0) / 2
    np.testing.assert_array_equal(tinted[3, 7], [100, 100, 100])  # background untouched
    assert legend(classes, ["bg", "plane", "bike"]) == [(0, "bg", (0, 0, 0), 0.5), (1, "plane", (128, 0, 0), 0.5)]
