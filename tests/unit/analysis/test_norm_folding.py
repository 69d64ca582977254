"""Issue 26: a BatchNorm folded into the convolution before it, in the attribution passes. Which pairs fold
(worked out by hand on a model built for it, and counted by hand on torchvision's resnet18 and densenet121),
the folded weight and bias against float64 arithmetic, passes equal to the plain model's to float32 rounding,
and the pairs that must not fold (hooks, training mode, a convolution read twice) left alone."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
import torchvision
from torch import nn

from inspector.core.integrated import integrated_gradients
from inspector.core.norm_folding import _Uses, find_pairs, folded, folded_norms, unfolded
from inspector.core.occlusion import occlusion


def drawn(norm: nn.Module, seed: int) -> nn.Module:
    """Running statistics and affine parameters drawn (the defaults would fold to the identity)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        n = norm.num_features
        norm.running_mean.copy_(torch.rand(n, generator=g) * 2 - 1)
        norm.running_var.copy_(torch.rand(n, generator=g) * 2.8 + 0.2)
        if norm.weight is not None:
            norm.weight.copy_(torch.rand(n, generator=g) * 4 - 2)
            norm.bias.copy_(torch.rand(n, generator=g) * 2 - 1)
    return norm


class OwnNorm(nn.BatchNorm2d):
    """A subclass: it may compute something else, so it never folds."""


