"""Baselines: the reference input that integrated gradients start from, occlusion fills a window with, and
the deletion and insertion scores put in place of the input (Sturmfels et al., "Visualizing the Impact of
Feature Attribution Baselines", Distill 2020).

Every baseline is a tensor in the model's input space, the shape of x:

- `zero`: zeros in the model's input space. After a normalisation (x - mean) / std that is the mean
  colour, not black: `describe` says which colour it is for the loaded preprocessing.
- `mean`: the preprocessing's mean colour, normalised (so zero again where the model normalises; black
  where it does not): the name says what it means.
- `black`, `white`: pixels 0 and 1 before normalisation.
- `blur`: the input under a Gaussian blur of `sigma` pixels (default a twentieth of the input's side).
- `uniform`: uniform noise in [0, 1] before normalisation, seeded.
- a file: an image (preprocessed like the input) or a .npy/.pt tensor of the input's shape.
"""

from __future__ import annotations

import math
import secrets
from dataclasses import dataclass

import torch

from ...common.errors import InputError, SpecError
from ...sources.preprocess import Preprocess
from ...records.methods import BASELINES
from ...sources.seeds import check_seed


@dataclass(frozen=True)
class Baseline:
    """A baseline tensor and how it was made (`name`, with `sigma` for blur and `seed` for uniform)."""

    name: str
    tensor: torch.Tensor
    text: str  # what it is, in words ("zero: the mean colour (124, 116, 104) after this model's normalisation")
    sigma: float | None = None
    seed: int | None = None

    def details(self) -> tuple[tuple[str, object], ...]:
        extra = (("blur sigma", self.sigma),) if self.sigma is not None else ()
        return (("baseline", self.name),) + extra + ((("baseline seed", self.seed),) if self.seed is not None else ())


def _stats(preprocess: Preprocess | None, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(mean, std) shaped to broadcast over x (1, C, H, W): the preprocessing's, or none (0 and 1)."""
    shape = (1, -1) + (1,) * (x.ndim - 2)
    if preprocess is None or x.ndim < 3 or x.shape[1] != len(preprocess.mean):
        return torch.zeros(1, dtype=x.dtype, device=x.device), torch.ones(1, dtype=x.dtype, device=x.device)
    mean = torch.tensor(preprocess.mean, dtype=x.dtype, device=x.device).reshape(shape)
    std = torch.tensor(preprocess.std, dtype=x.dtype, device=x.device).reshape(shape)
    return mean, std


def normalised(preprocess: Preprocess | None) -> bool:
    """The model's input is normalised: its zero is not black."""
    return preprocess is not None and (any(m != 0 for m in preprocess.mean) or any(s != 1 for s in preprocess.std))


def zero_means(preprocess: Preprocess | None) -> str:
    """What a zero input is for this preprocessing, in words."""
    if not normalised(preprocess):
        return "black (this model's input is not normalised: 0 is a black pixel)"
    colour = tuple(round(255 * m) for m in preprocess.mean)
    return (f"the mean colour {colour} (RGB 0-255): this model normalises its input, (x - mean) / std, so 0 "
            f"there is the mean, not black")


def default_sigma(x: torch.Tensor) -> float:
    """A twentieth of the input's shorter side, in pixels (11.2 for 224)."""
    return max(0.5, min(x.shape[-2:]) / 20)


def gaussian_blur(x: torch.Tensor, sigma: float) -> torch.Tensor:
    """x (N, C, H, W) under a Gaussian blur of `sigma` pixels, reflected at the borders, channel by channel."""
    from torchvision.transforms.functional import gaussian_blur as blur

    radius = max(1, math.ceil(3 * sigma))
    height, width = (min(2 * radius + 1, 2 * side - 1) for side in x.shape[-2:])  # odd; the pad under the side
    return blur(x, kernel_size=[width, height], sigma=[float(sigma), float(sigma)])


def make_baseline(name: str, x: torch.Tensor, preprocess: Preprocess | None = None, sigma: float | None = None,
                  seed: int | None = None, input_shape: tuple[int, ...] | None = None) -> Baseline:
    """The baseline `name` (one of BASELINES, or a file) for input x, in the model's input space."""
    if not isinstance(name, str) or not name.strip():
        raise SpecError(f"A baseline is one of {', '.join(BASELINES)}, or an image or tensor file; not {name!r}.")
    if sigma is not None and (not math.isfinite(sigma) or sigma <= 0):
        raise SpecError(f"The blur's sigma is a number of pixels above 0, not {sigma!r}.")
    x = x.detach()
    mean, std = _stats(preprocess, x)
    if name == "zero":
        return Baseline("zero", torch.zeros_like(x), "zero: " + zero_means(preprocess))
    if name == "mean":
        return Baseline("mean", torch.zeros_like(x), "mean: the preprocessing's mean colour, (mean - mean) / std = 0"
                        if normalised(preprocess) else "mean: none for this model's input (not normalised): black")
    if name in ("black", "white"):
        value = 0.0 if name == "black" else 1.0
        return Baseline(name, torch.zeros_like(x) + (value - mean) / std, f"{name}: pixels {value:g} before "
                        "normalisation")
    if name == "blur":
        if x.ndim != 4:
            raise SpecError(f"A blurred baseline needs an image input (N, C, H, W), not shape {tuple(x.shape)}.")
        s = default_sigma(x) if sigma is None else float(sigma)
        return Baseline("blur", gaussian_blur(x, s), f"blur: the input blurred, sigma {s:g} pixels", sigma=s)
    if name == "uniform":
        used = secrets.randbelow(2**31) if seed is None else check_seed(seed, "The baseline seed")
        generator = torch.Generator(device="cpu").manual_seed(used)
        noise = torch.rand(x.shape, generator=generator, dtype=torch.float32).to(device=x.device, dtype=x.dtype)
        return Baseline("uniform", (noise - mean) / std, f"uniform: noise in [0, 1] before normalisation, seed {used}",
                        seed=used)
    from inspector.core.inputs.files import load_input

    try:
        tensor = load_input(name, preprocess, input_shape or tuple(x.shape))
    except (InputError, OSError, ValueError) as exc:
        raise SpecError(f"The baseline {name!r} is not one of {', '.join(BASELINES)} and does not load as a "
                        f"file: {exc}") from exc
    if tensor.is_complex():
        raise SpecError(f"The baseline file {name} is complex ({str(tensor.dtype).removeprefix('torch.')}): a "
                        f"baseline holds real numbers, as the input does.")
    if tuple(tensor.shape) != tuple(x.shape):
        raise SpecError(f"The baseline file {name} gives shape {tuple(tensor.shape)}, not the input's "
                        f"{tuple(x.shape)}.")
    return Baseline("file", tensor.to(device=x.device, dtype=x.dtype), f"file: {name}")
