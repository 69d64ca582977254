"""Do concepts mean more than channels? `python -m inspector.bench.concept_purity`

On the trained demo model over a folder of generated shapes (`inspector.demo.shapes`, eight classes, an equal
number of each, drawn with a seed the demo's training never used), learn K concepts of one layer
(`learn_concepts`, default NMF with K = 16 on relu3, conv3's ReLU: NMF needs a non-negative layer) and build the
atlas of the same layer (`run_atlas`). For each concept and each single channel, the purity of its top images
(by its largest value on the image: the concept's coefficient, the channel's activation) is the share of them
that are of the most common shape class among them: 1 when all are one shape, 1/8 at best chance for a mix.
Nothing is trained but the dictionary; the demo's weights are its own.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from collections import Counter
from pathlib import Path


def shapes_folder(folder: Path, per_class: int, seed: int = 5000) -> Path:
    """`per_class` 64 x 64 PNGs of each of the demo's shape classes, in a folder per class (its name)."""
    import numpy as np
    from PIL import Image

    from inspector.demo.shapes import CLASSES, render_array

    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.arange(per_class * len(CLASSES)) % len(CLASSES))
    for i, label in enumerate(labels):
        sub = folder / CLASSES[int(label)]
        sub.mkdir(parents=True, exist_ok=True)
        Image.fromarray(render_array(int(label), rng)).save(sub / f"{i:04d}.png")
    return folder


def purity(images: list[str]) -> tuple[float, str]:
    """The share of `images` (paths CLASS/NAME) of their most common class, and that class."""
    if not images:
        return 0.0, ""
    (name, count), = Counter(Path(image).parts[0] for image in images).most_common(1)
    return count / len(images), name


def concept_purity(per_class: int = 50, layer: str = "relu3", k: int = 16, top: int = 20, method: str = "nmf",
                   sparsity: int | None = None, seed: int = 0, out: Path | None = None,
                   log=print) -> dict:
    """The purity of each concept's and each channel's top images; the folder kept in `out` when given."""
    from inspector.core.atlas import run_atlas
    from inspector.core.concepts import learn_concepts
    from inspector.core.sources.loader import load_model

    loaded = load_model("demo")
    work = Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="concept-purity-"))
    try:
        data = shapes_folder(work / "shapes", per_class)
        record = learn_concepts(loaded, data, layer, work / "concepts", method=method, k=k, sparsity=sparsity,
                                seed=seed, top=top, pictures=False)
        atlas = run_atlas(loaded, data, layer, top, work / "atlas", thumbnails=False)
    finally:
        if out is None:
            shutil.rmtree(work, ignore_errors=True)
    concepts = [purity([e["image"] for e in c["top"]]) + (len(c["top"]),) for c in record["concepts"]]
    channels = [purity([e["image"] for e in entries]) + (len(entries),)
                for entries in atlas["layers"][layer]["top"]]
    row = {"model": "demo", "layer": layer, "method": method, "k": k, "top": top, "images": record["images"],
           "fit": record["fit"],
           "concepts": [{"id": i, "purity": p, "class": c, "top": n} for i, (p, c, n) in enumerate(concepts)],
           "channels": [{"channel": i, "purity": p, "class": c, "top": n} for i, (p, c, n) in enumerate(channels)]}
    row["summary"] = {name: _summary([p for p, _, _ in values], k)
                      for name, values in (("concepts", concepts), ("channels", channels))}
    for line in table(row):
        log(line)
    return row


def _summary(values: list[float], k: int) -> dict:
    best = sorted(values, reverse=True)[:k]
    return {"count": len(values), "mean": statistics.fmean(values), "median": statistics.median(values),
            f"best_{k}_mean": statistics.fmean(best), "at_least_0.9": sum(v >= 0.9 for v in values)}


def table(row: dict) -> list[str]:
    """The report: each concept's purity and class, then the concepts against the channels."""
    k, top = row["k"], row["top"]
    lines = [f"demo {row['layer']}, {row['method']} K={k}, top {top} of {row['images']} images "
             f"(variance explained on held-out images {_f(row['fit'].get('variance_explained'))}, "
             f"PCA with the same K {_f(row['fit'].get('pca_variance_explained'))})",
             "", "| concept | purity | class |", "|---:|---:|:---|"]
    lines += [f"| {c['id']} | {c['purity']:.2f} | {c['class']} |" for c in row["concepts"]]
    lines += ["", f"| top-{top} purity | count | mean | median | mean of the best {k} | >= 0.9 |",
              "|:---|---:|---:|---:|---:|---:|"]
    for name, s in row["summary"].items():
        lines.append(f"| {name} | {s['count']} | {s['mean']:.3f} | {s['median']:.3f} | {s[f'best_{k}_mean']:.3f} "
                     f"| {s['at_least_0.9']} |")
    return lines


def _f(value) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m inspector.bench.concept_purity", description=__doc__.split(
        "\n\n")[0])
    parser.add_argument("--per-class", type=int, default=50, help="generated images of each of the 8 shapes")
    parser.add_argument("--layer", default="relu3")
    parser.add_argument("--k", type=int, default=16)
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--method", choices=("nmf", "sae"), default="nmf")
    parser.add_argument("--sparsity", type=int, default=None, help="with --method sae: its top-k")
    parser.add_argument("--seed", type=int, default=0, help="the dictionary's fit seed")
    parser.add_argument("--out", help="keep the shapes, the concepts and the atlas in this folder")
    parser.add_argument("--json", help="also write the row to this JSON file")
    args = parser.parse_args(argv)
    for name in ("per_class", "k", "top"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1, not {getattr(args, name)}.")
    row = concept_purity(args.per_class, args.layer, args.k, args.top, args.method, args.sparsity, args.seed,
                         Path(args.out) if args.out else None)
    if args.json:
        from inspector.core.storage.writes import write_json

        write_json(Path(args.json), row, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
