"""The Qt-free engine: load a model and an input, hook layers, capture and edit.

    from inspector.core import load_model, load_input, capture
    model = load_model("demo")
    x = load_input("sample:star", model.preprocess, model.input_shape)
    result = capture(model, x, layers="conv1,block.*", sites="output,grad_output")
    result["conv1:output"]          # numpy array, shape (1, C, H, W)
"""

from __future__ import annotations

# Names resolve on first use (PEP 562), so `import inspector.core.records.requests` and the other
# torch-free records do not pull in torch: the app shows its window before the engine loads.
_WHERE = {
    "available_devices": "sources.devices", "resolve_device": "sources.devices", "Edit": "edits", "parse_edit": "edits",
    "RunSpec": "runspec", "run": "engine.runner", "Sharing": "sources.sharing",
    "complete_statistics": "engine.deferred",
    "list_samples": "inputs.samples", "load_input": "inputs.files",
    "Key": "common.keys", "parse_key": "common.keys",
    "LayerTree": "sources.layers", "build_layer_tree": "sources.layers",
    "LoadedModel": "sources.loaded", "load_model": "sources.loader",
    "torchvision_classifiers": "sources.torchvision_models",
    "Target": "target.objective", "parse_target": "target.objective",
    "Capture": "engine.result", "RunResult": "engine.result",
    "capture": "api", "layer_tree": "api", "attribute": "api", "each_box": "api",
    "diff_models": "compare.pair", "load_pair": "compare.pair",
    "ModelDiff": "compare.diff",
    "Graph": "graph.record.nodes", "record_graph": "graph.record.entry", "GraphLayout": "graph.layout.graph_layout",
    "graph_values": "graph.values.entry", "compare_edits": "graph.values.entry",
    "compare_models": "graph.values.entry",
    **{name: "common.errors" for name in ("DeviceError", "InputError", "InspectorError", "ModelLoadError",
                                   "RunCancelled", "RunError", "SpecError", "UnknownKeyError",
                                   "UntrustedCodeError", "AtlasError")},
}


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module 'inspector.core' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "Capture", "DeviceError", "Edit", "Graph", "GraphLayout", "ModelDiff", "compare_edits", "compare_models",
    "graph_values", "record_graph", "diff_models", "load_pair", "InputError", "InspectorError",
    "Key", "LayerTree", "LoadedModel", "ModelLoadError", "RunCancelled", "RunError", "RunResult", "RunSpec",
    "Sharing", "SpecError", "Target", "UnknownKeyError", "UntrustedCodeError", "attribute", "available_devices",
    "build_layer_tree", "capture", "each_box", "complete_statistics", "layer_tree", "list_samples", "load_input",
    "load_model", "parse_edit", "parse_key", "parse_target", "resolve_device", "run", "torchvision_classifiers",
]


def __dir__() -> list[str]:
    return sorted(__all__)
