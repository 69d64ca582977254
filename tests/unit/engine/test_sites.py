"""Every site on every leaf of real torchvision models, against independent computations.

The reference for each model runs a deep copy in which every module with an `inplace`
flag has it off, and hooks in a different way from the engine: a forward pre-hook feeds
each module `input + z_in` and a forward hook hands on `output + z_out`, with z_in, z_out
zero leaf tensors; then d objective / d z_in is the gradient w.r.t. that module's input
through that module only (grad_input) and d objective / d z_out the gradient w.r.t. what
the module returned (grad_output), whatever in-place ops follow. A few grad_inputs are
also checked against `register_full_backward_hook`.
"""

from __future__ import annotations

import copy
import warnings
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
import pytest
import torch
import torchvision
from torch import nn

from inspector.core import RunError, RunSpec, build_layer_tree, run
from inspector.core.engine.result import RunResult

MODELS = ("resnet18", "mobilenet_v3_large", "densenet121")
SIZE = {"resnet18": 64, "mobilenet_v3_large": 64, "densenet121": 32}  # densenet's 121 layers: a smaller map
ALL_SITES = "input,output,grad_output,grad_input,params"
HOOK_DICTS = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks",
              "_forward_hooks_with_kwargs", "_forward_hooks_always_called", "_forward_pre_hooks_with_kwargs")


def module_hooks(model: nn.Module) -> dict:
    """Every hook dict of every module, by path."""
    return {path: {name: dict(getattr(m, name, {})) for name in HOOK_DICTS} for path, m in model.named_modules()}


def key(path: str, site: str, call: int) -> str:
    return f"{path}:{site}" + (f"#{call}" if call else "")


def close(actual: np.ndarray, expected, what: str = "") -> None:
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, what
    scale = float(np.abs(expected).max()) if expected.size else 0.0
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-5 * scale + 1e-12, err_msg=what)


def non_inplace_copy(model: nn.Module) -> nn.Module:
    net = copy.deepcopy(model)
    for module in net.modules():
        if hasattr(module, "inplace"):
            module.inplace = False
    return net


def reference(model: nn.Module, x: torch.Tensor, leaves: list[str]) -> dict[str, np.ndarray]:
    """Every key the engine should report for `ALL_SITES` on `leaves`, computed independently."""
    net = non_inplace_copy(model)
    modules = dict(net.named_modules())
    values: dict[str, torch.Tensor] = {}
    zeros: dict[str, torch.Tensor] = {}
    calls: dict[str, int] = defaultdict(int)
    open_calls: dict[str, list[int]] = defaultdict(list)
    handles = []

    def pre(path):
        def hook(_module, args):
            call = calls[path]
            calls[path] += 1
            open_calls[path].append(call)
            (tensor,) = args  # every leaf of these models takes one tensor
            values[key(path, "input", call)] = tensor.detach().clone()
            z = torch.zeros_like(tensor, requires_grad=True)
            zeros[key(path, "grad_input", call)] = z
            return (tensor + z,)
        return hook

    def post(path):
        def hook(_module, _args, output):
            call = open_calls[path].pop()
            assert isinstance(output, torch.Tensor)
            values[key(path, "output", call)] = output.detach().clone()
            z = torch.zeros_like(output, requires_grad=True)
            zeros[key(path, "grad_output", call)] = z
            return output + z
        return hook

    for path in leaves:
        handles.append(modules[path].register_forward_pre_hook(pre(path)))
        handles.append(modules[path].register_forward_hook(post(path)))
    try:
        x = x.clone().requires_grad_()
        logits = net(x)
    finally:
        for handle in handles:
            handle.remove()
    objective = logits[0, int(logits[0].argmax())]
    params = {f"{path}.{name}:grad": p for path in leaves for name, p in modules[path].named_parameters(recurse=False)}
    wrt = [*zeros.values(), *params.values(), x]
    grads = torch.autograd.grad(objective, wrt)
    out = {name: v.numpy() for name, v in values.items()}
    out.update({name: g.numpy() for name, g in zip([*zeros, *params], grads)})
    out["input:grad"] = grads[-1].numpy()
    out["output"] = logits.detach().numpy()
    return out


@dataclass
class Case:
    name: str
    model: nn.Module
    x: torch.Tensor
    leaves: list[str]
    result: RunResult
    hooks_before: dict
    hooks_after: dict
    py_warnings: list
    user_hook_calls: list
    ref: dict[str, np.ndarray]


