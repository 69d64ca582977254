"""`demo` and `demo-detector`: the bundled models this project trained, with their weights, labels and
preprocessing."""

from __future__ import annotations

from inspector.demo.model import load_demo

from ..detection.targets import NOTE as DETECTION_NOTE
from .preprocess import Preprocess
from .loaded import LoadedModel


def load(name: str = "demo") -> LoadedModel:
    if name == "demo-detector":
        return _detector()
    bundle = load_demo()
    size = bundle.input_size
    prep = Preprocess(resize=size, crop=size, mean=tuple(bundle.mean), std=tuple(bundle.std))
    return LoadedModel(bundle.model, "demo", "bundled", list(bundle.labels), prep, (1, 3, size, size), "demo")


def _detector() -> LoadedModel:
    from inspector.demo.detector import load_demo_detector  # torchvision's FCOS: imported when asked for

    bundle = load_demo_detector()
    return LoadedModel(bundle.model, "demo-detector", "bundled", list(bundle.labels), Preprocess(),
                       (1, 3, *bundle.input_size), "demo", [DETECTION_NOTE], task="detection")
