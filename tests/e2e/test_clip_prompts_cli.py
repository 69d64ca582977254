"""`text:` targets through the command line: a malformed one refused before torch is imported, an attribute
map of a CLIP folder's prompts equal to the API's, and a session with a text target replayed by `capture`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

transformers = pytest.importorskip("transformers")

from cli_here import answers_in_one_interpreter, refused_early, run_here  # noqa: E402

from inspector.core import attribute, capture, load_input, load_model  # noqa: E402
from inspector.core.session.file import Session  # noqa: E402

sys.path.insert(0, str(Path(__file__).parents[1] / "unit" / "sources"))
from clip_folders import clip_folder  # noqa: E402

TARGET = 'text:"a dog"|"a cat"'
BAD = {  # the target, and what every command with a --target says
    'text:"a dog': "closing quote is missing",
    "text:": "a prompt is empty",
}


def test_malformed_text_targets_are_refused_before_torch(tmp_path):
    commands = [[command, "--model", "demo", "--input", "sample:star", "--target", target,
                 *(("--method", "saliency", "--out", str(tmp_path / "o.npy")) if command == "attribute" else
                   ("--out", str(tmp_path / "c.npz")))]
                for target in BAD for command in ("attribute", "capture")]
    for answer, (target, said) in zip(answers_in_one_interpreter(commands), [(t, s) for t, s in BAD.items()
                                                                             for _ in range(2)]):
        code, lines, _imported = answer
        assert len(lines) == 1 and said in lines[0], lines
        refused_early(answer, lines[0])
        assert lines[0].startswith(f"error: Target {target!r}")


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    path = tmp_path_factory.mktemp("clip")
    clip_folder(path)
    return path


def test_attribute_explains_the_prompts_as_the_api_does(folder, tmp_path):
    out = tmp_path / "cam.npy"
    done = run_here("attribute", "--model", f"hf:{folder}", "--input", "sample:star", "--method", "gradcam",
                    "--target", TARGET, "--out", str(out), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["target"] == TARGET and report["layer"] == "vision_model.encoder.layers.1.layer_norm1"
    loaded = load_model(f"hf:{folder}")
    x = load_input("sample:star", loaded.preprocess, loaded.input_shape)
    np.testing.assert_array_equal(np.load(out), attribute(loaded, x, "gradcam", TARGET).map)


def test_a_text_target_on_a_model_without_a_text_tower_is_one_line(tmp_path):
    done = run_here("attribute", "--model", "demo", "--input", "sample:star", "--method", "saliency",
                    "--target", "text:a dog",
                    "--out", str(tmp_path / "o.npy"))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: Target text:\"a dog\" needs an image-text model (CLIP or SigLIP from an hf: folder with its text "
        "tower and tokenizer); this model has no text tower."]


def test_capture_replays_a_session_with_a_text_target(folder, tmp_path):
    session = tmp_path / "clip.inspector.json"
    session.write_text(json.dumps(Session(model=f"hf:{folder}", input="sample:star", target=TARGET,
                                          layers=("visual_projection",)).to_dict()))
    done = run_here("capture", "--session", str(session), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    loaded = load_model(f"hf:{folder}")
    x = load_input("sample:star", loaded.preprocess, loaded.input_shape)
    expected = capture(loaded, x, "visual_projection", target=TARGET)
    assert report["target"] == TARGET
    assert report["objective"] == pytest.approx(expected.objective, rel=1e-6)
    assert 0 < expected.objective < 1 and torch.isfinite(torch.tensor(expected.objective))
