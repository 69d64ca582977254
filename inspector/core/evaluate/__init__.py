"""Attribution maps evaluated over a folder of images: for every image, each method's map and each metric of it
(deletion, insertion, ...: the metric table, `metrics`), written per image (CSV and JSON) with a summary per
method, metric and number (mean and its Student t interval). A job over a folder (`folder_jobs`): cancelled
between images (or inside a long map) it saves its state, and the same call resumes there; `use_ray=True` spreads
the images over a Ray cluster.

The face loads its modules when a name is first asked for: the command checks the names (`check_request`,
`Settings`) before torch is imported."""

from __future__ import annotations

import importlib

_MODULES = {
    "metrics": ("METRIC_ROWS", "Metric", "columns", "register", "unregister"),
    "settings": ("CONFIDENCE", "DEFAULT_PROTOCOL", "METHOD_SEED", "Settings", "check_request"),
    "run": ("run_evaluation",),
    "store": ("EvaluationError", "read_summary"),
    "summary": ("interval",),
}
_WHERE = {name: module for module, names in _MODULES.items() for name in names}

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    try:
        module = _WHERE[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
