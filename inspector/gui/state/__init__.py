"""The app's state: `AppState` (model, input, device, target, ticks, layer, gradient site, the
visible view, runs and their outcomes) composes one QObject per input kind and task, each with
its own signals: `folder` (a folder stepped through), `live` (a video or camera), `atlas` (the
channel atlas) and `analysis` (attribution requests). Views and controllers call their methods and
observe their signals; only the state talks to the worker."""

from .app import GRADIENT_SITES, AppState
from .result_shown import AUTO_RUN_LIMIT_S

__all__ = ["AUTO_RUN_LIMIT_S", "GRADIENT_SITES", "AppState"]
