"""Where Hugging Face models are on this machine, and what in them runs code: torch-free.

`hf:PATH_OR_ID[#OUTPUT]` names a folder written by `save_pretrained` or a model id in the local
hub cache (as `hf download` / `huggingface-cli download` fill it; this app never downloads). A
folder runs code when loaded if its config.json maps classes to code of its own (`auto_map`,
transformers' `trust_remote_code`) or its weights are only pickles (`*.bin`). The app asks for
trust before the engine has loaded, so this module imports neither torch nor transformers.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .refs import HF_PREFIX as PREFIX

#: Weight files that are pickles (they can run code when loaded).
PICKLE_WEIGHTS = ("*.bin", "*.pt", "*.pth", "*.ckpt")


def hub_cache() -> Path:
    """The Hugging Face hub cache folder, as huggingface_hub resolves it (read at call time)."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    home = os.environ.get("HF_HOME") or os.path.join(os.environ.get("XDG_CACHE_HOME", "~/.cache"), "huggingface")
    return Path(home).expanduser() / "hub"


def hf_spec(source: str) -> tuple[str, str | None]:
    """`hf:NAME#OUTPUT` -> (NAME, OUTPUT or None)."""
    body = source.strip()[len(PREFIX):].strip()
    name, _, output = body.partition("#")
    return name.strip(), (output.strip() or None)


def hf_folder(name: str) -> Path | None:
    """The model's folder: `name` itself when it is a folder, else its snapshot in the local hub cache."""
    path = Path(name).expanduser()
    if path.is_dir():
        return path
    if name.count("/") > 1 or not name or name.startswith((".", "/", "~")):
        return None
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(repo_id=name, cache_dir=str(hub_cache()), local_files_only=True))
    except Exception:  # noqa: BLE001 - not cached, not a valid id: the loader says which
        return None


def hf_needs_code(folder: Path) -> str | None:
    """What in `folder` asks for its own code (auto_map classes), or None."""
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    auto = config.get("auto_map") if isinstance(config, dict) else None
    if auto:
        return "auto_map: " + ", ".join(f"{k} -> {v}" for k, v in auto.items()) if isinstance(auto, dict) \
            else f"auto_map: {auto}"
    return None


def hf_carries_code(source: str) -> bool:
    """True when loading `hf:...` runs code: its own classes, or weights only as pickles."""
    folder = hf_folder(hf_spec(source)[0])
    if folder is None:
        return False
    if hf_needs_code(folder):
        return True
    has_safetensors = any(folder.glob("*.safetensors"))
    return not has_safetensors and any(any(folder.glob(p)) for p in PICKLE_WEIGHTS)
