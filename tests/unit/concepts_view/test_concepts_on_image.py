"""read_concepts and concept_relevance_map against independent computations: the coefficients and maps against
Dictionary.coefficients of the layer's output, concept relevance against autograd through the coefficients
held as leaf tensors, the relevance map against autograd through the coefficient's own formula (a sparse
autoencoder's encoder; NMF on orthonormal directions, where NNLS is max(0, d_i . x)), and NMF's coefficient
gradient against finite differences of NNLS. On a CNN with a path around the layer and an in-place ReLU after
it, and on a tiny ViT with a class token and two registers."""

from __future__ import annotations

import pytest
import torch
from concept_view_models import (
    image,
    nmf_dictionary,
    output_of,
    relevance_by_autograd,
    sae_dictionary,
    skipped,
)

from inspector.core.concepts import Dictionary, concept_relevance_map, nnls, read_concepts
from inspector.core.concepts.on_image import coefficient_gradient
from inspector.core.sources.loaded import LoadedModel

pytestmark = pytest.mark.numeric


def nchw_picture(c):
    return c[0].flatten(1).T  # (1, K, H, W) -> (P, K)


@pytest.mark.parametrize("method", ["nmf", "sae"])
def test_coefficients_and_maps_are_the_dictionarys_on_the_layer_output(method):
    loaded, x = skipped(), image()
    d = nmf_dictionary() if method == "nmf" else sae_dictionary()
    reading = read_concepts(loaded, x, d)
    with torch.no_grad():
        _, a = output_of(loaded.module, "act", x)
        expected = d.coefficients(a)[0]  # (K, 7, 6)
    assert reading.maps.shape == (d.k, 7, 6)
    torch.testing.assert_close(reading.maps, expected, rtol=0, atol=0)
    torch.testing.assert_close(reading.coefficients, expected.mean((1, 2)))
    assert reading.relevance is None and reading.target is None and reading.layer == "act"
    torch.testing.assert_close(reading.logits, loaded.module(x)[0].detach())
    assert float(reading.maps.max()) > 0


@pytest.mark.parametrize("method", ["nmf", "sae"])
@pytest.mark.parametrize("target", [0, 2])
def test_relevance_is_autograd_of_the_target_through_the_coefficients_times_them(method, target):
    loaded, x = skipped(), image(seed=4)
    d = nmf_dictionary() if method == "nmf" else sae_dictionary()
    reading = read_concepts(loaded, x, d, target=target)
    expected = relevance_by_autograd(loaded.module, "act", x, d, target, nchw_picture)
    assert reading.target == target
    torch.testing.assert_close(reading.relevance, expected, rtol=1e-4, atol=1e-6)
    assert float(expected.abs().max()) > 1e-3  # not a comparison of zeros


def map_by_autograd(loaded, x, d, concept, target, coefficient):
    """x * d/dx of sum_p (g(p) . d_i) c_i(a(x)(p)), g = dT/da held fixed, c_i by `coefficient` (a (P, C) -> (P,)
    function of the samples, in autograd), a = act(stem(x)): only the path through the layer."""
    model = loaded.module
    leaf = {}

    def replace(a):
        leaf["a"] = a.detach().requires_grad_(True)
        return leaf["a"] + 0

    logits, _ = output_of(model, "act", x, replace)
    (g,) = torch.autograd.grad(logits[0, target], [leaf["a"]])
    weight = (nchw_picture(g) @ d.components[concept]).detach()  # (P,)
    xx = x.clone().requires_grad_(True)
    a = model.act(model.stem(xx))
    total = (weight * coefficient(nchw_picture(a))).sum()
    (gx,) = torch.autograd.grad(total, [xx])
    return (x * gx)[0].sum(0)


@pytest.mark.parametrize("concept", [0, 3])
def test_sae_relevance_map_is_autograd_through_the_encoder(concept):
    loaded, x = skipped(), image(seed=5)
    d = sae_dictionary()
    got = concept_relevance_map(loaded, x, d, concept, 1)
    expected = map_by_autograd(loaded, x, d, concept, 1, lambda s: d.encode(s)[:, concept])
    assert got.shape == (7, 6)
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-7)
    assert float(expected.abs().max()) > 1e-4


def test_nmf_relevance_map_on_orthonormal_directions_is_autograd_of_max0_d_dot_x():
    orthonormal = torch.zeros(3, 6)
    orthonormal[0, :2] = torch.tensor([3.0, 4.0]) / 5
    orthonormal[1, 2:4] = torch.tensor([1.0, 1.0]) / 2 ** 0.5
    orthonormal[2, 4:] = torch.tensor([2.0, 1.0]) / 5 ** 0.5
    d = Dictionary("nmf", orthonormal, "act", "NCHW", "skipped")
    loaded, x = skipped(), image(seed=6)
    for concept in range(3):
        got = concept_relevance_map(loaded, x, d, concept, 2)
        expected = map_by_autograd(loaded, x, d, concept, 2, lambda s: torch.relu(s @ orthonormal[concept]))
        torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-7)
        assert float(expected.abs().max()) > 1e-4