class Pairs(nn.Module):
    """Six convolution -> BatchNorm places, one of which folds (`a`): `b`'s output is also added after its norm,
    `c` runs twice, `d`'s norm reads a ReLU, `e`'s output is summed besides, `f`'s norm is a subclass."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        for name in "abcdef":
            setattr(self, f"conv_{name}", nn.Conv2d(4, 4, 3, padding=1))
        self.norm_a, self.norm_b, self.norm_c = (drawn(nn.BatchNorm2d(4), i) for i in range(3))
        self.norm_d, self.norm_e = drawn(nn.BatchNorm2d(4), 3), drawn(nn.BatchNorm2d(4), 4)
        self.norm_f = drawn(OwnNorm(4), 5)

    def forward(self, x):
        x = self.norm_a(self.conv_a(x))
        b = self.conv_b(x)
        x = self.norm_b(b) + b
        x = self.norm_c(self.conv_c(self.conv_c(x)))
        x = self.norm_d(torch.relu(self.conv_d(x)))
        e = self.conv_e(x)
        x = self.norm_e(e) * e.sum()
        return self.norm_f(self.conv_f(x)).mean((2, 3))


def test_only_a_convolution_read_by_its_batchnorm_alone_folds():
    assert find_pairs(Pairs().eval(), torch.randn(1, 4, 6, 6)) == (("conv_a", "norm_a"),)


def test_every_batchnorm_of_resnet18_folds_and_densenets_that_read_a_concatenation_do_not():
    x = torch.randn(1, 3, 64, 64)
    resnet = torchvision.models.resnet18().eval()
    pairs = find_pairs(resnet, x)
    assert len(pairs) == 20 and ("layer1.0.conv1", "layer1.0.bn1") in pairs
    assert ("layer2.0.downsample.0", "layer2.0.downsample.1") in pairs
    # densenet121: norm0 after conv0, and each of the 58 dense layers' norm2 after its conv1; every norm1, the
    # three transitions' norms and norm5 read a concatenation of feature maps
    dense = torchvision.models.densenet121().eval()
    pairs = find_pairs(dense, x)
    assert len(pairs) == 1 + 58 and ("features.conv0", "features.norm0") in pairs
    assert all(n.endswith(("norm0", "norm2")) for _, n in pairs)


def test_the_folded_weight_and_bias_equal_float64_arithmetic():
    conv = nn.Conv2d(3, 5, 3, padding=1, groups=1)
    norm = drawn(nn.BatchNorm2d(5), 7).eval()
    x = torch.randn(2, 3, 8, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        want = nn.functional.batch_norm(nn.functional.conv2d(x, conv.weight.double(), conv.bias.double(), padding=1),
                                        norm.running_mean.double(), norm.running_var.double(),
                                        norm.weight.double(), norm.bias.double(), False, 0.0, norm.eps)
    weight, bias = folded(conv, norm)
    assert weight.dtype == bias.dtype == torch.float32
    got = nn.functional.conv2d(x, weight.double(), bias.double(), padding=1)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=0, atol=2e-6 * float(want.abs().max()))


def test_folded_passes_equal_the_plain_model_and_the_model_is_left_as_it_was():
    model = torchvision.models.resnet18(num_classes=10).eval()
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            drawn(m, 11)
    x = torch.randn(2, 3, 64, 64, generator=torch.Generator().manual_seed(2))
    wide = torchvision.models.resnet18(num_classes=10).eval()
    wide.load_state_dict(model.state_dict())
    wide.double()
    xd = x.double().requires_grad_(True)
    (want_grad,) = torch.autograd.grad(wide(xd)[:, 3].sum(), xd)
    before = model(x).detach()
    xp = x.clone().requires_grad_(True)
    (plain_grad,) = torch.autograd.grad(model(xp)[:, 3].sum(), xp)
    with folded_norms(model, x):
        assert "forward" in vars(model.conv1) and "forward" in vars(model.bn1)
        xf = x.clone().requires_grad_(True)
        out = model(xf)
        (grad,) = torch.autograd.grad(out[:, 3].sum(), xf)
    assert not any("forward" in vars(m) for m in model.modules())
    assert torch.equal(model(x), before)  # the model's own passes again, bit for bit
    # float32 rounding of the float64 model's numbers, as the unfolded float32 model's are
    rel = lambda a, b: float((a.double() - b).norm() / b.norm())  # noqa: E731
    assert rel(out.detach(), wide(x.double()).detach()) < 1e-5
    assert rel(plain_grad, want_grad) < 1e-5
    # the stem's max-pool routes a gradient to the larger of two nearly equal pixels: float32 rounding of the
    # folded (or the plain) numbers can pick the other one, a few pixels' gradient (5e-4 here, in some draws)
    assert rel(grad, want_grad) < 2e-3
    assert float((grad.double() - want_grad).abs().gt(1e-3 * want_grad.abs().max()).float().mean()) < 1e-3


def test_a_model_with_a_hook_anywhere_training_norms_and_global_hooks_stay_as_they_are():
    model = nn.Sequential(nn.Sequential(nn.Conv2d(3, 4, 3)), drawn(nn.BatchNorm2d(4), 1), nn.ReLU(),
                          nn.Conv2d(4, 4, 3), drawn(nn.BatchNorm2d(4), 2), nn.Flatten(), nn.LazyLinear(2)).eval()
    x = torch.randn(1, 3, 8, 8)
    model(x)
    with folded_norms(model, x):
        assert "forward" in vars(model[0][0]) and "forward" in vars(model[3])  # both pairs fold
    # a hook on the Sequential around the first convolution reads that convolution's output: nothing folds
    seen = []
    handle = model[0].register_forward_hook(lambda m, i, o: seen.append(o.detach().clone()))
    plain_seen = model[0][0](x).detach()
    seen.clear()
    with folded_norms(model, x):
        assert not any("forward" in vars(m) for m in model.modules())
        model(x)
    handle.remove()
    torch.testing.assert_close(seen[0], plain_seen, rtol=0, atol=0)  # the convolution's own output
    model[4].train()
    with folded_norms(model, x):
        assert "forward" in vars(model[0][0]) and "forward" not in vars(model[3])  # batch statistics there
    model[4].eval()
    handle = nn.modules.module.register_module_forward_hook(lambda m, i, o: None)
    try:
        with folded_norms(model, x):
            assert not any("forward" in vars(m) for m in model.modules())
    finally:
        handle.remove()
    model[4] = OwnNorm(4).eval()  # swapped since the pairs were found: a subclass never folds
    with folded_norms(model, x):
        assert "forward" in vars(model[0][0]) and "forward" not in vars(model[3])
    model[4] = nn.Identity()
    with folded_norms(model, x):
        assert "forward" not in vars(model[3])


class Reads(nn.Module):
    """conv -> norm, and the convolution's output read by `how` besides."""

    def __init__(self, how: str) -> None:
        super().__init__()
        torch.manual_seed(5)
        self.how, self.conv, self.norm, self.other = how, nn.Conv2d(3, 4, 3), drawn(nn.BatchNorm2d(4), 8), None
        if how == "two norms":
            self.other = drawn(nn.BatchNorm2d(4), 9)

    def forward(self, x):
        y = self.conv(x)
        z = self.norm(y)
        if self.how == "returned":
            return z.mean((2, 3)), y
        if self.how == "two norms":
            return (z + self.other(y)).mean((2, 3))
        if self.how == "direct forward":  # a second call that module hooks do not see
            return z.mean((2, 3)) + self.conv.forward(x).mean((2, 3))
        if self.how == "branch on values":
            return z.mean((2, 3)) if float(x.mean()) > 0 else z.amax((2, 3))
        raise ValueError(self.how)


@pytest.mark.parametrize("how", ["returned", "two norms", "direct forward", "branch on values"])
def test_a_convolution_read_where_the_watch_cannot_prove_it_is_not_folds_nothing(how):
    model = Reads(how).eval()
    x = torch.randn(1, 3, 6, 6, generator=torch.Generator().manual_seed(0))
    assert find_pairs(model, x) == ()
    plain = model(x)
    with folded_norms(model, x):
        torch.testing.assert_close(model(x), plain, rtol=0, atol=0)


