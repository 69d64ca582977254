"""Model sources: file.py:Name, package.module:Name, torchvision names, TorchScript, .pt2, pretrained cache."""

from __future__ import annotations

import http.client
import io
import os
import sys
import textwrap
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import torch
import torchvision
from torch import nn

from inspector.core import ModelLoadError, UntrustedCodeError, capture, load_model
from inspector.core.sources.preprocess import Preprocess

MODEL_PY = textwrap.dedent(
    """
    import torch
    from torch import nn

    class Net(nn.Module):
        input_shape = (1, 3)
        labels = ["no", "yes"]

        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 2)
            with torch.no_grad():
                self.fc.weight.copy_(torch.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 2.0]]))
                self.fc.bias.zero_()

        def forward(self, x):
            return self.fc(x)

    class Helper(nn.Module):
        def forward(self, x):
            return x

    def make():
        net = Net()
        net.made_by_factory = True
        return net

    def broken():
        raise ValueError("the factory is broken on purpose")

    def not_a_model():
        return {"fc": 1}
    """
)


@pytest.fixture
def model_py(tmp_path) -> Path:
    path = tmp_path / "my_model.py"
    path.write_text(MODEL_PY)
    return path


# -- Python sources ---------------------------------------------------------------
def test_file_class(model_py):
    loaded = load_model(f"{model_py}:Net")
    assert isinstance(loaded.module, nn.Module) and type(loaded.module).__name__ == "Net"
    assert loaded.kind == "python" and loaded.labels == ["no", "yes"] and loaded.input_shape == (1, 3)
    assert not loaded.module.training  # put in eval mode
    out = loaded.module(torch.tensor([[1.0, 2.0, 3.0]]))
    torch.testing.assert_close(out, torch.tensor([[1.0, 8.0]]))


def test_file_factory(model_py):
    loaded = load_model(f"{model_py}:make")
    assert type(loaded.module).__name__ == "Net" and loaded.module.made_by_factory is True


def test_package_module_source(tmp_path, monkeypatch):
    pkg = tmp_path / "nipkg_models_xyz"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "nets.py").write_text(MODEL_PY)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        loaded = load_model("nipkg_models_xyz.sub.nets:Net")
        assert type(loaded.module).__name__ == "Net"
        assert type(loaded.module).__module__ == "nipkg_models_xyz.sub.nets"
    finally:
        for name in [m for m in sys.modules if m.startswith("nipkg_models_xyz")]:
            del sys.modules[name]


def test_installed_package_source():
    loaded = load_model("torch.nn:Identity")
    assert isinstance(loaded.module, nn.Identity)


def test_missing_name_lists_modules(model_py):
    with pytest.raises(ModelLoadError) as info:
        load_model(f"{model_py}:Nett")
    message = str(info.value)
    assert "'Nett'" in message and "Helper, Net" in message


def test_factory_that_raises(model_py):
    with pytest.raises(ModelLoadError, match="ValueError: the factory is broken on purpose") as info:
        load_model(f"{model_py}:broken")
    assert isinstance(info.value.__cause__, ValueError)


def test_factory_returning_non_module(model_py):
    with pytest.raises(ModelLoadError, match="returned dict, not a torch.nn.Module"):
        load_model(f"{model_py}:not_a_model")


def test_missing_python_file(tmp_path):
    with pytest.raises(ModelLoadError, match="not found"):
        load_model(f"{tmp_path / 'absent.py'}:Net")


def test_file_that_fails_to_import(tmp_path):
    path = tmp_path / "bad.py"
    path.write_text("import torch\nraise RuntimeError('import-time failure')\n")
    with pytest.raises(ModelLoadError, match="RuntimeError: import-time failure"):
        load_model(f"{path}:Net")


def test_unimportable_package():
    with pytest.raises(ModelLoadError, match="Cannot import no_such_pkg_abc.mod"):
        load_model("no_such_pkg_abc.mod:Net")


