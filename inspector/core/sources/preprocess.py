"""How an image becomes a model's input tensor, as a plain record the UI can also show."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from PIL import Image

_RESAMPLE = {"bilinear": Image.BILINEAR, "bicubic": Image.BICUBIC, "nearest": Image.NEAREST,
             "lanczos": Image.LANCZOS, "box": Image.BOX, "hamming": Image.HAMMING}


@dataclass(frozen=True)
class Preprocess:
    """Resize the short side (or to exactly `size`), centre-crop, scale to [0, 1], normalise. None
    skips a step. `size` (height, width) stretches to that size, as Hugging Face image processors
    with `size: {height, width}` do."""

    resize: int | None = None
    crop: int | None = None
    mean: tuple[float, ...] = (0.0, 0.0, 0.0)
    std: tuple[float, ...] = (1.0, 1.0, 1.0)
    interpolation: str = "bilinear"
    size: tuple[int, int] | None = None

    def __call__(self, image: Image.Image) -> torch.Tensor:
        """An RGB image -> a (1, 3, H, W) float32 tensor."""
        image = image.convert("RGB")
        if self.size:
            image = image.resize((self.size[1], self.size[0]), _RESAMPLE.get(self.interpolation, Image.BILINEAR))
        elif self.resize:
            w, h = image.size
            scale = self.resize / min(w, h)
            size = (max(1, round(w * scale)), max(1, round(h * scale)))
            image = image.resize(size, _RESAMPLE.get(self.interpolation, Image.BILINEAR))
        if self.crop:
            w, h = image.size
            left, top = (w - self.crop) // 2, (h - self.crop) // 2
            image = image.crop((left, top, left + self.crop, top + self.crop))
        array = np.asarray(image, dtype=np.float32) / 255.0
        tensor = torch.from_numpy(array).permute(2, 0, 1).contiguous()
        mean = torch.tensor(self.mean, dtype=torch.float32)[:, None, None]
        std = torch.tensor(self.std, dtype=torch.float32)[:, None, None]
        return ((tensor - mean) / std)[None]

    def to_display(self, tensor: torch.Tensor | np.ndarray) -> np.ndarray:
        """A (1, 3, H, W) model input back to an H x W x 3 uint8 picture of what the model sees."""
        if isinstance(tensor, np.ndarray) and not tensor.flags.writeable:
            tensor = tensor.copy()  # torch warns of a read-only array (an input a remote engine sent back)
        t = torch.as_tensor(tensor, dtype=torch.float32).detach().cpu()
        if t.ndim == 4:
            t = t[0]
        mean = torch.tensor(self.mean)[:, None, None]
        std = torch.tensor(self.std)[:, None, None]
        rgb = (t * std + mean).clamp(0, 1).permute(1, 2, 0).numpy()
        return (rgb * 255 + 0.5).astype(np.uint8)

    @property
    def input_shape(self) -> tuple[int, int, int, int] | None:
        if self.crop:
            return (1, 3, self.crop, self.crop)
        return (1, 3, *self.size) if self.size else None

    def to_dict(self) -> dict:
        return dict(resize=self.resize, crop=self.crop, mean=list(self.mean), std=list(self.std),
                    interpolation=self.interpolation, size=list(self.size) if self.size else None)
