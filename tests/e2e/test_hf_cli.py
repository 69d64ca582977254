"""`hf:` sources through the command line: capture with the folder's labels, seeded random weights,
attention rollout, and the trust step for pickled weights (a tiny ViT saved in the test)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

transformers = pytest.importorskip("transformers")

from inspector.cli import main  # noqa: E402


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    path = tmp_path_factory.mktemp("hf") / "tiny-vit"
    config = transformers.ViTConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                                    image_size=32, patch_size=8, num_labels=2, id2label={0: "no", 1: "yes"},
                                    label2id={"no": 0, "yes": 1})
    torch.manual_seed(0)
    model = transformers.ViTForImageClassification(config).eval()
    model.save_pretrained(path)
    transformers.ViTImageProcessor(size={"height": 32, "width": 32}).save_pretrained(path)
    return path, model


def test_capture_reads_the_folders_labels_and_weights(folder, tmp_path, capsys):
    path, model = folder
    out = tmp_path / "c.npz"
    assert main(["capture", "--model", f"hf:{path}", "--input", "sample:star", "--layers", "classifier",
                 "--sites", "output", "--out", str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert {p["label"] for p in report["predictions"]} == {"no", "yes"}
    arrays = np.load(out)
    logits = arrays["classifier:output"]
    with torch.no_grad():  # the folder's weights, on the input as the engine preprocessed it
        expected = model(pixel_values=torch.from_numpy(arrays["input"])).logits.numpy()
    np.testing.assert_allclose(logits, expected, rtol=1e-5, atol=1e-6)
    assert report["predictions"][0]["label"] == ("yes" if logits[0, 1] > logits[0, 0] else "no")


def test_random_weights_are_seeded(folder, tmp_path):
    path, _ = folder
    outs = [tmp_path / f"{i}.npz" for i in range(3)]
    for out, seed in zip(outs, ("7", "7", "8")):
        assert main(["capture", "--model", f"hf:{path}", "--weights", "random", "--seed", seed, "--input",
                     "sample:star", "--layers", "classifier", "--sites", "output", "--out", str(out)]) == 0
    a, b, c = (np.load(o)["classifier:output"] for o in outs)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_rollout_works_on_an_hf_vit(folder, tmp_path):
    path, _ = folder
    out = tmp_path / "r.npy"
    assert main(["attribute", "--method", "rollout", "--model", f"hf:{path}", "--input", "sample:star",
                 "--out", str(out)]) == 0
    heat = np.load(out)
    assert heat.shape == (32, 32) and heat.min() == 0 and heat.max() == pytest.approx(1.0)


def test_pickled_weights_without_trust_are_one_line_error(folder, tmp_path, capsys):
    path, model = folder
    pickled = tmp_path / "pickled"
    pickled.mkdir()
    for name in ("config.json", "preprocessor_config.json"):
        (pickled / name).write_bytes((path / name).read_bytes())
    torch.save(model.state_dict(), pickled / "pytorch_model.bin")
    assert main(["capture", "--model", f"hf:{pickled}", "--input", "sample:star", "--layers", "classifier"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "pickle" in err and "--trust" in err
