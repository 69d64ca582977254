"""Hook lifecycle: after a normal run, a model error, an edit error or a cancel, the model carries
exactly the hooks it had before, user hooks still fire, .grad stays untouched, nothing stays alive."""

from __future__ import annotations

import gc
import os
import threading
import warnings
import weakref

import pytest
import torch
import torchvision
from torch import nn
from torch.nn.modules import module as nn_module

from inspector.core import DeviceError, RunCancelled, RunError, RunSpec, SpecError, resolve_device, run

HOOK_DICTS = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks",
              "_forward_hooks_with_kwargs", "_forward_hooks_always_called", "_forward_pre_hooks_with_kwargs")
GLOBAL_DICTS = ("_global_forward_hooks", "_global_forward_pre_hooks", "_global_backward_hooks",
                "_global_backward_pre_hooks")


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Two busy cores: torch's own thread pool only slows these small runs down."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def snapshot(model: nn.Module) -> dict:
    """Every module's hook dicts (ids and the hook objects), parameters' tensor hooks, global hooks."""
    state = {}
    for path, module in model.named_modules():
        for name in HOOK_DICTS:
            state[(path, name)] = list(getattr(module, name, {}).items())
    for path, param in model.named_parameters():
        state[(path, "tensor_hooks")] = list((param._backward_hooks or {}).items())
    for name in GLOBAL_DICTS:
        state[("global", name)] = list(getattr(nn_module, name).items())
    return state


class Gate(nn.Module):
    """Identity that runs `action` (raise, sleep, set an event) when one is given."""

    def __init__(self):
        super().__init__()
        self.action = None

    def forward(self, x):
        if self.action is not None:
            self.action()
        return x


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.gate = Gate()
        self.relu = nn.ReLU(inplace=True)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.flat = nn.Flatten()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(self.flat(self.pool(self.relu(self.gate(self.conv(x))))))


class UserHooks:
    """Hooks a user registered before any run: they must survive every run and keep firing."""

    def __init__(self, model: nn.Module):
        self.model = model
        self.forward, self.pre, self.backward, self.backward_pre = [], [], [], []
        self.handles = []
        for path, module in model.named_modules():
            self.handles.append(module.register_forward_pre_hook(lambda m, a, p=path: self.pre.append(p)))
            self.handles.append(module.register_forward_hook(lambda m, a, o, p=path: self.forward.append(p)))
        head = model.fc
        self.handles.append(head.register_full_backward_hook(lambda m, gi, go: self.backward.append("fc")))
        self.handles.append(head.register_full_backward_pre_hook(lambda m, go: self.backward_pre.append("fc")))

    def clear(self):
        for seen in (self.forward, self.pre, self.backward, self.backward_pre):
            seen.clear()

    def check_still_fire(self, x):
        self.clear()
        self.model(x).sum().backward()
        for p in self.model.parameters():
            p.grad = None
        assert len(self.forward) == len(self.pre) == len(list(self.model.named_modules()))
        assert self.backward == ["fc"] and self.backward_pre == ["fc"]
        self.clear()


def full_spec(edits=(), layers=None, model=None):
    layers = layers if layers is not None else [p for p, m in model.named_modules() if p and not list(m.children())]
    return RunSpec.make(layers, "input,output,grad_output,grad_input,params", edits, "top1", input_grad=True)


@pytest.fixture
def small():
    model = Small().eval()
    user = UserHooks(model)
    return model, user, torch.randn(1, 3, 8, 8)


def _check_clean(model, user, before, x):
    assert snapshot(model) == before
    assert all(p.grad is None for p in model.parameters())
    user.check_still_fire(x)


# -- small model ------------------------------------------------------------------
def test_normal_run(small):
    model, user, x = small
    before = snapshot(model)
    result = run(model, x, full_spec(["conv:output=scale(2)"], model=model))
    assert "conv:grad_output" in result.captures and "fc.weight:grad" in result.captures
    assert "relu:grad_input" in result.captures and result.input_grad is not None
    # the user's hooks fired during the run too, once per module
    assert len(user.forward) == len(list(model.named_modules()))
    assert user.backward == ["fc"]
    assert sum(e.kind == "registered" for e in result.events) == 6
    assert any(e.kind == "removed" for e in result.events)
    _check_clean(model, user, before, x)


