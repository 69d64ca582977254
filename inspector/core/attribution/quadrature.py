"""Gauss-Legendre nodes and weights in O(n) memory (numpy only, nothing else imported: a child process can load
this file alone).

`numpy.polynomial.legendre.leggauss(n)` finds the nodes as the eigenvalues of an n x n companion matrix: 13 s and
O(n^2) memory for n = 3,000, 7.28 TiB asked for n = 1,000,000. Here each node is found by Newton's method on the
Legendre polynomial P_n, evaluated by its three-term recurrence for all nodes at once, from Tricomi's estimate
cos(pi (k - 1/4) / (n + 1/2)): O(n) memory, O(n^2) time (a Python loop of n steps per iteration, so Ctrl-C stops
it), a few iterations to float64 rounding; the weights are 2 / ((1 - x^2) P_n'(x)^2).
"""

from __future__ import annotations

import numpy as np

_MOST_ITERATIONS = 100


def _legendre(n: int, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(P_n(x), P_{n-1}(x)) by the recurrence j P_j = (2j - 1) x P_{j-1} - (j - 1) P_{j-2}."""
    before, now = np.ones_like(x), x.copy()
    for j in range(2, n + 1):
        before, now = now, ((2 * j - 1) * x * now - (j - 1) * before) / j
    return now, before


def gauss_legendre(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(nodes, weights) of the n-point Gauss-Legendre rule on [-1, 1], nodes ascending (as leggauss gives them)."""
    if n == 1:
        return np.zeros(1), np.full(1, 2.0)
    k = np.arange(1, n + 1, dtype=np.float64)
    x = np.cos(np.pi * (k - 0.25) / (n + 0.5))
    for _ in range(_MOST_ITERATIONS):
        p, before = _legendre(n, x)
        slope = n * (x * p - before) / (x * x - 1.0)
        step = p / slope
        x = x - step
        if np.max(np.abs(step)) < 1e-15:
            break
    p, before = _legendre(n, x)
    slope = n * (x * p - before) / (x * x - 1.0)
    weights = 2.0 / ((1.0 - x * x) * slope * slope)
    order = np.argsort(x)
    return x[order], weights[order]
