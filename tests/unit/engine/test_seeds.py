"""The worked examples of the hooks tutorials in shared/seeds/, reproduced through the engine.

Every number here is the tutorial's (worked out by hand below) or comes from plain torch
autograd on an independent copy of the model; where today's PyTorch differs from what a
tutorial printed, today's PyTorch is the reference (grad_input is the gradient w.r.t. the
module's tensor inputs, as register_full_backward_hook gives; retain_grad runs after hooks).
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from torch import nn

from inspector.core import RunSpec, capture, run

pytestmark = pytest.mark.numeric  # CI runs these again under another oneDNN instruction set

ALL_SITES = "input,output,grad_output,grad_input,params"


def assert_equal(actual, expected) -> None:
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected, dtype=np.float32), rtol=1e-6, atol=1e-6)


# --- 000: the fc1 -> relu1 -> fc2 model -------------------------------------------------
# fc1(x) = W1 @ [1,1,1] + b1 = [6+1, -15+2, 24+3, -33+4] = [7, -13, 27, -29]; relu -> [7, 0, 27, 0];
# fc2 = 7*1 + 27*3 + 1 = 89. Backward from the scalar output: d/d fc2 = 1; d/d relu1 out = W2 = [1,2,3,4];
# through relu (mask [1,0,1,0]) -> [1,0,3,0]; d/dx = W1^T [1,0,3,0] = [1+21, 2+24, 3+27] = [22, 26, 30].


def test_forward_captures_match_the_tutorial(toy, ones):
    result = capture(toy, ones, layers="all", sites="input,output", target="output")
    assert_equal(result["fc1:input"], [[1, 1, 1]])
    assert_equal(result["fc1:output"], [[7, -13, 27, -29]])
    assert_equal(result["relu1:input"], [[7, -13, 27, -29]])
    assert_equal(result["relu1:output"], [[7, 0, 27, 0]])
    assert_equal(result["fc2:input"], [[7, 0, 27, 0]])
    assert_equal(result["fc2:output"], [[89]])
    assert_equal(result["output"], [[89]])
    assert result.objective == 89.0
    # Nothing asked needs a gradient, so no backward ran and no gradient is reported.
    assert not any(c.key.is_grad for c in result.captures.values())
    assert result.input_grad is None and result.warnings == []


def test_backward_captures_match_the_tutorial_in_todays_semantics(toy, ones):
    result = capture(toy, ones, layers="all", sites="output,grad_output,grad_input,params",
                     target="output", input_grad=True)
    assert_equal(result["fc2:grad_output"], [[1]])
    assert_equal(result["relu1:grad_output"], [[1, 2, 3, 4]])
    assert_equal(result["fc1:grad_output"], [[1, 0, 3, 0]])
    # grad_input: the gradient w.r.t. the module's input tensor only (not the legacy
    # (bias, input, weight^T) tuple the tutorial printed for Linear).
    assert_equal(result["fc2:grad_input"], [[1, 2, 3, 4]])
    assert_equal(result["relu1:grad_input"], [[1, 0, 3, 0]])
    assert_equal(result["fc1:grad_input"], [[22, 26, 30]])
    assert not any(name.startswith("fc2:grad_input[") for name in result.captures)
    # The weight and bias parts of the legacy tuple are the parameter gradients.
    assert_equal(result["fc1.weight:grad"], [[1, 1, 1], [0, 0, 0], [3, 3, 3], [0, 0, 0]])
    assert_equal(result["fc1.bias:grad"], [1, 0, 3, 0])
    assert_equal(result["fc2.weight:grad"], [[7, 0, 27, 0]])
    assert_equal(result["fc2.bias:grad"], [1])
    assert_equal(result["input:grad"], [[22, 26, 30]])
    assert result.warnings == []
    # The user's .grad fields are untouched.
    assert all(p.grad is None for p in toy.module.parameters())


def test_grad_input_matches_register_full_backward_hook(toy, ones):
    """The same three grad_inputs from today's register_full_backward_hook on an independent copy."""
    reference = copy.deepcopy(toy.module)
    seen = {}
    for name in ("fc1", "relu1", "fc2"):
        module = getattr(reference, name)
        module.register_full_backward_hook(lambda m, gin, gout, name=name: seen.__setitem__(name, gin[0].clone()))
    reference(ones.clone().requires_grad_()).sum().backward()
    result = capture(toy, ones, layers="fc1,relu1,fc2", sites="grad_input", target="output")
    for name in ("fc1", "relu1", "fc2"):
        assert_equal(result[f"{name}:grad_input"], seen[name].numpy())


