"""Attribution maps against independent computations (own hooks, own autograd Function)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from inspector.core import SpecError, build_layer_tree, capture, load_model
from inspector.core.attribution import (
    attribute,
    cam_from_result,
    gradcam,
    guided_backprop,
    guided_gradcam,
    saliency,
)
from inspector.core.attribution.cams.layers import find_gradcam_layer

pytestmark = pytest.mark.numeric  # CI runs these again under another oneDNN instruction set


@pytest.fixture(scope="module")
def resnet():
    torch.manual_seed(0)
    return load_model("resnet18")


@pytest.fixture(scope="module")
def image():
    return torch.randn(1, 3, 112, 112, generator=torch.Generator().manual_seed(1))


def no_hooks(module: nn.Module) -> bool:
    return not any(m._forward_hooks or m._forward_pre_hooks or m._backward_hooks or m._backward_pre_hooks
                   for m in module.modules())


def reference_gradcam(module: nn.Module, x: torch.Tensor, layer: str, index: int) -> np.ndarray:
    store = {}

    def keep(_m, _args, out):
        store["a"] = out.detach().clone()
        out.register_hook(lambda g: store.__setitem__("g", g.detach().clone()))

    handle = dict(module.named_modules())[layer].register_forward_hook(keep)
    try:
        module(x)[0, index].backward()
    finally:
        handle.remove()
        module.zero_grad(set_to_none=True)
    alpha = store["g"].mean(dim=(2, 3), keepdim=True)
    return torch.relu((alpha * store["a"]).sum(dim=1))[0].numpy()


def check_gradcam(model, x, layer=None):
    got = gradcam(model, x)
    assert got.layer == (layer or got.layer)
    want = reference_gradcam(model.module, x, got.layer, got.target_index)
    assert got.cam.shape == want.shape
    np.testing.assert_allclose(got.cam, want, rtol=1e-5, atol=1e-5 * max(float(want.max()), 1e-12))
    assert got.map.shape == tuple(x.shape[-2:]) and got.map.min() >= 0 and got.map.max() <= 1
    assert no_hooks(model.module)
    return got


def test_gradcam_resnet18_matches_reference(resnet, image):
    got = check_gradcam(resnet, image, "layer4")  # the map the head reads (issue 26), not layer4.1.conv2
    assert got.cam.shape == (4, 4) and got.map.max() == pytest.approx(1.0)
    assert got.notes[0] == ("Layer layer4: the feature map the head reads (the last convolution is "
                               "layer4.1.conv2).")


def test_gradcam_small_convnet_matches_reference():
    torch.manual_seed(0)
    model = load_model("inspector.demo.model:DemoNet")
    x = torch.randn(1, 3, 64, 64)
    got = check_gradcam(model, x, "relu3")  # conv3 -> bn3 -> relu3 -> pool: the head reads relu3
    result = capture(model, x, "relu3", "output,grad_output", target=got.target_index)
    np.testing.assert_array_equal(cam_from_result(result, "relu3"), got.cam)  # the derived view of any run


def test_gradcam_demo_matches_reference():
    model = load_model("demo")
    check_gradcam(model, torch.randn(1, 3, 64, 64, generator=torch.Generator().manual_seed(2)), "relu3")


class _GuidedReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad.clamp(min=0) * (x > 0)


class _GuidedModule(nn.Module):
    def forward(self, x):
        return _GuidedReLU.apply(x)


def test_guided_backprop_matches_custom_function(resnet, image):
    assert any(m.inplace for m in resnet.module.modules() if isinstance(m, nn.ReLU))
    got = guided_backprop(resnet, image)
    ref = copy.deepcopy(resnet.module)
    for path, m in list(ref.named_modules()):
        if isinstance(m, nn.ReLU):
            parent, _, name = path.rpartition(".")
            setattr(ref.get_submodule(parent), name, _GuidedModule())
    x = image.clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(ref(x)[0, got.target_index], x)
    want = grad[0].numpy()
    np.testing.assert_allclose(got.map, want, rtol=1e-5, atol=1e-6 * np.abs(want).max())
    assert len(got.covered) == 9 and got.unreached == () and no_hooks(resnet.module)


def test_saliency_matches_autograd(resnet, image):
    got = saliency(resnet, image, target=3)
    x = image.clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(resnet.module(x)[0, 3], x)
    np.testing.assert_allclose(got, grad[0].abs().amax(dim=0).numpy(), rtol=1e-5, atol=1e-9)
    assert got.shape == (112, 112) and no_hooks(resnet.module)


def test_guided_gradcam_is_the_product(resnet, image):
    x = image[..., :64, :64]
    both = guided_gradcam(resnet, x, target=5)
    cam = gradcam(resnet, x, 5, layer="layer4")
    np.testing.assert_allclose(both.map, guided_backprop(resnet, x, 5).map * cam.map)
    assert both.target_index == 5 and both.layer == "layer4"


class Mixed(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.act = nn.SiLU()
        self.relu = nn.ReLU()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        x = self.relu(F.relu(self.act(self.conv(x))))
        return self.fc(x.mean(dim=(2, 3)).relu())


def test_guided_reports_unreached_functional_relu(monkeypatch):
    from inspector.core.attribution import gradients as module

    model = Mixed()
    got = guided_backprop(model, torch.randn(1, 3, 8, 8))
    assert got.covered == ("relu",) and got.approximated == ("act",)
    assert got.unreached == ("(model) (Mixed) calls relu() x2",)
    assert got.map.shape == (3, 8, 8)
    # Issue 26: the functions are looked for once per model and input shape (the mode slowed every pass)
    looked = []
    original = module._FunctionalActivations.__torch_function__
    monkeypatch.setattr(module._FunctionalActivations, "__torch_function__",
                        lambda self, *a, **k: looked.append(1) or original(self, *a, **k))
    x = torch.randn(1, 3, 8, 8, generator=torch.Generator().manual_seed(3))
    again = guided_backprop(model, x)
    assert looked == [] and again.unreached == got.unreached
    np.testing.assert_array_equal(again.map, guided_backprop(copy.deepcopy(model), x).map)  # another: looked again
    assert looked


class Gelus(nn.Module):
    """A GELU model (no nn.ReLU at all), a ReLU subclass, and a ReLU6 (a Hardtanh, approximated)."""

    class MyReLU(nn.ReLU):
        pass

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.gelu = nn.GELU()
        self.mine = self.MyReLU()
        self.six = nn.ReLU6()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(self.six(self.mine(self.gelu(self.conv(x)))).mean(dim=(2, 3)))


def test_the_preset_and_the_attribution_apply_the_guided_rule_to_the_same_modules():
    """One module set (inspector.core.edits.guided): the Guided backprop preset once refused a GELU model
    that the guided attribution method handled."""
    from inspector.core.edits.presets import guided_backprop as preset
    from inspector.core.sources.layers import build_layer_tree

    model = Gelus()
    got = guided_backprop(model, torch.randn(1, 3, 8, 8))
    assert got.covered == ("mine",) and got.approximated == ("gelu", "six")
    layer_types = {layer.path: layer.type_name for layer in build_layer_tree(model, torch.zeros(1, 3, 8, 8))
                   if layer.path}
    edits = preset(layer_types, (), "", 1.0)
    # The preset reads type names, so the ReLU subclass (type MyReLU) is not one of its modules;
    # GELU and ReLU6 are, in model order, exactly as the attribution lists its approximated ones.
    assert [str(e) for e in edits] == ["gelu:grad_input=guided()", "six:grad_input=guided()"]
    with pytest.raises(SpecError, match="none of the modules the guided rule acts on"):
        preset({"conv": "Conv2d", "fc": "Linear"}, (), "", 1.0)


class Patchify(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_proj = nn.Conv2d(3, 8, 4, stride=4)
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        return self.head(self.conv_proj(x).flatten(2).mean(2))


def test_find_gradcam_layer(resnet):
    tree = build_layer_tree(resnet.module, torch.zeros(1, 3, 64, 64))
    assert find_gradcam_layer(tree) == "layer4.1.conv2"
    mlp = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
    with pytest.raises(SpecError, match="no conv layer"):
        gradcam(mlp, torch.randn(1, 1, 2, 4))
    with pytest.raises(SpecError, match=r"only a patch embedding.*conv_proj \(patch embedding\)"):
        gradcam(Patchify(), torch.randn(1, 3, 16, 16))
    assert gradcam(Patchify(), torch.randn(1, 3, 16, 16), layer="conv_proj").cam.shape == (4, 4)
    with pytest.raises(SpecError, match="Unknown method"):
        attribute(mlp, torch.randn(1, 4), "lime")


class _ToLast(nn.Module):
    def forward(self, x):
        return x.permute(0, 2, 3, 1)


class _ChannelsLast(nn.Module):
    """conv (N, C, H, W) -> to_last (N, H, W, C) -> norm over C -> back -> pool -> fc: a Swin-like stage."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(2)
        self.conv = nn.Conv2d(3, 6, 3, stride=2, padding=1)
        self.to_last = _ToLast()
        self.norm = nn.LayerNorm(6)
        self.fc = nn.Linear(6, 4)

    def forward(self, x):
        y = self.norm(self.to_last(self.conv(x)))
        return self.fc(y.mean(dim=(1, 2)))


