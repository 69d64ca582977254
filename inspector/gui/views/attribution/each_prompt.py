"""Each prompt: an image-text model (CLIP, SigLIP) run with several prompts, explained once a prompt under the chosen
method, side by side. A cell's target is the contrastive one with its prompt first (`target.text.prompt_first`): that
prompt's probability among the same prompts, so each map shows what makes the image this prompt rather than the
others, and the cells answer the question the prompts were typed for. The Class chooser's prompt entries are given
the same targets: a prompt's rank in the predictions is no class of the model's output (an embedding)."""

from __future__ import annotations

import json

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QPushButton

from inspector.core.common.errors import SpecError
from inspector.core.records.methods import METHODS
from inspector.core.target.text import Target, each_prompt_first, parse_target, prompt_first


def cell_name(target: Target) -> str:
    """A cell's name: its prompt, quoted (`"a cat"`)."""
    return json.dumps(target.prompts[0], ensure_ascii=False)


class EachPrompt(QPushButton):
    """Signals
    -------
    sigAsks(object): explain each prompt: {cell name: (method, target)}, in the prompts' order.
    """

    sigAsks = Signal(object)

    def __init__(self, method: QComboBox, parent=None) -> None:
        super().__init__("Each prompt", parent)
        self.setToolTip("The method for each prompt of the run's target, side by side: each map the probability of "
                        "its prompt among the same prompts, on its own scale")
        self.method = method
        self.targets: tuple[Target, ...] = ()  # one a prompt, that prompt first
        self.setVisible(False)
        self.clicked.connect(self._on_clicked)
        method.currentTextChanged.connect(self._fit_method)

    def offer(self, target: str, chooser: QComboBox) -> None:
        """The run on screen explained `target`: the button is shown for a `text:` target of several prompts, and
        the `chooser`'s entries of its prompts (their index as data, as the predictions list them) explain them."""
        try:
            parsed = parse_target(target)
        except SpecError:
            parsed = Target()
        self.targets = each_prompt_first(parsed)
        self.setVisible(bool(self.targets))
        self._fit_method(self.method.currentText())
        if parsed.kind != "text":
            return
        for row in range(chooser.count()):
            data = chooser.itemData(row)
            if isinstance(data, str) and data.isdecimal() and int(data) < len(parsed.prompts):
                chooser.setItemData(row, str(prompt_first(parsed, int(data))))

    def _fit_method(self, method: str) -> None:
        """Enabled for a method that explains a class (a class-agnostic map is the same for every prompt)."""
        row = METHODS.get(method)
        self.setEnabled(row is None or row.explains == "class")

    def _on_clicked(self) -> None:
        method = self.method.currentText()
        self.sigAsks.emit({cell_name(t): (method, str(t)) for t in self.targets})
