"""A summary of the per-image values: for each method, metric and number, how many images gave a value, their
mean, standard deviation (n - 1) and the Student t interval of the mean at the given confidence."""

from __future__ import annotations

import math

import numpy as np


def interval(values: np.ndarray, confidence: float) -> tuple[float, float, float, float]:
    """(mean, standard deviation, low, high) of the finite `values`: the Student t interval of the mean,
    mean -+ t(1 - (1 - confidence) / 2, n - 1) * s / sqrt(n). NaN where it is not defined (no value; one value
    has a mean but no spread)."""
    from scipy import stats

    v = np.asarray(values, np.float64)
    v = v[np.isfinite(v)]
    n = v.size
    if n == 0:
        return (math.nan,) * 4
    mean = float(v.mean())
    if n == 1:
        return mean, math.nan, math.nan, math.nan
    std = float(v.std(ddof=1))
    half = float(stats.t.ppf(0.5 + confidence / 2, n - 1)) * std / math.sqrt(n)
    return mean, std, mean - half, mean + half


def summarise(values: np.ndarray, columns, confidence: float) -> list[dict]:
    """One row per column (method, metric, number) of `values` (images read, columns)."""
    rows = []
    for j, (method, metric, number) in enumerate(columns):
        column = values[:, j]
        mean, std, low, high = interval(column, confidence)
        rows.append({"method": method, "metric": metric, "number": number, "n": int(np.isfinite(column).sum()),
                     "mean": mean, "std": std, "ci_low": low, "ci_high": high})
    return rows
