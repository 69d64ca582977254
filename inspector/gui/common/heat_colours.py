"""The colours an attribution picture is drawn with: a jet-like map for non-negative pictures, a diverging
one centred at 0 for signed pictures (inspector.core.records.signs)."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg


def heat_colormap() -> pg.ColorMap:
    """Jet-like colours whose opacity grows with the value: low attribution leaves the picture clear."""
    pos = np.array([0.0, 0.125, 0.375, 0.625, 0.875, 1.0])
    rgb = np.array([[0, 0, 128], [0, 0, 255], [0, 255, 255], [255, 255, 0], [255, 0, 0], [128, 0, 0]])
    alpha = np.clip(pos * 1.6, 0, 1) * 255
    return pg.ColorMap(pos, np.column_stack([rgb, alpha]).astype(np.ubyte))


def signed_colormap() -> pg.ColorMap:
    """Blue for negative, red for positive, clear at 0 (the middle of a range symmetric about 0)."""
    pos = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
    rgb = np.array([[0, 40, 200], [80, 150, 255], [255, 255, 255], [255, 140, 60], [200, 0, 0]])
    alpha = np.clip(np.abs(pos - 0.5) * 3.2, 0, 1) * 255
    return pg.ColorMap(pos, np.column_stack([rgb, alpha]).astype(np.ubyte))


def colormap_for(sign: str) -> pg.ColorMap:
    """The colour map a picture under `sign` is drawn with (records.signs)."""
    return signed_colormap() if sign == "signed" else heat_colormap()


#: the deletion and insertion curves' colours, on screen and in a saved figure
FAITHFULNESS_COLOURS = {"deletion": "#e45756", "insertion": "#54a24b"}
