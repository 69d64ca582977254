"""What a model source string names: `parse_source` says which family, once, for the loader,
session files, the CLI and the app (`trust` says which of them carry code).

Loading runs code from a file for a Python factory (`file.py:Name`, `package.module:Name`),
a TorchScript file and a `torch.export` program (both may hold code), and a pickled model
(any other existing file is read as one). `demo`, a torchvision name, `timm:NAME` and
`hf:PATH_OR_ID` do not run code by themselves; an `hf:` folder does when its config brings code of
its own (`auto_map`, transformers' `trust_remote_code`) or its weights are only pickles.

Torch-free and Qt-free: the app asks before the engine has loaded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

#: Files that may hold code when loaded as a model (TorchScript, `torch.export`, pickles).
MODEL_FILE_SUFFIXES = (".pt2", ".pt", ".pth", ".ts", ".jit", ".torchscript", ".pkl", ".pickle")
#: Python source files a `file.py:Name` factory is read from.
PYTHON_SUFFIXES = (".py",)
#: Every suffix of a model source that runs code.
CODE_SUFFIXES = PYTHON_SUFFIXES + MODEL_FILE_SUFFIXES
TIMM_PREFIX = "timm:"
HF_PREFIX = "hf:"
#: Sources from a model zoo, named `PREFIX:NAME`; not code by themselves.
ZOO_PREFIXES = (TIMM_PREFIX, HF_PREFIX)

#: The models this project trained and ships: the classifier, the detector, and the classifier's twin trained on
#: shuffled labels (a model that learned nothing: the data randomisation check).
DEMO_NAMES = ("demo", "demo-detector", "demo-shuffled")

_DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


def is_zoo(source: str) -> bool:
    """`timm:NAME` or `hf:PATH_OR_ID`."""
    return source.strip().lower().startswith(ZOO_PREFIXES)


def is_factory(source: str) -> bool:
    """`file.py:Name` (also `C:\\x\\m.py:Net`) or `package.module:Name` (a class or zero-argument factory)."""
    source = source.strip()
    if ":" not in source or is_zoo(source):
        return False
    left = source.rsplit(":", 1)[0]
    # `package.module` has dots, so Path(left).suffix is no test for a file name here;
    # a one-letter left side is a Windows drive (`C:model.pt`), not a module.
    return left.lower().endswith(PYTHON_SUFFIXES) or (len(left) > 1 and _DOTTED.fullmatch(left) is not None)


def is_model_file(source: str) -> bool:
    """A saved program or pickled model: a known suffix, or any existing file (read as a pickle)."""
    source = source.strip()
    if not source or source in DEMO_NAMES or is_factory(source) or is_zoo(source):
        return False
    if source.lower().endswith(MODEL_FILE_SUFFIXES):
        return True
    try:
        return Path(source).is_file()
    except (OSError, ValueError):
        return False


@dataclass(frozen=True)
class SourceRef:
    """A model source read once: `kind` picks its loader (demo — the classifier or the detector —, timm, hf,
    factory, program, torchvision), `name` is the source without its zoo prefix, `text` the source as given
    (stripped)."""

    kind: str
    name: str
    text: str


def parse_source(source: str) -> SourceRef:
    """Which family `source` belongs to; anything that is no other kind is a torchvision name."""
    text = source.strip()
    lower = text.lower()
    if text in DEMO_NAMES:
        return SourceRef("demo", text, text)
    for kind, prefix in (("timm", TIMM_PREFIX), ("hf", HF_PREFIX)):
        if lower.startswith(prefix):
            return SourceRef(kind, text[len(prefix):], text)
    if is_factory(text):
        return SourceRef("factory", text, text)
    if is_model_file(text):
        return SourceRef("program", text, text)
    return SourceRef("torchvision", text, text)


#: What a source of each family gets when no weights are named, as people read it.
DEFAULT_WEIGHTS = {"demo": "bundled", "timm": "random", "hf": "the folder's own, pretrained", "factory": "random",
                   "program": "its own", "torchvision": "random"}


def weights_shown(source: str, weights: str | None) -> str:
    """The weights a model loaded from `source` with `weights` has, for a message or a caption (None: the family's
    default: the demo's are "bundled"). The one place a model's weights are named; the app shows a file's name."""
    if weights:
        return weights
    try:
        return DEFAULT_WEIGHTS[parse_source(source).kind]
    except Exception:  # noqa: BLE001 - a source that cannot be read is named as given elsewhere
        return "default"
