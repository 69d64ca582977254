"""A new attribution method is one module and one row of the method table (issue 39): a toy method registered
here appears in the app's chooser with its option, in the session schema and in Compare all's export (and in
the CLI: tests/e2e/test_method_registration_cli.py), with no other file touched."""

from __future__ import annotations

import json

import numpy as np
import pytest

from inspector.core.attribution.record import Attribution
from inspector.core.records import methods as table


def toy_map(model, x, target, layer, options) -> Attribution:
    """The input's mean over channels times `gain`: a map worked out by hand in the tests."""
    gain = options.get("gain", 2.0)
    return Attribution("toy", np.asarray(x[0]).mean(axis=0) * gain, "no class (toy)", None,
                       details=(("gain", gain),))


@pytest.fixture
def toy():
    row = table.register(table.Method(
        "toy", "toy", "the input's channel mean times a gain", f"{__name__}:toy_map", explains="nothing",
        options=(table.Option("gain", "number", 2.0, "what the mean is multiplied by", low=0.0, high=10.0),),
        compare=True))
    yield row
    table.unregister("toy")


def test_the_app_offers_it_and_compare_all_exports_it(qtbot, toy, tmp_path):
    from inspector.core.session.schema import check_session_data
    from inspector.gui.views.attribution.view import AttributionView

    view = AttributionView()
    qtbot.addWidget(view)
    assert view.method.findText("toy") >= 0
    view.method.setCurrentText("toy")
    assert not view.options.widgets["gain"].isHidden() and view.options.values("toy") == {"gain": 2.0, "metrics": ()}
    assert not view.target.isEnabled()  # it explains no class, as its row says
    assert "toy" in view._compared()
    check_session_data({"format": "network-inspector-session", "attribution": {"method": "toy"}}, "a session")  # the schema knows it
    found = toy_map(None, np.ones((1, 3, 4, 4), np.float32) * np.arange(3)[None, :, None, None], None, None,
                    {"gain": 2.0})
    view.comparison.start(("toy",), None)
    view.comparison.add("toy", found)
    written = view.comparison.export(tmp_path / "methods")
    with np.load(written[0]) as maps:
        np.testing.assert_array_equal(maps["toy"], np.full((4, 4), 2.0))  # mean of 0, 1, 2 is 1, times 2
    assert json.loads(written[1].read_text())["methods"]["toy"]["settings"] == {"gain": 2.0}
