"""What a model's Python file defines, read without running it (torch-free: the app asks before trust)."""

from __future__ import annotations

import os
from pathlib import Path


def names_in(path: str | os.PathLike) -> list[str]:
    """The top-level classes and functions of a Python file, read without running it (`ast`): what
    FILE.py:NAME may name, offered before the user trusts the file. [] when it cannot be parsed."""
    import ast

    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return []
    return [node.name for node in tree.body if isinstance(node, (ast.ClassDef, ast.FunctionDef))
            and not node.name.startswith("_")]
