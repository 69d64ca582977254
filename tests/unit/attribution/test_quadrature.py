"""Gauss-Legendre nodes in O(n) memory (issue 40, item 2): the same nodes and weights as numpy's leggauss, exact
on polynomials of degree 2n - 1, and found under an address-space limit that leggauss's n x n matrix cannot fit."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import inspector.core.attribution.quadrature as quadrature
from inspector.core.attribution.quadrature import gauss_legendre


@pytest.mark.parametrize("n", [1, 2, 3, 7, 64, 300])
def test_the_nodes_and_weights_are_numpys(n):
    x, w = gauss_legendre(n)
    nodes, weights = np.polynomial.legendre.leggauss(n)
    np.testing.assert_allclose(x, nodes, rtol=0, atol=1e-13)
    np.testing.assert_allclose(w, weights, rtol=1e-9, atol=0)  # the end weights round differently: 6e-11
    # exact on x^(2n-2), degree 2n - 2 <= 2n - 1: the integral over [-1, 1] is 2 / (2n - 1)
    assert float(np.sum(w * x ** (2 * n - 2))) == pytest.approx(2 / (2 * n - 1), rel=1e-12)


def test_eight_thousand_nodes_fit_where_leggauss_cannot():
    """A child process with its address space capped 300 MB above what Python and numpy take: leggauss(8000)
    needs its 8000 x 8000 float64 matrix (512 MB) and fails; these nodes take a few vectors of 8000."""
    child = textwrap.dedent(f"""
        import importlib.util, resource, sys
        import numpy as np
        with open("/proc/self/status") as status:
            size = next(int(line.split()[1]) for line in status if line.startswith("VmSize")) * 1024
        resource.setrlimit(resource.RLIMIT_AS, (size + 300 * 2**20, size + 300 * 2**20))
        spec = importlib.util.spec_from_file_location("quadrature", {str(Path(quadrature.__file__))!r})
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        x, w = module.gauss_legendre(8000)
        print("ours", len(x), round(float(w.sum()), 12))
        try:
            np.polynomial.legendre.leggauss(8000)
            print("leggauss fitted")
        except MemoryError:
            print("leggauss MemoryError")
    """)
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["ours 8000 2.0", "leggauss MemoryError"]
