"""`network-inspector attribute` gives the same maps as the Python API: run as a program (Grad-CAM of resnet18) and
by `main` in this process (the small models' runs, which need only the exit code, the output and the files)."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
from cli_here import run_here
from PIL import Image

from inspector.cli import main
from inspector.core import load_input, load_model
from inspector.core.attribution import attribute

MODELS = textwrap.dedent("""
    import torch
    from torch import nn

    class Tiny(nn.Module):
        input_shape = (1, 3, 32, 32)

        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
            self.head = nn.Linear(8, 5)

        def forward(self, x):
            x = self.conv2(self.relu(self.conv1(x)))
            return self.head(torch.relu(x).mean((2, 3)))

    class Gelu(Tiny):
        def __init__(self):
            super().__init__()
            self.act = nn.GELU()

        def forward(self, x):
            x = self.act(self.conv2(self.relu(self.conv1(x))))
            return self.head(x.mean((2, 3)))

    class Mlp(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Flatten(), nn.Linear(48, 8), nn.ReLU(), nn.Linear(8, 3))

        def forward(self, x):
            return self.body(x)
""")


def start(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "inspector.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finish(proc) -> tuple[int, str, str]:
    """A started program's (exit code, stdout, stderr), or a run in this process's, run now."""
    if not isinstance(proc, subprocess.Popen):
        done = proc()
        return done.returncode, done.stdout, done.stderr
    out, err = proc.communicate(timeout=180)
    return proc.returncode, out, err


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The program run starts at once (it pays for importing torch), the others run here when asked for."""
    folder = tmp_path_factory.mktemp("attribute")
    (folder / "models.py").write_text(MODELS)
    rng = np.random.default_rng(0)
    Image.fromarray(rng.integers(0, 255, (40, 48, 3), dtype=np.uint8)).save(folder / "picture.png")
    np.save(folder / "x.npy", rng.standard_normal((3, 112, 112)).astype(np.float32))
    np.save(folder / "small.npy", rng.standard_normal((1, 3, 4, 4)).astype(np.float32))
    torch.manual_seed(0)
    resnet = load_model("resnet18")
    torch.save(resnet.module.state_dict(), folder / "resnet18.pt")
    models = folder / "models.py"
    procs = {
        "resnet": start("attribute", "--method", "gradcam", "--model", "resnet18", "--weights",
                        str(folder / "resnet18.pt"), "--input", str(folder / "x.npy"), "--target", "7",
                        "--out", str(folder / "cam.npy")),
        "tiny": functools.partial(run_here, "attribute", "--method", "guided", "--model", f"{models}:Tiny",
                                  "--input", str(folder / "picture.png"), "--out", str(folder / "guided.npy")),
        "gelu": functools.partial(run_here, "attribute", "--method", "guided", "--model", f"{models}:Gelu",
                                  "--input", str(folder / "picture.png"), "--out", str(folder / "gelu.npy")),
        "mlp": functools.partial(run_here, "attribute", "--method", "gradcam", "--model", f"{models}:Mlp",
                                 "--input", str(folder / "small.npy"), "--out", str(folder / "no.npy")),
    }
    try:
        yield folder, procs, resnet
    finally:
        for proc in procs.values():
            if not isinstance(proc, subprocess.Popen):
                continue
            if proc.poll() is None:
                proc.kill()
            proc.communicate()


def test_gradcam_resnet18_npy_matches_api(runs):
    folder, procs, model = runs
    code, out, err = finish(procs["resnet"])
    assert code == 0, err
    assert "gradcam for class 7" in out and "at layer4 -> " in out
    x = load_input(folder / "x.npy", model.preprocess, model.input_shape)
    np.testing.assert_allclose(np.load(folder / "cam.npy"), attribute(model, x, "gradcam", 7).map, atol=1e-6)


def test_guided_file_model_npy_matches_api(runs):
    folder, procs, _ = runs
    code, _, err = finish(procs["tiny"])
    assert code == 0, err
    assert "not applied (functional call): (model) (Tiny) calls relu()" in err
    model = load_model(f"{folder / 'models.py'}:Tiny")
    x = load_input(folder / "picture.png", model.preprocess, model.input_shape)
    found = attribute(model, x, "guided")
    assert found.covered == ("relu",) and np.load(folder / "guided.npy").shape == (3, 32, 32)
    np.testing.assert_allclose(np.load(folder / "guided.npy"), found.map, rtol=1e-5, atol=1e-7)


