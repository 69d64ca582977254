"""Edit ops against hand computations, the edit grammar, and edits applied by a run."""

from __future__ import annotations

import dataclasses
import sys

import numpy as np
import pytest
import torch
from torch import nn

from inspector.core import Edit, RunSpec, SpecError, capture, parse_edit, parse_key, run
from inspector.core.edits import OPS

pytestmark = pytest.mark.numeric  # CI runs these again under another oneDNN instruction set


def apply(op: str, tensor: torch.Tensor) -> torch.Tensor:
    return parse_edit(f"x:output={op}").apply(tensor)


def assert_equal(actual, expected) -> None:
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected, dtype=np.float64), rtol=1e-6, atol=1e-7)


T = torch.tensor([[1.0, -2.0, 0.0], [3.0, -4.0, 0.5]])


# --- each op by hand ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "op, expected",
    [
        ("scale(2)", [[2, -4, 0], [6, -8, 1]]),
        ("scale(-0.5)", [[-0.5, 1, 0], [-1.5, 2, -0.25]]),
        ("scale(k=0)", [[0, 0, 0], [0, 0, 0]]),
        ("clamp(min=0)", [[1, 0, 0], [3, 0, 0.5]]),
        ("clamp(max=0.5)", [[0.5, -2, 0], [0.5, -4, 0.5]]),
        ("clamp(-1, 2)", [[1, -1, 0], [2, -1, 0.5]]),
        ("clamp(min=-3, max=1)", [[1, -2, 0], [1, -3, 0.5]]),
        ("zero()", [[0, 0, 0], [0, 0, 0]]),
        ("sign()", [[1, -1, 0], [1, -1, 1]]),
        ("abs()", [[1, 2, 0], [3, 4, 0.5]]),
        ("guided()", [[1, 0, 0], [3, 0, 0.5]]),
        # (N, F): channels are features (dim 1)
        ("zero_channels([0, 2])", [[0, -2, 0], [0, -4, 0]]),
        ("zero_channels([-1])", [[1, -2, 0], [3, -4, 0]]),
        ("keep_channels([1])", [[0, -2, 0], [0, -4, 0]]),
        ("keep_channels([])", [[0, 0, 0], [0, 0, 0]]),
        ("zero_channels([])", [[1, -2, 0], [3, -4, 0.5]]),
    ],
)
def test_op_by_hand(op, expected):
    out = apply(op, T)
    assert out.shape == T.shape and out.dtype == T.dtype
    assert_equal(out, expected)


def test_channel_ops_on_feature_maps_use_dim_1():
    t = torch.arange(1.0, 25.0).reshape(1, 3, 2, 4)  # channel c holds 8c+1 .. 8c+8
    out = apply("zero_channels([1])", t)
    assert_equal(out[0, 0], t[0, 0])
    assert_equal(out[0, 1], np.zeros((2, 4)))
    assert_equal(out[0, 2], t[0, 2])
    out = apply("keep_channels([0, 2])", t)
    assert_equal(out, t * torch.tensor([1.0, 0.0, 1.0]).view(1, 3, 1, 1))


def test_channel_ops_on_tokens_use_the_last_dim():
    t = torch.arange(1.0, 7.0).reshape(1, 2, 3)  # (N, T, D)
    assert_equal(apply("zero_channels([2])", t), [[[1, 2, 0], [4, 5, 0]]])
    assert_equal(apply("keep_channels([0])", t), [[[1, 0, 0], [4, 0, 0]]])


def test_zero_channels_gives_zeros_even_where_values_are_not_finite():
    t = torch.tensor([[float("inf"), 1.0], [float("nan"), 2.0]])
    out = apply("zero_channels([0])", t)
    assert_equal(out, [[0, 1], [0, 2]])
    out = apply("keep_channels([1])", t)
    assert_equal(out, [[0, 1], [0, 2]])


def test_channel_out_of_range_is_a_spec_error():
    with pytest.raises(SpecError, match=r"out of range.*3 channels"):
        apply("zero_channels([3])", T)
    with pytest.raises(SpecError, match="out of range"):
        apply("keep_channels([-4])", T)


