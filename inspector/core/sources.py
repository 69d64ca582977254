"""Which model sources carry code: one definition for the loader, session files, the CLI and the app.

Loading runs code from a file for a Python factory (`file.py:Name`, `package.module:Name`),
a TorchScript file and a `torch.export` program (both may hold code), and a pickled model.
`demo`, a torchvision name, `timm:NAME` and `hf:PATH_OR_ID` do not run code by themselves.
"""

from __future__ import annotations

import re

#: Files that may hold code when loaded as a model.
MODEL_FILE_SUFFIXES = (".pt2", ".pt", ".pth", ".ts", ".jit", ".torchscript")
#: Sources from a model zoo, named `PREFIX:NAME`; not code by themselves.
ZOO_PREFIXES = ("timm:", "hf:")


def is_factory(source: str) -> bool:
    """`file.py:Name` or `package.module:Name` (a class or zero-argument factory)."""
    if ":" not in source or source.startswith(ZOO_PREFIXES):
        return False
    left = source.rsplit(":", 1)[0]
    # `package.module` has dots, so Path(left).suffix is no test for a file name here.
    return left.lower().endswith(".py") or (
        len(left) > 1 and re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*", left) is not None)


def carries_code(source: str) -> bool:
    """True when loading `source` runs code that came with it (so it needs the user's trust)."""
    source = source.strip()
    return is_factory(source) or source.lower().endswith(MODEL_FILE_SUFFIXES)
