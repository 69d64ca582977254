"""Weights files: safetensors, weights-only torch checkpoints, and (only when trusted) pickles."""

from __future__ import annotations

import io
import pickle
import pickletools
import warnings
import zipfile
from pathlib import Path

import torch
from torch import nn

from ..common.arguments import need_flag
from ..common.errors import ModelLoadError, UntrustedCodeError
from ..storage.paths import regular_file

_NESTED = ("state_dict", "model_state_dict", "model", "net", "module", "ema")
_PREFIXES = ("module.", "_orig_mod.")


def load_weights_only(path):
    """`torch.load` with weights_only=True, quiet: torch's warning about a pickle protocol it did not
    write comes before our own one-line refusal of a pickle that would import code."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Detected pickle protocol", category=UserWarning)
        return torch.load(path, map_location="cpu", weights_only=True)


def weights_into(module: nn.Module, path: str | Path, trust: bool = False) -> nn.Module:
    """`module` with the weights file at `path` applied, or the whole model a trusted pickle holds."""
    state = read_checkpoint(path, trust=trust)
    if isinstance(state, nn.Module):
        return state
    apply_state_dict(module, state, Path(path).name)
    return module


def read_checkpoint(path: str | Path, trust: bool = False) -> dict[str, torch.Tensor] | nn.Module:
    """A state dict (or, from a trusted pickle, a whole model) read from `path` onto the CPU."""
    trust = need_flag(trust, "trust")
    path = regular_file(path, "Weights file", ModelLoadError)
    if path.stat().st_size == 0:
        raise ModelLoadError(f"Weights file is empty (0 bytes): {path}")
    if path.suffix.lower() == ".safetensors":
        from safetensors import SafetensorError
        from safetensors.torch import load_file

        try:
            return load_file(str(path), device="cpu")
        except (SafetensorError, OSError, ValueError) as exc:
            raise ModelLoadError(f"Cannot read safetensors file {path}: {exc}") from None
    try:
        obj = load_weights_only(path)
    except pickle.UnpicklingError as exc:
        unsafe = unsafe_globals(path)
        if unsafe is None:
            raise ModelLoadError(
                f"{path.name} is not a weights file this tool can read: it is damaged, or not a PyTorch "
                f"checkpoint or safetensors file."
            ) from None
        if trust is not True:
            names = ", ".join(unsafe) if unsafe else str(exc).splitlines()[0]
            raise UntrustedCodeError(
                f"{path.name} is a pickle that would import code when loaded ({names}). "
                f"Refused: loading it could run anything. Save a state dict or safetensors instead, "
                f"or pass --trust if you wrote this file yourself."
            ) from None
        obj = _load_trusted(path)
    except Exception as exc:  # damaged files fail inside torch's reader in many ways (IndexError, KeyError, ...)
        raise ModelLoadError(f"Cannot read weights file {path}: {type(exc).__name__}: {exc}") from None
    return _unwrap(obj, path)


def unsafe_globals(path: Path) -> list[str] | None:
    """The globals the pickle in `path` would import, read without running it; None if it holds no pickle."""
    try:
        return list(torch.serialization.get_unsafe_globals_in_checkpoint(str(path)))
    except Exception:  # not torch's zip format: a plain or legacy pickle, or no pickle at all
        pass
    if zipfile.is_zipfile(path):
        return []  # the message falls back to torch's own text
    found = _pickle_globals(path.read_bytes())
    if found is None:
        return None
    try:
        from torch._weights_only_unpickler import _get_allowed_globals

        allowed = set(_get_allowed_globals())
    except Exception:
        allowed = set()
    return [name for name in found if name not in allowed]


def _pickle_globals(data: bytes) -> list[str] | None:
    """GLOBAL / STACK_GLOBAL names in the pickles at the start of `data` (pickletools: nothing runs)."""
    stream, found, parsed = io.BytesIO(data), set(), 0
    while stream.tell() < len(data):  # legacy torch.save files hold several pickles in a row
        memo: dict[int, object] = {}
        pushed: list[object] = []
        try:
            for op, arg, _ in pickletools.genops(stream):
                if op.name == "GLOBAL":
                    found.add(arg.replace(" ", "."))
                elif op.name == "STACK_GLOBAL" and len(pushed) >= 2:
                    found.add(f"{pushed[-2]}.{pushed[-1]}")
                elif op.name == "MEMOIZE":
                    memo[len(memo)] = pushed[-1] if pushed else None
                elif op.name in ("PUT", "BINPUT", "LONG_BINPUT"):
                    memo[arg] = pushed[-1] if pushed else None
                elif op.name in ("GET", "BINGET", "LONG_BINGET"):
                    pushed.append(memo.get(arg))
                elif op.name not in ("FRAME", "PROTO"):
                    pushed.append(arg if isinstance(arg, str) else None)
        except Exception:
            break
        parsed += 1
    return sorted(found) if parsed else None


def _load_trusted(path: Path):
    try:
        return torch.load(path, map_location="cpu", weights_only=False)
    except Exception as exc:
        raise ModelLoadError(f"Cannot load trusted pickle {path}: {type(exc).__name__}: {exc}") from exc


def _unwrap(obj, path: Path) -> dict[str, torch.Tensor] | nn.Module:
    if isinstance(obj, nn.Module):
        return obj
    if isinstance(obj, dict):
        for key in _NESTED:
            inner = obj.get(key)
            if isinstance(inner, nn.Module):
                return inner
            if isinstance(inner, dict) and inner and all(isinstance(v, torch.Tensor) for v in inner.values()):
                obj = inner
                break
        tensors = {k: v for k, v in obj.items() if isinstance(v, torch.Tensor)}
        if tensors:
            return {_strip(k): v for k, v in tensors.items()}
    raise ModelLoadError(f"{path.name} holds no state dict (found {type(obj).__name__}).")


def _strip(key: str) -> str:
    for prefix in _PREFIXES:
        while key.startswith(prefix):
            key = key[len(prefix):]
    return key


def apply_state_dict(model: nn.Module, state: dict[str, torch.Tensor], source: str = "checkpoint") -> None:
    """Load `state` into `model`, or explain exactly which keys do not fit."""
    own = model.state_dict()
    missing = [k for k in own if k not in state]
    unexpected = [k for k in state if k not in own]
    wrong = [
        f"{k} (file {tuple(state[k].shape)}, model {tuple(own[k].shape)})"
        for k in own
        if k in state and tuple(state[k].shape) != tuple(own[k].shape)
    ]
    if missing or unexpected or wrong:
        parts = []
        for title, items in (("missing", missing), ("unexpected", unexpected), ("wrong shape", wrong)):
            if items:
                shown = ", ".join(items[:10]) + (f", ... ({len(items)} in all)" if len(items) > 10 else "")
                parts.append(f"{title}: {shown}")
        raise ModelLoadError(f"The weights in {source} do not fit this model. " + "; ".join(parts))
    model.load_state_dict(state, strict=True)