def test_noise_is_seeded_and_has_the_requested_std():
    t = torch.zeros(400_000)
    a = apply("noise(0.5, seed=7)", t)
    torch.manual_seed(123)  # the global generator plays no part
    b = apply("noise(std=0.5, seed=7)", t)
    c = apply("noise(0.5, seed=8)", t)
    assert torch.equal(a, b)
    assert not torch.equal(a, c)
    assert abs(float(a.std()) - 0.5) < 0.005
    assert abs(float(a.mean())) < 0.005
    # Added to the tensor, not replacing it; std 0 changes nothing.
    base = torch.linspace(-3, 3, 400_000)
    noisy = apply("noise(0.5, seed=7)", base)
    assert torch.allclose(noisy - base, a, atol=1e-6)
    assert torch.equal(apply("noise(0)", base), base)
    # The default seed is 0, so two runs without a seed agree.
    assert torch.equal(apply("noise(1.0)", t[:100]), apply("noise(1.0, seed=0)", t[:100]))
    assert apply("noise(1.0)", t.double()[:10]).dtype == torch.float64


def test_clip_norm():
    t = torch.tensor([[3.0, 4.0]])  # L2 norm 5
    assert_equal(apply("clip_norm(1)", t), [[0.6, 0.8]])
    assert_equal(apply("clip_norm(2.5)", t), [[1.5, 2.0]])
    assert_equal(apply("clip_norm(10)", t), [[3.0, 4.0]])  # smaller than max: unchanged
    big = torch.randn(2, 3, 4, 5, generator=torch.Generator().manual_seed(0)) * 10
    clipped = apply("clip_norm(max=1.5)", big)
    assert abs(float(torch.linalg.vector_norm(clipped)) - 1.5) < 1e-5
    # Only rescaled, never rotated.
    assert torch.allclose(clipped * (torch.linalg.vector_norm(big) / 1.5), big, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op", [
    "scale(1)", "clamp(min=-10)", "zero()", "noise(0)", "noise(0.1)", "clip_norm(1e9)", "clip_norm(0.1)",
    "zero_channels([0])", "keep_channels([0, 1, 2])", "sign()", "abs()", "guided()",
])
def test_ops_return_new_tensors_and_never_change_their_input(op):
    t = torch.randn(2, 3, 4, 4, generator=torch.Generator().manual_seed(1))
    before = t.clone()
    out = apply(op, t)
    assert torch.equal(t, before)
    assert out is not t
    assert out.untyped_storage().data_ptr() != t.untyped_storage().data_ptr()
    out.add_(1.0)  # and changing the result leaves the input alone
    assert torch.equal(t, before)


def test_every_op_is_covered_here():
    # zero_heads changes an attention module's computation, not a tensor: tests/unit/test_attention.py;
    # the concept edits need a dictionary: tests/unit/concepts/test_concept_edits*.py
    assert set(OPS) == {"scale", "clamp", "zero", "noise", "clip_norm", "zero_channels", "keep_channels",
                        "sign", "abs", "guided", "zero_heads", "ablate_concept", "scale_concept"}


# --- the grammar -------------------------------------------------------------------------


def test_parse_edit_reads_key_op_and_named_args():
    edit = parse_edit("  layer1.0.relu:grad_input#1 = clamp( 0 , max=2.5 ) ")
    assert edit.key == parse_key("layer1.0.relu:grad_input#1")
    assert (edit.key.layer, edit.key.site, edit.key.call, edit.key.index) == ("layer1.0.relu", "grad_input", 1, None)
    assert edit.op == "clamp"
    assert edit.args == (("min", 0), ("max", 2.5))
    assert edit.enabled is True


@pytest.mark.parametrize("text", [
    "relu1:grad_input=clamp(min=0)",
    "fc1:output=scale(2)",
    "layer4:output=zero_channels([3, 7])",
    "layer4:output=keep_channels(channels=[0])",
    "layer1.0.relu:output#1=noise(0.5, 3)",
    "x:input[1]=clip_norm(max=2.0)",
    "fc1.bias:grad=zero()",
    "features.3:grad_output=clamp(max=-1e-3)",
    "a:output#2[0]=sign()",
    "b:grad_output=abs()",
    "c:grad_input=guided()",
])
def test_edit_str_round_trips(text):
    edit = parse_edit(text)
    again = parse_edit(str(edit))
    assert again == edit
    assert str(again) == str(edit)


