"""The ends of the deletion and insertion games under a protocol (records.protocols): what deletion puts in place
of the input and what insertion starts from, as tensors of x's shape."""

from __future__ import annotations

import numpy as np
import torch

from ...records.protocols import Protocol


def gaussian_kernel(size: int, sigma: float) -> np.ndarray:
    """The RISE reference code's kernel (`gkern`): a unit impulse in the middle of a size x size grid under
    scipy's gaussian_filter of `sigma` (its reflected borders and truncation at 4 sigma included), float32."""
    from scipy.ndimage import gaussian_filter

    impulse = np.zeros((size, size))
    impulse[size // 2, size // 2] = 1.0
    return gaussian_filter(impulse, sigma).astype(np.float32)


def kernel_blur(x: torch.Tensor, size: int, sigma: float) -> torch.Tensor:
    """x (N, C, H, W) convolved channel by channel with `gaussian_kernel(size, sigma)`, zero-padded by size // 2
    (the reference code's `conv2d(x, kern, padding=klen // 2)`, kern one kernel on the channel diagonal)."""
    channels = x.shape[1]
    kernel = torch.from_numpy(gaussian_kernel(size, sigma)).to(device=x.device, dtype=x.dtype)
    weight = kernel.expand(channels, 1, size, size)
    return torch.nn.functional.conv2d(x, weight, padding=size // 2, groups=channels)


def game_ends(protocol: Protocol, x: torch.Tensor, baseline: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(what deletion puts in place of x's pixels, what insertion starts from) under `protocol`; `baseline` is the
    map's (the method's own, or the one named)."""
    ends = {"baseline": lambda: baseline, "zeros": lambda: torch.zeros_like(x),
            "blur": lambda: kernel_blur(x, protocol.blur_kernel, protocol.blur_sigma)}
    return ends[protocol.deletion_to](), ends[protocol.insertion_from]()
