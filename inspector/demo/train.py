"""Train the demo CNN on synthetic shapes: ``python -m inspector.demo.train``.

Deterministic for a given ``--seed``: the training set is generated with seed
``1000 + seed`` and the validation set with ``2000 + seed``. Writes
``demo.safetensors`` and ``demo.json`` into ``--out``.

``--shuffle-labels`` trains the demo's twin on the same images with their labels
permuted once (by a generator seeded ``3000 + seed``), so it learns nothing about
shapes (the data randomisation test of Adebayo et al., 2018). It writes
``demo-shuffled.safetensors`` and ``demo-shuffled.json``; the seeds are recorded in
both (the weights' metadata and the JSON), and its validation accuracy, on the true
labels, is near chance.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.torch import save_file

from inspector.demo.evaluate import accuracy
from inspector.demo.model import DemoNet
from inspector.demo.paths import demo_dir
from inspector.demo.shapes import CLASSES, SIZE, make_batch


def augment(x: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """Random per-sample horizontal flips plus a random 90-degree batch rotation."""
    flip = torch.rand(x.shape[0], generator=gen) < 0.5
    x = torch.where(flip.view(-1, 1, 1, 1), x.flip(3), x)
    k = int(torch.randint(4, (1,), generator=gen))
    return torch.rot90(x, k, dims=(2, 3)).contiguous(memory_format=torch.channels_last)


#: What the shuffled-label twin's training permutes its labels with: ``LABEL_SEED_OFFSET + seed``.
LABEL_SEED_OFFSET = 3000


def shuffled(labels: np.ndarray, seed: int) -> np.ndarray:
    """``labels`` permuted once by a generator seeded ``LABEL_SEED_OFFSET + seed``: each image keeps a
    random label for the whole training (the class counts are unchanged)."""
    return np.random.default_rng(LABEL_SEED_OFFSET + seed).permutation(labels)


def train(epochs: int, seed: int, out: Path, n_train: int, n_val: int,
          batch_size: int, lr: float, shuffle_labels: bool = False) -> float:
    """Train, save weights + metadata to ``out`` and return validation accuracy (on the true labels)."""
    torch.manual_seed(seed)
    torch.set_num_threads(2)
    gen = torch.Generator().manual_seed(seed)

    t0 = time.perf_counter()
    train_x, train_y = make_batch(n_train, 1000 + seed)
    if shuffle_labels:
        train_y = shuffled(train_y, seed)
    val_x, val_y = make_batch(n_val, 2000 + seed)
    pixels = train_x[:2000].reshape(-1, 3).astype(np.float32) / 255.0  # subset: saves memory
    mean = tuple(round(float(v), 4) for v in pixels.mean(axis=0))
    std = tuple(round(float(v), 4) for v in pixels.std(axis=0))
    print(f"generated {n_train} train / {n_val} val images "
          f"in {time.perf_counter() - t0:.1f}s", flush=True)

    xs = torch.from_numpy(train_x)  # uint8 NHWC; normalised per batch to save memory
    m = torch.tensor(mean).view(1, 3, 1, 1)
    s = torch.tensor(std).view(1, 3, 1, 1)
    ys = torch.from_numpy(train_y)
    model = DemoNet(num_classes=len(CLASSES)).to(memory_format=torch.channels_last)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    steps = epochs * (n_train // batch_size)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps)

    val_acc = 0.0
    for epoch in range(1, epochs + 1):
        model.train()
        order = torch.randperm(n_train, generator=gen)
        total, count = 0.0, 0
        for i in range(n_train // batch_size):
            idx = order[i * batch_size:(i + 1) * batch_size]
            x = xs[idx].permute(0, 3, 1, 2).float().div_(255.0).sub_(m).div_(s)  # channels_last
            x = augment(x, gen)
            loss = F.cross_entropy(model(x), ys[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item() * len(idx)
            count += len(idx)
        model.eval()
        val_acc = accuracy(model, val_x, val_y, mean, std)
        print(f"epoch {epoch:2d}/{epochs}  loss {total / count:.4f}  "
              f"val acc {val_acc:.4f}  ({time.perf_counter() - t0:.0f}s)", flush=True)

    out.mkdir(parents=True, exist_ok=True)
    name = "demo-shuffled" if shuffle_labels else "demo"
    recipe = {"seed": seed, "epochs": epochs, "n_train": n_train, "val_seed": 2000 + seed}
    if shuffle_labels:
        recipe.update(shuffle_labels=True, label_seed=LABEL_SEED_OFFSET + seed)
    model = model.to(memory_format=torch.contiguous_format)
    state = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
    save_file(state, str(out / f"{name}.safetensors"),
              metadata={"format": "pt", **({k: json.dumps(v) for k, v in recipe.items()} if shuffle_labels else {})})
    meta = {
        "classes": list(CLASSES), "mean": list(mean), "std": list(std),
        "input_size": SIZE, "width": 16, "architecture": "inspector.demo.model:DemoNet",
        "train": {**recipe, "val_accuracy": round(val_acc, 4)},
    }
    (out / f"{name}.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out / f'{name}.safetensors'} and {name}.json "
          f"in {time.perf_counter() - t0:.0f}s", flush=True)
    return val_acc


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=demo_dir())
    parser.add_argument("--n-train", type=int, default=16000)
    parser.add_argument("--n-val", type=int, default=2000)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--shuffle-labels", action="store_true",
                        help="train the twin on randomly permuted labels (writes demo-shuffled.*)")
    args = parser.parse_args(argv)
    train(args.epochs, args.seed, args.out, args.n_train, args.n_val, args.batch_size, args.lr,
          args.shuffle_labels)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
