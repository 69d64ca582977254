"""Hooks change no number: capturing grad_input (and grad_output of an input handed back) leaves the
model's outputs bit-identical to an unhooked run, also for channels-last tensors (ConvNeXt's
LayerNorm2d hands its convolutions channels-last inputs).

The alias a grad_input hook is put on must keep the input's strides exactly: `view_as` gives a
size-1 batch dimension another stride, PyTorch then no longer takes the tensor as channels-last, and
the convolution runs on its NCHW path with another summation order (~1e-6 relative on ConvNeXt)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torchvision
from torch import nn
from torchvision.models.convnext import CNBlockConfig

from inspector.core import capture
from inspector.core.sources.loaded import LoadedModel

pytestmark = pytest.mark.numeric  # CI runs these again under another oneDNN instruction set


class ChannelsLastConv(nn.Module):
    """A 2x2 stride-2 convolution on a channels-last input (as after ConvNeXt's LayerNorm2d)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(96, 192, 2, stride=2)
        self.skip = nn.Identity()

    def forward(self, x):
        x = self.skip(x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2))
        return self.conv(x).mean(dim=(2, 3))


def _plain(module: nn.Module, x: torch.Tensor) -> np.ndarray:
    with torch.no_grad():
        return module(x).numpy()


def test_grad_input_on_a_channels_last_conv_changes_nothing():
    torch.manual_seed(0)
    module = ChannelsLastConv().eval()
    x = torch.randn(1, 96, 28, 28)
    loaded = LoadedModel(module, "test", input_shape=(1, 96, 28, 28))
    plain = _plain(module, x)
    for layers, sites in (("conv", "grad_input,output"), ("skip", "grad_output"), ("conv,skip", "grad_input")):
        result = capture(loaded, x, layers, sites, target="sum")
        np.testing.assert_array_equal(result["output"], plain, err_msg=f"{layers} {sites}")
    with torch.no_grad():
        conv_out = module.conv(x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2))
    np.testing.assert_array_equal(capture(loaded, x, "conv", "output,grad_input")["conv:output"], conv_out.numpy())


@pytest.fixture(scope="module")
def convnext():
    torch.manual_seed(0)
    module = torchvision.models.convnext.ConvNeXt([CNBlockConfig(96, 192, 1), CNBlockConfig(192, None, 1)],
                                                  num_classes=10).eval()
    return LoadedModel(module, "convnext", input_shape=(1, 3, 64, 64))


@pytest.mark.parametrize("sites", ["grad_input", "grad_output", "input,output,grad_input,grad_output"])
def test_every_site_on_every_convnext_leaf_leaves_the_logits_bit_identical(convnext, sites):
    x = torch.randn(1, 3, 64, 64, generator=torch.Generator().manual_seed(1))
    plain = _plain(convnext.module, x)
    result = capture(convnext, x, "all", sites)
    np.testing.assert_array_equal(result["output"], plain)
