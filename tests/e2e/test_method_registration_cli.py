"""A toy method registered in the method table appears in the CLI's help and runs there (issue 39; the app's
side: tests/gui/test_method_registration.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from inspector.core.attribution.record import Attribution
from inspector.core.records import methods as table


def toy_map(model, x, target, layer, options) -> Attribution:
    """The input's mean over channels times `gain`: a map worked out by hand in the test."""
    gain = options.get("gain", 2.0)
    return Attribution("toy", np.asarray(x[0]).mean(axis=0) * gain, "no class (toy)", None, details=(("gain", gain),))


@pytest.fixture
def toy():
    row = table.register(table.Method(
        "toy", "toy", "the input's channel mean times a gain", f"{__name__}:toy_map", explains="nothing",
        options=(table.Option("gain", "number", 2.0, "what the mean is multiplied by", low=0.0, high=10.0),)))
    yield row
    table.unregister("toy")


def test_the_cli_offers_and_runs_it(toy, tmp_path, capsys):
    from inspector.cli import main
    from inspector.core import load_input, load_model

    with pytest.raises(SystemExit):
        main(["attribute", "--help"])
    helped = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    assert "toy: the input's channel mean times a gain" in helped and "--gain" in helped
    out = tmp_path / "toy.npy"
    assert main(["attribute", "--model", "demo", "--input", "sample:star", "--method", "toy", "--gain", "3",
                 "--out", str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    model = load_model("demo")
    x = load_input("sample:star", model.preprocess, model.input_shape)
    np.testing.assert_allclose(np.load(out), x[0].numpy().mean(axis=0) * 3, rtol=1e-6)
    assert report["method"] == "toy" and report["settings"] == {"gain": 3.0} and report["sign"] == "positive"
