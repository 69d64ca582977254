"""Hooks registered as one (`inspector.core.common.hooks.together`): removed together, and none left behind when one
of them cannot be registered — in the helper itself and in every context manager and block that registers its hooks
through it (a hook left on the model would change every run after it)."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from inspector.core.attention.taps import AttentionTaps
from inspector.core.attribution.cancel_within import stops_within_a_module
from inspector.core.attribution.legrad import _Stack
from inspector.core.attribution.passes.batching import LeafBytes
from inspector.core.attribution.vit_blocks import VitBlocks
from inspector.core.common.hooks import Hooked, together
from inspector.core.records.tokens import TokenGrid


def _hooks(module: nn.Module) -> int:
    return sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in module.modules())


def _refusing(module: nn.Module) -> nn.Module:
    """`module`, whose forward hooks cannot be registered (as a scripted module's cannot)."""
    def refuse(*_args, **_kwargs):
        raise RuntimeError("no hooks here")

    module.register_forward_hook = refuse
    return module


def test_together_removes_every_hook_on_close():
    model = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    seen = []
    hooks = together(m.register_forward_hook(lambda _m, _a, out: seen.append(out.shape)) for m in model)
    model(torch.zeros(1, 2))
    assert len(seen) == 2 and _hooks(model) == 2
    hooks.close()
    model(torch.zeros(1, 2))
    assert len(seen) == 2 and _hooks(model) == 0


def test_together_removes_those_registered_when_one_cannot_be():
    model = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), _refusing(nn.Linear(2, 2)))

    def hooks():
        for m in model:
            yield m.register_forward_pre_hook(lambda *_: None)  # three registered ...
        for m in model:
            yield m.register_forward_hook(lambda *_: None)  # ... two more, then the third refuses

    with pytest.raises(RuntimeError, match="no hooks here"):
        together(hooks())
    assert _hooks(model) == 0


def test_together_as_a_block_removes_its_hooks_when_the_block_raises():
    model = nn.Linear(2, 2)
    with pytest.raises(ValueError), together([model.register_forward_hook(lambda *_: None)]):
        assert _hooks(model) == 1
        raise ValueError
    assert _hooks(model) == 0


def test_legrad_blocks_leave_no_hook_when_one_cannot_be_registered():
    """Failed before: the blocks' hooks registered before the refusing one stayed on the model."""
    blocks = nn.ModuleDict({"b0": nn.Linear(4, 4), "b1": nn.Linear(4, 4), "b2": _refusing(nn.Linear(4, 4))})
    modules = dict(blocks.named_modules())
    vit = VitBlocks(TokenGrid(2, 2, 0), ("b0", "b1", "b2"), ("b0", "b1", "b2"))
    with pytest.raises(RuntimeError, match="no hooks here"), _Stack(modules, vit, ("b0", "b1", "b2")):
        pass
    assert _hooks(blocks) == 0


def test_cancel_within_leaves_no_hook_when_one_cannot_be_registered():
    """Failed before: the pre-hooks on every module stayed when a leaf's forward hook could not be registered."""
    model = nn.Sequential(nn.Linear(2, 2), _refusing(nn.ReLU()))
    with pytest.raises(RuntimeError, match="no hooks here"), stops_within_a_module(model, lambda: False, "a map"):
        pass
    assert _hooks(model) == 0


def test_leaf_bytes_and_attention_taps_leave_no_hook_when_one_cannot_be_registered():
    model = nn.Sequential(nn.Linear(2, 2), _refusing(nn.ReLU()))
    with pytest.raises(RuntimeError, match="no hooks here"), LeafBytes(model):
        pass
    assert _hooks(model) == 0
    attention = nn.MultiheadAttention(4, 2, batch_first=True)
    mha = nn.ModuleDict({"a": attention, "b": _refusing(nn.MultiheadAttention(4, 2, batch_first=True))})
    with pytest.raises(RuntimeError, match="no hooks here"), AttentionTaps(dict(mha.items())):
        pass
    assert _hooks(mha) == 0


def test_leaf_bytes_counts_a_forward_then_removes_its_hooks():
    model = nn.Sequential(nn.Linear(3, 5), nn.ReLU())
    with LeafBytes(model) as counted:
        model(torch.zeros(2, 3))
    assert counted.total == 2 * 5 * 4 * 2  # two leaves' outputs, (2, 5) float32 each
    assert _hooks(model) == 0


def test_hooked_removes_its_hooks_on_exit_and_may_be_entered_again():
    class Counting(Hooked):
        def __init__(self, module):
            self.module, self.calls = module, 0

        def _register(self):
            yield self.module.register_forward_hook(self._count)

        def _count(self, *_):
            self.calls += 1

    model = nn.Linear(2, 2)
    counting = Counting(model)
    for _ in range(2):
        with counting as entered:
            assert entered is counting and _hooks(model) == 1
            model(torch.zeros(1, 2))
        assert _hooks(model) == 0
    model(torch.zeros(1, 2))
    assert counting.calls == 2
    counting.__exit__(None, None, None)  # twice: nothing more to remove
