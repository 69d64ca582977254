"""What the evaluation tests share: the demo model and a small folder of images (a broken file among them), made
once a test file."""

from __future__ import annotations

import pytest
from evaluate_images import make_images

from inspector.core import load_model


@pytest.fixture(scope="module")
def demo():
    return load_model("demo")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return make_images(tmp_path_factory.mktemp("evaluate") / "data")
