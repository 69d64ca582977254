"""`demo`, `demo-detector` and `demo-shuffled`: the bundled models this project trained, with their weights, labels
and preprocessing. `demo-shuffled` is the demo classifier trained on the same images with shuffled labels."""

from __future__ import annotations

from inspector.demo.model import load_demo, shuffled_weights_path

from ..detection.targets import NOTE as DETECTION_NOTE
from .preprocess import Preprocess
from .loaded import LoadedModel


def load(name: str = "demo") -> LoadedModel:
    if name == "demo-detector":
        return _detector()
    bundle = load_demo(shuffled_weights_path() if name == "demo-shuffled" else None)
    size = bundle.input_size
    prep = Preprocess(resize=size, crop=size, mean=tuple(bundle.mean), std=tuple(bundle.std))
    return LoadedModel(bundle.model, name, "bundled", list(bundle.labels), prep, (1, 3, size, size), "demo")


def _detector() -> LoadedModel:
    from inspector.demo.detector import load_demo_detector  # torchvision's FCOS: imported when asked for

    bundle = load_demo_detector()
    return LoadedModel(bundle.model, "demo-detector", "bundled", list(bundle.labels), Preprocess(),
                       (1, 3, *bundle.input_size), "demo", [DETECTION_NOTE], task="detection")
