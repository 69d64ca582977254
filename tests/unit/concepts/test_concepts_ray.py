"""The concepts' activation pass on a local Ray instance (2 CPUs), cancelled and resumed there, gives the
in-process dictionary: the fit reads the samples in the listing's order, whatever order the replicas answered
in. (The demo model: a file.py:Name model is a module Ray's workers cannot import, as for the atlas.)
A local Ray instance takes 20 s to over 100 s to start on this busy 2-core machine (108 s for this test here),
past the suite's 15 s a test: it runs where INSPECTOR_RAY_TESTS=1 is set."""

from __future__ import annotations

import os

import pytest
import torch
from concepts_planted import planted_images

from inspector.core import load_model
from inspector.core.folder_jobs import local_instance
from inspector.core.concepts import learn_concepts, load_dictionary
from inspector.core.common.errors import RunCancelled


@pytest.mark.skipif(os.environ.get("INSPECTOR_RAY_TESTS") != "1", reason="starts Ray: INSPECTOR_RAY_TESTS=1 runs it")
def test_ray_pass_cancelled_and_resumed_equals_the_in_process_dictionary(tmp_path):
    pytest.importorskip("ray")
    demo = load_model("demo")
    data = planted_images(tmp_path / "data", 12)
    options = dict(k=4, batch=4, epochs=2, pictures=False)
    here = learn_concepts(demo, data, "relu3", tmp_path / "here", **options)
    with local_instance(num_cpus=2):
        with pytest.raises(RunCancelled, match="after 4 of 12 images"):
            learn_concepts(demo, data, "relu3", tmp_path / "ray", use_ray=True, cancel=lambda: True, **options)
        on_ray = learn_concepts(demo, data, "relu3", tmp_path / "ray", use_ray=True, **options)
    torch.testing.assert_close(load_dictionary(tmp_path / "ray").components,
                               load_dictionary(tmp_path / "here").components, atol=1e-5, rtol=1e-4)
    assert on_ray["fit"]["samples"] == here["fit"]["samples"]
    assert on_ray["fit"]["variance_explained"] == pytest.approx(here["fit"]["variance_explained"], abs=1e-5)
