"""Work bounded before it starts (issue 40, items 2 and 3): every count streams, a pass at a time.

Each huge count runs in a child process (one for all of them, in turn) whose address space is capped 1 GiB above
what it holds after a small run of the same method (a real limit, `RLIMIT_AS`), and is stopped by `cancel` after three passes: a count that
allocated its points, noise or masks up front fails with MemoryError before the first pass. Gauss-Legendre's
nodes, which take O(steps^2) time to find, are capped: more is a one-line error before any work."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from inspector.core.attribution.integrated import path_nodes
from inspector.core.common.errors import SpecError
from inspector.core.records.methods import GAUSS_MOST

CHILD = """
import json, resource, sys
import torch
from inspector.core import load_model, load_input
from inspector.core.common.errors import RunCancelled
from inspector.core.attribution.integrated import integrated_gradients
from inspector.core.attribution.smoothgrad import smoothgrad
from inspector.core.attribution.drise import drise

methods = {"ig": integrated_gradients, "smoothgrad": smoothgrad, "drise": drise}
models = {}
_, hard = resource.getrlimit(resource.RLIMIT_AS)
for case, name, method, small, huge in json.loads(sys.argv[1]):
    model = models.get(name) or models.setdefault(name, load_model(name))
    x = load_input("sample:star", model.preprocess, model.input_shape)
    method = methods[method]
    method(model, x, **small)  # the libraries, threads and allocator as a run leaves them
    with open("/proc/self/status") as status:
        size = next(int(line.split()[1]) for line in status if line.startswith("VmSize")) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (size + 2**30, hard))  # the limit a process is held to
    asked = []
    def cancel():
        asked.append(1)
        return len(asked) > 3
    try:
        method(model, x, cancel=cancel, **huge)
        said = "not cancelled"
    except RunCancelled:
        said = f"cancelled after {len(asked) - 1} passes"
    except Exception as exc:
        said = f"{type(exc).__name__}: {exc}"
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
    print(json.dumps([case, said]), flush=True)
"""

CASES = {  # case: model, method, a small run's options, a huge run's
    "ig-riemann_left": ("demo", "ig", {"steps": 8, "quadrature": "riemann_left"},
                        {"steps": 10**9, "quadrature": "riemann_left", "batch": 8}),  # 8 GB of nodes up front
    "ig-riemann_trapezoid": ("demo", "ig", {"steps": 8, "quadrature": "riemann_trapezoid"},
                             {"steps": 10**9, "quadrature": "riemann_trapezoid", "batch": 8}),
    "smoothgrad": ("demo", "smoothgrad", {"samples": 4, "seed": 1}, {"samples": 10**9, "seed": 1}),
    "drise": ("demo-detector", "drise", {"masks": 4, "cell": 1, "seed": 1, "batch": 2},
              {"masks": 100_000, "cell": 1, "seed": 1, "batch": 2}),  # 100,000 masks of 64 x 64 cells: 1.6 GB
}


@pytest.fixture(scope="module")
def huge_runs() -> dict[str, str]:
    """Every case, one after another in one child process (one start, not one each): what its huge run said."""
    done = subprocess.run([sys.executable, "-c", CHILD, json.dumps([[case, *row] for case, row in CASES.items()])],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return dict(json.loads(line) for line in done.stdout.splitlines() if line.startswith("["))


@pytest.mark.parametrize("case", list(CASES))
def test_a_huge_count_streams_under_a_real_memory_limit(huge_runs, case):
    assert huge_runs[case] == "cancelled after 3 passes"


def test_gauss_legendre_past_its_cap_is_one_line_before_any_work():
    with pytest.raises(SpecError) as info:
        path_nodes("gausslegendre", 10**6)
    assert str(info.value) == (f"Gauss-Legendre takes at most {GAUSS_MOST:,} steps (its nodes take time that grows "
                               "as steps squared to find), not 1,000,000: use --quadrature riemann_trapezoid for more.")
    alphas, weights = path_nodes("gausslegendre", 3)  # below it: the 3-point rule, nodes 1/2 -+ sqrt(3/5)/2
    assert alphas.tolist() == pytest.approx([0.5 - 0.15**0.5, 0.5, 0.5 + 0.15**0.5])
    assert weights.tolist() == pytest.approx([5 / 18, 8 / 18, 5 / 18])


@pytest.mark.parametrize("quadrature", ["riemann_left", "riemann_right", "riemann_middle", "riemann_trapezoid"])
def test_the_nodes_of_a_pass_are_the_path_s_nodes(quadrature):
    """Nodes made a pass at a time equal the path's made at once (captum's formulas, worked out here)."""
    from inspector.core.attribution.integrated import path_points

    n = 7
    points = path_points(quadrature, n)
    parts = [points.at(s, min(s + 3, n)) for s in range(0, n, 3)]
    alphas = [a for part in parts for a in part[0]]
    weights = [w for part in parts for w in part[1]]
    expected = {"riemann_left": [i / n for i in range(n)], "riemann_right": [(i + 1) / n for i in range(n)],
                "riemann_middle": [(i + 0.5) / n for i in range(n)],
                "riemann_trapezoid": [i / (n - 1) for i in range(n)]}[quadrature]
    assert alphas == pytest.approx(expected, abs=1e-15)
    ends = 0.5 / n if quadrature == "riemann_trapezoid" else 1 / n
    assert weights == pytest.approx([ends] + [1 / n] * (n - 2) + [ends], abs=1e-15)
