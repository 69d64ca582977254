"""Issue 54: how a map was made is said once (`records.methods.made_words`), and the command and the app's caption
both say it: "SmoothGrad of X" is one rule, with its noise, seed and the base method's steps where it has them."""

from __future__ import annotations

import re

import pytest

from inspector.cli import main
from inspector.core.records.methods import made_words


def test_the_words_for_each_way_a_map_is_made():
    smooth = {"of": "ig", "samples": 4, "sigma": 0.15, "noise": 0.15, "seed": 7, "steps": 8,
              "quadrature": "gausslegendre"}
    assert made_words("vargrad", smooth) == [
        "vargrad of ig (8 steps, gausslegendre): 4 noisy copies, noise sigma 0.15 (0.15 of the input's range), "
        "noise seed 7"]
    assert made_words("occlusion", {"windows": 225, "window": 8, "stride": 4}) == [
        "225 windows of 8 pixels, stride 4"]
    assert made_words("drise", {"masks": 500, "cell": 16, "probability": 0.5, "seed": 0}) == [
        "500 masks of 16-pixel cells kept with probability 0.5, mask seed 0"]
    assert made_words("saliency", {"baseline is": "zero"}) == []


@pytest.mark.parametrize("argv", [["--method", "smoothgrad", "--samples", "3"],
                                  ["--method", "occlusion", "--window", "16", "--stride", "16"]])
def test_the_command_says_the_same_words(argv, tmp_path, capsys):
    from inspector.core import attribute, load_input, load_model

    code = main(["attribute", "--model", "demo", *argv, "--input", "sample:star", "--out", str(tmp_path / "m.npy")])
    said = capsys.readouterr()
    assert code == 0, said.err
    model = load_model("demo")
    options = {"samples": 3} if "smoothgrad" in argv else {"window": 16, "stride": 16}
    found = attribute(model, load_input("sample:star", model.preprocess), argv[1], options=options)
    expected = made_words(found.method, dict(found.details))
    assert len(expected) == 1
    unseeded = lambda text: re.sub(r"noise seed \d+", "noise seed N", text)  # noqa: E731 - a seed drawn per run
    lines = [unseeded(line) for line in (said.out + said.err).splitlines()]
    assert unseeded(expected[0]) in lines
    assert re.search(r"(noisy copies|windows of)", expected[0])
