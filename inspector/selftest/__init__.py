"""`network-inspector --self-test [--json FILE]`: prove this install (or bundle) works, offline.

Each step is a small function that raises on failure. The whole test runs in a sandbox:
Qt on the offscreen platform, Python's network refused, an empty temporary TORCH_HOME,
and the current folder (where every temporary file goes) a new temporary folder whose
name is not ASCII (``自检-ü-…``). Exit status 0 only when every step passed; one line per
step on stdout; with ``--json FILE`` a report
``{"ok": bool, "steps": [{"name", "ok", "seconds", "error"}], ...}``.

The package: `base` (constants, `check`, `Context`), `steps` (the Qt-free steps), `qt_steps`
(the offscreen Qt steps), `sandbox` and `runner`. The submodules import only one another, never
names from this `__init__`, so each imports on its own; importing any of them imports neither torch nor Qt
(the steps import what they need when they run).
"""

from __future__ import annotations

import argparse
import os
import sys

from .base import APP_TIMEOUT_S, EDITS, NON_ASCII_PREFIX, OFFLINE_MESSAGE, SITES, Context, SelfTestError, check
from .qt_steps import step_app_window, step_mosaic
from .runner import Step, run_steps
from .sandbox import offline, sandbox
from .steps import (
    step_capture,
    step_checkpoints,
    step_demo_model,
    step_environment,
    step_offline_pretrained,
    step_samples,
    step_torch,
    step_torchvision_ops,
    step_untrusted_pickle,
    step_video,
    step_zoo_models,
)

STEPS: list[Step] = [
    ("environment", step_environment),
    ("torch", step_torch),
    ("demo_model", step_demo_model),
    ("capture", step_capture),
    ("offline_pretrained", step_offline_pretrained),
    ("checkpoints", step_checkpoints),
    ("untrusted_pickle", step_untrusted_pickle),
    ("samples", step_samples),
    ("torchvision_ops", step_torchvision_ops),
    ("zoo_models", step_zoo_models),
    ("video", step_video),
    ("mosaic", step_mosaic),
    ("app_window", step_app_window),
]

__all__ = [
    "APP_TIMEOUT_S", "EDITS", "NON_ASCII_PREFIX", "OFFLINE_MESSAGE", "SITES", "STEPS", "Context", "SelfTestError",
    "Step", "check", "main", "offline", "run_selftest", "sandbox",
]


def run_selftest(json_path=None, steps: list[Step] | None = None, keep: bool = False, out=None) -> int:
    """Run `steps` (default: all of STEPS) in the sandbox; 0 when every one passed, else 1."""
    return run_steps(STEPS if steps is None else steps, json_path, keep=keep, out=out)


def main(argv: list[str] | None = None) -> int:
    """The entry of `network-inspector --self-test` (`argv` may hold the CLI's own flags)."""
    parser = argparse.ArgumentParser(prog="network-inspector --self-test", description=__doc__.split("\n\n")[0])
    parser.add_argument("--self-test", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--json", metavar="FILE", help="also write the report as JSON to FILE")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (the PNGs drawn)")
    parser.add_argument("--only", metavar="STEP", action="append", choices=[n for n, _ in STEPS],
                        help="run only this step (repeatable)")
    parser.add_argument("--device", default=None, metavar="DEVICE",
                        help="also run every engine path on DEVICE (cuda, cuda:N, mps) and check it against the "
                             "CPU: capture with edits, attribution, the atlas, diff, the app offscreen")
    args = parser.parse_args(argv)
    if not os.environ.get("QT_QPA_PLATFORM", "").startswith("offscreen"):  # before any QApplication; an offscreen
        os.environ["QT_QPA_PLATFORM"] = "offscreen"  # one already chosen keeps its options (a screen's size)
    steps = [s for s in STEPS if s[0] in args.only] if args.only else list(STEPS)
    if args.device:
        from .device_steps import device_steps, missing_device

        why = missing_device(args.device)
        if why:
            print(f"error: {why}", file=sys.stderr)
            return 2
        steps += device_steps(args.device)
    return run_selftest(args.json, steps, keep=args.keep)


if __name__ == "__main__":
    sys.exit(main())
