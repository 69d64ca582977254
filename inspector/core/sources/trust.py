"""Which model sources carry code: one definition for the loader, session files, the CLI and the app.

Loading runs code from a file for a Python factory, a TorchScript file, a `torch.export` program and
a pickled model; an `hf:` folder does when its config brings code of its own (`auto_map`,
transformers' `trust_remote_code`) or its weights are only pickles. Torch-free and Qt-free: the app
asks before the engine has loaded.
"""

from __future__ import annotations

from .hf_hub import hf_carries_code
from .refs import HF_PREFIX, is_factory, is_model_file, is_zoo


def carries_code(source: str, *, trust_remote_code: bool = False) -> bool:
    """True when loading `source` runs code that came with it (so it needs the user's trust)."""
    source = source.strip()
    if is_zoo(source):
        if not source.lower().startswith(HF_PREFIX):
            return False
        return bool(trust_remote_code) or hf_carries_code(source)
    return is_factory(source) or is_model_file(source)
