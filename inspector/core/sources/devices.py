"""Which devices exist here, and turning the user's word for one into a torch.device."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..common.errors import DeviceError


@dataclass(frozen=True)
class DeviceInfo:
    name: str  # "cpu", "cuda:0", "mps"
    description: str
    memory_bytes: int | None = None


def available_devices() -> list[DeviceInfo]:
    """Every device a run can use on this machine, CPU first."""
    found = [DeviceInfo("cpu", "CPU")]
    if torch.cuda.is_available():
        for index in range(torch.cuda.device_count()):
            props = torch.cuda.get_device_properties(index)
            gib = props.total_memory / 2**30
            found.append(DeviceInfo(f"cuda:{index}", f"{props.name} ({gib:.0f} GiB)", props.total_memory))
    if _mps_available():
        found.append(DeviceInfo("mps", "Apple Metal (MPS)"))
    return found


def _mps_available() -> bool:
    backend = getattr(torch.backends, "mps", None)
    return bool(backend and backend.is_available())


def resolve_device(spec: str | torch.device | None) -> torch.device:
    """Turn `auto|cpu|cuda|cuda:N|mps` into a device that exists, or say why not."""
    if spec is not None and not isinstance(spec, (str, torch.device)):
        raise DeviceError(f"Unknown device {spec!r}. Use auto, cpu, cuda, cuda:N or mps.")
    text = "auto" if spec is None else str(spec).strip().lower()
    if text == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda", torch.cuda.current_device())
        if _mps_available():
            return torch.device("mps")
        return torch.device("cpu")
    try:
        device = torch.device(text)
    except RuntimeError:
        raise DeviceError(f"Unknown device {spec!r}. Use auto, cpu, cuda, cuda:N or mps.") from None
    valid = ", ".join(d.name for d in available_devices())
    if device.type == "cpu":
        return torch.device("cpu")
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise DeviceError(f"CUDA is not available on this machine (devices here: {valid}).")
        index = 0 if device.index is None else device.index
        if index >= torch.cuda.device_count():
            raise DeviceError(f"There is no {device.type}:{index} (devices here: {valid}).")
        return torch.device("cuda", index)
    if device.type == "mps":
        if not _mps_available():
            raise DeviceError(f"MPS is not available on this machine (devices here: {valid}).")
        return device
    raise DeviceError(f"Device {spec!r} is not supported. Use auto, cpu, cuda, cuda:N or mps.")
