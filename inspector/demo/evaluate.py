"""Held-out accuracy of the demo weights: ``python -m inspector.demo.evaluate``."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

from inspector.demo.model import load_demo, preprocess
from inspector.demo.shapes import CLASSES, make_batch


def predict(model: nn.Module, images: np.ndarray, mean: Sequence[float],
            std: Sequence[float], batch_size: int = 256) -> np.ndarray:
    """Predicted class index for each uint8 NxHxWx3 image (model must be in eval mode)."""
    preds = []
    with torch.inference_mode():
        for i in range(0, len(images), batch_size):
            x = preprocess(images[i:i + batch_size], mean, std)
            preds.append(model(x).argmax(dim=1).numpy())
    return np.concatenate(preds) if preds else np.empty(0, dtype=np.int64)


def accuracy(model: nn.Module, images: np.ndarray, labels: np.ndarray,
             mean: Sequence[float], std: Sequence[float]) -> float:
    """Fraction of ``images`` classified as their ``labels``."""
    return float((predict(model, images, mean, std) == labels).mean())


def main(argv: Sequence[str] | None = None) -> int:
    """Print overall and per-class accuracy on a freshly generated set."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=2000, help="number of test images")
    parser.add_argument("--seed", type=int, default=12345,
                        help="generator seed (not used in training)")
    parser.add_argument("--weights", default=None, help="weights file (default: bundled)")
    args = parser.parse_args(argv)

    torch.set_num_threads(2)
    bundle = load_demo(args.weights)
    images, labels = make_batch(args.n, args.seed)
    preds = predict(bundle.model, images, bundle.mean, bundle.std)
    print(f"held-out accuracy (n={args.n}, seed={args.seed}): {(preds == labels).mean():.4f}")
    for c, name in enumerate(CLASSES):
        mask = labels == c
        if mask.any():
            print(f"  {name:<13} {(preds[mask] == c).mean():.4f}  (n={int(mask.sum())})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
