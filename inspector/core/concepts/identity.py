"""Which weights a dictionary was learned on: a hash of the model's weights (every tensor of its state dict: its
name, shape and type, and SAMPLES of its values evenly spaced through it, bytes as they are), so that a dictionary
is not applied to another checkpoint of the same architecture. Sampled, so that a model of gigabytes is hashed in
milliseconds, on its own device (two checkpoints of one architecture differ almost everywhere); kept per module
until one of its tensors changes."""

from __future__ import annotations

import hashlib
import weakref

import torch

SAMPLES = 4096

_KEPT: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def weights_digest(module: torch.nn.Module) -> str:
    """16 hex digits of SHA-256 over the module's state dict (see the module's docstring)."""
    tensors = [(name, t) for name, t in module.state_dict(keep_vars=True).items() if isinstance(t, torch.Tensor)]
    stamp = tuple((name, t.data_ptr(), t._version, t.device) for name, t in tensors)  # changes with any write
    kept = _KEPT.get(module)
    if kept is not None and kept[0] == stamp:
        return kept[1]
    digest = hashlib.sha256()
    with torch.no_grad():
        for name, t in tensors:
            t = t.detach()
            digest.update(f"{name}:{tuple(t.shape)}:{t.dtype};".encode())
            flat = t.reshape(-1)
            if flat.numel() > SAMPLES:  # evenly spaced, worked out in whole numbers (the same on any device)
                flat = flat[(torch.arange(SAMPLES) * (flat.numel() - 1) // (SAMPLES - 1)).to(flat.device)]
            digest.update(flat.contiguous().cpu().view(torch.uint8).numpy().tobytes())
    found = digest.hexdigest()[:16]
    _KEPT[module] = (stamp, found)
    return found
