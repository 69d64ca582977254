"""A map kept in a session file: every array and number of the Attribution back as it was (base64 .npy inside
the JSON, read without pickle), a detector's boxes too, and a damaged one said in one line on loading."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from inspector.core import SpecError, load_model
from inspector.core.attribution import attribute
from inspector.core.attribution.scores.faithfulness import scored
from inspector.core.session.file import Session, load_session, save_session
from inspector.core.session.stored import attribution_of, stored_of


def _same(a, b):
    np.testing.assert_array_equal(a.map, b.map)
    assert a.map.dtype == b.map.dtype and a.map.shape == b.map.shape
    for field in ("method", "target", "target_index", "layer", "completeness_gap", "notes", "warnings",
                  "target_detection", "detections"):
        assert getattr(a, field) == getattr(b, field), field
    assert [(c.metric, c.auc, c.score_of) for c in a.curves] == [(c.metric, c.auc, c.score_of) for c in b.curves]
    for c, d in zip(a.curves, b.curves):
        np.testing.assert_array_equal(c.scores, d.scores)
    assert (a.baseline is None) == (b.baseline is None)
    if a.baseline is not None:
        np.testing.assert_array_equal(a.baseline, b.baseline)


def test_an_integrated_gradients_map_with_its_scores_comes_back_from_the_session_file(tmp_path):
    loaded = load_model("demo")
    x = torch.rand(1, *loaded.input_shape[1:], generator=torch.Generator().manual_seed(0))
    found = attribute(loaded, x, "ig", 2, options={"steps": 4, "baseline": "blur"})
    found = scored(loaded, x, found, steps=4)
    path = save_session(Session(attribution={"method": "ig", "stored": stored_of(found)}), tmp_path / "s.inspector.json")
    back = attribution_of(load_session(path).attribution["stored"])
    _same(found, back)
    assert dict(back.details)["baseline"] == "blur" and back.completeness_gap is not None


def test_a_detectors_map_keeps_its_boxes():
    sys.path.insert(0, str(Path(__file__).parents[1] / "detection"))
    from toy_detector import ToyDetector

    x = torch.rand(1, 3, 32, 32, generator=torch.Generator().manual_seed(1))
    found = attribute(ToyDetector().eval(), x, "saliency", "box:1")
    back = attribution_of(json.loads(json.dumps(stored_of(found))))
    _same(found, back)
    assert back.target_detection == 1 and len(back.detections) == 3


def test_a_damaged_stored_map_is_said_on_loading(tmp_path):
    path = tmp_path / "bad.inspector.json"
    data = Session(attribution={"method": "saliency"}).to_dict()
    data["attribution"]["stored"] = {"method": "saliency", "map": "not base64!"}
    path.write_text(json.dumps(data))
    with pytest.raises(SpecError, match="bad.inspector.json: the stored map is not base64 text"):
        load_session(path)
    import base64
    import io

    pickled = io.BytesIO()  # an array whose reading would unpickle: refused, never run
    np.save(pickled, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    data["attribution"]["stored"]["map"] = base64.b64encode(pickled.getvalue()).decode()
    path.write_text(json.dumps(data))
    with pytest.raises(SpecError, match="the stored map holds object values; a map holds floats"):
        load_session(path)
    data["attribution"]["stored"] = {"method": "saliency"}
    path.write_text(json.dumps(data))
    with pytest.raises(SpecError, match="attribution.stored 'map' is a required property"):
        load_session(path)


def test_the_sign_is_kept_and_a_wrong_one_is_refused():
    from inspector.core.attribution.record import Attribution
    from inspector.core.common.errors import SpecError
    from inspector.core.session.stored import attribution_of, stored_of

    found = Attribution("ig", np.arange(8, dtype=np.float32).reshape(2, 2, 2) - 4, "class 1", 1, sign="negative")
    back = attribution_of(stored_of(found))
    assert back.sign == "negative" and back.shown_sign == "negative"
    np.testing.assert_array_equal(back.picture, [[4, 2], [0, 0]])  # channel sums [[-4, -2], [0, 2]], negated, >= 0
    old = stored_of(found)
    del old["sign"]  # a session from before the sign: the method's default
    assert attribution_of(old).shown_sign == "signed"
    with pytest.raises(SpecError, match='stored.sign must be one of positive, negative, absolute, signed, None, not "sideways"'):
        attribution_of({**stored_of(found), "sign": "sideways"})