def make_case(name: str) -> Case:
    torch.manual_seed(0)
    model = torchvision.models.get_model(name, weights=None).eval()
    x = torch.randn(1, 3, SIZE[name], SIZE[name], generator=torch.Generator().manual_seed(1))
    leaves = build_layer_tree(model).select("all")
    # A hook the user had before must still be there, and still work, after the run.
    user_hook_calls = []
    first = dict(model.named_modules())[leaves[0]]
    first.register_forward_hook(lambda *_: user_hook_calls.append(1))
    hooks_before = module_hooks(model)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run(model, x, RunSpec.make(leaves, ALL_SITES, input_grad=True))
    hooks_after = module_hooks(model)
    calls_during_run = list(user_hook_calls)
    ref = reference(model, x, leaves)
    return Case(name, model, x, leaves, result, hooks_before, hooks_after, list(caught), calls_during_run, ref)


@pytest.fixture(scope="module")
def cases():
    """Each model's run and reference, made once per module on first use."""
    made: dict[str, Case] = {}
    yield made
    made.clear()


@pytest.fixture(params=MODELS)
def case(request, cases) -> Case:
    if request.param not in cases:
        cases[request.param] = make_case(request.param)
    return cases[request.param]


@pytest.fixture
def resnet(cases) -> Case:
    if "resnet18" not in cases:
        cases["resnet18"] = make_case("resnet18")
    return cases["resnet18"]


def test_every_key_present_and_nothing_missing(case):
    result = case.result
    assert result.warnings == []
    assert [str(w.message) for w in case.py_warnings] == []
    assert set(result.captures) == set(case.ref) - {"input:grad", "output"}
    for path in case.leaves:
        for site in ("input", "output", "grad_output", "grad_input"):
            assert key(path, site, 0) in result.captures, (path, site)
    assert result.input_grad is not None and result.output is not None
    assert all(c.stats is not None and c.array is not None for c in result.captures.values())


def test_forward_sites_match(case):
    for name, capture in case.result.captures.items():
        if capture.key.site in ("input", "output"):
            close(capture.array, case.ref[name], name)
    close(case.result.output, case.ref["output"], "output")
    assert np.array_equal(case.result.input, case.x.numpy())


@pytest.mark.parametrize("site", ["grad_output", "grad_input", "grad"])
def test_gradient_sites_match(case, site):
    checked = 0
    for name, capture in case.result.captures.items():
        if capture.key.site == site:
            close(capture.array, case.ref[name], name)
            checked += 1
    assert checked > len(case.leaves) // 3
    if site == "grad":
        close(case.result.input_grad, case.ref["input:grad"], "input:grad")


def test_statistics_describe_the_arrays(case):
    for name, capture in case.result.captures.items():
        array = capture.array.astype(np.float64)
        scale = float(np.abs(array).max())
        stats = capture.stats
        assert stats.shape == array.shape, name
        for got, want in ((stats.mean, array.mean()), (stats.std, array.std()), (stats.l2, np.linalg.norm(array))):
            assert got == pytest.approx(want, rel=5e-5, abs=1e-6 * scale), name
        assert (stats.min, stats.max) == (array.min(), array.max()), name
        assert stats.zero_fraction == (array == 0).mean(), name


def test_model_has_exactly_the_hooks_it_had(case):
    assert case.hooks_after == case.hooks_before
    assert sum(len(h["_forward_hooks"]) for h in case.hooks_after.values()) == 1  # the user's own
    assert case.user_hook_calls == [1]  # it ran during the engine's forward, too
    assert all(p.grad is None for p in case.model.parameters())


# --- resnet18 specifics ------------------------------------------------------------------