def test_user_grad_fields_untouched(small):
    model, user, x = small
    model.fc.weight.grad = torch.full_like(model.fc.weight, 5.0)
    run(model, x, full_spec(model=model))
    torch.testing.assert_close(model.fc.weight.grad, torch.full_like(model.fc.weight, 5.0))
    assert model.fc.bias.grad is None and model.conv.weight.grad is None


def test_exception_in_forward(small):
    model, user, x = small
    before = snapshot(model)

    def explode():
        raise ValueError("gate exploded on purpose")

    model.gate.action = explode
    with pytest.raises(RunError, match="ValueError: gate exploded on purpose"):
        run(model, x, full_spec(model=model))
    model.gate.action = None
    _check_clean(model, user, before, x)


@pytest.mark.parametrize("edit", ["conv:output=zero_channels([999])", "relu:grad_output=zero_channels([999])",
                                  "conv:input=zero_channels([999])"])
def test_exception_in_edit(small, edit):
    model, user, x = small
    before = snapshot(model)
    with pytest.raises(SpecError, match=r"zero_channels\(channels=\[999\]\)") as info:
        run(model, x, full_spec([edit], model=model))
    assert edit.split("=")[0] in str(info.value)
    assert "out of range" in str(info.value)
    _check_clean(model, user, before, x)


def test_cancel_from_another_thread(small):
    model, user, x = small
    entered, cancel = threading.Event(), threading.Event()
    after_cancel = []
    for path, module in model.named_modules():
        module.register_forward_hook(lambda m, a, o, p=path: after_cancel.append(p) if cancel.is_set() else None)
    before = snapshot(model)

    def wait_for_cancel():
        entered.set()
        assert cancel.wait(10)

    model.gate.action = wait_for_cancel
    box = {}

    def work():
        try:
            box["result"] = run(model, x, full_spec(model=model), cancel=cancel)
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            box["error"] = exc

    thread = threading.Thread(target=work)
    thread.start()
    assert entered.wait(10)
    cancel.set()
    thread.join(10)
    assert not thread.is_alive()
    assert isinstance(box.get("error"), RunCancelled), box
    # only the module that was running when cancel came finished; nothing after it ran
    assert after_cancel == ["gate"]
    model.gate.action = None
    cancel.clear()
    _check_clean(model, user, before, x)


def test_cancel_during_backward(small):
    model, user, x = small
    cancel = threading.Event()
    handle = model.fc.register_full_backward_pre_hook(lambda m, go: cancel.set())
    before = snapshot(model)
    with pytest.raises(RunCancelled):
        run(model, x, full_spec(model=model), cancel=cancel)
    assert snapshot(model) == before
    handle.remove()


def test_cancel_before_backward(small):
    model, user, x = small
    before = snapshot(model)
    cancel = threading.Event()
    model.gate.action = cancel.set  # gate is not hooked here: the check before backward stops it
    with pytest.raises(RunCancelled):
        run(model, x, full_spec(layers=["fc"]), cancel=cancel)
    model.gate.action = None
    _check_clean(model, user, before, x)


def test_no_tensors_stay_alive(small):
    model, user, x = small
    refs = []
    keep = []
    for path, module in model.named_modules():
        keep.append(module.register_forward_hook(lambda m, a, o: refs.append(weakref.ref(o))))
    result = run(model, x, full_spec(["relu:grad_output=scale(3)"], model=model))
    assert len(refs) == len(list(model.named_modules()))
    gc.collect()
    alive = [r for r in refs if r() is not None]
    assert alive == [], f"{len(alive)} intermediate tensors still alive while the result is held"
    assert result["fc:output"].shape == (1, 3)
    for h in keep:
        h.remove()


