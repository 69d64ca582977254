"""Issue 26: the attribution passes' faster BatchNorm backward and channels-last layout give the numbers
of the plain passes: BatchNorm's input gradient worked out by hand in float64, the hooks on a BatchNorm
still called, a model that cannot run channels-last falling back to NCHW with the same map, and
integrated gradients, SmoothGrad and occlusion on a BatchNorm network equal to plain PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from inspector.core.attribution.integrated import integrated_gradients, path_nodes
from inspector.core.attribution.occlusion import occlusion
from inspector.core.attribution.passes import layout as fast_passes
from inspector.core.attribution.passes.layout import Layout, eval_norms


def bn_net(seed: int = 0) -> nn.Module:
    """Conv, BatchNorm (running statistics and affine parameters drawn, not the defaults), ReLU, head."""
    torch.manual_seed(seed)
    net = nn.Sequential(nn.Conv2d(3, 5, 3, padding=1), nn.BatchNorm2d(5), nn.ReLU(), nn.Conv2d(5, 4, 3, padding=1),
                        nn.BatchNorm2d(4), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 3))
    with torch.no_grad():
        for m in net:
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-1, 1)
                m.running_var.uniform_(0.2, 3)
                m.weight.uniform_(-2, 2)
                m.bias.uniform_(-1, 1)
    return net.eval()


def test_the_batchnorm_backward_is_one_multiply_by_weight_over_the_running_std():
    norm = nn.BatchNorm2d(3).eval()
    with torch.no_grad():
        norm.running_mean.copy_(torch.tensor([0.5, -1.0, 2.0]))
        norm.running_var.copy_(torch.tensor([0.25, 4.0, 9.0]))
        norm.weight.copy_(torch.tensor([2.0, -1.0, 0.5]))
        norm.bias.copy_(torch.tensor([0.0, 1.0, -3.0]))
    x = torch.randn(2, 3, 4, 4, generator=torch.Generator().manual_seed(0), requires_grad=True)
    upstream = torch.randn(2, 3, 4, 4, generator=torch.Generator().manual_seed(1))
    plain_out = norm(x)
    (plain,) = torch.autograd.grad(plain_out, x, upstream)
    with eval_norms(norm):
        assert "forward" in vars(norm)
        out = norm(x)
        (fast,) = torch.autograd.grad(out, x, upstream)
    assert "forward" not in vars(norm)  # the module is left as it was
    assert torch.equal(out, plain_out)  # the kernel's own forward
    eps = norm.eps
    by_hand = upstream.double() * torch.tensor([2.0 / np.sqrt(0.25 + eps), -1.0 / np.sqrt(4.0 + eps),
                                                0.5 / np.sqrt(9.0 + eps)], dtype=torch.float64).reshape(1, 3, 1, 1)
    torch.testing.assert_close(fast.double(), by_hand, rtol=1e-6, atol=0)
    torch.testing.assert_close(fast, plain, rtol=1e-6, atol=0)


def test_hooks_on_a_batchnorm_still_run_and_only_plain_eval_norms_are_patched():
    net = bn_net()
    seen = []
    net[1].register_forward_hook(lambda m, i, o: seen.append("forward"))
    net[1].register_full_backward_hook(lambda m, gi, go: seen.append(("backward", gi[0].shape)))

    class OwnNorm(nn.BatchNorm2d):  # a subclass may do more in its forward: left alone
        pass

    own, training = OwnNorm(5).eval(), nn.BatchNorm2d(5)
    x = torch.randn(1, 3, 6, 6, requires_grad=True)
    with eval_norms(nn.Sequential(net, own, training)):
        assert isinstance(vars(net[1])["forward"], fast_passes._NormForward)
        assert "forward" not in vars(own)
        torch.autograd.grad(net(x).sum(), x)
        training.train()
        y = training(torch.randn(4, 5, 3, 3))  # training mode: batch statistics, as without the block
        torch.testing.assert_close(y.mean(dim=(0, 2, 3)), torch.zeros(5), atol=1e-6, rtol=0)
    assert seen == ["forward", ("backward", torch.Size([1, 5, 6, 6]))]


class Viewing(nn.Module):
    """`.view` of a convolution's output: fails on a channels-last activation."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.conv, self.conv2 = nn.Conv2d(3, 2, 3, padding=1), nn.Conv2d(2, 2, 1)
        self.head = nn.Linear(2 * 6 * 6, 3)

    def forward(self, x):
        y = self.conv2(self.conv(x))
        return self.head(y.view(y.shape[0], -1))


