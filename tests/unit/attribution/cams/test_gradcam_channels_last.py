"""Grad-CAM at a channels-last layer reads the layout from the model, not from the map's shape.

The reference is Grad-CAM by hand from forward/backward hooks of the test's own: A the layer's output,
G the gradient of the top class's logit at it; on (B, H, W, C): alpha_c = mean over H, W of G[..., c],
CAM = ReLU(sum_c alpha_c A[..., c]); on (B, C, H, W) the same with the channels at axis 1.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from inspector.core.attribution import gradcam
from inspector.core.sources.layers import build_layer_tree
from inspector.core.pictures.mosaic import capture_maps
from inspector.core.records.tokens import is_channels_last

torchvision = pytest.importorskip("torchvision")


def by_hand(model: nn.Module, x: torch.Tensor, layers: list[str], channels_last: bool) -> dict[str, np.ndarray]:
    """Grad-CAM of the top class at each of `layers`, in float64, from hooks set here."""
    named = dict(model.named_modules())
    outputs, grads, handles = {}, {}, []

    def keep(path):
        def hook(_module, _args, output):
            outputs[path] = output
            output.register_hook(lambda g: grads.__setitem__(path, g))
        return hook

    for path in layers:
        handles.append(named[path].register_forward_hook(keep(path)))
    try:
        logits = model(x)
        logits[0, int(logits[0].argmax())].backward()
    finally:
        for h in handles:
            h.remove()
    cams = {}
    for path in layers:
        a, g = outputs[path][0].detach().double(), grads[path][0].double()
        if channels_last:  # (H, W, C)
            alpha = g.mean(dim=(0, 1))
            cams[path] = torch.relu((a * alpha).sum(dim=2)).numpy()
        else:  # (C, H, W)
            alpha = g.mean(dim=(1, 2))
            cams[path] = torch.relu((a * alpha[:, None, None]).sum(dim=0)).numpy()
    return cams


@pytest.fixture(scope="module")
def swin():
    torch.manual_seed(0)
    return torchvision.models.swin_t(weights=None).eval()


SWIN_LAYERS = ["features.7.1.norm1", "features.7"]


@pytest.mark.parametrize("size", [(224, 256), (224, 224)])
def test_swin_gradcam_matches_nhwc_by_hand(swin, size):
    x = torch.randn(1, 3, *size, generator=torch.Generator().manual_seed(1))
    want = by_hand(swin, x, SWIN_LAYERS, channels_last=True)
    grid = (size[0] // 32, size[1] // 32)  # (7, 8) and (7, 7): the last stage's map
    for layer in SWIN_LAYERS:
        got = gradcam(swin, x, layer=layer)
        assert got.cam.shape == grid, layer
        assert want[layer].shape == grid
        assert want[layer].max() > 0  # a map with something in it, not a blank one
        np.testing.assert_allclose(got.cam, want[layer], rtol=1e-3, atol=1e-4 * want[layer].max())


def test_the_layer_tree_says_which_outputs_are_channels_last(swin):
    tree = build_layer_tree(swin, torch.zeros(1, 3, 224, 256))
    said = tree.layouts()
    # LayerNorm-ended Swin stages and blocks (B, H, W, C); the patch convolution, the Permute back and the
    # pooling (B, C, H, W)
    assert said["features.7"] is True and said["features.7.1.norm1"] is True and said["features.1"] is True
    assert said["features.0.0"] is False and said["permute"] is False and said["avgpool"] is False
    # the mosaic reads the same word: a (1, 7, 8, 768) capture is 768 maps of 7 x 8
    a = np.random.default_rng(0).random((1, 7, 8, 768), dtype=np.float32)
    maps, _ = capture_maps("features.7:output", a, layouts=said)
    assert maps.shape == (768, 7, 8)
    np.testing.assert_array_equal(maps[5], a[0, :, :, 5])
    assert not is_channels_last((1, 7, 8, 768))  # with nothing said, the old square-map guess


class SquareChannels(nn.Module):
    """A conv whose (B, C, H, W) output has C == H != W (8, 8, 5): no channels-last map."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        return self.head(torch.relu(self.conv(x)).mean(dim=(2, 3)))


def test_nchw_map_shaped_like_a_channels_last_one_stays_channels_first():
    torch.manual_seed(0)
    model = SquareChannels().eval()
    x = torch.randn(1, 3, 8, 5, generator=torch.Generator().manual_seed(2))
    want = by_hand(model, x, ["conv"], channels_last=False)["conv"]
    got = gradcam(model, x, layer="conv")
    assert got.cam.shape == (8, 5)
    np.testing.assert_allclose(got.cam, want, rtol=1e-4, atol=1e-5 * want.max())
