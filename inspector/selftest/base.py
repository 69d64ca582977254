"""What every self-test step shares: the constants, `check`, and the `Context` the steps get.

Imports neither torch nor Qt.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

NON_ASCII_PREFIX = "自检-ü-"
OFFLINE_MESSAGE = "network access is disabled during the self-test"
# Both edits act on gradients, so their effects are exact and checkable against a baseline run:
# relu1 is an in-place ReLU (the engine's in-place path), relu3 a plain one.
EDITS = ("relu1:grad_input=clamp(min=0)", "relu3:grad_input=scale(2)")
SITES = "input,output,grad_output,grad_input,params"
APP_TIMEOUT_S = 120.0


class SelfTestError(AssertionError):
    """A check inside a step did not hold."""


def check(condition: object, message: str) -> None:
    if not condition:
        raise SelfTestError(message)


@dataclass
class Context:
    """What the steps share: the sandbox folder, and results computed once and reused."""

    root: Path
    torch_home: Path
    cache: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)

    def demo(self):
        if "demo" not in self.cache:
            from inspector.core import load_model

            self.cache["demo"] = load_model("demo")
        return self.cache["demo"]

    def demo_input(self):
        if "input" not in self.cache:
            import torch

            from inspector.core import list_samples, load_input

            loaded = self.demo()
            images = [n for n in list_samples() if not n.startswith("toy")]
            if images:
                self.cache["input"] = load_input(f"sample:{images[0]}", loaded.preprocess, loaded.input_shape)
            else:  # the samples step reports missing samples; the engine checks still run
                self.cache["input"] = torch.randn(loaded.input_shape, generator=torch.Generator().manual_seed(0))
        return self.cache["input"]

    def run(self, edits: tuple[str, ...]):
        """A capture of every site on every leaf of the demo, with `edits`."""
        key = ("run", edits)
        if key not in self.cache:
            from inspector.core import capture

            self.cache[key] = capture(self.demo(), self.demo_input(), layers="all", sites=SITES,
                                      edits=list(edits), target="top1", device="cpu", input_grad=True)
        return self.cache[key]

    def qapp(self):
        from PySide6.QtWidgets import QApplication

        from inspector.gui.common.qt_messages import quiet_qt

        quiet_qt()
        app = QApplication.instance()
        if app is None:  # offscreen; one already chosen keeps its options (the tests' screen size)
            chosen = os.environ.get("QT_QPA_PLATFORM", "")
            platform = chosen if chosen.startswith("offscreen") else "offscreen"
            app = QApplication([sys.argv[0] if sys.argv else "network-inspector", "-platform", platform])
            self.cache["own_qapp"] = app
        return app