# -- torchvision ------------------------------------------------------------------
def test_torchvision_labels_and_preprocess():
    loaded = load_model("resnet18")
    assert isinstance(loaded.module, torchvision.models.ResNet)
    assert loaded.kind == "torchvision" and loaded.weights == "random"
    assert len(loaded.labels) == 1000
    assert loaded.labels[0] == "tench" and loaded.labels[207] == "golden retriever"
    assert loaded.preprocess == Preprocess(256, 224, (0.485, 0.456, 0.406), (0.229, 0.224, 0.225), "bilinear")
    assert loaded.input_shape == (1, 3, 224, 224)
    assert any("Random weights" in n for n in loaded.notes)


def test_unknown_name_suggests_close_names():
    with pytest.raises(ModelLoadError, match="Unknown model 'resnet81'") as info:
        load_model("resnet81")
    assert "Did you mean" in str(info.value) and "resnet18" in str(info.value)


def test_empty_source():
    with pytest.raises(ModelLoadError, match="No model given"):
        load_model("  ")


# -- saved programs ---------------------------------------------------------------
class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc1 = nn.Linear(3, 4)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


@pytest.mark.filterwarnings("ignore:`torch.jit:FutureWarning")
def test_torchscript_needs_trust(tmp_path):
    model = Tiny().eval()
    path = tmp_path / "tiny_script.pt"
    torch.jit.script(model).save(str(path))
    with pytest.raises(UntrustedCodeError, match="--trust"):
        load_model(str(path))
    loaded = load_model(str(path), trust=True)
    assert loaded.kind == "torchscript"
    x = torch.tensor([[1.0, -2.0, 0.5]])
    torch.testing.assert_close(loaded.module(x), model(x))


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    model = Tiny().eval()
    path = tmp_path_factory.mktemp("export") / "tiny.pt2"
    program = torch.export.export(model, (torch.zeros(1, 3),), strict=False)
    torch.export.save(program, str(path))
    return model, path


def test_export_needs_trust_and_captures(exported):
    model, path = exported
    with pytest.raises(UntrustedCodeError):
        load_model(str(path))
    loaded = load_model(str(path), trust=True)
    assert loaded.kind == "export" and loaded.input_shape == (1, 3)
    x = torch.tensor([[1.0, -2.0, 0.5]])
    result = capture(loaded, x, layers="fc1,act", sites="output,grad_output", target="sum")
    with torch.no_grad():
        h = model.fc1(x)
    torch.testing.assert_close(torch.from_numpy(result["fc1:output"]), h)
    torch.testing.assert_close(torch.from_numpy(result["act:output"]), h.clamp(min=0))
    # d sum(fc2(a)) / d a = column sums of fc2.weight
    torch.testing.assert_close(torch.from_numpy(result["act:grad_output"]), model.fc2.weight.sum(0, keepdim=True).detach())
    torch.testing.assert_close(torch.from_numpy(result["output"]), model(x).detach())


def test_weights_file_not_a_model(tmp_path):
    path = tmp_path / "state.pt"
    torch.save(Tiny().state_dict(), path)
    with pytest.raises(ModelLoadError, match="holds weights, not a model"):
        load_model(str(path), trust=True)


# -- pretrained weights through the torchvision cache ----------------------------
URL = torchvision.models.ResNet18_Weights.DEFAULT.url
FILE_NAME = os.path.basename(URL)


@pytest.fixture
def torch_home(tmp_path, monkeypatch):
    home = tmp_path / "torch home"
    monkeypatch.setenv("TORCH_HOME", str(home))
    monkeypatch.setattr(torch.hub, "_hub_dir", None, raising=False)
    calls = []

    def no_network(*args, **kwargs):
        calls.append(args)
        raise urllib.error.URLError("network disabled in tests")

    monkeypatch.setattr(urllib.request, "urlopen", no_network)
    monkeypatch.setattr(torch.hub, "download_url_to_file", no_network)
    return home, calls


