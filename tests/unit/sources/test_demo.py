"""Tests for the bundled demo: weights, dataset generator, samples and toy model."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PIL import Image
from torch import nn

from inspector.demo.evaluate import accuracy, predict
from inspector.demo.model import DemoBundle, DemoNet, load_demo
from inspector.demo.paths import resources_dir, samples_dir
from inspector.demo.shapes import CLASSES, SIZE, make_batch, render
from inspector.demo.toy import ToyMLP

TEST_SEED = 4242  # never used by inspector.demo.train (it uses 1000+s and 2000+s)


@pytest.fixture(scope="module")
def bundle() -> DemoBundle:
    torch.set_num_threads(2)
    return load_demo()


def test_resources_dir_points_at_repo_resources() -> None:
    assert (resources_dir() / "demo" / "demo.safetensors").is_file()
    assert (resources_dir() / "demo" / "demo.json").is_file()


def test_weights_load(bundle: DemoBundle) -> None:
    assert isinstance(bundle.model, DemoNet)
    assert not bundle.model.training
    assert bundle.labels == list(CLASSES)
    assert len(bundle.mean) == 3 and len(bundle.std) == 3
    assert bundle.input_size == SIZE == 64
    with pytest.raises(AttributeError):
        bundle.input_size = 32  # type: ignore[misc]  # frozen dataclass
    x = torch.zeros(2, 3, 64, 64)
    assert bundle.model(x).shape == (2, len(CLASSES))


def test_heldout_accuracy(bundle: DemoBundle) -> None:
    images, labels = make_batch(512, TEST_SEED)
    acc = accuracy(bundle.model, images, labels, bundle.mean, bundle.std)
    assert acc >= 0.90, acc


def test_generator_is_deterministic() -> None:
    a_img, a_lab = make_batch(16, 7)
    b_img, b_lab = make_batch(16, 7)
    c_img, _ = make_batch(16, 8)
    assert a_img.shape == (16, 64, 64, 3) and a_img.dtype == np.uint8
    assert a_lab.dtype == np.int64 and set(a_lab.tolist()) == set(range(len(CLASSES)))
    np.testing.assert_array_equal(a_img, b_img)
    np.testing.assert_array_equal(a_lab, b_lab)
    assert not np.array_equal(a_img, c_img)
    one = render(3, np.random.default_rng(1))
    two = render(3, np.random.default_rng(1))
    assert one.size == (64, 64) and one.mode == "RGB"
    assert one.tobytes() == two.tobytes()


def test_samples_decode_and_classify(bundle: DemoBundle) -> None:
    pngs = sorted(samples_dir().glob("*.png"))
    assert len(pngs) >= 8 + 2
    for path in pngs:
        with Image.open(path) as im:
            im.load()
            assert im.width >= 64 and im.height >= 64
    images = np.stack([np.asarray(Image.open(samples_dir() / f"{name}.png").convert("RGB"))
                       for name in CLASSES])
    preds = predict(bundle.model, images, bundle.mean, bundle.std)
    assert [bundle.labels[p] for p in preds] == list(CLASSES)


def test_toy_sample_tensors() -> None:
    ones = np.load(samples_dir() / "toy_ones.npy")
    mixed = np.load(samples_dir() / "toy_mixed.npy")
    assert ones.dtype == mixed.dtype == np.float32
    np.testing.assert_array_equal(ones, [[1, 1, 1]])
    np.testing.assert_array_equal(mixed, [[1, -2, 0.5]])


def test_toy_forward_and_backward() -> None:
    model = ToyMLP()
    captured: dict[str, torch.Tensor] = {}
    for name in ("fc1", "relu1"):
        model.get_submodule(name).register_forward_hook(
            lambda m, i, o, name=name: captured.__setitem__(name, o.detach().clone()))
    x = torch.ones(1, 3, requires_grad=True)
    out = model(x)
    assert captured["fc1"].tolist() == [[7, -13, 27, -29]]
    assert captured["relu1"].tolist() == [[7, 0, 27, 0]]
    assert out.tolist() == [[89]]
    out.sum().backward()
    assert model.fc1.weight.grad.tolist() == [[1, 1, 1], [0, 0, 0], [3, 3, 3], [0, 0, 0]]
    assert model.fc1.bias.grad.tolist() == [1, 0, 3, 0]
    assert x.grad.tolist() == [[22, 26, 30]]


def test_toy_importable_by_path() -> None:
    import importlib

    module_name, _, attr = "inspector.demo.toy:ToyMLP".partition(":")
    cls = getattr(importlib.import_module(module_name), attr)
    assert isinstance(cls(), nn.Module)


def test_demonet_reuses_a_module_and_has_inplace_relu() -> None:
    model = DemoNet().eval()
    calls: dict[str, int] = {}
    for name, module in model.named_modules():
        if name and not list(module.children()):
            module.register_forward_hook(
                lambda m, i, o, name=name: calls.__setitem__(name, calls.get(name, 0) + 1))
    with torch.no_grad():
        model(torch.zeros(1, 3, 64, 64))
    assert calls["block.relu"] == 2
    assert all(n == 1 for name, n in calls.items() if name != "block.relu")
    assert any(isinstance(m, nn.ReLU) and m.inplace for m in model.modules())
    assert sum(p.numel() for p in model.parameters()) < 250_000
