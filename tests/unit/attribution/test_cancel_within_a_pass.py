"""Issue 41, item 10: Esc stops an attribution within the module it is in, forward or backward: it used to be asked
only between passes, so a pass of a big batch on a big model (seconds) always ran to its end, and a job of one pass
was never cancelled at all."""

from __future__ import annotations

import threading

import pytest

from inspector.core.common.errors import RunCancelled
from inspector.core.records.requests import AttributionRequest, ModelRequest
from inspector.core.workbench import Workbench

MODEL = '''
import torch
from torch import nn

import threading

CALLS = {"after": 0, "input_gradients": 0}
ESC = threading.Event()  # the test's flag, "Esc was pressed", once the model has loaded


class CountInputGradients(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        CALLS["input_gradients"] += 1
        return grad


class EscInForward(nn.Module):
    def forward(self, x):
        ESC.set()  # as if Esc came while this module ran
        return x


class EscInBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        ESC.set()
        return grad


class Backward(nn.Module):
    def forward(self, x):
        return EscInBackward.apply(x)


class Counted(nn.Module):
    def forward(self, x):
        CALLS["after"] += 1
        return x


class Net(nn.Module):
    input_shape = (1, 3, 16, 16)

    def __init__(self, where):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.esc = EscInForward() if where == "forward" else Backward()
        self.after = Counted()
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 3))

    def forward(self, x):
        return self.head(self.after(self.esc(self.conv(CountInputGradients.apply(x)))))


def in_forward():
    return Net("forward")


def in_backward():
    return Net("backward")
'''


@pytest.fixture
def model_file(tmp_path):
    path = tmp_path / "esc_models.py"
    path.write_text(MODEL)
    return path


def attribute_with_esc(model_file, factory: str, method: str, options=()):
    """`method` on the model, one pass (8 copies, a batch of 8), with a cancel flag the model sets itself mid-pass;
    returns the model module's CALLS and the error raised (None if the map came)."""
    bench = Workbench()
    request = AttributionRequest(ModelRequest(f"{model_file}:{factory}", trust=True), "sample:star", method=method,
                                 target="0", options=tuple(sorted(options)))
    loaded, _ = bench.load(request.model)
    module = __import__("sys").modules[type(loaded.module).__module__]
    esc = threading.Event()
    module.ESC = esc
    module.CALLS.update(after=0, input_gradients=0)  # loading ran the model once
    try:
        bench.attribute(request, cancel=esc.is_set)
    except RunCancelled as exc:
        return module.CALLS, str(exc)
    return module.CALLS, None


IG_ONE_PASS = (("steps", 8), ("batch", 8), ("quadrature", "riemann_trapezoid"))


def test_esc_in_a_forward_stops_at_the_next_module(model_file):
    calls, error = attribute_with_esc(model_file, "in_forward", "ig", IG_ONE_PASS)
    assert error == "Integrated gradients cancelled."
    assert calls == {"after": 0, "input_gradients": 0}  # the module after the one Esc came in never ran


def test_esc_in_a_backward_stops_before_the_gradient_reaches_the_input(model_file):
    calls, error = attribute_with_esc(model_file, "in_backward", "ig", IG_ONE_PASS)
    assert error == "Integrated gradients cancelled."
    assert calls["after"] >= 1 and calls["input_gradients"] == 0  # the forward ran whole, the backward stopped


def test_a_method_of_one_pass_is_cancelled_too(model_file):
    """Saliency is one forward and one backward: Esc inside it stops it (it used to end with a map)."""
    calls, error = attribute_with_esc(model_file, "in_forward", "saliency")
    assert error == "Saliency cancelled." and calls["after"] == 0


def test_without_esc_the_hooks_change_nothing_and_are_gone(model_file):
    bench = Workbench()
    request = AttributionRequest(ModelRequest(f"{model_file}:in_backward", trust=True), "sample:star", method="ig",
                                 target="0", options=IG_ONE_PASS)
    loaded, _ = bench.load(request.model)
    module = __import__("sys").modules[type(loaded.module).__module__]
    module.ESC = threading.Event()
    never = threading.Event()
    plain = bench.attribute(request).map
    watched = bench.attribute(request, cancel=never.is_set).map
    assert (plain == watched).all()
    assert all(not m._forward_hooks and not m._forward_pre_hooks for m in loaded.module.modules())