def test_relevance_map_sums_to_the_relevance_where_the_layer_is_linear_in_the_input():
    """A linear layer without bias under the concept: sum_p g_i(p) . x(p) = sum_p (g . d_i) c_i(p), and gradient
    x input of a linear function sums to its value, so the map sums to the concept's relevance."""
    from concept_view_models import Skipped

    model = Skipped().eval()
    model.stem.bias.data.zero_()
    model.act = torch.nn.Identity()
    loaded = LoadedModel(model, "skipped", input_shape=(1, 3, 7, 6))
    d = sae_dictionary()
    d = Dictionary("sae", d.components, "act", "NCHW", "skipped", 5, d.encoder_weight, torch.zeros(5),
                   torch.zeros(6))  # every concept kept, no biases: c = max(0, W x) is linear where it is on
    x = image(seed=7)
    reading = read_concepts(loaded, x, d, target=0)
    for concept in range(5):
        total = float(concept_relevance_map(loaded, x, d, concept, 0).sum())
        assert total == pytest.approx(float(reading.relevance[concept]), rel=1e-4, abs=1e-7)


def test_nmf_coefficient_gradient_is_the_finite_difference_of_nnls():
    d = nmf_dictionary(k=4, channels=6, seed=8)
    gen = torch.Generator().manual_seed(9)
    samples = torch.rand(12, 6, generator=gen, dtype=torch.float64)
    coef = nnls(samples, d.components)
    assert 0 < int((coef > 0).sum()) < coef.numel()  # active sets of several sizes
    eps = 1e-3  # NNLS to 1e-12 (its float32 result: ~1e-7 / eps of rounding in the difference)
    for concept in range(4):
        got = coefficient_gradient(d, samples.float(), concept)
        for channel in range(6):
            step = torch.zeros(6, dtype=torch.float64)
            step[channel] = eps
            up, down = (nnls(samples + s, d.components, tol=1e-12, steps=50000) for s in (step, -step))
            fd = (up - down)[:, concept].double() / (2 * eps)
            torch.testing.assert_close(got[:, channel].double(), fd, rtol=1e-3, atol=2e-4)


def test_vit_tokens_the_patch_grid_without_the_class_token():
    from torchvision.models.vision_transformer import VisionTransformer

    torch.manual_seed(0)
    vit = VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=16, mlp_dim=32,
                            num_classes=3).eval()
    torch.nn.init.normal_(vit.heads.head.weight)  # torchvision starts it at 0: no gradient would reach a token
    layer = "encoder.layers.encoder_layer_0"  # (the last layer's patches reach no class: the head reads the class token)
    loaded = LoadedModel(vit, "vit-tiny", input_shape=(1, 3, 32, 32))
    d = sae_dictionary(k=6, channels=16, layer=layer, model="vit-tiny", layout="NLC", sparsity=4)
    x = image(seed=10, shape=(1, 3, 32, 32))
    reading = read_concepts(loaded, x, d, target=1)
    with torch.no_grad():
        _, a = output_of(vit, layer, x)
    assert a.shape == (1, 1 + 16, 16)  # the class token, then 4 x 4 patches
    coef = d.coefficients(a)[0, 1:]  # (16, K): the patches, row by row
    assert reading.maps.shape == (6, 4, 4)
    torch.testing.assert_close(reading.maps, coef.T.reshape(6, 4, 4))  # (a forward with grad: fused kernels differ)
    torch.testing.assert_close(reading.coefficients, coef.mean(0))
    expected = relevance_by_autograd(vit, layer, x, d, 1, lambda c: c[0, 1:])
    torch.testing.assert_close(reading.relevance, expected, rtol=1e-4, atol=1e-6)
    assert float(expected.abs().max()) > 1e-4
    # the map: g_i is 0 on the class token
    leaf = {}

    def replace(t):
        leaf["a"] = t.detach().requires_grad_(True)
        return leaf["a"] + 0

    logits, _ = output_of(vit, layer, x, replace)
    (g,) = torch.autograd.grad(logits[0, 1], [leaf["a"]])
    weight = (g[0, 1:] @ d.components[2]).detach()
    xx = x.clone().requires_grad_(True)
    _, a2 = output_of(vit, layer, xx)
    (gx,) = torch.autograd.grad((weight * d.encode(a2[0, 1:])[:, 2]).sum(), [xx])
    got = concept_relevance_map(loaded, x, d, 2, 1)
    assert got.shape == (32, 32)
    torch.testing.assert_close(got, (x * gx)[0].sum(0), rtol=1e-4, atol=1e-7)
    assert float(got.abs().max()) > 1e-5
