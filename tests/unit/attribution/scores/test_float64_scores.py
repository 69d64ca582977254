"""Deletion and insertion score a float64 model: its layer tree's example run (the detector check) takes the
model's own dtype, and the scores are those of the same weights in float32."""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest
import torch

from inspector.core import api, load_model
from inspector.core.attribution import attribute
from inspector.core.attribution.scores.faithfulness import scored
from inspector.core.sources.loaded import tree_of


@pytest.fixture(scope="module")
def models():
    single = load_model("demo")
    double = dataclasses.replace(single, module=copy.deepcopy(single.module).double())
    return single, double


def test_the_example_run_takes_the_models_dtype(models):
    single, double = models
    assert single.example_input().dtype == torch.float32
    assert double.dtype == torch.float64 and double.example_input().dtype == torch.float64
    assert not tree_of(double).detects  # the detector check ran, in float64, and found a classifier


def test_float64_scores_equal_float32_scores_on_the_same_weights(models):
    single, double = models
    x = torch.rand(1, *single.input_shape[1:], generator=torch.Generator().manual_seed(0))
    found = attribute(single, x, "saliency")
    steps = 8
    s32 = {c.metric: c for c in scored(single, x, found, steps=steps).curves}
    s64 = {c.metric: c for c in scored(double, x.double(), found, steps=steps).curves}  # the same map
    assert set(s64) == {"deletion", "insertion"}
    for metric in s64:
        np.testing.assert_allclose(s64[metric].scores, s32[metric].scores, rtol=0, atol=1e-5)
        assert s64[metric].auc == pytest.approx(s32[metric].auc, abs=1e-5)
    # the ends of the curves by hand, in float64: deletion starts at x and ends at the zero baseline
    with torch.no_grad():
        p = torch.softmax(double.module(torch.cat([x.double(), torch.zeros_like(x.double())])), dim=1)
    c = found.target_index
    assert s64["deletion"].scores[0] == pytest.approx(float(p[0, c]), abs=1e-12)
    assert s64["deletion"].scores[-1] == pytest.approx(float(p[1, c]), abs=1e-12)
    assert s64["insertion"].scores[0] == pytest.approx(float(p[1, c]), abs=1e-12)
    assert s64["insertion"].scores[-1] == pytest.approx(float(p[0, c]), abs=1e-12)


def test_the_api_scores_a_float64_model(models):
    single, double = models
    x = torch.rand(1, *single.input_shape[1:], generator=torch.Generator().manual_seed(1))
    got64 = api.attribute(double, x.double(), "occlusion", metrics=("deletion", "insertion"),
                          options={"window": 16, "stride": 16})
    got32 = api.attribute(single, x, "occlusion", metrics=("deletion", "insertion"),
                          options={"window": 16, "stride": 16})
    assert len(got64.curves) == 2
    for c64, c32 in zip(got64.curves, got32.curves):
        assert c64.metric == c32.metric
        assert c64.auc == pytest.approx(c32.auc, abs=1e-5)
