"""`network-inspector concepts`: a dictionary of concepts learned over one layer's activations on a folder of
images (inspector.core.concepts), and its fit measured on held-out images against PCA with the same K."""

from __future__ import annotations

import argparse

from inspector.core.common.errors import SpecError

from . import common, folder_job

STAGES = {"pass": ("activations", "img"), "fit": ("fitting", "step"), "measure": ("top images", "img")}


def add_parser(sub) -> None:
    p = folder_job.add_job_parser(sub, "concepts", "learn K concepts (directions in a layer's channels) over a folder "
                                                   "of images: NMF or a sparse autoencoder, its fit measured against PCA")
    p.add_argument("--layer", required=True, help="the layer (a module path, e.g. layer4 or blocks.6)")
    p.add_argument("--k", type=int, required=True, help="number of concepts")
    p.add_argument("--method", choices=("nmf", "sae"), default="nmf",
                   help="nmf: non-negative matrix factorisation (a non-negative layer, after a ReLU); sae: a top-k "
                        "sparse autoencoder (any layer)")
    p.add_argument("--sparsity", type=int, default=None, metavar="TOPK",
                   help="sae: concepts active per sample (its top-k); required with --method sae")
    p.add_argument("--fit-seed", type=int, default=0, metavar="S",
                   help="seed of the fit and of the held-out split (default 0): the same seed gives the same "
                        "dictionary (--seed is the model's, for random weights)")
    p.add_argument("--held-out", type=float, default=0.2, metavar="FRACTION",
                   help="fraction of the images kept out of the fit to measure it (default 0.2)")
    p.add_argument("--epochs", type=int, default=None, help="passes over the samples (default: nmf 10, sae 20)")
    p.add_argument("--max-memory", type=float, default=1024, metavar="MB",
                   help="memory for the samples in hand (default 1024 MB): a smaller bound, smaller batches; the "
                        "folder's samples wait on disk in OUT")
    p.add_argument("--top", type=int, default=9, help="top images kept per concept (default 9)")
    folder_job.add_run_args(
        p, batch="images per forward pass at most (default 16)",
        restart="start over: forget what an earlier run left in --out",
        ray="run the activation pass as a Ray Data pipeline, as the atlas does: a local Ray instance, or the cluster "
            "at ADDRESS (HOST:PORT of its head, or auto); needs the ray extra")
    p.add_argument("--out", required=True, help="output folder: dictionary.safetensors, concepts.json, "
                                                "thumbnails/, pages/")


def run(args: argparse.Namespace) -> int:
    folder_job.check_first(args, lambda: sae_has_sparsity(args))

    from inspector.core.concepts import learn_concepts

    loaded = common.load(args)
    bars = folder_job.StageBars(STAGES)
    record = folder_job.run_job(
        args, lambda **run: learn_concepts(loaded, args.data, args.layer, args.out, method=args.method, k=args.k,
                                           sparsity=args.sparsity, seed=args.fit_seed, held_out=args.held_out,
                                           epochs=args.epochs, max_memory_mb=args.max_memory, top=args.top, **run),
        bars)
    if record is None:
        return 130
    folder_job.say_skipped(record["data"]["skipped"])
    print("\n".join(table(record)))
    print(f"-> {args.out}/dictionary.safetensors, concepts.json, pages/")
    folder_job.say_seed(loaded)
    return 0


def sae_has_sparsity(args: argparse.Namespace) -> None:
    if args.method == "sae" and args.sparsity is None:
        raise SpecError("--method sae needs --sparsity TOPK (the concepts active per sample).")


def table(record: dict) -> list[str]:
    """The fit as a small table: the dictionary against PCA with the same K, on the held-out samples."""
    fit, k = record["fit"], record["k"]
    held = len(record["data"]["held_out"])
    lines = [f"{record['method']} K={k} on {record['layer']} ({record['channels']} channels, {record['layout']}): "
             f"{record['images']} images, {held} held out; measured on {fit['samples']} {fit['measured_on']} samples"]

    def share(value) -> str:
        return "-" if value is None else f"{value:.4f}"

    rows = [("variance explained", share(fit["variance_explained"])),
            (f"PCA, same K ({fit['pca_k']})", share(fit["pca_variance_explained"])),
            ("sparsity (active per sample)", f"{fit['sparsity']:.2f} of {k}")]
    if "relative_error" in fit:
        rows.append(("relative error |X-CD|/|X|", share(fit["relative_error"])))
    never = fit["never_active"]
    rows.append(("never active", ", ".join(map(str, never)) if never else "none"))
    width = max(len(r[0]) for r in rows)
    lines += [f"  {name:<{width}}  {value}" for name, value in rows]
    return lines
