"""The Qt-free engine: load a model and an input, hook layers, capture and edit.

    from inspector.core import load_model, load_input, capture
    model = load_model("demo")
    x = load_input("sample:star", model.preprocess, model.input_shape)
    result = capture(model, x, layers="conv1,block.*", sites="output,grad_output")
    result["conv1:output"]          # numpy array, shape (1, C, H, W)
"""

from __future__ import annotations

from .devices import available_devices, resolve_device
from .edits import Edit, parse_edit
from .engine import RunSpec, run
from .errors import (DeviceError, InputError, InspectorError, ModelLoadError, RunCancelled, RunError,
                     SpecError, UntrustedCodeError)
from .inputs import list_samples, load_input
from .keys import Key, parse_key
from .layers import LayerTree, build_layer_tree
from .models import LoadedModel, load_model, torchvision_classifiers
from .objective import Target, parse_target
from .result import Capture, RunResult
from .api import capture, layer_tree

__all__ = [
    "Capture", "DeviceError", "Edit", "InputError", "InspectorError", "Key", "LayerTree", "LoadedModel",
    "ModelLoadError", "RunCancelled", "RunError", "RunResult", "RunSpec", "SpecError", "Target",
    "UntrustedCodeError", "available_devices", "build_layer_tree", "capture", "layer_tree", "list_samples",
    "load_input", "load_model", "parse_edit", "parse_key", "parse_target", "resolve_device", "run",
    "torchvision_classifiers",
]