def test_edit_str_is_readable():
    assert str(parse_edit("relu1:grad_input=clamp(min=0)")) == "relu1:grad_input=clamp(min=0)"
    assert str(parse_edit("fc1:output=scale(2)")) == "fc1:output=scale(k=2)"
    assert str(parse_edit("l:output#1=noise(0.5, 3)")) == "l:output#1=noise(std=0.5, seed=3)"
    assert str(parse_edit("layer4:output=zero_channels([3, 7])")) == "layer4:output=zero_channels(channels=[3, 7])"
    assert str(parse_edit("fc1.bias:grad=zero()")) == "fc1.bias:grad=zero()"


def test_unknown_op_lists_the_valid_ops():
    with pytest.raises(SpecError) as info:
        parse_edit("relu1:grad_input=double(2)")
    message = str(info.value)
    assert "'double'" in message
    for name in OPS:
        assert f"{name}(" in message


@pytest.mark.parametrize("text, fragment", [
    ("fc1:output=scale()", "scale needs k"),
    ("fc1:output=noise()", "noise needs std"),
    ("fc1:output=clip_norm()", "clip_norm needs max"),
    ("fc1:output=zero_channels()", "zero_channels needs channels"),
    ("fc1:output=scale(1, 2)", "Too many arguments"),
    ("fc1:output=zero(1)", "Too many arguments"),
    ("fc1:output=clamp(low=0)", "no argument 'low'"),
    ("fc1:output=clamp(0, min=1)", "given twice"),
    ("fc1:output=scale('2')", "must be a number"),
    ("fc1:output=scale(True)", "must be a number"),
    ("fc1:output=scale([2])", "must be a number"),
    ("fc1:output=zero_channels(3)", "list of integers"),
    ("fc1:output=zero_channels([1.5])", "list of integers"),
    ("fc1:output=noise(-1)", "std must be >= 0"),
    ("fc1:output=clip_norm(0)", "max must be > 0"),
    ("fc1:output=clip_norm(-2)", "max must be > 0"),
    ("fc1:output=scale(2", "Cannot read"),
    ("fc1:output=scale", "Cannot read"),
    ("fc1:output=torch.zeros(3)", "Cannot read"),
    ("fc1:output=clamp()", "clamp needs min, max or both"),
    ("fc1:output=clamp(min=None, max=None)", "clamp needs min, max or both"),
    ("fc1:output=scale(None)", "scale needs k"),
    ("fc1:output=noise(None)", "noise needs std"),
    ("fc1:output=clip_norm(max=None)", "clip_norm needs max"),
])
def test_bad_arguments_are_spec_errors_with_usage(text, fragment):
    with pytest.raises(SpecError, match=fragment.replace("(", r"\(").replace("[", r"\[")):
        parse_edit(text)


@pytest.mark.parametrize("text", [
    "fc1:output=scale(__import__('os'))",
    "fc1:output=scale(k=__import__('os').getpid())",
    "fc1:output=scale(exec(\"import sys; sys.modules['_inspector_pwned'] = 1\"))",
    "fc1:output=zero_channels([len('ab')])",
    "fc1:output=scale(1 if True else 2)",
    "fc1:output=scale((lambda: 2)())",
])
def test_non_literal_arguments_are_refused_and_never_run(text):
    with pytest.raises(SpecError, match="plain numbers or lists"):
        parse_edit(text)
    assert "_inspector_pwned" not in sys.modules


@pytest.mark.parametrize("text, fragment", [
    ("relu1:grad_input", "Write KEY=OP"),
    ("relu1:grad_input=", "Write KEY=OP"),
    ("relu1:grad_input=   ", "Write KEY=OP"),
    ("scale(2)", "Write KEY=OP"),
    ("=scale(2)", "Cannot read key"),
    ("relu1=scale(2)", "Cannot read key"),
    ("relu1:gradient=scale(2)", "Unknown site 'gradient'"),
    ("output=scale(2)", "edits apply to a layer"),
    ("input:grad=zero()", "edits apply to a layer"),
])
def test_malformed_edits_are_spec_errors(text, fragment):
    with pytest.raises(SpecError, match=fragment):
        parse_edit(text)


# --- edits in a run ----------------------------------------------------------------------


def test_output_edit_changes_downstream_and_the_capture_holds_the_edited_value(toy, ones):
    result = capture(toy, ones, layers="all", sites="input,output", edits=["relu1:output=zero_channels([2])"],
                     target="output")
    assert result["relu1:output"].tolist() == [[7, 0, 0, 0]]
    assert result["fc2:input"].tolist() == [[7, 0, 0, 0]]
    assert result["fc2:output"].tolist() == [[8]]  # 7 * 1 + 1
    assert result["output"].tolist() == [[8]]
    assert result["fc1:output"].tolist() == [[7, -13, 27, -29]]  # upstream untouched