def test_guided_says_where_its_rule_is_an_approximation(runs):
    """Issue 25, item 9: exact at nn.ReLU only; at the GELU the CLI says it approximated, and how."""
    folder, procs, _ = runs
    code, out, err = finish(procs["gelu"])
    assert code == 0, err
    model = load_model(f"{folder / 'models.py'}:Gelu")
    found = attribute(model, load_input(folder / "picture.png", model.preprocess, model.input_shape), "guided")
    assert found.covered == ("relu",) and found.approximated == ("act",) and found.approximated_types == ("GELU",)
    assert out.splitlines()[-1] == (
        "note: guided rule approximated at 1 non-ReLU activation(s) (GELU): their own backward is kept and only "
        "positive gradients pass; exact at nn.ReLU only (as captum's GuidedBackprop, which changes nn.ReLU alone).")
    tiny = load_model(f"{folder / 'models.py'}:Tiny")  # all ReLU: exact, nothing to say
    assert attribute(tiny, load_input(folder / "picture.png", tiny.preprocess, tiny.input_shape),
                     "guided").approximation == ""


def test_gradcam_without_conv_is_one_line_error(runs):
    folder, procs, _ = runs
    code, _, err = finish(procs["mlp"])
    assert code != 0
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: Grad-CAM needs a conv-like layer"), err
    assert "Traceback" not in err and not (folder / "no.npy").exists()


def test_png_overlay_and_capture_manifest(runs, capsys):
    folder = runs[0]
    png = folder / "heat.png"
    source = f"{folder / 'models.py'}:Tiny"
    assert main(["attribute", "--method", "guided-gradcam", "--model", source, "--input",
                 str(folder / "picture.png"), "--out", str(png)]) == 0
    with Image.open(png) as image:
        assert image.size == (256, 256) and image.mode == "RGB"  # a 32 x 32 map in 8 x 8 blocks: 256 a side
    assert main(["attribute", "--method", "saliency", "--model", source, "--input",
                 str(folder / "picture.png"), "--out", str(folder / "heat.txt")]) == 2
    assert "cannot write .txt; use .npy, .png, .jpg" in capsys.readouterr().err  # refused before the run
    np.save(folder / "toy_in.npy", np.ones((1, 3), np.float32))
    out = folder / "toy.npz"
    assert main(["capture", "--model", "inspector.demo.toy:ToyMLP", "--input", str(folder / "toy_in.npy"),
                 "--layers", "fc1", "--target", "output", "--out", str(out), "--manifest"]) == 0
    manifest = json.loads((folder / "toy.json").read_text())
    assert manifest["keys"]["fc1:output"] == [1, 4] and manifest["model"] == "inspector.demo.toy:ToyMLP"