@pytest.fixture(scope="module")
def resnet18_state():
    torch.manual_seed(1234)
    state = torchvision.models.resnet18(weights=None).state_dict()
    buf = io.BytesIO()
    torch.save(state, buf)
    return state, buf.getvalue()


def test_pretrained_offline_names_file_and_folder(torch_home):
    home, calls = torch_home
    assert FILE_NAME == "resnet18-f37072fd.pth"
    with pytest.raises(ModelLoadError) as info:
        load_model("resnet18", "pretrained")
    message = str(info.value)
    assert FILE_NAME in message
    assert str(home / "hub" / "checkpoints") in message
    assert len(calls) == 1  # it tried once, through the patched urlopen
    assert not (home / "hub" / "checkpoints" / FILE_NAME).exists()
    assert list((home / "hub" / "checkpoints").glob("*.part")) == []


def test_pretrained_from_cache_without_download(torch_home, resnet18_state):
    home, calls = torch_home
    state, data = resnet18_state
    folder = home / "hub" / "checkpoints"
    folder.mkdir(parents=True)
    (folder / FILE_NAME).write_bytes(data)
    loaded = load_model("resnet18", "pretrained")
    assert calls == []
    assert loaded.weights.startswith("pretrained")
    got = loaded.module.state_dict()
    assert got.keys() == state.keys()
    for key in state:
        torch.testing.assert_close(got[key], state[key], rtol=0, atol=0)


class _Response(io.BytesIO):
    def __init__(self, data: bytes, length: int | None = None):
        super().__init__(data)
        self.headers = {"Content-Length": str(len(data) if length is None else length)}


def test_pretrained_download_with_progress(torch_home, resnet18_state, monkeypatch):
    home, _ = torch_home
    state, data = resnet18_state
    requested = []

    def fake_urlopen(url, timeout=None):
        requested.append(url)
        return _Response(data)

    monkeypatch.setattr(urllib.request, "urlopen", fake_urlopen)
    progress = []
    loaded = load_model("resnet18", "pretrained", progress=lambda done, total: progress.append((done, total)))
    assert requested == [URL]
    chunks = -(-len(data) // (1 << 20))
    assert len(progress) == chunks
    assert all(total == len(data) for _, total in progress)
    assert [d for d, _ in progress] == sorted(d for d, _ in progress) and progress[-1][0] == len(data)
    cached = home / "hub" / "checkpoints" / FILE_NAME
    assert cached.read_bytes() == data
    assert list(cached.parent.glob("*.part")) == []
    torch.testing.assert_close(loaded.module.state_dict()["fc.weight"], state["fc.weight"], rtol=0, atol=0)


class _BrokenResponse(_Response):
    def read(self, n=-1):
        if self.tell() > 0:
            raise http.client.IncompleteRead(b"", 10)
        return super().read(n)


@pytest.mark.parametrize("how", ["short", "incomplete_read"])
def test_pretrained_download_cut_short_is_not_cached(torch_home, resnet18_state, monkeypatch, how):
    home, _ = torch_home
    _, data = resnet18_state
    # the server promised more bytes than it sent: the file must not land in the cache
    if how == "short":
        response = _Response(data[:1000], len(data))
    else:
        response = _BrokenResponse(data)
    monkeypatch.setattr(urllib.request, "urlopen", lambda url, timeout=None: response)
    with pytest.raises(ModelLoadError, match=FILE_NAME):
        load_model("resnet18", "pretrained")
    folder = home / "hub" / "checkpoints"
    assert not (folder / FILE_NAME).exists()
    assert list(folder.glob("*.part")) == []


def test_pretrained_for_python_model_refused(model_py):
    with pytest.raises(ModelLoadError, match="pretrained is for torchvision models"):
        load_model(f"{model_py}:Net", "pretrained")