def test_grad_input_of_the_first_layer_needs_no_input_grad(toy, ones):
    """The tutorial warns the input must require grad for fc1's grad_input; the engine does not need it."""
    assert not ones.requires_grad
    result = capture(toy, ones, layers="fc1", sites="grad_input", target="output")
    assert_equal(result["fc1:grad_input"], [[22, 26, 30]])
    assert result.input_grad is None and "input:grad" not in result.arrays()
    assert not ones.requires_grad and ones.grad is None


def test_auto_target_of_a_single_output_is_the_output_itself(toy, ones):
    result = capture(toy, ones, layers="fc2", sites="grad_output")
    assert result.target == "output"
    assert_equal(result["fc2:grad_output"], [[1]])


def test_doubling_relu1_grad_output_doubles_everything_below(toy, ones):
    result = capture(toy, ones, layers="all", sites="grad_output,grad_input,params",
                     edits=["relu1:grad_output=scale(2)"], target="output", input_grad=True)
    assert_equal(result["relu1:grad_output"], [[2, 4, 6, 8]])  # a capture at an edited site holds the edited value
    assert_equal(result["relu1:grad_input"], [[2, 0, 6, 0]])
    assert_equal(result["fc1:grad_output"], [[2, 0, 6, 0]])
    assert_equal(result["fc1.bias:grad"], [2, 0, 6, 0])
    assert_equal(result["fc1.weight:grad"], [[2, 2, 2], [0, 0, 0], [6, 6, 6], [0, 0, 0]])
    assert_equal(result["input:grad"], [[44, 52, 60]])
    # Above the edit nothing changes.
    assert_equal(result["fc2:grad_output"], [[1]])
    assert_equal(result["fc2:grad_input"], [[1, 2, 3, 4]])
    assert_equal(result["fc2.weight:grad"], [[7, 0, 27, 0]])
    assert_equal(result["fc2.bias:grad"], [1])


def test_readme_example_doubling_relu1_grad_input(toy, ones):
    result = capture(toy, ones, layers="all", sites="output,grad_input,params",
                     edits=["relu1:grad_input=scale(2)"], target="output", input_grad=True)
    assert_equal(result["fc1:output"], [[7, -13, 27, -29]])
    assert_equal(result["relu1:grad_input"], [[2, 0, 6, 0]])
    assert_equal(result["fc1.bias:grad"], [2, 0, 6, 0])
    assert_equal(result["fc1:grad_input"], [[44, 52, 60]])
    assert_equal(result["input:grad"], [[44, 52, 60]])
    assert result.edits == ["relu1:grad_input=scale(k=2)"]


def test_zeroing_a_parameter_gradient_changes_only_that_gradient(toy, ones):
    """Seed 001 zeroes the fc biases' gradients with parameter hooks; nothing else moves."""
    result = capture(toy, ones, layers="all", sites="params,grad_input", edits=["fc1.bias:grad=zero()"],
                     target="output", input_grad=True)
    assert_equal(result["fc1.bias:grad"], [0, 0, 0, 0])
    assert_equal(result["fc1.weight:grad"], [[1, 1, 1], [0, 0, 0], [3, 3, 3], [0, 0, 0]])
    assert_equal(result["fc2.weight:grad"], [[7, 0, 27, 0]])
    assert_equal(result["fc2.bias:grad"], [1])
    assert_equal(result["fc1:grad_input"], [[22, 26, 30]])
    assert_equal(result["input:grad"], [[22, 26, 30]])


