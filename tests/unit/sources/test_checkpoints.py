"""--weights PATH: safetensors, weights-only checkpoints, refused pickles, keys that do not fit."""

from __future__ import annotations

import os
import pickle
import sys
import textwrap

import pytest
import torch
from safetensors.torch import save_file
from torch import nn

from inspector.core import ModelLoadError, UntrustedCodeError, load_model
from inspector.core.sources.checkpoints import apply_state_dict, read_checkpoint

NETS_PY = textwrap.dedent(
    """
    import torch
    from torch import nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(3, 4)
            self.fc2 = nn.Linear(4, 2)

        def forward(self, x):
            return self.fc2(torch.relu(self.fc1(x)))
    """
)
MODULE = "ni_ckpt_nets_mod"


@pytest.fixture
def nets(tmp_path, monkeypatch):
    """A user's model module, importable by name (as a pickled whole model needs)."""
    folder = tmp_path / "code"
    folder.mkdir()
    path = folder / f"{MODULE}.py"
    path.write_text(NETS_PY)
    monkeypatch.syspath_prepend(str(folder))
    import importlib

    module = importlib.import_module(MODULE)
    yield module, f"{MODULE}:Net"
    sys.modules.pop(MODULE, None)


def _trained(module) -> nn.Module:
    torch.manual_seed(7)
    net = module.Net()
    with torch.no_grad():
        for p in net.parameters():
            p.add_(torch.randn_like(p))
    return net


def _assert_same(model: nn.Module, state: dict) -> None:
    got = model.state_dict()
    assert got.keys() == state.keys()
    for key, value in state.items():
        torch.testing.assert_close(got[key], value, rtol=0, atol=0)


def test_safetensors(nets, tmp_path):
    module, source = nets
    state = _trained(module).state_dict()
    path = tmp_path / "w.safetensors"
    save_file({k: v.contiguous() for k, v in state.items()}, str(path))
    loaded = load_model(source, str(path))
    _assert_same(loaded.module, state)
    assert loaded.weights == str(path)


def test_torch_state_dict(nets, tmp_path):
    module, source = nets
    state = _trained(module).state_dict()
    path = tmp_path / "w.pt"
    torch.save(state, path)
    _assert_same(load_model(source, str(path)).module, state)


def test_nested_state_dict_and_module_prefix(nets, tmp_path):
    module, source = nets
    state = _trained(module).state_dict()
    path = tmp_path / "ckpt.pth"
    torch.save({"epoch": 3, "state_dict": {f"module.{k}": v for k, v in state.items()},
                "optimizer": {"lr": 0.1}}, path)
    _assert_same(load_model(source, str(path)).module, state)


def test_compiled_prefix(nets, tmp_path):
    module, source = nets
    state = _trained(module).state_dict()
    path = tmp_path / "ckpt.pt"
    torch.save({"model_state_dict": {f"_orig_mod.{k}": v for k, v in state.items()}}, path)
    assert read_checkpoint(path).keys() == state.keys()


def test_torchvision_with_weights_file(tmp_path):
    import torchvision

    torch.manual_seed(3)
    state = torchvision.models.resnet18(weights=None).state_dict()
    path = tmp_path / "r18.pt"
    torch.save(state, path)
    loaded = load_model("resnet18", str(path))
    assert loaded.weights == str(path)
    _assert_same(loaded.module, state)


def test_pickled_whole_model_needs_trust(nets, tmp_path):
    module, source = nets
    net = _trained(module)
    path = tmp_path / "whole.pt"
    torch.save(net, path)
    with pytest.raises(UntrustedCodeError) as info:
        load_model(source, str(path))
    message = str(info.value)
    assert f"{MODULE}.Net" in message  # the class it would import
    assert "torch.nn.modules.linear.Linear" in message
    assert "--trust" in message
    loaded = load_model(source, str(path), trust=True)
    assert loaded.module is not None and type(loaded.module).__module__ == MODULE
    _assert_same(loaded.module, net.state_dict())
    x = torch.tensor([[0.5, -1.0, 2.0]])
    torch.testing.assert_close(loaded.module(x), net(x))
    assert any("trusted pickle" in n for n in loaded.notes)


