"""ablate_concept and scale_concept against the hand computation: a model whose layer `mix` is a known
non-negative mixture of three orthonormal non-negative directions (disjoint channels), the input's three
channels its coefficients at each position; the dictionary written as `network-inspector concepts` writes it."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from inspector.core import capture
from inspector.core.concepts import Dictionary, load_dictionary
from inspector.core.concepts.dictionary import save_dictionary
from inspector.core.sources.loaded import LoadedModel

#: three directions over 8 channels, on disjoint channels: orthonormal and non-negative
DIRECTIONS = torch.tensor([[3.0, 4.0, 0, 0, 0, 0, 0, 0],
                           [0, 0, 1.0, 2.0, 2.0, 0, 0, 0],
                           [0, 0, 0, 0, 0, 2.0, 3.0, 6.0]])
DIRECTIONS = DIRECTIONS / DIRECTIONS.norm(dim=1, keepdim=True)


class Mixed(nn.Module):
    """x (B, 3, H, W) >= 0 -> mix: sum_k x_k d_k at each position -> a non-linear tail -> 2 logits."""

    def __init__(self) -> None:
        super().__init__()
        self.mix = nn.Conv2d(3, 8, 1, bias=False)
        self.tail = nn.Sequential(nn.Conv2d(8, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                  nn.Linear(4, 2))
        with torch.no_grad():
            self.mix.weight.copy_(DIRECTIONS.T[:, :, None, None])
        torch.manual_seed(0)
        for layer in (self.tail[0], self.tail[4]):
            layer.reset_parameters()

    def forward(self, x):
        return self.tail(self.mix(x))


def write_dictionary(folder, method="nmf", layer="mix", model="mixed", components=DIRECTIONS):
    extra = {}
    if method == "sae":  # an encoder that reads the coefficients exactly: W = D, no biases, every concept kept
        extra = dict(sparsity=3, encoder_weight=components.clone(), encoder_bias=torch.zeros(3),
                     pre_bias=torch.zeros(8))
    save_dictionary(folder, Dictionary(method, components, layer, "NCHW", model, **extra))
    return str(folder)


@pytest.fixture(scope="module")
def model():
    return LoadedModel(Mixed().eval(), "mixed", input_shape=(1, 3, 5, 6))


@pytest.fixture(scope="module")
def x():
    gen = torch.Generator().manual_seed(1)
    coef = torch.rand(2, 3, 5, 6, generator=gen) * (torch.rand(2, 3, 5, 6, generator=gen) < 0.7)
    return coef  # the planted coefficients, each >= 0, some exactly 0


def captured(model, x, edit):
    result = capture(model, x, layers="mix", sites="output", edits=[edit], target="sum")
    return torch.from_numpy(result["mix:output"]), torch.from_numpy(result.output)


@pytest.mark.parametrize("method", ["nmf", "sae"])
def test_ablate_leaves_x_minus_c1_d1_and_the_model_runs_on_it(model, x, tmp_path, method):
    folder = write_dictionary(tmp_path, method)
    plain = model.module.mix(x).detach()
    edited, logits = captured(model, x, f"mix:output=ablate_concept(id=1, dict={folder!r})")
    # by hand: the planted coefficient of concept 1 at each position times its direction
    by_hand = plain - x[:, 1:2] * DIRECTIONS[1].view(1, 8, 1, 1)
    torch.testing.assert_close(edited, by_hand, rtol=0, atol=1e-6)
    # exactly the formula, with the dictionary's own coefficients of the unedited output
    c = load_dictionary(folder).coefficients(plain)
    assert torch.equal(edited, plain - c[:, 1:2] * DIRECTIONS[1].view(1, 8, 1, 1))
    # the model's output is the forward of that activation, worked out apart from the run
    assert torch.equal(logits, model.module.tail(edited).detach())
    # the other concepts are untouched: their channels hold what they held
    assert torch.equal(edited[:, [0, 1, 5, 6, 7]], plain[:, [0, 1, 5, 6, 7]])
    assert edited[:, 2:5].abs().max() < 1e-6


def test_scale_k1_is_the_identity_k0_the_ablation_k2_doubles(model, x, tmp_path):
    folder = write_dictionary(tmp_path)
    plain, plain_logits = captured(model, x, "mix:output=scale(1)")
    one, one_logits = captured(model, x, f"mix:output=scale_concept(id=1, k=1, dict={folder!r})")
    assert torch.equal(one, plain) and torch.equal(one_logits, plain_logits)
    zero, zero_logits = captured(model, x, f"mix:output=scale_concept(id=1, k=0, dict={folder!r})")
    ablated, ablated_logits = captured(model, x, f"mix:output=ablate_concept(id=1, dict={folder!r})")
    assert torch.equal(zero, ablated) and torch.equal(zero_logits, ablated_logits)
    two, two_logits = captured(model, x, f"mix:output=scale_concept(id=1, k=2, dict={folder!r})")
    torch.testing.assert_close(two, plain + x[:, 1:2] * DIRECTIONS[1].view(1, 8, 1, 1), rtol=0, atol=1e-6)
    assert torch.equal(two_logits, model.module.tail(two).detach())
    half = captured(model, x, f"mix:output=scale_concept(id=2, k=0.5, dict={folder!r})")[0]
    torch.testing.assert_close(half, plain - 0.5 * x[:, 2:3] * DIRECTIONS[2].view(1, 8, 1, 1), rtol=0, atol=1e-6)


def test_tokens_and_samples_edit_the_last_dim(tmp_path):
    from inspector.core.edits import Edit, parse_edit

    folder = write_dictionary(tmp_path, layer="t")
    coef = torch.rand(2, 7, 3)
    tokens = coef @ DIRECTIONS  # (B, L, C)
    out = Edit.apply(parse_edit(f"t:output=ablate_concept(0, {folder!r})"), tokens)
    torch.testing.assert_close(out, tokens - coef[..., :1] * DIRECTIONS[0], rtol=0, atol=1e-6)
    rows = tokens.reshape(-1, 8)
    out = Edit.apply(parse_edit(f"t:output=scale_concept(2, 3, {folder!r})"), rows)
    torch.testing.assert_close(out, rows + 2 * coef.reshape(-1, 3)[:, 2:] * DIRECTIONS[2], rtol=0, atol=1e-6)


def test_half_precision_keeps_the_layers_dtype(tmp_path):
    from inspector.core.edits import Edit, parse_edit

    folder = write_dictionary(tmp_path)
    act = (torch.rand(1, 3, 2, 2).permute(0, 2, 3, 1) @ DIRECTIONS).permute(0, 3, 1, 2).to(torch.bfloat16)
    out = Edit.apply(parse_edit(f"mix:output=ablate_concept(0, {folder!r})"), act)
    assert out.dtype == torch.bfloat16 and out.shape == act.shape


def test_the_backward_takes_the_coefficients_as_fixed(model, x, tmp_path):
    """The input gradient through an ablation is that of mix(x) - c d with c a constant (worked out by autograd)."""
    folder = write_dictionary(tmp_path)
    result = capture(model, x, layers="mix", sites="output", edits=[f"mix:output=ablate_concept(0, {folder!r})"],
                     target="sum", input_grad=True)
    inputs = x.clone().requires_grad_(True)
    fixed = (x[:, 0:1] * DIRECTIONS[0].view(1, 8, 1, 1)).detach()
    model.module.tail(model.module.mix(inputs) - fixed).sum().backward()
    torch.testing.assert_close(torch.from_numpy(result.input_grad), inputs.grad, rtol=1e-5, atol=1e-6)
