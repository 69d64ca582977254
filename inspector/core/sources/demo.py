"""`demo`: the bundled model this project trained, with its weights, labels and preprocessing."""

from __future__ import annotations

from inspector.demo.model import load_demo

from ..preprocess import Preprocess
from .loaded import LoadedModel


def load() -> LoadedModel:
    bundle = load_demo()
    size = bundle.input_size
    prep = Preprocess(resize=size, crop=size, mean=tuple(bundle.mean), std=tuple(bundle.std))
    return LoadedModel(bundle.model, "demo", "bundled", list(bundle.labels), prep, (1, 3, size, size), "demo")
