"""What a model that fails inside a method's passes says: one line, the same for every method, in the CLI, the
API and the app (`model_errors`), where a failure inside integrated gradients' or occlusion's first pass used to
be a RuntimeError traceback and saliency's the engine's "The model raised ..."."""

from __future__ import annotations

import contextlib

from ...common.errors import InspectorError, RunError, first_line


@contextlib.contextmanager
def model_errors(what: str):
    """Around a method's passes: an error of the project's own kind goes through as it is; anything else the
    model (or torch under it) raised becomes a RunError "The model raised KIND: first line of its message",
    the original chained; running out of memory says what to do."""
    try:
        yield
    except InspectorError:
        raise
    except MemoryError as exc:
        raise RunError(f"{what} ran out of memory: use a smaller input, fewer copies a pass (--batch) or "
                       f"--max-memory.") from exc
    except Exception as exc:  # noqa: BLE001 - every kind a model can raise is said in one line
        raise RunError(f"The model raised {type(exc).__name__}: {first_line(exc)}") from exc
