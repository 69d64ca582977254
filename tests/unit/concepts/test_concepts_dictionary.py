"""The Dictionary API: NMF coefficients by NNLS in torch against scipy's nnls and sklearn's NMF.transform, the
sparse autoencoder's encoder by hand, the layouts (NCHW maps, NLC tokens, samples), and clear refusals."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.optimize import nnls as scipy_nnls

from inspector.core.concepts import ConceptError, Dictionary, load_dictionary, nnls
from inspector.core.concepts.dictionary import save_dictionary

pytestmark = pytest.mark.numeric


def nmf_dictionary(k=4, c=6, seed=0) -> Dictionary:
    rng = np.random.default_rng(seed)
    comp = torch.from_numpy(rng.random((k, c)).astype(np.float32))
    return Dictionary("nmf", comp / comp.norm(dim=1, keepdim=True), "layer3", "NCHW", "demo")


def test_nnls_equals_scipy_per_sample():
    """Random (correlated) components and samples, some outside the cone: the same solution to 1e-5."""
    d = nmf_dictionary()
    rng = np.random.default_rng(1)
    x = torch.from_numpy(rng.normal(0.5, 0.5, (50, 6)).astype(np.float32))
    got = nnls(x, d.components).double().numpy()
    a = d.components.double().numpy().T
    for row, want in zip(x.double().numpy(), got):
        expected, _ = scipy_nnls(a, row)
        np.testing.assert_allclose(want, expected, atol=1e-5)
    assert (got == 0).any()  # the constraint holds exactly where it binds


def test_nnls_equals_sklearn_nmf_transform():
    from sklearn.decomposition import NMF

    rng = np.random.default_rng(2)
    x = rng.random((40, 6))
    model = NMF(3, init="nndsvda", solver="cd", tol=1e-12, max_iter=2000, random_state=0).fit(x)
    want = model.transform(x)
    got = nnls(torch.from_numpy(x), torch.from_numpy(model.components_)).double().numpy()
    np.testing.assert_allclose(got, want, atol=1e-4)


def test_coefficients_and_reconstruct_keep_the_layout():
    d = nmf_dictionary()
    mixed = torch.rand(2, 3, 5, 4)  # (B, K-ish coefficients, H, W): activations made from the dictionary itself
    coef = torch.einsum("bkhw,kc->bchw", torch.nn.functional.pad(mixed, (0, 0, 0, 0, 0, 1)), d.components)
    got = d.coefficients(coef)
    assert got.shape == (2, 4, 5, 4)
    torch.testing.assert_close(d.reconstruct(got), coef, atol=1e-5, rtol=1e-5)
    tokens = Dictionary("nmf", d.components, "blocks.3", "NLC", "vit")
    flat = coef.permute(0, 2, 3, 1).reshape(2, 20, 6)
    assert tokens.coefficients(flat).shape == (2, 20, 4)
    torch.testing.assert_close(tokens.coefficients(flat).reshape(2, 5, 4, 4).permute(0, 3, 1, 2), got,
                               atol=1e-6, rtol=1e-5)
    assert d.coefficients(flat.reshape(-1, 6)).shape == (40, 4)


def test_sae_coefficients_are_its_encoder():
    gen = torch.Generator().manual_seed(0)
    w, b, pre = torch.randn(5, 6, generator=gen), torch.randn(5, generator=gen), torch.randn(6, generator=gen)
    comp = torch.nn.functional.normalize(torch.randn(5, 6, generator=gen), dim=1)
    d = Dictionary("sae", comp, "fc", "NC", "m", 2, w, b, pre)
    x = torch.randn(7, 6, generator=gen)
    pre_act = torch.relu((x - pre) @ w.T + b)
    want = torch.zeros_like(pre_act)
    for i, row in enumerate(pre_act):
        top = row.argsort(descending=True)[:2]
        want[i, top] = row[top]
    torch.testing.assert_close(d.coefficients(x), want)
    torch.testing.assert_close(d.reconstruct(want), want @ comp + pre)


def test_a_width_or_layer_that_does_not_fit_is_refused_with_both():
    d = nmf_dictionary()
    with pytest.raises(ConceptError, match=r"layer3 has 6 channels; this activation has 7"):
        d.coefficients(torch.rand(1, 7, 2, 2))
    with pytest.raises(ConceptError, match=r"has 4 concepts; these coefficients have 3"):
        d.reconstruct(torch.rand(1, 3, 2, 2))
    with pytest.raises(ConceptError, match=r"of layer layer3, not layer4"):
        d.check(layer="layer4")
    with pytest.raises(ConceptError, match=r"learned on model demo, not resnet18"):
        d.check(model="resnet18")


def test_saved_and_loaded_with_safetensors_only(tmp_path):
    gen = torch.Generator().manual_seed(0)
    d = Dictionary("sae", torch.rand(3, 4, generator=gen), "blocks.2", "NLC", "timm:vit_tiny", 2,
                   torch.rand(3, 4, generator=gen), torch.rand(3, generator=gen), torch.rand(4, generator=gen))
    save_dictionary(tmp_path, d)
    back = load_dictionary(tmp_path)
    assert (back.method, back.layer, back.layout, back.model, back.sparsity) == ("sae", "blocks.2", "NLC",
                                                                                 "timm:vit_tiny", 2)
    for name in ("components", "encoder_weight", "encoder_bias", "pre_bias"):
        assert torch.equal(getattr(back, name), getattr(d, name))


def test_a_missing_or_damaged_dictionary_is_one_clear_error(tmp_path):
    with pytest.raises(ConceptError, match="No dictionary at"):
        load_dictionary(tmp_path)
    (tmp_path / "dictionary.safetensors").write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json")
    with pytest.raises(ConceptError, match="is damaged"):
        load_dictionary(tmp_path)
    from safetensors.torch import save_file

    save_file({"components": torch.rand(2, 3)}, str(tmp_path / "dictionary.safetensors"), metadata={"method": "pca"})
    with pytest.raises(ConceptError, match="not a concept dictionary"):
        load_dictionary(tmp_path)
