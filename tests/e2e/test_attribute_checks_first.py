"""Issue 41, item 18: what `attribute` can check without the model is said before torch is imported and the
model loads (`--steps 0` answered after 11.9 s, the model's load): the command is run with `-X importtime`, and
its stderr shows the error and no torch import."""

from __future__ import annotations

import pytest
from cli_here import refused_early


@pytest.mark.parametrize("argv, line", [
    (("--method", "ig", "--steps", "0"), "error: --steps must be at least 1, not 0."),
    (("--method", "ig", "--steps", "100000"),
     "error: Gauss-Legendre takes at most 20,000 steps (its nodes take time that grows as steps squared to find), "
     "not 100,000: use --quadrature riemann_trapezoid for more."),
    (("--method", "smoothgrad", "--of", "ig", "--steps", "30000"),
     "error: Gauss-Legendre takes at most 20,000 steps (its nodes take time that grows as steps squared to find), "
     "not 30,000: use --quadrature riemann_trapezoid for more."),
    (("--method", "occlusion", "--samples", "0"), "error: --samples must be at least 1, not 0."),
    (("--method", "ig", "--metrics", "auc"), "error: --metrics takes deletion, insertion (comma-separated), not 'auc'."),
], ids=["steps 0", "gauss steps", "smoothgrad of ig", "samples 0", "metrics"])
def test_model_free_arguments_are_refused_before_torch_loads(tmp_path, argv, line):
    _refused_before_torch("attribute", argv, line, tmp_path / "o.npy")


def _refused_before_torch(command: str, argv, line: str, out) -> None:
    """`command` on resnet18 exits 2 saying only `line`, and -X importtime shows torch was never imported."""
    refused_early((command, "--model", "resnet18", "--input", "sample:star", *argv, "--out", str(out)), line)


@pytest.mark.parametrize("argv, line", [
    (("--sites", "output,nope"), "error: Unknown site(s) nope. Valid sites: input, output, grad_output, grad_input, "
                                 "attention, params."),
    (("--sites", " , "), "error: No sites given (the site list is empty). Valid sites: input, output, grad_output, "
                         "grad_input, attention, params."),
], ids=["unknown site", "no site"])
def test_capture_refuses_sites_before_torch_loads(tmp_path, argv, line):
    _refused_before_torch("capture", argv, line, tmp_path / "c.npz")
