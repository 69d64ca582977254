"""One image's values: each method's map (`attribute`, the method's defaults; a method that draws noise or masks
draws them from METHOD_SEED: settings.method_options), then each metric of that map (the metric table's
function). What the job does in process and on a Ray replica alike."""

from __future__ import annotations

import numpy as np

from ..attribution.entry import attribute
from .metrics import METRIC_ROWS
from .settings import method_options


def image_values(loaded, x, job, cancel=None) -> np.ndarray:
    """(columns,) float64: the values of input `x` (1, C, H, W) in the order of `job.columns`."""
    values = []
    for method in job.methods:
        found = attribute(loaded, x, method, None, None, method_options(method, cancel))
        for metric in job.metrics:
            values.extend(METRIC_ROWS[metric].values(loaded, x, found, job.settings).values())
    return np.array(values, np.float64)
