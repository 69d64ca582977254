"""The bundled sample inputs by name (`sample:NAME`); torch-free, so the window can list them at once."""

from __future__ import annotations

from inspector.demo.paths import samples_dir


def list_samples() -> list[str]:
    """Names usable as `sample:NAME` (images and tensors under resources/samples)."""
    folder = samples_dir()
    if not folder.is_dir():
        return []
    return sorted(p.stem for p in folder.iterdir() if p.suffix.lower() in (".png", ".npy"))