def test_input_edit_changes_what_the_module_sees(toy, ones):
    result = capture(toy, ones, layers="all", sites="input,output", edits=["fc1:input=scale(2)"], target="output")
    assert result["input"].tolist() == [[1, 1, 1]]  # the model input itself is not changed
    assert result["fc1:input"].tolist() == [[2, 2, 2]]
    assert result["fc1:output"].tolist() == [[13, -28, 51, -62]]  # 2 * [6, -15, 24, -33] + [1, 2, 3, 4]
    assert result["output"].tolist() == [[13 + 3 * 51 + 1]]
    assert not ones.requires_grad and ones.tolist() == [[1, 1, 1]]


def test_edit_at_a_site_that_is_not_captured_still_applies(toy, ones):
    # relu1 grad_output [1, 2, 3, 4] -> sign -> [1, 1, 1, 1]; relu mask -> [1, 0, 1, 0];
    # input grad = W1^T [1, 0, 1, 0] = [1 + 7, 2 + 8, 3 + 9].
    result = capture(toy, ones, layers="fc1", sites="params", edits=["relu1:grad_output=sign()"],
                     target="output", input_grad=True)
    assert result["fc1.bias:grad"].tolist() == [1, 0, 1, 0]
    assert result["input:grad"].tolist() == [[8, 10, 12]]
    assert not any(name.startswith("relu1:") for name in result.captures)


def test_disabled_edit_does_nothing(toy, ones):
    edit = dataclasses.replace(parse_edit("relu1:grad_output=scale(2)"), enabled=False)
    result = capture(toy, ones, layers="all", sites="grad_output", edits=[edit], target="output", input_grad=True)
    assert result["relu1:grad_output"].tolist() == [[1, 2, 3, 4]]
    assert result["input:grad"].tolist() == [[22, 26, 30]]


def test_guided_at_relu_grad_input_keeps_positive_gradients(toy, ones):
    # fc2 weight made mixed-sign so the gradient into relu1 has negatives: [1, -2, -3, 4] -> relu -> [1, 0, -3, 0]
    with torch.no_grad():
        toy.module.fc2.weight.copy_(torch.tensor([[1.0, -2.0, -3.0, 4.0]]))
    plain = capture(toy, ones, layers="relu1", sites="grad_input", target="output", input_grad=True)
    guided = capture(toy, ones, layers="relu1", sites="grad_input", edits=["relu1:grad_input=guided()"],
                     target="output", input_grad=True)
    assert plain["relu1:grad_input"].tolist() == [[1, 0, -3, 0]]
    assert plain["input:grad"].tolist() == [[1 - 21, 2 - 24, 3 - 27]]
    assert guided["relu1:grad_input"].tolist() == [[1, 0, 0, 0]]
    assert guided["input:grad"].tolist() == [[1, 2, 3]]