@pytest.mark.parametrize(
    "edits, relu1_grad_output, input_grad",
    [
        # [1,2,3,4] *2 -> [2,4,6,8], clamp(max=3) -> [2,3,3,3]; relu mask -> [2,0,3,0];
        # W1^T [2,0,3,0] = 2*[1,2,3] + 3*[7,8,9] = [23, 28, 33]
        (["relu1:grad_output=scale(2)", "relu1:grad_output=clamp(max=3)"], [[2, 3, 3, 3]], [[23, 28, 33]]),
        # clamp(max=3) -> [1,2,3,3], *2 -> [2,4,6,6]; mask -> [2,0,6,0]; 2*[1,2,3] + 6*[7,8,9] = [44, 52, 60]
        (["relu1:grad_output=clamp(max=3)", "relu1:grad_output=scale(2)"], [[2, 4, 6, 6]], [[44, 52, 60]]),
    ],
)
def test_several_edits_on_one_key_apply_in_order(toy, ones, edits, relu1_grad_output, input_grad):
    result = capture(toy, ones, layers="relu1,fc1", sites="grad_output,params", edits=edits,
                     target="output", input_grad=True)
    assert_equal(result["relu1:grad_output"], relu1_grad_output)
    mask = np.array([[1, 0, 1, 0]], dtype=np.float32)
    assert_equal(result["fc1:grad_output"], np.asarray(relu1_grad_output, dtype=np.float32) * mask)
    assert_equal(result["fc1.bias:grad"], (np.asarray(relu1_grad_output, dtype=np.float32) * mask)[0])
    assert_equal(result["input:grad"], input_grad)
    assert result.edits == [str(e) for e in RunSpec.make(edits=edits).edits]


def test_output_edit_changes_what_follows(toy, ones):
    """A forward hook that returns a new output (the tutorials' `return output + 100`, here scale(2))."""
    result = capture(toy, ones, layers="all", sites="output,grad_output,params", edits=["fc1:output=scale(2)"],
                     target="output", input_grad=True)
    assert_equal(result["fc1:output"], [[14, -26, 54, -58]])
    assert_equal(result["relu1:output"], [[14, 0, 54, 0]])
    assert_equal(result["fc2:output"], [[14 + 3 * 54 + 1]])
    assert_equal(result["output"], [[177]])
    # grad_output is w.r.t. the value fc1 hands on (the edited one): the relu mask is unchanged ...
    assert_equal(result["fc1:grad_output"], [[1, 0, 3, 0]])
    # ... and the scale sits between fc1's own computation and that value, so below it everything doubles.
    assert_equal(result["fc1.bias:grad"], [2, 0, 6, 0])
    assert_equal(result["input:grad"], [[44, 52, 60]])
    assert_equal(result["fc2.weight:grad"], [[14, 0, 54, 0]])


# --- 000 / 002: tensor hooks, written as modules ----------------------------------------


class SumRows(nn.Module):
    """z = x + y, with x and y the rows of the input."""

    def forward(self, t: torch.Tensor) -> torch.Tensor:
        return t.sum(dim=0)


class Dot(nn.Module):
    """o = w . z with a parameter w."""

    def __init__(self, w) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.tensor(w, dtype=torch.float32))

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return (self.w * z).sum()


class AddThenDot(nn.Module):
    def __init__(self, w) -> None:
        super().__init__()
        self.add = SumRows()
        self.dot = Dot(w)

    def forward(self, t: torch.Tensor) -> torch.Tensor:
        return self.dot(self.add(t))


