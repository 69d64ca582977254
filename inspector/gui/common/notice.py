"""A message for the banner: an error, a warning, or a confirmation, with an optional action."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Notice:
    level: str  # error | warning | info
    text: str
    details: str = ""  # a traceback, shown on request
    action: tuple[str, Callable[[], None]] | None = None  # (button label, what it does)
    about: str = ""  # "run": a run's error, which goes once a run works