def _live_tensors() -> int:
    gc.collect()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # isinstance on torch.distributed's deprecated names
        return sum(1 for o in gc.get_objects() if isinstance(o, torch.Tensor))


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_fifty_runs_stay_flat():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 16, 3, padding=1),
                          nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 5)).eval()
    x = torch.randn(1, 3, 64, 64)
    spec = full_spec(["1:grad_output=clamp(min=0)"], model=model)
    for _ in range(5):
        run(model, x, spec)
    tensors, rss = _live_tensors(), _rss_bytes()
    for _ in range(50):
        result = run(model, x, spec)
    del result
    assert _live_tensors() - tensors <= 2
    # each run captures ~2 MB; 50 leaked runs would be ~100 MB
    assert _rss_bytes() - rss < 30 * 2**20


# -- resnet18 ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def resnet():
    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None).eval()
    return model, torch.randn(1, 3, 64, 64)


def test_resnet18_lifecycle(resnet):
    model, x = resnet
    fired = []
    user = [model.layer1.register_forward_hook(lambda *a: fired.append("layer1")),
            model.fc.register_forward_pre_hook(lambda *a: fired.append("fc"))]
    before = snapshot(model)
    leaves = [p for p, m in model.named_modules() if p and not list(m.children())]

    # normal run: every leaf, every site (in-place ReLUs included)
    result = run(model, x, full_spec(["layer4.1.relu:output=scale(1.5)"], layers=leaves))
    assert "layer4.1.conv2:grad_output" in result.captures and "conv1.weight:grad" in result.captures
    assert "layer1.0.relu:output#1" in result.captures  # the block's ReLU is called twice
    assert fired == ["layer1", "fc"]
    assert snapshot(model) == before

    # an error inside the model's forward
    boom = model.layer3[0].bn2.register_forward_pre_hook(_raise)
    before_boom = snapshot(model)
    with pytest.raises(RunError, match="resnet forward failed on purpose"):
        run(model, x, full_spec(layers=leaves))
    assert snapshot(model) == before_boom
    boom.remove()
    assert snapshot(model) == before

    # an edit that fails
    with pytest.raises(SpecError, match=r"layer1\.0\.conv1:output=zero_channels"):
        run(model, x, full_spec(["layer1.0.conv1:output=zero_channels([999])"], layers=leaves))
    assert snapshot(model) == before

    # a cancel set while layer2 runs: nothing after layer2's first hooked child starts
    cancel = threading.Event()
    ran = []
    extra = [model.layer2.register_forward_pre_hook(lambda *a: cancel.set())]
    for path, module in model.named_modules():
        if path and not list(module.children()):
            extra.append(module.register_forward_hook(lambda m, a, o, p=path: ran.append(p) if cancel.is_set() else None))
    before_cancel = snapshot(model)
    with pytest.raises(RunCancelled):
        run(model, x, full_spec(layers=leaves), cancel=cancel)
    assert len(ran) <= 1, ran
    assert snapshot(model) == before_cancel
    for h in extra:
        h.remove()
    assert snapshot(model) == before

    # the user's hooks still fire, and .grad was never written
    fired.clear()
    with torch.no_grad():
        model(x)
    assert fired == ["layer1", "fc"]
    assert all(p.grad is None for p in model.parameters())
    for h in user:
        h.remove()


def _raise(*args):
    raise ValueError("resnet forward failed on purpose")


# -- devices ----------------------------------------------------------------------
def test_devices_on_a_cpu_machine():
    assert not torch.cuda.is_available()
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device("auto") == torch.device("cpu")
    assert resolve_device(None) == torch.device("cpu")
    assert resolve_device(" CPU ") == torch.device("cpu")
    with pytest.raises(DeviceError, match="CUDA is not available on this machine"):
        resolve_device("cuda")
    with pytest.raises(DeviceError, match=r"CUDA is not available .*devices here: cpu"):
        resolve_device("cuda:7")
    with pytest.raises(DeviceError, match="'tpu'"):
        resolve_device("tpu")
    with pytest.raises(DeviceError, match="Unknown device 'gpu0'"):
        resolve_device("gpu0")
