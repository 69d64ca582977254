"""The headless command in a subprocess (layers, capture as .npz and JSON, a clean one-line error, a traceback with
--debug), and in this process where a case needs only its exit code and output (the other errors, seeds)."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from cli_here import run_here
from PIL import Image

TOY_PY = textwrap.dedent(
    """
    import torch
    from torch import nn

    class ToyMLP(nn.Module):
        # the hooks tutorial's fc1 -> relu1 -> fc2 with fixed weights
        input_shape = (1, 3)

        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(3, 4)
            self.relu1 = nn.ReLU()
            self.fc2 = nn.Linear(4, 1)
            with torch.no_grad():
                self.fc1.weight.copy_(torch.tensor(
                    [[1.0, 2.0, 3.0], [-4.0, -5.0, -6.0], [7.0, 8.0, 9.0], [-10.0, -11.0, -12.0]]))
                self.fc1.bias.copy_(torch.tensor([1.0, 2.0, 3.0, 4.0]))
                self.fc2.weight.copy_(torch.tensor([[1.0, 2.0, 3.0, 4.0]]))
                self.fc2.bias.copy_(torch.tensor([1.0]))

        def forward(self, x):
            return self.fc2(self.relu1(self.fc1(x)))

    class Twice(nn.Module):
        # one ReLU called twice per forward
        input_shape = (2, 5)

        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(5, 6)
            self.act = nn.ReLU()
            self.head = nn.Linear(6, 3)

        def forward(self, x):
            return self.act(self.head(self.act(self.fc(x))))

    class RandomNet(nn.Module):
        # default (random) initialisation: what --seed makes repeatable
        input_shape = (1, 3)

        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(3, 16)
            self.fc2 = nn.Linear(16, 2)

        def forward(self, x):
            return self.fc2(self.fc1(x).relu())
    """
)


def cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, OMP_NUM_THREADS="1")  # two busy cores: one thread per process
    return subprocess.run([sys.executable, "-m", "inspector", *args], capture_output=True, text=True,
                          timeout=300, env=env)


IN_A_PROCESS = ("bad layer",)  # the error case also run as a program; the others run in this process
ERRORS = {
    "bad layer": (["--layers", "fc9"], "No layer named 'fc9'"),
    "bad edit": (["--edit", "relu1:grad_input=scale("], "Cannot read 'scale('"),
    "unknown model": (["--model", "resnet81"], "Unknown model 'resnet81'"),
    "missing input": (["--input", "MISSING"], "Input file not found"),
    "unknown device": (["--device", "tpu"], "'tpu'"),
    "negative seed": (["--seed", "-1"], "--seed must be a whole number from 0 to 4294967295, not '-1'."),
    "text seed": (["--seed", "abc"], "--seed must be a whole number from 0 to 4294967295, not 'abc'."),
    "seed for the demo": (["--model", "demo", "--seed", "3"], "A seed is for random weights"),
}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli")
    model = folder / "toy_model.py"
    model.write_text(TOY_PY)
    ones = folder / "ones.npy"
    np.save(ones, np.ones((1, 3), np.float32))
    picture = folder / "cat.png"
    rng = np.random.default_rng(0)
    Image.fromarray(rng.integers(0, 255, (200, 300, 3), dtype=np.uint8)).save(picture)
    return folder, model, ones, picture


@pytest.fixture(scope="module")
def runs(files):
    """Every command of this module: those that are run as a program started together (each pays torch's import
    time once), the others run in this process when a test asks for them."""
    folder, model, ones, picture = files
    jobs = {
        "layers": ["layers", "--model", f"{model}:Twice", "--json"],
        "toy": ["capture", "--model", f"{model}:ToyMLP", "--input", str(ones), "--layers", "all",
                "--sites", "output,grad_input,params", "--edit", "relu1:grad_input=scale(2)",
                "--target", "output", "--input-grad", "--out", str(folder / "toy.npz")],
        "resnet18": ["capture", "--model", "resnet18", "--input", str(picture), "--layers", "layer4.1.conv2",
                     "--json", "--out", str(folder / "r18.npz")],
        "debug": ["--debug", "capture", "--model", f"{model}:ToyMLP", "--input", str(ones), "--layers", "fc9"],
    }
    seeded = ["capture", "--model", f"{model}:RandomNet", "--input", str(ones), "--layers", "all",
              "--sites", "output", "--target", "sum"]
    session = folder / "seeded.inspector.json"
    session.write_text(json.dumps({"format": "network-inspector-session", "version": 1,
                                   "model": {"source": f"{model}:RandomNet", "weights": None, "seed": 5},
                                   "input": str(ones), "target": "sum", "layers": ["fc1", "fc2"],
                                   "sites": ["output"]}))
    jobs["seed 5"] = seeded + ["--seed", "5", "--out", str(folder / "s5.npz"), "--manifest", "--json"]
    here = {  # in this process: "seed 5 again" gives the weights another process built
        "seed 5 again": seeded + ["--seed", "5", "--out", str(folder / "s5b.npz")],
        "seed 6": seeded + ["--seed", "6", "--out", str(folder / "s6.npz")],
        "no seed": seeded + ["--json"],
        "layers seed 9": ["layers", "--model", f"{model}:RandomNet", "--seed", "9"],
        "session seed 5": ["capture", "--session", str(session), "--trust", "--out", str(folder / "sess.npz"),
                           "--manifest"],
    }
    for case, (extra, _) in ERRORS.items():
        args = {"--model": f"{model}:ToyMLP", "--input": str(ones), "--layers": "all"}
        flags = []
        for i in range(0, len(extra), 2):
            value = str(folder / "missing.png") if extra[i + 1] == "MISSING" else extra[i + 1]
            if extra[i] in args:
                args[extra[i]] = value
            else:
                flags += [extra[i], value]
        argv = ["capture"] + [x for pair in args.items() for x in pair] + flags
        (jobs if case in IN_A_PROCESS else here)[case] = argv
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {name: pool.submit(cli, *argv) for name, argv in jobs.items()}
        yield {**{name: future.result for name, future in futures.items()},
               **{name: functools.partial(run_here, *argv) for name, argv in here.items()}}


def test_layers_json(runs):
    done = runs["layers"]()
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    by_path = {row["path"]: row for row in rows}
    assert [row["path"] for row in rows] == ["", "fc", "act", "head"]
    assert by_path[""]["type"] == "Twice" and by_path[""]["parameters"] == 5 * 6 + 6 + 6 * 3 + 3
    assert by_path["fc"] == {"path": "fc", "type": "Linear", "parameters": 36, "leaf": True,
                             "output_shapes": [[2, 6]], "calls": 1}
    assert by_path["act"]["calls"] == 2 and by_path["act"]["output_shapes"] == [[2, 6]]
    assert by_path["head"]["output_shapes"] == [[2, 3]] and by_path["head"]["parameters"] == 21
    assert by_path[""]["leaf"] is False and by_path[""]["calls"] == 1


def test_capture_toy_npz_with_edit(files, runs):
    folder = files[0]
    done = runs["toy"]()
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    with np.load(folder / "toy.npz") as npz:
        got = {k: npz[k] for k in npz.files}
    expected = {
        "input": [[1, 1, 1]],
        "output": [[89]],
        "fc1:output": [[7, -13, 27, -29]],
        "relu1:output": [[7, 0, 27, 0]],
        "fc2:output": [[89]],
        # d out / d relu1 = fc2.weight = [1, 2, 3, 4]; through the ReLU [1, 0, 3, 0]; the edit doubles it
        "relu1:grad_input": [[2, 0, 6, 0]],
        "fc2:grad_input": [[1, 2, 3, 4]],
        "fc1:grad_input": [[44, 52, 60]],  # fc1.weight^T @ [2, 0, 6, 0]
        "fc1.bias:grad": [2, 0, 6, 0],
        "fc1.weight:grad": [[2, 2, 2], [0, 0, 0], [6, 6, 6], [0, 0, 0]],
        "fc2.weight:grad": [[7, 0, 27, 0]],
        "fc2.bias:grad": [1],
        "input:grad": [[44, 52, 60]],
    }
    assert sorted(got) == sorted(expected)
    for key, value in expected.items():
        np.testing.assert_allclose(got[key], np.array(value, np.float32), err_msg=key)
    assert "captures, target output" in done.stdout


def test_capture_resnet18_json(files, runs):
    import torchvision

    folder = files[0]
    done = runs["resnet18"]()
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert sorted(summary["captures"]) == ["layer4.1.conv2:grad_output", "layer4.1.conv2:output"]
    stats = summary["captures"]["layer4.1.conv2:output"]
    assert stats["shape"] == [1, 512, 7, 7] and stats["dtype"] == "float32"
    with np.load(folder / "r18.npz") as npz:
        array = npz["layer4.1.conv2:output"].astype(np.float64)
        logits = npz["output"][0].astype(np.float64)
    # the statistics describe the captured array
    assert stats["mean"] == pytest.approx(array.mean(), rel=1e-4, abs=1e-6)
    assert stats["std"] == pytest.approx(array.std(), rel=1e-4)
    assert stats["min"] == pytest.approx(array.min()) and stats["max"] == pytest.approx(array.max())
    assert stats["l2"] == pytest.approx(np.sqrt((array ** 2).sum()), rel=1e-4)
    # five predictions with ImageNet labels, matching the logits written to the .npz
    categories = torchvision.models.ResNet18_Weights.DEFAULT.meta["categories"]
    predictions = summary["predictions"]
    assert len(predictions) == 5
    probs = np.exp(logits - logits.max())
    probs /= probs.sum()
    top = np.argsort(-logits)[:5]
    assert [p["index"] for p in predictions] == top.tolist()
    for p in predictions:
        assert p["label"] == categories[p["index"]]
        assert p["probability"] == pytest.approx(probs[p["index"]], rel=1e-4)
        assert p["logit"] == pytest.approx(logits[p["index"]], rel=1e-5)
    assert summary["target"] == "top1" and summary["target_index"] == predictions[0]["index"]
    assert summary["objective"] == pytest.approx(predictions[0]["logit"], rel=1e-5)


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors_are_one_clean_line(runs, case):
    done = runs[case]()
    message = ERRORS[case][1]
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: ") and message in lines[0]
    assert done.stdout == ""


def test_debug_shows_traceback(runs):
    done = runs["debug"]()
    assert done.returncode != 0
    assert "Traceback (most recent call last)" in done.stderr
    assert "SpecError: No layer named 'fc9'" in done.stderr


def _arrays(path) -> dict[str, np.ndarray]:
    with np.load(path) as npz:
        return {k: npz[k] for k in npz.files}


def test_same_seed_gives_the_same_weights_in_the_cli_and_in_python(files, runs):
    import torch

    from inspector.core import load_model

    folder, model = files[0], files[1]
    done = runs["seed 5"]()
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["seed"] == 5 and summary["model"] == f"{model}:RandomNet" and summary["weights"] == "as built"
    manifest = json.loads((folder / "s5.json").read_text())
    assert manifest["seed"] == 5 and manifest["model"] == f"{model}:RandomNet"
    again = runs["seed 5 again"]()
    assert again.returncode == 0, again.stderr
    assert "weights as the factory made them, under seed 5 (--seed 5 makes them again)" in again.stdout
    a, b = _arrays(folder / "s5.npz"), _arrays(folder / "s5b.npz")
    assert sorted(a) == ["fc1:output", "fc2:output", "input", "output"]
    for key in a:
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)
    # the very weights load_model builds under seed 5 in this process
    loaded = load_model(f"{model}:RandomNet", seed=5)
    with torch.no_grad():
        expected = loaded.module(torch.ones(1, 3)).numpy()
    np.testing.assert_array_equal(a["output"], expected)
    other = runs["seed 6"]()
    assert other.returncode == 0, other.stderr
    assert not np.array_equal(_arrays(folder / "s6.npz")["fc1:output"], a["fc1:output"])


def test_without_seed_the_picked_seed_is_reported_and_repeats(files, runs):
    import torch

    from inspector.core import load_model

    done = runs["no seed"]()
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    seed = summary["seed"]
    assert isinstance(seed, int) and 0 <= seed < 2**31
    loaded = load_model(f"{files[1]}:RandomNet", seed=seed)
    with torch.no_grad():
        logits = loaded.module(torch.ones(1, 3))
    assert summary["objective"] == pytest.approx(float(logits.sum()), rel=1e-6)


def test_session_seed_replays_the_same_weights(files, runs):
    folder = files[0]
    assert runs["seed 5"]().returncode == 0  # s5.npz written
    done = runs["session seed 5"]()
    assert done.returncode == 0, done.stderr
    assert json.loads((folder / "sess.json").read_text())["seed"] == 5
    replay, direct = _arrays(folder / "sess.npz"), _arrays(folder / "s5.npz")
    for key in ("fc1:output", "fc2:output", "output"):
        np.testing.assert_array_equal(replay[key], direct[key], err_msg=key)


def test_layers_reports_the_seed(runs):
    done = runs["layers seed 9"]()
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[-1] == "weights as the factory made them, under seed 9 (--seed 9 makes them again)"
    assert lines[0].split() == ["path", "type", "params", "calls", "output"] and "fc1" in done.stdout