class Double(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2


class Twice(nn.Module):
    """One module called twice per forward."""

    def __init__(self) -> None:
        super().__init__()
        self.dbl = Double()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dbl(self.dbl(x))


def test_edit_with_call_number_applies_to_that_call_only():
    x = torch.tensor([[1.0, 2.0]])
    spec = RunSpec.make(["dbl"], "output,grad_output", ["dbl:output#1=scale(10)"], target="sum")
    result = run(Twice(), x, spec)
    assert result["dbl:output"].tolist() == [[2, 4]]
    assert result["dbl:output#1"].tolist() == [[40, 80]]
    assert result["output"].tolist() == [[40, 80]]
    assert result["dbl:grad_output#1"].tolist() == [[1, 1]]
    assert result["dbl:grad_output"].tolist() == [[20, 20]]  # through 2x then the edit's 10x


def test_edit_without_call_number_applies_to_every_call():
    x = torch.tensor([[1.0, 2.0]])
    result = run(Twice(), x, RunSpec.make(["dbl"], "output", ["dbl:output=scale(3)"], target="sum"))
    assert result["dbl:output"].tolist() == [[6, 12]]  # 1 * 2 * 3
    assert result["dbl:output#1"].tolist() == [[36, 72]]  # 6 * 2 * 3


def test_noise_edit_is_reproducible_across_runs(toy, ones):
    spec = RunSpec.make(["fc1", "fc2"], "output", ["fc1:output=noise(0.3, seed=5)"], target="output")
    first, second = run(toy.module, ones, spec), run(toy.module, ones, spec)
    assert np.array_equal(first["fc1:output"], second["fc1:output"])
    noise = torch.randn((1, 4), generator=torch.Generator().manual_seed(5)) * 0.3
    assert_equal(first["fc1:output"], torch.tensor([[7.0, -13.0, 27.0, -29.0]]) + noise)


def test_edit_failing_on_a_tensor_is_a_spec_error_and_leaves_no_hooks(toy, ones):
    with pytest.raises(SpecError, match="out of range"):
        capture(toy, ones, layers="all", sites="output", edits=["relu1:output=zero_channels([9])"])
    for module in toy.module.modules():
        assert not module._forward_hooks and not module._forward_pre_hooks


@pytest.mark.parametrize("text, fragment", [
    ("relu9:output=zero()", "no layer named 'relu9'"),
    ("fc1.gamma:grad=zero()", "no parameter 'fc1.gamma'"),
    ("fc1:grad=zero()", "no parameter 'fc1'"),
])
def test_edits_naming_nothing_in_the_model_are_refused(toy, ones, text, fragment):
    with pytest.raises(SpecError, match=fragment):
        capture(toy, ones, layers="all", sites="output", edits=[text])


@pytest.mark.parametrize("text", ["relu9:output=zero()", "fc1.gamma:grad=zero()"])
def test_an_edit_switched_off_is_never_an_error(toy, ones, text):
    """Issue 25, item 10: an edit that is off changes nothing, so what it names is not checked."""
    off = dataclasses.replace(parse_edit(text), enabled=False)
    result = capture(toy, ones, layers="fc1", sites="output", edits=[off])
    plain = capture(toy, ones, layers="fc1", sites="output")
    assert result.edits == [] and np.array_equal(result["fc1:output"], plain["fc1:output"])


def test_edit_objects_and_text_are_interchangeable(toy, ones):
    edit = Edit(parse_key("relu1:grad_output"), "scale", (("k", 2),))
    as_object = capture(toy, ones, layers="fc1", sites="params", edits=[edit], target="output")
    as_text = capture(toy, ones, layers="fc1", sites="params", edits=["relu1:grad_output=scale(2)"], target="output")
    assert as_object["fc1.bias:grad"].tolist() == as_text["fc1.bias:grad"].tolist() == [2, 0, 6, 0]


class PassThrough(nn.Module):
    """fc, then a module that hands its input back as is (Identity, Dropout in eval mode)."""

    def __init__(self, after: nn.Module) -> None:
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.after = after

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.after(self.fc(x))


@pytest.mark.parametrize("after", [nn.Identity(), nn.Dropout(0.5), nn.Dropout(0.5, inplace=True)],
                         ids=["identity", "dropout", "dropout_inplace"])
@pytest.mark.parametrize("sites", ["grad_output,params", "grad_output,grad_input,params"])
def test_grad_edit_after_a_module_that_returns_its_input(after, sites):
    """Every capture below an edited grad_output sees the edit, even when the output *is* the input."""
    model = PassThrough(after).eval()
    result = run(model, torch.ones(1, 2), RunSpec.make(["fc", "after"], sites, ["after:grad_output=scale(2)"],
                                                       target="sum"))
    assert result["after:grad_output"].tolist() == [[2, 2]]
    assert result["fc:grad_output"].tolist() == [[2, 2]]  # d sum / d fc output, through the edit
    assert result["fc.bias:grad"].tolist() == [2, 2]
    if "grad_input" in sites:
        assert result["after:grad_input"].tolist() == [[2, 2]]


def test_an_unknown_op_is_one_line_naming_every_op_with_its_arguments():
    with pytest.raises(SpecError) as info:
        parse_edit("conv1:output=foo(1)")
    message = str(info.value)
    assert "\n" not in message  # a CLI error is one line (it was the op table, a line per op)
    assert message.startswith("Unknown op 'foo'; the ops are scale(k), clamp(min=None, max=None), zero(), ")
    assert message.endswith("scale_concept(id, k, dict='DIR').")
    assert [part.split("(")[0] for part in message[len("Unknown op 'foo'; the ops are "):].split("), ")] == list(OPS)