@pytest.mark.parametrize(
    "x, y, w, z_grad, w_grad",
    [
        # 000: x=2, y=3, w=4; z = 5, o = 20; do/dz = w = 4 -> x.grad = y.grad = 4; w.grad = z = 5.
        ([2.0], [3.0], [4.0], [4.0], [5.0]),
        # 002: x=[0,1,2,3], y=[4,5,6,7], w=[1,2,3,4]; z=[4,6,8,10]; x.grad = y.grad = w; w.grad = z.
        ([0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [1.0, 2.0, 3.0, 4.0], [1, 2, 3, 4], [4, 6, 8, 10]),
    ],
)
def test_tensor_hook_example_through_module_edits(x, y, w, z_grad, w_grad):
    model = AddThenDot(w)
    inputs = torch.tensor([x, y])
    plain = run(model, inputs, RunSpec.make(["add", "dot"], "output,grad_output,params", target="output",
                                            input_grad=True))
    assert_equal(plain["add:output"], np.add(x, y))
    assert_equal(plain["add:grad_output"], z_grad)
    assert_equal(plain["input:grad"], [z_grad, z_grad])
    assert_equal(plain["dot.w:grad"], w_grad)

    # The hook that returns 2 * grad at z: x.grad and y.grad double (to 8 in 000), w.grad does not move.
    doubled = run(model, inputs, RunSpec.make(["add", "dot"], "grad_output,params", ["add:grad_output=scale(2)"],
                                              target="output", input_grad=True))
    assert_equal(doubled["add:grad_output"], np.multiply(z_grad, 2))
    assert_equal(doubled["input:grad"], [np.multiply(z_grad, 2)] * 2)
    assert_equal(doubled["dot.w:grad"], w_grad)
    if len(x) == 1:
        assert_equal(doubled["input:grad"], [[8.0], [8.0]])


class Product(nn.Module):
    def forward(self, t: torch.Tensor) -> torch.Tensor:
        return t[0] * t[1]


class TimesParam(nn.Module):
    def __init__(self, value: float) -> None:
        super().__init__()
        self.d = nn.Parameter(torch.tensor(value))

    def forward(self, c: torch.Tensor) -> torch.Tensor:
        return c * self.d


class CDE(nn.Module):
    """000's a, b -> c = a * b -> e = c * d."""

    def __init__(self) -> None:
        super().__init__()
        self.mul = Product()
        self.times_d = TimesParam(4.0)

    def forward(self, t: torch.Tensor) -> torch.Tensor:
        return self.times_d(self.mul(t))


def test_grad_capture_is_after_the_edit_like_retain_grad_today():
    """000: `e.register_hook(lambda g: g * 2); e.retain_grad()` -> today e.grad is 2 (the tutorial printed 1).

    The engine's capture at an edited site holds the value after the edit, as retain_grad does now.
    """
    a, b = torch.tensor(2.0, requires_grad=True), torch.tensor(3.0, requires_grad=True)
    d = torch.tensor(4.0, requires_grad=True)
    e = a * b * d
    e.register_hook(lambda grad: grad * 2)
    e.retain_grad()
    e.backward()
    assert float(e.grad) == 2.0  # today's PyTorch

    result = run(CDE(), torch.tensor([2.0, 3.0]),
                 RunSpec.make(["mul", "times_d"], "grad_output,params", ["times_d:grad_output=scale(2)"],
                              target="output", input_grad=True))
    assert_equal(result["times_d:grad_output"], float(e.grad))  # 2
    assert_equal(result["mul:grad_output"], 8.0)  # 2 * d
    assert_equal(result["times_d.d:grad"], [12.0])  # 2 * c = 2 * 6
    assert_equal(result["input:grad"], [24.0, 16.0])  # (8 * b, 8 * a)
    assert_equal([float(a.grad), float(b.grad), float(d.grad)], [24.0, 16.0, 12.0])


# --- 002: a forward pre-hook that changes one of several positional inputs -------------


class SumNet(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a + b


class CallsSumNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.sum = SumNet()

    def forward(self, t: torch.Tensor) -> torch.Tensor:
        return self.sum(t[0], t[1])


def test_input_edit_on_one_of_several_inputs():
    """002's pre-hook turns a=2 into 12 (there a + 10, here scale(6)); the forward hook then changes the output."""
    result = run(CallsSumNet(), torch.tensor([2.0, 3.0]),
                 RunSpec.make(["sum"], ALL_SITES, ["sum:input[0]=scale(6)", "sum:output=scale(2)"],
                              target="output", input_grad=True))
    assert_equal(result["sum:input[0]"], 12.0)  # edited
    assert_equal(result["sum:input[1]"], 3.0)  # untouched
    assert_equal(result["sum:output"], 30.0)  # (12 + 3) * 2
    assert_equal(result["output"], 30.0)
    # o = 2 * (a' + b) with a' = 6 a: w.r.t. the (edited) output 1; d/d a' = d/d b = 2; d/d t = [12, 2].
    assert_equal(result["sum:grad_output"], 1.0)
    assert_equal(result["sum:grad_input[0]"], 2.0)
    assert_equal(result["sum:grad_input[1]"], 2.0)
    assert_equal(result["input:grad"], [12.0, 2.0])


# --- 001: clamp a conv activation's gradient at zero and zero the fc bias's gradient -----


class SeedConvNet(nn.Module):
    """001's myNet, with its loss (1 - out).mean() inside so the objective is the output itself."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 10, 2, stride=2)
        self.relu = nn.ReLU()
        self.fc1 = nn.Linear(160, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.relu(self.conv(x))
        out = self.fc1(x.view(-1))
        return (1 - out).mean()


def _seed_001_reference(model: SeedConvNet, x: torch.Tensor, clamp: bool):
    """001's own code (tensor hooks on an independent copy), recording what the engine should report."""
    net = copy.deepcopy(model)
    seen = {}
    x = x.clone().requires_grad_()
    conv_out = net.conv(x)
    conv_out.register_hook(lambda g: seen.__setitem__("conv", g.clone()))
    act = net.relu(conv_out)
    if clamp:
        act.register_hook(lambda g: torch.clamp(g, min=0))
        net.fc1.bias.register_hook(lambda g: torch.zeros(g.shape))
    act.register_hook(lambda g: seen.__setitem__("relu", g.clone()))
    out = net.fc1(act.view(-1))
    (1 - out).mean().backward()
    seen.update({f"{n}:grad": p.grad.clone() for n, p in net.named_parameters()})
    seen["input"] = x.grad.clone()
    return seen


def test_seed_001_clamped_conv_gradient_and_zeroed_bias():
    torch.manual_seed(1)
    model = SeedConvNet().eval()
    x = torch.randn(1, 3, 8, 8)
    layers = ["conv", "relu", "fc1"]
    sites = "grad_output,grad_input,params"

    plain = run(model, x, RunSpec.make(layers, sites, target="output", input_grad=True))
    ref = _seed_001_reference(model, x, clamp=False)
    assert ref["relu"].min() < 0  # so clamping does something
    for key, name in [("relu:grad_output", "relu"), ("conv:grad_output", "conv"), ("input:grad", "input")]:
        np.testing.assert_allclose(plain[key], ref[name].numpy(), rtol=1e-5, atol=1e-7)
    # The tutorial's confusing grad tuples, in today's words: conv's grad_input is w.r.t. its input image.
    assert plain["conv:grad_input"].shape == (1, 3, 8, 8)
    np.testing.assert_allclose(plain["conv:grad_input"], ref["input"].numpy(), rtol=1e-5, atol=1e-7)
    assert plain["fc1:grad_input"].shape == (160,)

    edited = run(model, x, RunSpec.make(layers, sites, ["relu:grad_output=clamp(min=0)", "fc1.bias:grad=zero()"],
                                        target="output", input_grad=True))
    ref = _seed_001_reference(model, x, clamp=True)
    assert edited["relu:grad_output"].min() >= 0  # "Gradients less than zero: False"
    assert_equal(edited["fc1.bias:grad"], [0, 0, 0, 0, 0])  # "The biases are tensor([0., 0., 0., 0., 0.])"
    np.testing.assert_allclose(edited["relu:grad_output"], ref["relu"].numpy(), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(edited["conv:grad_output"], ref["conv"].numpy(), rtol=1e-5, atol=1e-7)
    for name in ("conv.weight", "conv.bias", "fc1.weight", "fc1.bias"):
        np.testing.assert_allclose(edited[f"{name}:grad"], ref[f"{name}:grad"].numpy(), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(edited["input:grad"], ref["input"].numpy(), rtol=1e-5, atol=1e-7)
    # The clamp reached the conv weights; the bias edit did not (a leaf's gradient flows nowhere).
    assert not np.allclose(edited["conv.weight:grad"], plain["conv.weight:grad"])
    np.testing.assert_allclose(edited["fc1.weight:grad"], plain["fc1.weight:grad"], rtol=1e-6)
