"""torchvision pretrained weights through its cache (`TORCH_HOME`): use the file, or fetch it."""

from __future__ import annotations

import http.client
import os
import shutil
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Callable

import torch

from ..common.errors import ModelLoadError


def cache_path(weights) -> Path:
    """Where torchvision looks for this weights file."""
    return Path(torch.hub.get_dir()) / "checkpoints" / os.path.basename(weights.url)


def ensure_cached(weights, progress: Callable[[int, int], None] | None = None, timeout: float = 30.0) -> Path:
    """The cached file for `weights`, downloading it (with progress) when it is not there yet."""
    path = cache_path(weights)
    if path.is_file() and path.stat().st_size > 0:
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    part: Path | None = None
    try:
        with urllib.request.urlopen(weights.url, timeout=timeout) as response:
            total = int(response.headers.get("Content-Length") or 0)
            done = 0
            with tempfile.NamedTemporaryFile(dir=path.parent, delete=False, suffix=".part") as tmp:
                part = Path(tmp.name)
                while chunk := response.read(1 << 20):
                    tmp.write(chunk)
                    done += len(chunk)
                    if progress:
                        progress(done, total)  # may raise RunCancelled: the user pressed Esc
            if total and done != total:  # a cut connection must not leave a broken file in the cache
                raise OSError(f"the download stopped after {done:,} of {total:,} bytes")
        shutil.move(part, path)
        part = None
    except (urllib.error.URLError, http.client.HTTPException, OSError, TimeoutError) as exc:
        raise ModelLoadError(
            f"Cannot download pretrained weights ({exc}). To use them offline, place the file "
            f"{path.name} in {path.parent} (download it from {weights.url} on another machine), "
            f"or set TORCH_HOME to a folder whose checkpoints/ holds it."
        ) from None
    finally:
        if part is not None:  # failed or cancelled: no partial file is left in the cache
            part.unlink(missing_ok=True)
    return path
