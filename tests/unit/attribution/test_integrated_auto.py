"""Integrated gradients to a tolerance (issue 39, item 9): `steps="auto"` adds points with a nested trapezoid rule
until the completeness gap is within the tolerance or the cap, checked against the rule worked out in numpy."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from inspector.core.attribution import attribute
from inspector.core.common.errors import SpecError


class Exp(nn.Module):
    """Class 0 scores sum(exp(x)): along the path from 0, d score / d x_i = exp(a x_i), IG_i = exp(x_i) - 1."""

    def forward(self, x):
        s = torch.exp(x.double()).sum(dim=(1, 2, 3))[:, None]
        return torch.cat([s, 0.5 * s], dim=1)


X = torch.linspace(-1.0, 2.0, 12, dtype=torch.float64).reshape(1, 3, 2, 2)


def trapezoid_by_hand(x: np.ndarray, n: int) -> np.ndarray:
    """x_i (1/n) (exp(0)/2 + exp(x_i)/2 + sum_{j=1}^{n-1} exp(j x_i / n)): the trapezoid rule on n intervals."""
    inner = sum(np.exp(j * x / n) for j in range(1, n))
    return x * (0.5 + 0.5 * np.exp(x) + inner) / n


def expected(tolerance: float, most: int) -> tuple[int, np.ndarray, float]:
    x = X.numpy()[0]
    delta = float(np.exp(x).sum() - x.size)  # f(x) - f(0)
    n = 4
    while True:
        found = trapezoid_by_hand(x, n)
        gap = abs(found.sum() - delta)
        if gap <= tolerance * abs(delta) or 2 * n + 1 > most:
            return n + 1, found, gap
        n *= 2


@pytest.mark.numeric
@pytest.mark.parametrize("tolerance, most", [(1e-2, 512), (1e-4, 512), (1e-9, 20)])
def test_auto_steps_follow_the_nested_trapezoid_rule(tolerance, most):
    found = attribute(Exp().double(), X, "ig", 0, options={"steps": "auto", "tolerance": tolerance, "max_steps": most})
    points, by_hand, gap = expected(tolerance, most)
    settings = found.settings
    assert settings["steps"] == points and settings["steps asked"] == "auto"
    assert settings["quadrature"] == "nested trapezoid" and settings["tolerance"] == tolerance
    np.testing.assert_allclose(found.map, by_hand, rtol=1e-9)
    assert found.completeness_gap == pytest.approx(gap, rel=1e-6, abs=1e-12)
    # the map's exact value is exp(x) - 1: the trapezoid's error falls as 1/n^2
    np.testing.assert_allclose(found.map, np.exp(X.numpy()[0]) - 1, rtol=2.0 / (points - 1) ** 2)


def test_the_levels_agree_with_the_trapezoids_error_estimate_and_the_cap_holds():
    """Euler-Maclaurin: the trapezoid's error on exp(a x_i) is about x_i^2 (exp(x_i) - 1) / (12 n^2), so the gap
    falls below tol * |f(x) - f(0)| once n >= sqrt(E / (tol * delta)), E the sum of x_i^2 (exp(x_i) - 1) / 12:
    n >= 4.85 for 1e-2 (the level n = 8: 9 points) and n >= 48.5 for 1e-4 (n = 64: 65 points)."""
    x = X.numpy()[0]
    delta, e = np.exp(x).sum() - x.size, (x**2 * (np.exp(x) - 1)).sum() / 12
    for tolerance, points in ((1e-2, 9), (1e-4, 65)):
        n = 4
        while n < np.sqrt(e / (tolerance * delta)):
            n *= 2
        assert n + 1 == points == expected(tolerance, 512)[0]
    assert expected(1e-9, 20)[0] == 17  # 33 points would pass the cap of 20


def test_auto_steps_are_said_wrongly_in_one_line():
    with pytest.raises(SpecError, match="tolerance is a fraction"):
        attribute(Exp().double(), X, "ig", 0, options={"steps": "auto", "tolerance": 0.0})
    with pytest.raises(SpecError, match="max_steps is a whole number of points, at least 5"):
        attribute(Exp().double(), X, "ig", 0, options={"steps": "auto", "max_steps": 3})
    with pytest.raises(SpecError, match="steps is a number or 'auto', not 'many'"):
        attribute(Exp().double(), X, "ig", 0, options={"steps": "many"})
