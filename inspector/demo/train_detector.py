"""Train the demo detector on generated scenes: ``python -m inspector.demo.train_detector``.

Deterministic for a given ``--seed`` on a given machine: the model starts from
``torch.manual_seed(seed)``, the training scenes are ``make_scene(scene_seed(seed, i))``
and shuffling and augmentation (flips and transposes, which keep every shape's
class) come from one seeded generator. The defaults (8000 scenes, 4 epochs) take
about nine minutes on two otherwise idle CPU threads; the run writes ``detector.safetensors`` and ``detector.json`` (with the
held-out mAP@0.5 of :mod:`inspector.demo.evaluate_detector`) into ``--out``.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path

import torch
from safetensors.torch import save_file

from inspector.demo.detector import INPUT_SIZE, LABELS, SCORE_THRESHOLD, build_detector
from inspector.demo.evaluate_detector import HELDOUT_SEED, evaluate, heldout_scenes
from inspector.demo.paths import demo_dir
from inspector.demo.scenes import make_scene

ARCHITECTURE = ("inspector.demo.detector:build_detector (torchvision FCOS with class-agnostic NMS, one stride-8 "
                "level; 5-stage CNN 16-32-64-96-128 with max-pooling and residual blocks, 64-channel top-down FPN, "
                "2-conv heads)")


def scene_seed(seed: int, index: int) -> int:
    """Seed of training scene ``index`` (below 1,000,000) of run ``seed``: always below HELDOUT_SEED."""
    return 1_000_000 * (seed % 800) + index


def augment(image: torch.Tensor, boxes: torch.Tensor, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Random horizontal flip, vertical flip and transpose of a CHW image and its Nx4 boxes."""
    hflip, vflip, transpose = (torch.rand(3, generator=gen) < 0.5).tolist()
    boxes = boxes.clone()
    if hflip:
        image = image.flip(2)
        boxes[:, [0, 2]] = image.shape[2] - boxes[:, [2, 0]]
    if vflip:
        image = image.flip(1)
        boxes[:, [1, 3]] = image.shape[1] - boxes[:, [3, 1]]
    if transpose:
        image = image.transpose(1, 2)
        boxes = boxes[:, [1, 0, 3, 2]]
    return image.contiguous(), boxes


def train(out: Path, seed: int, epochs: int, n_scenes: int, batch_size: int, lr: float, n_eval: int) -> float:
    """Train, write weights and metadata into ``out`` and return the held-out mAP@0.5."""
    if not 0 < n_scenes <= 1_000_000:
        raise ValueError("n_scenes must be in 1..1,000,000 (the training seeds of one run)")
    torch.manual_seed(seed)
    torch.set_num_threads(2)
    gen = torch.Generator().manual_seed(seed)
    t0 = time.perf_counter()

    scenes = [make_scene(scene_seed(seed, i)) for i in range(n_scenes)]
    images = [torch.from_numpy(s.image).permute(2, 0, 1).contiguous() for s in scenes]  # uint8 CHW
    targets = [(torch.from_numpy(s.boxes), torch.from_numpy(s.labels)) for s in scenes]
    print(f"generated {n_scenes} scenes in {time.perf_counter() - t0:.0f}s", flush=True)

    model = build_detector()
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    steps_per_epoch = n_scenes // batch_size
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=epochs * steps_per_epoch,
                                                pct_start=0.15)
    for epoch in range(1, epochs + 1):
        model.train()
        order = torch.randperm(n_scenes, generator=gen).tolist()
        totals: dict[str, float] = {}
        for step in range(steps_per_epoch):
            batch, batch_targets = [], []
            for i in order[step * batch_size:(step + 1) * batch_size]:
                image, boxes = augment(images[i].float().div_(255.0), targets[i][0], gen)
                batch.append(image)
                batch_targets.append({"boxes": boxes, "labels": targets[i][1]})
            losses = model(batch, batch_targets)
            loss = sum(losses.values())
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)
            opt.step()
            sched.step()
            for k, v in losses.items():
                totals[k] = totals.get(k, 0.0) + v.item() / steps_per_epoch
        parts = "  ".join(f"{k} {v:.3f}" for k, v in totals.items())
        print(f"epoch {epoch:2d}/{epochs}  {parts}  ({time.perf_counter() - t0:.0f}s)", flush=True)
    train_seconds = time.perf_counter() - t0

    model.eval()
    mean_ap, per_class = evaluate(model, heldout_scenes(n_eval))
    print(f"held-out mAP@0.5 {mean_ap:.4f}  " + "  ".join(f"{n} {ap:.3f}" for n, ap in zip(LABELS, per_class)))

    out.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
    save_file(state, str(out / "detector.safetensors"), metadata={"format": "pt"})
    meta = {
        "labels": list(LABELS), "input_size": list(INPUT_SIZE), "score_threshold": SCORE_THRESHOLD,
        "architecture": ARCHITECTURE,
        "train": {"seed": seed, "epochs": epochs, "n_scenes": n_scenes, "batch_size": batch_size, "lr": lr,
                  "threads": torch.get_num_threads(), "seconds": round(train_seconds)},
        "heldout": {"first_seed": HELDOUT_SEED, "n_scenes": n_eval, "map50": round(mean_ap, 4),
                    "ap50": {n: round(ap, 4) for n, ap in zip(LABELS, per_class)}},
    }
    (out / "detector.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out / 'detector.safetensors'} and detector.json in {time.perf_counter() - t0:.0f}s", flush=True)
    return mean_ap


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=demo_dir())
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--scenes", type=int, default=8000, help="training scenes (reused every epoch)")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--eval-scenes", type=int, default=500, help="held-out scenes for the recorded mAP")
    args = parser.parse_args(argv)
    train(args.out, args.seed, args.epochs, args.scenes, args.batch_size, args.lr, args.eval_scenes)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