def test_integrated_gradients_from_the_command_say_their_completeness_gap(runs, capsys):
    """Issue 26, first step: `attribute --method ig --steps N --quadrature Q` writes the API's map and says
    how complete it is."""
    folder = runs[0]
    out = folder / "ig.npy"
    assert main(["attribute", "--method", "ig", "--steps", "8", "--quadrature", "riemann_middle", "--batch", "3",
                 "--model", f"{folder / 'models.py'}:Tiny", "--input", str(folder / "picture.png"), "--target", "2",
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    model = load_model(f"{folder / 'models.py'}:Tiny")
    x = load_input(folder / "picture.png", model.preprocess, model.input_shape)
    found = attribute(model, x, "ig", 2, options={"steps": 8, "quadrature": "riemann_middle"})
    np.testing.assert_allclose(np.load(out), found.map, rtol=1e-5, atol=1e-7)
    assert f"completeness gap {found.completeness_gap:.4g}: sum of the map" in printed
    assert "(8 steps, riemann_middle)" in printed and "ig for class 2" in printed


def test_smoothgrad_from_the_command_repeats_with_its_noise_seed(runs, capsys):
    folder = runs[0]
    out = folder / "smooth.npy"
    args = ["attribute", "--method", "smoothgrad", "--smooth", "vargrad", "--samples", "4", "--noise", "0.1",
            "--noise-seed", "9", "--model", f"{folder / 'models.py'}:Tiny", "--input", str(folder / "picture.png"),
            "--target", "1", "--out", str(out)]
    assert main(args) == 0
    printed = capsys.readouterr().out
    model = load_model(f"{folder / 'models.py'}:Tiny")
    x = load_input(folder / "picture.png", model.preprocess, model.input_shape)
    found = attribute(model, x, "smoothgrad", 1, options={"kind": "vargrad", "samples": 4, "noise": 0.1, "seed": 9})
    np.testing.assert_allclose(np.load(out), found.map, rtol=1e-5, atol=1e-12)
    assert "vargrad of saliency: 4 noisy copies, noise sigma" in printed and "noise seed 9" in printed


def test_occlusion_with_a_baseline_and_metrics_as_json(runs, capsys):
    """Issue 26: `attribute --method occlusion --window --stride --baseline --metrics --json` writes the API's
    map and prints one JSON object: method, target, settings, baseline and both curves, recomputable."""
    from inspector.core.attribution.scores.baselines import make_baseline
    from inspector.core.attribution.scores.faithfulness import faithfulness

    folder = runs[0]
    out = folder / "occ.npy"
    assert main(["attribute", "--method", "occlusion", "--window", "8", "--stride", "4", "--baseline", "white",
                 "--metrics", "deletion,insertion", "--metric-steps", "8", "--json",
                 "--model", f"{folder / 'models.py'}:Tiny", "--input", str(folder / "picture.png"), "--target", "3",
                 "--out", str(out)]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)  # stdout is the JSON alone; the sentences went to stderr
    assert "occlusion for class 3" in captured.err and "deletion AUC" in captured.err
    model = load_model(f"{folder / 'models.py'}:Tiny")
    x = load_input(folder / "picture.png", model.preprocess, model.input_shape)
    white = make_baseline("white", x, model.preprocess).tensor
    found = attribute(model, x, "occlusion", 3, options={"window": 8, "stride": 4, "baseline": white})
    np.testing.assert_allclose(np.load(out), found.map, rtol=1e-5, atol=1e-7)
    assert report["method"] == "occlusion" and report["target_index"] == 3 and report["out"] == str(out)
    assert report["settings"] == {"window": 8, "stride": 4, "windows": 49, "batch": 8, "baseline": "white"}
    assert report["baseline"].startswith("white: pixels 1") and report["completeness_gap"] is None
    curves = faithfulness(model, x, found.map, 3, white, steps=8)
    for metric in ("deletion", "insertion"):
        assert report["metrics"][metric]["auc"] == pytest.approx(curves[metric].auc, rel=1e-6)
        assert len(report["metrics"][metric]["scores"]) == 9


def test_sign_is_asked_for_said_and_scored_by(runs, capsys):
    """`--sign negative`: the metrics remove the most negative pixels first (the picture written), and the sign is
    in the sentence and the JSON; without it occlusion is drawn and scored signed (issue 39)."""
    from inspector.core.attribution.scores.faithfulness import faithfulness

    folder = runs[0]
    common = ["attribute", "--method", "occlusion", "--window", "8", "--stride", "4", "--metrics", "deletion",
              "--metric-steps", "8", "--json", "--model", f"{folder / 'models.py'}:Tiny", "--input",
              str(folder / "picture.png"), "--target", "3"]
    assert main([*common, "--out", str(folder / "neg.png"), "--sign", "negative"]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert report["sign"] == "negative" and ", negative values -> " in captured.err
    assert report["metrics"]["deletion"]["order"] == "pixels by negative value, most negative first"
    model = load_model(f"{folder / 'models.py'}:Tiny")
    x = load_input(folder / "picture.png", model.preprocess, model.input_shape)
    found = attribute(model, x, "occlusion", 3, options={"window": 8, "stride": 4})
    by_hand = np.maximum(-found.map.sum(axis=0), 0.0)  # the negative picture, by hand, ranked highest first
    curves = faithfulness(model, x, by_hand, 3, torch.as_tensor(found.baseline)[None], steps=8, sign="signed")
    assert report["metrics"]["deletion"]["auc"] == pytest.approx(curves["deletion"].auc, rel=1e-6)
    assert main([*common, "--out", str(folder / "default.npy")]) == 0
    assert json.loads(capsys.readouterr().out)["sign"] == "signed"


@pytest.mark.parametrize("extra, words", [
    (["--method", "ig", "--steps", "0"], "--steps must be at least 1"),
    (["--method", "smoothgrad", "--noise", "-0.1"], "--noise is a fraction"),
    (["--method", "occlusion", "--window", "0"], "--window must be at least 1"),
    (["--method", "occlusion", "--window", "64"], "larger than the input"),
    (["--method", "ig", "--baseline", "nowhere.png"], "does not load as a file"),
    (["--method", "saliency", "--metrics", "deletion,roar"], "--metrics takes deletion, insertion, road"),
])
def test_bad_attribution_arguments_are_one_line_errors(runs, capsys, extra, words):
    folder = runs[0]
    code = main(["attribute", *extra, "--model", f"{folder / 'models.py'}:Tiny", "--input",
                 str(folder / "picture.png"), "--out", str(folder / "bad.npy")])
    err = capsys.readouterr().err
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1, err
    assert not (folder / "bad.npy").exists()
