"""The segmentation picture: the VOC palette, the overlay and the legend (numpy only)."""

import numpy as np

from inspector.core.pictures.segmentation import legend, overlay, palette


def test_palette_is_the_pascal_voc_colour_map():
    colours = palette(21)
    assert tuple(colours[0]) == (0, 0, 0) and tuple(colours[1]) == (128, 0, 0) and tuple(colours[2]) == (0, 128, 0)
    assert tuple(colours[15]) == (192, 128, 128)  # person
    assert tuple(colours[20]) == (0, 64, 128)  # tv/monitor


def test_overlay_tints_all_but_the_background_and_the_legend_counts_pixels():
    classes = np.array([[1, 1, 0, 0], [1, 1, 0, 0]])  # left half: class 1
    picture = np.full((4, 8, 3), 100, dtype=np.uint8)  # twice the size: classes resized by nearest
    tinted = overlay(picture, classes, opacity=0.5)
    np.testing.assert_array_equal(tinted[0, 0], [114, 50, 50])  # (100 + 128) / 2, (100 + 0) / 2
    np.testing.assert_array_equal(tinted[3, 7], [100, 100, 100])  # background untouched
    assert legend(classes, ["bg", "plane", "bike"]) == [(0, "bg", (0, 0, 0), 0.5), (1, "plane", (128, 0, 0), 0.5)]


def test_the_overlay_is_made_at_the_size_it_is_shown():
    picture = np.full((520, 520, 3), 100, dtype=np.uint8)
    classes = np.zeros((520, 520), dtype=np.int16)
    classes[:, 260:] = 15
    small = overlay(picture, classes, opacity=1.0, size=224)
    assert small.shape == (174, 174, 3)  # every third pixel: the first step that fits in 224
    np.testing.assert_array_equal(small[0, -1], [192, 128, 128]) and np.testing.assert_array_equal(small[0, 0], [100] * 3)