def test_an_unbatched_convolution_does_not_fold_into_a_norm_over_its_length():
    class Unbatched(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv, self.norm = nn.Conv1d(4, 4, 1), drawn(nn.BatchNorm1d(4), 3)

        def forward(self, x):  # x (4, 4): channels first, no batch; the norm reads it as (batch 4, 4 features)
            return self.norm(self.conv(x[0]))

    assert find_pairs(Unbatched().eval(), torch.randn(1, 4, 4)) == ()


def test_attribution_with_folded_norms_equals_plain_pytorch():
    """Integrated gradients (Riemann middle, 6 steps) and occlusion of a folded network against the plain model's
    autograd and forward passes in float64."""
    torch.manual_seed(3)
    model = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), drawn(nn.BatchNorm2d(6), 4), nn.ReLU(),
                          nn.Conv2d(6, 6, 3, padding=1), drawn(nn.BatchNorm2d(6), 5), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(6, 4)).eval()
    assert len(find_pairs(model, torch.randn(1, 3, 12, 12))) == 2
    x = torch.randn(1, 3, 12, 12, generator=torch.Generator().manual_seed(6))
    wide = copy.deepcopy(model).double()
    found = integrated_gradients(model, x, target=1, steps=6, quadrature="riemann_middle", batch=4).map
    alphas = (np.arange(6) + 0.5) / 6
    points = torch.as_tensor(alphas).reshape(-1, 1, 1, 1) * x.double()
    points.requires_grad_(True)
    (grads,) = torch.autograd.grad(wide(points)[:, 1].sum(), points)
    want = (x.double() * grads.mean(0, keepdim=True))[0].numpy()
    np.testing.assert_allclose(found, want, rtol=0, atol=1e-5 * np.abs(want).max())
    occluded = occlusion(model, x, target=1, window=4, stride=4, batch=5).map
    with torch.no_grad():
        f_x = float(wide(x.double())[0, 1])
        for top in range(0, 12, 4):
            for left in range(0, 12, 4):
                hidden = x.double().clone()
                hidden[..., top:top + 4, left:left + 4] = 0
                drop = f_x - float(wide(hidden)[0, 1])
                np.testing.assert_allclose(occluded[:, top:top + 4, left:left + 4], drop, rtol=0, atol=1e-5)


class Unwatchable(nn.Module):
    """Conv -> BatchNorm, whose forward refuses to run under a TorchFunctionMode (as some compiled or wrapped
    models do)."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(4)
        self.conv, self.norm, self.head = nn.Conv2d(3, 4, 3), drawn(nn.BatchNorm2d(4), 6), nn.Linear(4, 2)

    def forward(self, x):
        if torch._C._is_torch_function_mode_enabled():
            raise RuntimeError("not under a mode")
        return self.head(self.norm(self.conv(x)).mean((2, 3)))


def test_a_model_that_cannot_be_watched_folds_nothing_and_its_job_runs_as_before():
    model = Unwatchable().eval()
    x = torch.randn(1, 3, 8, 8, generator=torch.Generator().manual_seed(0))
    with folded_norms(model, x):
        assert not any("forward" in vars(m) for m in model.modules())
    found = integrated_gradients(model, x, target=1, steps=4, quadrature="riemann_left", batch=4).map
    points = (torch.arange(4, dtype=torch.float32) / 4).reshape(-1, 1, 1, 1) * x
    points.requires_grad_(True)
    (grads,) = torch.autograd.grad(model(points)[:, 1].sum(), points)
    np.testing.assert_allclose(found, (x * grads.mean(0, keepdim=True))[0].numpy(), rtol=1e-5, atol=1e-7)


class Reuse(nn.Module):
    """norm1 reads `x * 2`, freed when it returns; conv2's output, made next, may take its address (its id)."""

    def __init__(self) -> None:
        super().__init__()
        self.norm1, self.conv2, self.norm2 = nn.BatchNorm2d(3), nn.Conv2d(3, 3, 1), nn.BatchNorm2d(3)

    def forward(self, x):
        return self.norm2(self.conv2(self.norm1(x * 2)))


def test_a_norm_never_pairs_with_a_convolution_whose_output_took_its_freed_inputs_id():
    # the watch's record, step by step: the same object stands for a tensor made at the freed one's address
    uses, conv, norm, made_later = _Uses(), nn.Conv2d(3, 3, 1), nn.BatchNorm2d(3), torch.zeros(1, 3, 2, 2)
    uses.norm_starts(norm, (made_later,))  # the norm's input is no convolution's output
    uses.norm_done(norm, (made_later,), made_later)
    uses.conv_done(conv, (), made_later)  # then a convolution's output at the same address
    assert uses.fed[norm] is None
    # and on a real forward, many times (before the fix: ('conv2', 'norm1') too, about 1 in 20)
    model, x = Reuse().eval(), torch.randn(1, 3, 4, 4)
    assert {find_pairs(model, x) for _ in range(60)} == {(("conv2", "norm2"),)}


def test_nothing_folds_inside_unfolded_and_folding_comes_back_after():
    model = nn.Sequential(nn.Conv2d(3, 4, 3), drawn(nn.BatchNorm2d(4), 1)).eval()
    x = torch.randn(1, 3, 6, 6)
    with unfolded():
        with folded_norms(model, x):
            assert not any("forward" in vars(m) for m in model.modules())
    with folded_norms(model, x):
        assert "forward" in vars(model[0]) and "forward" in vars(model[1])
