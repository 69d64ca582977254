"""The attention site: per-head softmax probabilities, checked against PyTorch's own weights
(`need_weights=True, average_attn_weights=False`) and timm's unfused path, outputs unchanged."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from inspector.core import capture, load_model
from inspector.core.common.errors import SpecError
from inspector.core.engine.runner import run
from inspector.core.runspec import RunSpec

pytestmark = pytest.mark.numeric  # CI runs these again under another oneDNN instruction set


def grab(module: nn.Module, x: torch.Tensor, layers, sites, edits=()):
    return run(module, x, RunSpec.make(layers, sites, edits, "sum"))


class Wrap(nn.Module):
    """A model around one attention module `mha`, called by `call(mha, x)` (self-attention by default)."""

    def __init__(self, mha: nn.Module, call=None) -> None:
        super().__init__()
        self.mha = mha
        self.call = call or (lambda m, x: m(x, x, x, need_weights=False)[0])

    def forward(self, x):
        return self.call(self.mha, x)


@pytest.mark.parametrize("batch_first", [True, False])
def test_multihead_attention_matches_need_weights(batch_first):
    torch.manual_seed(0)
    mha = nn.MultiheadAttention(16, 4, batch_first=batch_first).eval()
    x = torch.randn(2, 5, 16) if batch_first else torch.randn(5, 2, 16)
    result = grab(Wrap(mha), x, ["mha"], "attention,output")
    _, expected = mha(x, x, x, need_weights=True, average_attn_weights=False)  # (B, heads, N, N)
    assert result["mha:attention"].shape == (2, 4, 5, 5)
    np.testing.assert_allclose(result["mha:attention"], expected.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(result["mha:output"], Wrap(mha)(x).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_masks_are_applied_as_the_module_applies_them():
    torch.manual_seed(1)
    mha = nn.MultiheadAttention(8, 2, batch_first=True).eval()
    x = torch.randn(1, 4, 8)
    causal = torch.triu(torch.ones(4, 4, dtype=torch.bool), diagonal=1)
    masked = Wrap(mha, lambda m, t: m(t, t, t, need_weights=False, attn_mask=causal)[0])
    result = grab(masked, x, ["mha"], "attention")
    _, expected = mha(x, x, x, need_weights=True, average_attn_weights=False, attn_mask=causal)
    np.testing.assert_allclose(result["mha:attention"], expected.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert np.all(result["mha:attention"][0, :, 0, 1:] == 0)  # the first token sees only itself


def test_vit_attention_of_every_block_leaves_the_output_unchanged():
    loaded = load_model("vit_b_16", seed=0)
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(0))
    blocks = [f"encoder.layers.encoder_layer_{i}.self_attention" for i in range(12)]
    result = capture(loaded, x, layers=blocks, sites="attention", target=5, input_grad=True)
    plain = capture(loaded, x, layers=[], target=5, input_grad=True)
    np.testing.assert_allclose(result.output, plain.output, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(result["input:grad"], plain["input:grad"], rtol=1e-5, atol=1e-7)
    probs = result[f"{blocks[11]}:attention"]
    assert probs.shape == (1, 12, 197, 197)
    np.testing.assert_allclose(probs.sum(axis=-1), 1.0, rtol=1e-5)  # each query's row is a distribution
    mha = loaded.module.get_submodule(blocks[11])
    kept = {}
    ln = loaded.module.get_submodule("encoder.layers.encoder_layer_11.ln_1")
    handle = ln.register_forward_hook(lambda _m, _i, out: kept.__setitem__("x", out.detach()))
    loaded.module(x)
    handle.remove()
    _, expected = mha(kept["x"], kept["x"], kept["x"], need_weights=True, average_attn_weights=False)
    np.testing.assert_allclose(probs, expected.detach().numpy(), rtol=1e-4, atol=1e-6)


def test_timm_attention_matches_its_unfused_softmax():
    loaded = load_model("timm:vit_tiny_patch16_224", seed=3)
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(4))
    result = capture(loaded, x, layers=["blocks.2.attn", "blocks.2.norm1"], sites="attention", target=1)
    assert not result.warnings and "blocks.2.norm1:attention" not in result.captures  # one was an attention module
    only_norm = capture(loaded, x, layers=["blocks.2.norm1"], sites="attention", target=1)
    assert "No attention captured: none of the ticked modules (blocks.2.norm1)" in only_norm.warnings[0]
    model = load_model("timm:vit_tiny_patch16_224", seed=3).module
    attn = model.get_submodule("blocks.2.attn")
    attn.fused_attn = False  # timm then forms softmax(q k^T * scale) and passes it to attn_drop
    kept = {}
    attn.attn_drop.register_forward_hook(lambda _m, args, _out: kept.__setitem__("p", args[0].detach()))
    model(x)
    np.testing.assert_allclose(result["blocks.2.attn:attention"], kept["p"].numpy(), rtol=1e-5, atol=1e-6)


def test_never_called_leaves_are_left_out_of_all_leaves():
    """torchvision's ViT calls nn.MultiheadAttention, which uses out_proj's weights without calling it."""
    from inspector.core.sources.layers import build_layer_tree

    loaded = load_model("vit_b_16", seed=0)
    tree = build_layer_tree(loaded.module, loaded.example_input())
    idle = tree.never_called()
    assert idle == [f"encoder.layers.encoder_layer_{i}.self_attention.out_proj" for i in range(12)]
    assert not set(idle) & set(tree.leaves) and set(tree.select("all")) == set(tree.leaves)
    result = capture(loaded, torch.zeros(1, 3, 224, 224), layers="all", sites="output")
    assert not [w for w in result.warnings if "was not called" in w]
    assert build_layer_tree(loaded.module).never_called() == []  # no forward, nothing known: none left out


def test_zero_heads_on_multihead_attention_equals_the_manual_computation():
    torch.manual_seed(2)
    mha = nn.MultiheadAttention(16, 4, batch_first=True).eval()
    x = torch.randn(2, 5, 16)
    result = grab(Wrap(mha), x, ["mha"], "output", edits=["mha:attention=zero_heads([1, 3])"])
    # by hand: PyTorch's own per-head probabilities, the value projection, heads 1 and 3 zeroed
    _, probs = mha(x, x, x, need_weights=True, average_attn_weights=False)  # (B, 4, N, N)
    w_v, b_v = mha.in_proj_weight[32:], mha.in_proj_bias[32:]
    v = (x @ w_v.T + b_v).reshape(2, 5, 4, 4).transpose(1, 2)  # (B, heads, N, head_dim)
    heads = probs @ v
    heads[:, [1, 3]] = 0
    expected = heads.transpose(1, 2).reshape(2, 5, 16) @ mha.out_proj.weight.T + mha.out_proj.bias
    np.testing.assert_allclose(result["mha:output"], expected.detach().numpy(), rtol=1e-5, atol=1e-6)
    plain = grab(Wrap(mha), x, ["mha"], "output")
    assert not np.allclose(plain["mha:output"], result["mha:output"])
    off = grab(Wrap(mha), x, ["mha"], "output", edits=["mha:attention=zero_heads([])"])
    np.testing.assert_allclose(off["mha:output"], plain["mha:output"], rtol=1e-5, atol=1e-6)


def test_zero_heads_on_timm_attention_equals_the_manual_computation():
    loaded = load_model("timm:vit_tiny_patch16_224", seed=6)
    attn = loaded.module.get_submodule("blocks.3.attn")
    x = torch.randn(1, 197, 192, generator=torch.Generator().manual_seed(7))
    kept = {}
    handle = attn.register_forward_hook(lambda _m, _i, out: kept.__setitem__("out", out.detach()))
    result = grab(Wrap(attn, lambda m, t: m(t)), x, ["mha"], "output", edits=["mha:attention=zero_heads([0, 2])"])
    handle.remove()
    qkv = (x @ attn.qkv.weight.T + attn.qkv.bias).reshape(1, 197, 3, 3, 64).permute(2, 0, 3, 1, 4)
    q, k, v = qkv.unbind(0)
    heads = ((q * attn.scale) @ k.transpose(-2, -1)).softmax(-1) @ v  # (1, 3 heads, 197, 64)
    heads[:, [0, 2]] = 0
    expected = heads.transpose(1, 2).reshape(1, 197, 192) @ attn.proj.weight.T + attn.proj.bias
    np.testing.assert_allclose(result["mha:output"], expected.detach().numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(kept["out"].numpy(), result["mha:output"], rtol=1e-6)  # what the model got


def test_zero_heads_checks_its_place_and_heads():
    mha = nn.MultiheadAttention(8, 2, batch_first=True)
    for edit, says in (("mha:attention=zero_heads([2])", r"out of range; it has 2 heads"),
                       ("mha:output=zero_heads([0])", "belongs at LAYER:attention"),
                       ("mha:attention=scale(2)", "the one edit is zero_heads")):
        with pytest.raises(SpecError, match=says):
            grab(Wrap(mha), torch.randn(1, 3, 8), ["mha"], "output", edits=[edit])


class TwoBlocks(nn.Module):
    """A class token and a 2 x 2 patch grid through two attention layers (timm's way of saying its grid)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(3)
        self.patch_embed = nn.Conv2d(3, 8, 4, stride=4)
        self.patch_embed.grid_size = (2, 2)
        self.num_prefix_tokens = 1
        self.cls = nn.Parameter(torch.randn(1, 1, 8))
        self.a1 = nn.MultiheadAttention(8, 2, batch_first=True)
        self.a2 = nn.MultiheadAttention(8, 2, batch_first=True)
        self.head = nn.Linear(8, 3)

    def tokens(self, x):
        t = self.patch_embed(x).flatten(2).transpose(1, 2)
        return torch.cat([self.cls.expand(t.shape[0], -1, -1), t], dim=1)

    def forward(self, x):
        t = self.tokens(x)
        t = t + self.a1(t, t, t, need_weights=False)[0]
        t = t + self.a2(t, t, t, need_weights=False)[0]
        return self.head(t[:, 0])


def test_attention_rollout_equals_the_product_worked_out_by_hand():
    from inspector.core.attribution import attribute

    model = TwoBlocks().eval()
    x = torch.randn(1, 3, 8, 8, generator=torch.Generator().manual_seed(5))
    found = attribute(model, x, "rollout")
    # by hand: PyTorch's own averaged attention weights, plus the identity, rows renormalised, multiplied
    t = model.tokens(x)
    _, p1 = model.a1(t, t, t, need_weights=True)  # averaged over heads: (1, 5, 5)
    t2 = t + model.a1(t, t, t, need_weights=False)[0]
    _, p2 = model.a2(t2, t2, t2, need_weights=True)
    steps = []
    for p in (p1, p2):
        a = 0.5 * p[0].detach().double().numpy() + 0.5 * np.eye(5)
        steps.append(a / a.sum(axis=1, keepdims=True))
    rollout = steps[1] @ steps[0]
    np.testing.assert_allclose(found.cam, rollout[0, 1:].reshape(2, 2), rtol=1e-5)
    assert found.map.shape == (8, 8) and found.map.min() == 0 and found.map.max() == pytest.approx(1.0)
    with pytest.raises(SpecError, match="patch grid is known"):
        attribute(Wrap(nn.MultiheadAttention(8, 2, batch_first=True)), torch.randn(1, 3, 8), "rollout")


@pytest.mark.parametrize("options", [{"add_bias_kv": True}, {"add_zero_attn": True}, {"kdim": 6, "vdim": 5}])
def test_multihead_attention_variants_and_padding_masks_match_need_weights(options):
    torch.manual_seed(4)
    mha = nn.MultiheadAttention(8, 2, batch_first=True, **options).eval()
    x = torch.randn(2, 4, 8)
    kv = torch.randn(2, 4, options.get("kdim", 8))
    value = torch.randn(2, 4, options.get("vdim", 8))
    padding = torch.tensor([[False, False, False, True], [False, True, False, False]])
    call = Wrap(mha, lambda m, t: m(t, kv, value, key_padding_mask=padding, need_weights=False)[0])
    result = grab(call, x, ["mha"], "attention,output", edits=["mha:attention=zero_heads([0])"])
    _, expected = mha(x, kv, value, key_padding_mask=padding, need_weights=True, average_attn_weights=False)
    np.testing.assert_allclose(result["mha:attention"], expected.detach().numpy(), rtol=1e-5, atol=1e-6)
    # zero_heads([0]): only head 1's output through out_proj (bias included)
    v = nn.functional.linear(value, *([mha.in_proj_weight[16:], mha.in_proj_bias[16:]] if mha._qkv_same_embed_dim
                                      else [mha.v_proj_weight, mha.in_proj_bias[16:]]))
    if options.get("add_bias_kv"):
        v = torch.cat([v, mha.bias_v.expand(2, 1, 8)], dim=1)
    if options.get("add_zero_attn"):
        v = torch.cat([v, torch.zeros(2, 1, 8)], dim=1)
    heads = expected @ v.reshape(2, -1, 2, 4).transpose(1, 2)
    heads[:, 0] = 0
    manual = heads.transpose(1, 2).reshape(2, 4, 8) @ mha.out_proj.weight.T + mha.out_proj.bias
    np.testing.assert_allclose(result["mha:output"], manual.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_look_alike_timm_attention_is_not_given_wrong_probabilities():
    """Swin V2's WindowAttention and CaiT's talking heads have qkv and num_heads too, but use cosine
    attention or mix heads: the site must not pretend softmax(q k^T) is theirs."""
    import timm

    from inspector.core.attention.site import supports_attention

    kinds = {}
    for name in ("swinv2_tiny_window8_256", "cait_xxs24_224", "eva02_tiny_patch14_224", "vit_tiny_patch16_224",
                 "swin_tiny_patch4_window7_224"):
        model = timm.create_model(name)
        kinds[name] = {type(m).__name__ for _, m in model.named_modules() if supports_attention(m)}
    assert kinds == {"swinv2_tiny_window8_256": set(), "cait_xxs24_224": set(),
                     "eva02_tiny_patch14_224": {"EvaAttention"}, "vit_tiny_patch16_224": {"Attention"},
                     "swin_tiny_patch4_window7_224": {"WindowAttention"}}
    swin = load_model("timm:swinv2_tiny_window8_256", seed=0)
    result = capture(swin, torch.zeros(1, 3, 256, 256), layers=["layers.0.blocks.0.attn"], sites="attention")
    assert not result.captures and "does not reproduce yet" in result.warnings[0]


def _swin_and_its_unfused_twin():
    """A timm Swin with fused attention, and the same weights computing attention unfused (its own
    softmax module then sees the probabilities)."""
    import copy

    swin = load_model("timm:swin_tiny_patch4_window7_224", seed=0)
    twin = copy.deepcopy(swin.module)
    for module in twin.modules():
        if hasattr(module, "fused_attn"):
            module.fused_attn = False
    return swin, twin


def test_swin_window_attention_equals_timms_own_softmax_with_bias_and_shift_mask():
    swin, twin = _swin_and_its_unfused_twin()
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(0))
    paths = ["layers.0.blocks.0.attn", "layers.0.blocks.1.attn"]  # unshifted, shifted (masked) windows
    seen = {}
    handles = [twin.get_submodule(f"{p}.softmax").register_forward_hook(
        lambda m, a, o, p=p: seen.setdefault(p, o.detach().clone())) for p in paths]
    with torch.no_grad():
        plain = twin(x)
    for h in handles:
        h.remove()
    result = capture(swin, x, layers=paths, sites="attention")
    for path in paths:
        got = result[f"{path}:attention"]
        assert got.shape == (64, 3, 49, 49)  # 8 x 8 windows of 7 x 7 patches, 3 heads
        np.testing.assert_allclose(got, seen[path].numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(result.output, plain.numpy(), rtol=1e-4, atol=1e-5)  # fused and unfused agree


def test_zero_heads_on_swin_windows_equals_a_manual_computation():
    swin, twin = _swin_and_its_unfused_twin()
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(1))
    path = "layers.0.blocks.1.attn"
    attn = twin.get_submodule(path)
    seen = {}

    def keep_input(_module, args, _kwargs):
        seen["x"] = args[0].detach().clone()
    hooks = [attn.register_forward_pre_hook(keep_input, with_kwargs=True),
             attn.softmax.register_forward_hook(lambda m, a, o: seen.setdefault("p", o.detach().clone()))]
    with torch.no_grad():
        twin(x)
    for h in hooks:
        h.remove()
    windows, n, _ = seen["x"].shape
    v = attn.qkv(seen["x"]).reshape(windows, n, 3, 3, -1).permute(2, 0, 3, 1, 4)[2]
    per_head = seen["p"] @ v
    per_head[:, [0, 2]] = 0
    expected = attn.proj(per_head.transpose(1, 2).reshape(windows, n, -1))
    result = capture(swin, x, layers=[f"{path}.proj"], sites="output", edits=[f"{path}:attention=zero_heads([0, 2])"])
    np.testing.assert_allclose(result[f"{path}.proj:output"], expected.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_every_mention_of_the_supported_attention_modules_comes_from_one_table():
    """The docs' attention page, the warning at a run, the head-ablation error and the rollout error name the
    same modules: those of inspector.core.attention.supported."""
    from pathlib import Path

    from inspector.core.attention.site import check_heads
    from inspector.core.attention.supported import (
        NOT_YET,
        SUPPORTED,
        not_yet_text,
        supported_text,
    )

    page_path = Path(__file__).parents[3] / "docs" / "tasks" / "attention.md"
    page = " ".join(page_path.read_text(encoding="utf-8").split())
    assert "the attention modules supported: " + supported_text() + "." in page
    assert "Not reproduced yet: " + not_yet_text() + ";" in page
    assert supported_text() == "; ".join(SUPPORTED) and all(name in not_yet_text() for name in NOT_YET)
    with pytest.raises(SpecError) as error:
        check_heads(nn.Linear(2, 2), "fc", [0])
    assert f"({supported_text()})" in str(error.value)
    result = run(nn.Sequential(nn.Linear(4, 2)), torch.ones(1, 4), RunSpec.make(["0"], {"output", "attention"}))
    assert f"({supported_text()}; {not_yet_text()} add biases" in result.warnings[0]