def test_legacy_format_whole_model_names_globals(nets, tmp_path):
    module, source = nets
    net = _trained(module)
    path = tmp_path / "legacy.pt"
    torch.save(net, path, _use_new_zipfile_serialization=False)
    with pytest.raises(UntrustedCodeError, match=rf"{MODULE}\.Net"):
        load_model(source, str(path))
    _assert_same(load_model(source, str(path), trust=True).module, net.state_dict())
    # the legacy format's weights-only state dict still loads without trust
    torch.save(net.state_dict(), path, _use_new_zipfile_serialization=False)
    _assert_same(load_model(source, str(path)).module, net.state_dict())


class _Evil:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"echo pwned > '{self.marker}'",))


@pytest.mark.filterwarnings("ignore:Detected pickle protocol")
@pytest.mark.parametrize("writer", ["torch.save", "pickle.dump"])
def test_malicious_pickle_refused_and_not_run(nets, tmp_path, writer):
    _, source = nets
    marker = tmp_path / "marker.txt"
    path = tmp_path / "evil.pt"
    payload = {"fc1.weight": _Evil(marker)}
    if writer == "torch.save":
        torch.save(payload, path)
    else:
        path.write_bytes(pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL))
    with pytest.raises(UntrustedCodeError) as info:
        load_model(source, str(path))
    assert f"{os.system.__module__}.system" in str(info.value)  # posix.system: what it would call
    with pytest.raises(UntrustedCodeError):
        read_checkpoint(path)
    assert not marker.exists()


def test_state_dict_that_does_not_fit(nets, tmp_path):
    module, source = nets
    state = _trained(module).state_dict()
    state.pop("fc2.bias")
    state["fc1.weight"] = torch.zeros(5, 3)
    state["head.weight"] = torch.zeros(2)
    path = tmp_path / "bad.pt"
    torch.save(state, path)
    with pytest.raises(ModelLoadError) as info:
        load_model(source, str(path))
    message = str(info.value)
    assert "bad.pt" in message
    assert "missing: fc2.bias" in message
    assert "unexpected: head.weight" in message
    assert "wrong shape: fc1.weight (file (5, 3), model (4, 3))" in message


def test_apply_state_dict_leaves_model_untouched_on_mismatch(nets):
    module, _ = nets
    net = module.Net()
    before = {k: v.clone() for k, v in net.state_dict().items()}
    state = {k: torch.ones_like(v) for k, v in before.items() if k != "fc1.bias"}
    with pytest.raises(ModelLoadError, match="missing: fc1.bias"):
        apply_state_dict(net, state)
    _assert_same(net, before)


def test_many_missing_keys_are_counted():
    net = nn.Sequential(*[nn.Linear(2, 2) for _ in range(8)])  # 16 keys
    with pytest.raises(ModelLoadError, match=r"missing: 0\.weight, .*\(16 in all\)"):
        apply_state_dict(net, {})


def test_zero_byte_file(tmp_path, nets):
    _, source = nets
    for name in ("empty.pt", "empty.safetensors"):
        path = tmp_path / name
        path.write_bytes(b"")
        with pytest.raises(ModelLoadError, match="empty"):
            load_model(source, str(path))


@pytest.mark.parametrize("name, data", [
    ("garbage.pt", b"this is not a checkpoint at all\n" * 20),
    ("random.pth", bytes(range(256)) * 4),
    ("zipish.pt", b"PK\x03\x04" + b"\x00" * 200),
    ("garbage.safetensors", b"\xff" * 64),
])
def test_garbage_file(tmp_path, nets, name, data):
    _, source = nets
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(ModelLoadError) as info:
        load_model(source, str(path))
    # damaged files are not reported as code to trust
    assert not isinstance(info.value, UntrustedCodeError)
    assert name in str(info.value)


def test_missing_weights_file(tmp_path, nets):
    _, source = nets
    with pytest.raises(ModelLoadError, match="not found"):
        load_model(source, str(tmp_path / "nope.pt"))


def test_checkpoint_without_tensors(tmp_path):
    path = tmp_path / "meta.pt"
    torch.save({"epoch": 3, "lr": 0.1}, path)
    with pytest.raises(ModelLoadError, match="holds no state dict"):
        read_checkpoint(path)