class CloneOutput(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.clone()


def full_backward_hook_grad_inputs(model: nn.Module, x: torch.Tensor, paths: list[str]) -> dict[str, np.ndarray]:
    """grad_input as today's register_full_backward_hook reports it, on a non-inplace copy.

    A full backward hook also forbids in-place ops on the module's output further on (ResNet's
    `out += identity` after bn2), so each hooked module is wrapped to hand on a copy of its output.
    """
    net = non_inplace_copy(model)
    modules = dict(net.named_modules())
    seen: dict[str, list[torch.Tensor]] = defaultdict(list)
    for path in paths:
        module = modules[path]
        module.register_full_backward_hook(
            lambda _m, grad_input, _go, path=path: seen[path].append(grad_input[0].detach().clone())
        )
        parent, _, name = path.rpartition(".")
        setattr(net.get_submodule(parent), name, nn.Sequential(module, CloneOutput()))
    logits = net(x.clone().requires_grad_())
    logits[0, int(logits[0].argmax())].backward()
    out = {}
    for path, grads in seen.items():
        # Backward runs the calls of a shared module last-first.
        for call, grad in enumerate(reversed(grads)):
            out[key(path, "grad_input", call)] = grad.numpy()
    return out


def test_grad_input_matches_register_full_backward_hook(resnet):
    paths = ["conv1", "relu", "layer1.0.conv1", "layer1.0.bn2", "layer1.0.relu", "layer2.0.downsample.0",
             "layer4.1.bn2", "fc"]
    expected = full_backward_hook_grad_inputs(resnet.model, resnet.x, paths)
    assert set(expected) == {key(p, "grad_input", 0) for p in paths} | {"layer1.0.relu:grad_input#1"}
    for name, value in expected.items():
        close(resnet.result[name], value, name)
    # The in-place ReLUs were copied for grad_input, and the user is told so.
    notes = [e.what for e in resnet.result.events if e.kind == "note"]
    assert any(n.startswith("relu: runs in place") for n in notes)
    assert any(n.startswith("layer1.0.relu: runs in place") for n in notes)


def test_shared_relu_has_one_key_per_call(resnet):
    result = resnet.result
    for site in ("input", "output", "grad_output", "grad_input"):
        assert f"layer1.0.relu:{site}" in result.captures and f"layer1.0.relu:{site}#1" in result.captures
        assert f"layer1.0.relu:{site}#2" not in result.captures
    assert "layer1.0.conv1:output#1" not in result.captures
    assert build_layer_tree(resnet.model, resnet.x).get("layer1.0.relu").calls == 2


def test_activations_are_stored_as_returned(resnet):
    """layer1.0.bn2's output is captured before the block's in-place `out += identity` and ReLU."""
    result = resnet.result
    block = non_inplace_copy(resnet.model).layer1[0]
    with torch.no_grad():
        h = torch.from_numpy(result["layer1.0.conv1:input"])  # the block's input (maxpool's output)
        close(h.numpy(), result["maxpool:output"], "block input")
        first = block.relu(block.bn1(block.conv1(h)))
        bn2 = block.bn2(block.conv2(first))
        after = block.relu(bn2 + h)
    close(result["layer1.0.relu:output"], first.numpy(), "relu call 0")
    close(result["layer1.0.bn2:output"], bn2.numpy(), "bn2 output")
    close(result["layer1.0.relu:input#1"], (bn2 + h).numpy(), "relu call 1 input")
    close(result["layer1.0.relu:output#1"], after.numpy(), "relu call 1 output")
    assert result["layer1.0.bn2:output"].min() < 0  # really before the ReLU
    assert result["layer1.0.bn1:output"].min() < 0  # bn1's output was also changed in place by relu later
    assert result["conv1:output"].min() < 0 and result["bn1:output"].min() < 0


def test_grad_output_survives_in_place_ops(resnet):
    """bn2's output is changed in place by `+= identity` and ReLU; its grad_output is still d/d(bn2 output).

    Here from retain_grad on a clone taken in a forward hook of a non-inplace copy: the clone is what
    flows on, so nothing changes it in place.
    """
    net = non_inplace_copy(resnet.model)
    kept = {}

    def keep(path):
        def hook(_m, _a, output):
            output = output.clone()
            output.retain_grad()
            kept[path] = output
            return output
        return hook

    paths = ["bn1", "layer1.0.bn2", "layer1.1.bn2", "layer3.0.downsample.1", "layer4.1.bn2", "fc"]
    modules = dict(net.named_modules())
    for path in paths:
        modules[path].register_forward_hook(keep(path))
    logits = net(resnet.x)
    logits[0, int(logits[0].argmax())].backward()
    for path in paths:
        close(resnet.result[f"{path}:grad_output"], kept[path].grad.numpy(), path)


@pytest.mark.parametrize("layers, sites", [
    (["layer1.0.conv1", "fc"], "grad_input"),
    (["layer3.1.bn2"], "params"),
    (["layer2.0.downsample.1", "layer4.0.relu"], "grad_output"),
    (["layer1.0.relu"], "grad_output,grad_input"),
])
def test_fewer_sites_give_the_same_values(resnet, layers, sites):
    """Backward is pruned to what was asked; what it reports must not change."""
    result = run(resnet.model, resnet.x, RunSpec.make(layers, sites))
    assert result.warnings == []
    assert result.captures
    for name, capture in result.captures.items():
        close(capture.array, resnet.result[name], name)
    assert module_hooks(resnet.model) == resnet.hooks_before


def test_hooks_are_removed_after_a_failing_run(resnet):
    before = module_hooks(resnet.model)
    with pytest.raises(RunError, match="The model raised RuntimeError"):
        run(resnet.model, torch.randn(1, 5, 64, 64), RunSpec.make(resnet.leaves, ALL_SITES))
    assert module_hooks(resnet.model) == before