def test_a_model_that_cannot_run_channels_last_runs_nchw_and_the_rest_do_channels_last():
    viewing, net = Viewing().eval(), bn_net()
    x = torch.randn(4, 3, 6, 6, generator=torch.Generator().manual_seed(0))
    with pytest.raises(RuntimeError):
        viewing(x.contiguous(memory_format=torch.channels_last))
    layout = Layout(viewing, grad=False)
    assert layout.channels_last is None  # not tried yet
    torch.testing.assert_close(layout.run(viewing, x), viewing(x), rtol=0, atol=0)
    assert layout.channels_last is False and Layout(viewing, grad=False).channels_last is False  # remembered
    assert Layout(viewing, grad=True).channels_last is None  # passes with a backward are tried on their own
    seen = []
    layout = Layout(net, grad=False)
    found = layout.run(lambda b: seen.append(b.is_contiguous(memory_format=torch.channels_last)) or net(b), x)
    assert seen == [True] and Layout(net, grad=False).channels_last is True
    torch.testing.assert_close(found, net(x), rtol=1e-5, atol=1e-6)


def test_torchvision_detectors_and_models_of_one_convolution_stay_nchw():
    from torchvision.models.detection.transform import GeneralizedRCNNTransform

    class Detector(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.transform = GeneralizedRCNNTransform(32, 64, [0.0] * 3, [1.0] * 3)
            self.conv = nn.Conv2d(3, 2, 3)

    assert Layout(Detector(), grad=True).channels_last is False
    patches = nn.Sequential(nn.Conv2d(3, 8, 4, stride=4), nn.Flatten(2))  # a ViT's patch embedding alone
    assert Layout(patches, grad=False).channels_last is False
    x = torch.randn(2, 3, 8, 8)
    assert Layout(patches, grad=False).run(lambda batch: batch.is_contiguous(), x) is True  # as it was


@pytest.mark.numeric
def test_integrated_gradients_and_occlusion_on_a_batchnorm_net_equal_plain_pytorch():
    net = bn_net(1)
    x = torch.randn(1, 3, 8, 8, generator=torch.Generator().manual_seed(2))
    alphas, weights = path_nodes("gausslegendre", 16)
    points = (torch.as_tensor(alphas, dtype=torch.float32).reshape(-1, 1, 1, 1) * x).requires_grad_(True)
    (grad,) = torch.autograd.grad(net(points)[:, 2].sum(), points)  # the plain kernels, NCHW, all at once
    expected = (x * (torch.as_tensor(weights, dtype=torch.float32).reshape(-1, 1, 1, 1) * grad).sum(0))[0]
    found = integrated_gradients(net, x, target=2, steps=16, batch=5)
    np.testing.assert_allclose(found.map, expected.numpy(), rtol=1e-4, atol=1e-6)
    assert Layout(net, grad=True).channels_last is True  # it ran channels-last
    assert "forward" not in vars(net[1])
    with torch.no_grad():
        plain = float(net(x)[0, 2])
        covered = torch.zeros(8, 8)
        total = torch.zeros(8, 8)
        for y0 in (0, 2, 4):
            for x0 in (0, 2, 4):
                copy = x.clone()
                copy[..., y0:y0 + 4, x0:x0 + 4] = 0
                total[y0:y0 + 4, x0:x0 + 4] += plain - float(net(copy)[0, 2])
                covered[y0:y0 + 4, x0:x0 + 4] += 1
    found = occlusion(net, x, target=2, window=4, stride=2, batch=4)
    np.testing.assert_allclose(found.map, (total / covered).expand(3, 8, 8).numpy(), rtol=1e-4, atol=1e-6)


class OnceFailing(nn.Module):
    """Two convolutions; the first call raises `error`, later calls run."""

    def __init__(self, error: Exception) -> None:
        super().__init__()
        self.body, self.error = nn.Sequential(nn.Conv2d(3, 2, 3), nn.Conv2d(2, 2, 1)), error

    def forward(self, x):
        if self.error is not None:
            error, self.error = self.error, None
            raise error
        return self.body(x).sum(dim=(2, 3))


def test_out_of_memory_is_raised_and_a_model_failing_either_way_raises_its_own_error_remembering_nothing():
    x = torch.randn(2, 3, 6, 6)
    model = OnceFailing(torch.OutOfMemoryError("out of memory"))
    with pytest.raises(torch.OutOfMemoryError):
        Layout(model, grad=False).run(model, x)
    assert Layout(model, grad=False).channels_last is None  # not taken for "cannot run channels-last"
    try:  # the CPU allocator's own words: a plain RuntimeError
        torch.empty(2**50, dtype=torch.uint8)
    except RuntimeError as exc:
        cpu_says = exc
    model = OnceFailing(cpu_says)
    with pytest.raises(RuntimeError, match="can't allocate memory"):
        Layout(model, grad=False).run(model, x)
    assert Layout(model, grad=False).channels_last is None

    class Broken(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.convs = nn.Sequential(nn.Conv2d(3, 2, 3), nn.Conv2d(2, 2, 1))

        def forward(self, x):
            raise RuntimeError("a genuine bug")

    broken = Broken()
    with pytest.raises(RuntimeError, match="a genuine bug") as raised:
        Layout(broken, grad=False).run(broken, x)
    assert raised.value.__context__ is None  # its own error, not chained under the channels-last try
    assert Layout(broken, grad=False).channels_last is None


class ViewsItsGradient(torch.autograd.Function):
    """Identity forward; its backward `.view`s the gradient, which fails on a channels-last one."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad.view(grad.shape[0], -1).view(grad.shape)


class BackwardOnly(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(3)
        self.conv, self.conv2, self.head = nn.Conv2d(3, 4, 3, padding=1), nn.Conv2d(4, 4, 1), nn.Linear(4, 2)

    def forward(self, x):
        y = self.conv2(ViewsItsGradient.apply(torch.tanh(self.conv(x))))  # its gradient comes from a conv
        return self.head(y.mean(dim=(2, 3)))


@pytest.mark.numeric
def test_a_model_whose_backward_cannot_take_channels_last_gets_its_gradients_nchw():
    model, x = BackwardOnly().eval(), torch.randn(1, 3, 6, 6, generator=torch.Generator().manual_seed(0))
    with pytest.raises(RuntimeError):
        xs = x.repeat(2, 1, 1, 1).contiguous(memory_format=torch.channels_last).requires_grad_(True)
        torch.autograd.grad(model(xs).sum(), xs)
    found = integrated_gradients(model, x, target=1, steps=6, batch=3)
    alphas, weights = path_nodes("gausslegendre", 6)
    points = (torch.as_tensor(alphas, dtype=torch.float32).reshape(-1, 1, 1, 1) * x).requires_grad_(True)
    (grad,) = torch.autograd.grad(model(points)[:, 1].sum(), points)
    expected = (x * (torch.as_tensor(weights, dtype=torch.float32).reshape(-1, 1, 1, 1) * grad).sum(0))[0]
    np.testing.assert_allclose(found.map, expected.numpy(), rtol=1e-5, atol=1e-7)
    assert Layout(model, grad=True).channels_last is False


class KeywordNorm(nn.Module):
    """Calls its BatchNorm with a keyword argument."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(4)
        self.conv, self.norm, self.conv2 = nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.Conv2d(4, 2, 1)

    def forward(self, x):
        return self.conv2(torch.relu(self.norm(input=self.conv(x)))).mean(dim=(2, 3))


@pytest.mark.numeric
def test_script_modules_and_batchnorms_called_by_keyword_run():
    x = torch.randn(1, 3, 8, 8, generator=torch.Generator().manual_seed(5))
    keyword = KeywordNorm().eval()
    plain = integrated_gradients(keyword, x, target=0, steps=4, batch=4).map
    with torch.no_grad():
        keyword.norm.running_var.fill_(2.0)  # and the patched BatchNorm reads its statistics as they are now
    points = (torch.as_tensor(path_nodes("gausslegendre", 4)[0], dtype=torch.float32).reshape(-1, 1, 1, 1)
              * x).requires_grad_(True)
    (grad,) = torch.autograd.grad(keyword(points)[:, 0].sum(), points)
    weights = torch.as_tensor(path_nodes("gausslegendre", 4)[1], dtype=torch.float32).reshape(-1, 1, 1, 1)
    np.testing.assert_allclose(integrated_gradients(keyword, x, target=0, steps=4).map,
                               (x * (weights * grad).sum(0))[0].numpy(), rtol=1e-5, atol=1e-7)
    assert not np.allclose(plain, integrated_gradients(keyword, x, target=0, steps=4).map)
    net = bn_net(2)
    scripted = torch.jit.script(net)
    for batch in (2, None):  # a ScriptModule takes no hooks: its memory is not measured, and nothing fails
        np.testing.assert_allclose(integrated_gradients(scripted, x, target=1, steps=4, batch=batch).map,
                                   integrated_gradients(net, x, target=1, steps=4, batch=2).map, rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(occlusion(scripted, x, target=1, window=4, stride=4, batch=batch).map,
                                   occlusion(net, x, target=1, window=4, stride=4, batch=2).map, rtol=1e-4, atol=1e-6)