def test_gradcam_at_a_channels_last_layer_reads_it_as_channels_last():
    """Issue 25, item 8: at an (N, H, W, C) output the map is over (H, W), equal to the map of the same
    tensor permuted to (N, C, H, W) worked out by hand; torchvision's swin_t norm1 gives a 7 x 7 map."""
    model = _ChannelsLast().eval()
    x = torch.randn(1, 3, 16, 16, generator=torch.Generator().manual_seed(3))
    found = gradcam(model, x, target=1, layer="to_last")
    kept = {}
    model.to_last.register_forward_hook(lambda _m, _a, out: kept.__setitem__("a", out) or out.retain_grad())
    model(x)[0, 1].backward()
    a = kept["a"].detach().permute(0, 3, 1, 2)[0]  # (C, H, W)
    g = kept["a"].grad.permute(0, 3, 1, 2)[0]
    expected = torch.relu((g.mean(dim=(1, 2))[:, None, None] * a).sum(dim=0))
    assert found.cam.shape == (8, 8)
    np.testing.assert_allclose(found.cam, expected.numpy(), rtol=1e-5, atol=1e-7)
    swin = load_model("swin_t", weights="random", seed=0)
    cam = gradcam(swin, torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(4)), target=3,
                  layer="features.7.1.norm1")
    assert cam.cam.shape == (7, 7) and cam.map.shape == (224, 224)


