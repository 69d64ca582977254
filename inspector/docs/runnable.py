"""The worked examples a page marks as runnable: a code block whose opening fence comes on the line right after
`<!-- runnable -->`. Its commands are its lines that start with `network-inspector ` (or `uv run
network-inspector `; a line ending in `\\` goes on on the next), which tests/e2e/test_doc_examples.py runs.

A marker not followed by a fence, a block that is never closed and a runnable block without a command are
mistakes of the page, said as one line naming the page and the line.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

MARKER = "<!-- runnable -->"
PROGRAM = "network-inspector"
_PREFIXES = (f"{PROGRAM} ", f"uv run {PROGRAM} ")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


class PageError(ValueError):
    """A page's runnable marker or block is malformed."""


@dataclass(frozen=True)
class Command:
    line: int  # 1-based line of the page where the command starts
    text: str  # as written, continuation lines joined

    @property
    def argv(self) -> list[str]:
        """The arguments after the program's name, as a shell splits them."""
        words = shlex.split(self.text)
        return words[words.index(PROGRAM) + 1:]


@dataclass(frozen=True)
class Block:
    line: int  # 1-based line of the opening fence
    commands: tuple[Command, ...]


def blocks(text: str, page: str = "<page>") -> list[Block]:
    """The runnable blocks of a page's Markdown `text`, in order; PageError names `page` and the line."""
    lines = text.splitlines()
    found = []
    for i, line in enumerate(lines):
        if line.strip() != MARKER:
            continue
        fence = _FENCE.match(lines[i + 1]) if i + 1 < len(lines) else None
        if fence is None:
            raise PageError(f"{page}:{i + 1}: {MARKER} is not followed by a code block's opening fence")
        found.append(_block(lines, i + 1, fence.group(1), page))
    return found


def page_blocks(path: Path) -> list[Block]:
    """`blocks` of the page at `path`."""
    return blocks(path.read_text(encoding="utf-8"), str(path))


def _block(lines: list[str], start: int, fence: str, page: str) -> Block:
    closing = re.compile(rf"^\s*{re.escape(fence[0])}{{{len(fence)},}}\s*$")
    commands: list[Command] = []
    pending: tuple[int, str] | None = None
    for j in range(start + 1, len(lines)):
        line = lines[j]
        if closing.match(line):
            if pending:
                raise PageError(f"{page}:{pending[0]}: the command's last line ends in a backslash")
            if not commands:
                raise PageError(f"{page}:{start + 1}: a runnable block without a {PROGRAM} command")
            return Block(start + 1, tuple(commands))
        if pending:
            pending = (pending[0], pending[1] + " " + line.strip())
        elif line.lstrip().startswith(_PREFIXES):
            pending = (j + 1, line.strip())
        if pending and pending[1].endswith("\\"):
            pending = (pending[0], pending[1][:-1].rstrip())
            continue
        if pending:
            commands.append(Command(*pending))
            pending = None
    raise PageError(f"{page}:{start + 1}: a runnable block that is never closed")
