"""The Prompt box beside the Target chooser, for an image-text model (CLIP, SigLIP): prompts typed, several
separated by |, become a `text:` target when Enter is pressed; a `text:` target chosen elsewhere (a session) is
shown as its prompts."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QLineEdit, QWidget

from inspector.core.common.errors import SpecError
from inspector.core.target.text import parse_target

#: The model task (ModelInfo.task) the box is shown for.
TASK = "image-text"


def prompt_target(line: str) -> str:
    """The `text:` target of what was typed: `a dog | a cat` or `"a dog"|"a cat"` -> `text:"a dog"|"a cat"`;
    a SpecError for an empty or malformed one."""
    return str(parse_target("text:" + line.strip()))


def prompts_shown(target: str) -> str | None:
    """What the box shows for `target`: its prompts separated by | (None: not a text target)."""
    try:
        parsed = parse_target(target)
    except SpecError:
        return None
    if parsed.kind != "text":
        return None
    bare = all('"' not in p and "|" not in p for p in parsed.prompts)
    return " | ".join(parsed.prompts) if bare else str(parsed)[len("text:"):]


class PromptBox(QLineEdit):
    """Prompts for a `text:` target.

    Signals
    -------
    sigTarget(str): the `text:` target of the prompts, when Enter is pressed.
    sigRefused(str): why what was typed is no target (an empty prompt, a missing quote).
    """

    sigTarget = Signal(str)
    sigRefused = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setPlaceholderText("a photo of a dog | a cat")
        self.setToolTip("A prompt, or several separated by |: the target is the score of the image and the prompt, "
                        "or the first prompt's probability among them. Enter runs it.")
        self.setMinimumWidth(150)
        self.returnPressed.connect(self._on_return)

    def _on_return(self) -> None:
        try:
            target = prompt_target(self.text())
        except SpecError as exc:  # a slot never raises: the user reads why
            self.sigRefused.emit(str(exc))
            return
        self.sigTarget.emit(target)

    def show_target(self, target: str) -> None:
        """The prompts of a `text:` target (another target leaves what was typed)."""
        shown = prompts_shown(target)
        if shown is not None and shown != self.text():
            self.setText(shown)
