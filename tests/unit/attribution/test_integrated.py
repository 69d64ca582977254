"""Issue 26, first step: integrated gradients against an exact case (a linear model: IG is (x - b) * w
and complete), against captum's IntegratedGradients for every quadrature, and through the CLI."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from inspector.core.attribution.integrated import integrated_gradients, path_nodes
from inspector.core.common.errors import SpecError
from inspector.core.records.methods import QUADRATURES

pytestmark = pytest.mark.numeric


def test_a_linear_model_gets_exactly_x_minus_baseline_times_its_weights():
    torch.manual_seed(1)
    model = nn.Sequential(nn.Flatten(), nn.Linear(12, 3)).eval()
    x = torch.randn(1, 3, 2, 2)
    found = integrated_gradients(model, x, target=2, steps=3)
    expected = (x[0] * model[1].weight[2].reshape(3, 2, 2)).detach().numpy()
    np.testing.assert_allclose(found.map, expected, rtol=1e-5, atol=1e-7)
    assert found.completeness_gap < 1e-5 and found.target_index == 2 and found.map.shape == (3, 2, 2)


@pytest.mark.parametrize("quadrature", QUADRATURES)
def test_nodes_weights_and_maps_equal_captums(small_net, quadrature):
    captum = pytest.importorskip("captum.attr")
    from captum.attr._utils.approximation_methods import approximation_parameters

    steps = 7
    step_sizes, alphas = approximation_parameters(quadrature)
    a, w = path_nodes(quadrature, steps)
    np.testing.assert_allclose(a, alphas(steps), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(w, step_sizes(steps), rtol=1e-6, atol=1e-7)
    model = small_net
    x = torch.randn(1, 3, 10, 10, generator=torch.Generator().manual_seed(2))
    found = integrated_gradients(model, x, target=1, steps=steps, quadrature=quadrature, batch=3)
    reference, delta = captum.IntegratedGradients(model).attribute(
        x, target=1, n_steps=steps, method=quadrature, internal_batch_size=3, return_convergence_delta=True)
    np.testing.assert_allclose(found.map, reference[0].detach().numpy(), rtol=1e-4, atol=1e-6)
    assert found.completeness_gap == pytest.approx(abs(float(delta)), rel=1e-3, abs=1e-6)


def test_more_steps_close_the_completeness_gap_and_bad_arguments_are_refused(small_net):
    model = small_net
    x = torch.randn(1, 3, 10, 10, generator=torch.Generator().manual_seed(3))
    gaps = [integrated_gradients(model, x, 0, steps=n, quadrature="riemann_right").completeness_gap for n in (2, 64)]
    assert gaps[1] < gaps[0]
    with pytest.raises(SpecError, match="Unknown quadrature 'simpson'"):
        integrated_gradients(model, x, steps=4, quadrature="simpson")
    with pytest.raises(SpecError, match="steps must be a whole number"):
        integrated_gradients(model, x, steps=0)
    with pytest.raises(SpecError, match="one input at a time"):
        integrated_gradients(model, torch.cat([x, x]))
