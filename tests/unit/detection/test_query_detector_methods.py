"""The methods on query-based detectors from `hf:` folders (tiny DETR, RT-DETR and D-FINE, random weights): D-RISE
on each, Each box, a box given in pixels picking its query, Grad-CAM at the backbone, and a box index past the
last query refused in one line before the model runs."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from query_detectors import QUERIES, reference, save_detector

from inspector.core import SpecError, load_model
from inspector.core.attribution import attribute
from inspector.core.attribution.per_box import each_box
from inspector.core.detection.thresholds import set_score_threshold
from inspector.core.records.detections import box_target

FAMILIES = ("detr", "rt_detr", "d_fine")


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return tmp_path_factory.mktemp("query-detectors")


@pytest.fixture(scope="module")
def loaded(root):
    models = {}
    for family in FAMILIES:
        save_detector(family, root / family)
        models[family] = load_model(f"hf:{root / family}")
        set_score_threshold(models[family].module, 0.0)
    return models


def _image():
    return torch.rand(1, 3, 40, 60, generator=torch.Generator().manual_seed(5))


@pytest.mark.parametrize("family", FAMILIES)
def test_drise_explains_a_query_of_each_family(loaded, family):
    found = attribute(loaded[family], _image(), "drise", "box:1", options={"masks": 6, "seed": 2, "batch": 3})
    assert found.method == "drise" and found.target == "box:1" and found.target_detection == 1
    assert found.map.shape == (40, 60) and found.map.min() == 0.0 and found.map.max() == 1.0
    assert dict(found.details)["masks"] == 6 and len(found.detections) == QUERIES
    # the same seed, the same masks: the same map in one batch of six
    again = attribute(loaded[family], _image(), "drise", "box:1", options={"masks": 6, "seed": 2, "batch": 6})
    np.testing.assert_allclose(again.cam, found.cam, rtol=1e-5, atol=1e-7)


def test_a_box_in_pixels_picks_the_query_that_drew_it(loaded):
    detr, x = loaded["detr"], _image()
    by_rank = attribute(detr, x, "saliency", "box:3")
    target = box_target(by_rank.detections[3])  # box:X0,Y0,X1,Y1@CLASS, as a click in the app writes it
    by_box = attribute(detr, x, "saliency", target)
    assert by_box.target_detection == 3
    np.testing.assert_array_equal(by_box.map, by_rank.map)


def test_each_box_explains_every_box_shown(loaded):
    maps = each_box(loaded["rt_detr"], _image(), "saliency", min_score=0.0, most=3)
    assert [m.target_detection for m in maps] == [0, 1, 2]
    assert all(m.map.shape == (40, 60) and m.map.max() > 0 for m in maps)
    assert not np.allclose(maps[0].map, maps[1].map)


def test_gradcam_of_a_query_looks_at_the_backbones_last_map(loaded):
    found = attribute(loaded["detr"], _image(), "gradcam", "box:0")
    assert found.layer == "model.backbone.model.encoder.stages.1" and found.map.shape == (40, 60)
    assert np.isfinite(found.map).all() and found.map.max() > 0


@pytest.mark.parametrize("method", ["saliency", "drise"])
def test_a_box_past_the_last_query_is_one_line_before_the_model_runs(loaded, method):
    detr = loaded["detr"]
    calls = []
    handle = detr.module.register_forward_pre_hook(lambda *_: calls.append(1))
    try:
        with pytest.raises(SpecError, match=r"^Target box:6: this model keeps at most 6 detection\(s\) .*box:0 to "
                                            r"box:5\.$"):
            attribute(detr, _image(), method, f"box:{QUERIES}")
    finally:
        handle.remove()
    assert calls == []


@pytest.mark.parametrize("family", ["detr", "rt_detr"])  # dense attention; deformable attention (RT-DETR's decoder)
def test_every_other_method_that_explains_a_box_runs_on_a_query(loaded, family):
    for method, options in (("guided", None), ("guided-gradcam", None), ("ig", {"steps": 3}),
                            ("smoothgrad", {"samples": 2, "noise": 0.01, "seed": 0}),
                            ("occlusion", {"window": 20, "stride": 20}), ("eigencam", None)):
        found = attribute(loaded[family], _image(), method, "box:1", options=options)
        assert found.map.shape[-2:] == (40, 60) and np.isfinite(found.map).all() and np.abs(found.map).max() > 0
        if method != "eigencam":  # class-agnostic: it explains no box
            assert found.target == "box:1" and found.target_detection == 1, method


BOX_METHODS = "saliency, gradcam, guided, guided-gradcam, ig, smoothgrad, occlusion, eigencam, drise"


@pytest.mark.parametrize("method", ["rollout", "legrad"])  # Chefer on DETR's decoder: issue 56 item 3
@pytest.mark.parametrize("family, listed", [
    ("detr", "saliency, gradcam, guided, guided-gradcam, chefer, ig, smoothgrad, occlusion, eigencam, drise"),
    ("rt_detr", BOX_METHODS),  # deformable attention: Chefer refuses it too, so it is not offered
])
def test_the_attention_methods_say_they_explain_no_box(loaded, method, family, listed):
    with pytest.raises(SpecError) as refused:
        attribute(loaded[family], _image(), method, "box:0")
    assert str(refused.value) == f"{method} does not explain detections yet; for a box use {listed}."


def test_the_command_lists_transformers_detections_and_refuses_a_box_past_the_queries(loaded, root, tmp_path, capsys):
    import json

    from PIL import Image

    from inspector.cli import main

    image = tmp_path / "image.png"
    Image.fromarray((np.random.default_rng(0).random((40, 60, 3)) * 255).astype(np.uint8)).save(image)
    model = ["--model", f"hf:{root / 'rt_detr'}", "--input", str(image), "--score-threshold", "0"]
    assert main(["attribute", *model, "--method", "saliency", "--target", "box:2", "--json",
                 "--out", str(tmp_path / "map.npy")]) == 0
    said = json.loads(capsys.readouterr().out)
    x = torch.from_numpy(np.asarray(Image.open(image), np.float32) / 255).permute(2, 0, 1)[None]
    theirs = reference("rt_detr", root / "rt_detr", x, 0.0)  # already best first: a top-k
    assert said["target_detection"] == 2 and len(said["detections"]) == QUERIES
    assert [d["score"] for d in said["detections"]] == pytest.approx(theirs["scores"].tolist(), rel=1e-5)
    assert [d["box"] for d in said["detections"]] == [pytest.approx(b, rel=1e-5, abs=1e-4)
                                                      for b in theirs["boxes"].tolist()]
    assert main(["attribute", *model, "--method", "saliency", "--target", f"box:{QUERIES}", "--out",
                 str(tmp_path / "none.npy")]) == 2
    assert capsys.readouterr().err.strip() == (f"error: Target box:{QUERIES}: this model keeps at most {QUERIES} "
                                               f"detection(s) (its queries' answers), box:0 to box:{QUERIES - 1}.")