@pytest.mark.parametrize("name, layer, last_conv", [("densenet121", "features", "features.denseblock4.denselayer16.conv2"),
                                                    ("convnext_tiny", "features", "features.7.2.block.0")])
def test_the_automatic_layer_is_the_feature_map_the_head_reads(name, layer, last_conv):
    """Issue 26: the last convolution leaf (densenet121's denselayer16.conv2: 32 of the 1024 channels the
    classifier sees; convnext's depthwise block.0) was the default; users of pytorch-grad-cam and captum pass
    `features`, the map the head reads."""
    from inspector.core.attribution.cams.layers import auto_gradcam_layer

    model = load_model(name, "random", seed=0)
    found, notes = auto_gradcam_layer(model.module, torch.zeros(1, 3, 64, 64))
    assert found == layer and notes[0].endswith(f"(the last convolution is {last_conv}).")


def test_the_automatic_layer_is_worked_out_once_per_model_and_input_shape(resnet, monkeypatch):
    from inspector.core.attribution.cams import layers as module

    built = []
    original = module.build_layer_tree
    monkeypatch.setattr(module, "build_layer_tree", lambda *a, **k: built.append(1) or original(*a, **k))
    x = torch.randn(1, 3, 48, 48, generator=torch.Generator().manual_seed(5))
    first, second = gradcam(resnet, x, 1), gradcam(resnet, x, 2)
    assert first.layer == second.layer == "layer4" and len(built) == 1
    gradcam(resnet, torch.randn(1, 3, 40, 40), 1)  # another input shape: worked out again
    assert len(built) == 2
