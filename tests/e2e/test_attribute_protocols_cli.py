"""Issue 55 items 1 and 2 from the command: `attribute --protocol NAME` and `--metrics road` print the protocol and
every setting with each AUC (text and --json), the numbers those of the API's call with the same settings; ROAD's
seed is said when not given and brings the same numbers back; settings a run would not use are one line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from inspector.cli.dispatch import main
from inspector.core import load_input, load_model
from inspector.core.attribution import attribute
from inspector.core.attribution.scores.faithfulness import scored

DEMO = ["attribute", "--model", "demo", "--input", "sample:star"]


def test_rise2018_and_road_as_json_equal_the_api(tmp_path, capsys):
    code = main([*DEMO, "--method", "saliency", "--metrics", "deletion,insertion,road", "--protocol", "rise2018",
                 "--road-noise", "0", "--road-percentages", "20,60", "--json", "--out", str(tmp_path / "s.npy")])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    report = json.loads(captured.out)
    assert list(report["metrics"]) == ["deletion", "insertion", "road-morf", "road-lerf"]
    model = load_model("demo")
    x = load_input("sample:star", model.preprocess, model.input_shape)
    found = scored(model, x, attribute(model, x, "saliency"), ("deletion", "insertion", "road"), protocol="rise2018",
                   road_noise=0.0, road_percentages=(20, 60))
    for curve in found.curves:
        said = report["metrics"][curve.metric]
        np.testing.assert_allclose(said["scores"], curve.scores, rtol=1e-6, atol=1e-7)
        assert said["protocol"] == ("road" if curve.metric.startswith("road") else "rise2018")
        assert said["settings"] == dict(curve.settings) and said["at"] == pytest.approx(curve.at)
    assert report["metrics"]["deletion"]["settings"]["pixels a step"] == 224
    assert report["metrics"]["road-lerf"]["settings"]["removed %"] == "20, 60"
    assert report["metrics"]["road-morf"]["at"] == [0.2, 0.6]
    lines = captured.err.splitlines()  # with --json the words go to stderr
    assert any(line.startswith("deletion AUC ") and "(protocol rise2018: pixels a step 224; steps 19; deletion to "
               "zeros of the model's input; insertion from the input blurred (Gaussian, kernel 11, sigma 5, zero "
               "padding); probability of class 3; pixels by positive value, highest first)" in line for line in lines)
    assert np.load(tmp_path / "s.npy").shape == (64, 64)


def test_the_default_protocol_is_said_and_roads_seed_brings_its_numbers_back(tmp_path, capsys):
    assert main([*DEMO, "--method", "gradcam", "--metrics", "deletion,road", "--metric-steps", "8",
                 "--road-percentages", "50", "--out", str(tmp_path / "g.npy")]) == 0
    first = capsys.readouterr().out
    assert "(protocol inspector: steps 8; deletion to the baseline; insertion from the baseline; probability of " \
           "class 3;" in first
    seed = int(next(line for line in first.splitlines() if line.startswith("road-morf")).split("; seed ")[1]
               .split(";")[0])
    assert main([*DEMO, "--method", "gradcam", "--metrics", "deletion,road", "--metric-steps", "8",
                 "--road-percentages", "50", "--road-seed", str(seed), "--out", str(tmp_path / "g.npy")]) == 0
    again = capsys.readouterr().out
    aucs = [[line.split(" (")[0] for line in text.splitlines() if " AUC " in line] for text in (first, again)]
    assert aucs[0] == aucs[1] and len(aucs[0]) == 3


@pytest.mark.parametrize("extra, words", [
    (["--metrics", "deletion", "--protocol", "rise2018", "--metric-steps", "10"],
     ("error: The protocol rise2018 fixes its steps (224 pixels a step): leave --metric-steps out, or use "
      "--protocol inspector.")),
    (["--metrics", "road", "--protocol", "rise2018"],
     ("error: --protocol says how deletion and insertion are computed: add deletion or insertion to --metrics, or "
      "leave --protocol out.")),
    (["--metrics", "deletion", "--road-noise", "0.1"],
     "error: --road-noise is for --metrics road: add road to --metrics, or leave --road-noise out."),
    (["--metrics", "deletion", "--protocol", "rise2018", "--baseline", "black"],
     "error: saliency takes no --baseline here: deletion read no baseline under --protocol rise2018."),
    (["--metrics", "road", "--road-percentages", "10,x"],
     "error: ROAD's percentages are numbers from 0 to 100, comma-separated, not '10,x'."),
    (["--metrics", "road", "--road-seed", "-3"],
     "error: --road-seed must be a whole number from 0 to 4294967295, not -3."),
])
def test_settings_a_run_would_not_use_or_cannot_take_are_one_line(tmp_path, capsys, extra, words):
    code = main([*DEMO, "--method", "saliency", *extra, "--out", str(tmp_path / "bad.npy")])
    err = capsys.readouterr().err
    assert code == 2 and err.strip() == words
    assert not (tmp_path / "bad.npy").exists()
