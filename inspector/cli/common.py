"""What every command shares: the model arguments, the seed and its note, loading with a download
bar, the run manifest's source fields, and the `--json FILE` check of the long commands."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from inspector.core.storage.outputs import make_parent, output_path
from inspector.core.sources.seeds import check_seed

CODE_WARNING = (
    "file.py:Name and package.module:Name run that Python code; TorchScript and .pt2 files, "
    "and hf: folders with pickled weights or code of their own, can also carry code and need --trust."
)


TARGET_HELP = ("top1 (classifiers), a class index, sum, output, seg:CLASS[@X0,Y0,X1,Y1] (segmentation: that class's "
               "logits over all pixels or a box), box:K (detectors: the K-th detection's score, box:0 the best) or "
               "box:X0,Y0,X1,Y1[@CLASS] (the detection that best overlaps that box, IoU >= 0.5); for CLIP and SigLIP, "
               'text:"PROMPT" (the score of the image and that prompt) or text:"P1"|"P2"|... (the first prompt\'s '
               "probability among them)")


def model_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default="demo",
                        help="demo, demo-detector, demo-shuffled (the demo trained on shuffled labels), a "
                             "torchvision name (resnet18, fasterrcnn_resnet50_fpn), "
                             "timm:NAME (any timm model, e.g. timm:vit_small_patch16_224), hf:PATH_OR_ID[#OUTPUT] (a transformers save_pretrained "
                             "folder or an id in the local Hugging Face cache; #OUTPUT picks the output read "
                             "instead of logits), file.py:Name, package.module:Name, "
                             "a TorchScript file or a .pt2 program. " + CODE_WARNING)
    parser.add_argument("--weights", default=None,
                        help="random | pretrained | PATH (.safetensors or a weights-only checkpoint). timm's "
                             "pretrained weights are read from the local Hugging Face cache (HF_HUB_CACHE); "
                             "hf: sources default to the folder's own weights (pretrained)")
    parser.add_argument("--trust", action="store_true",
                        help="allow loading files that can run code (TorchScript, .pt2, pickled models, an hf: "
                             "folder's pickled .bin weights or its own code, trust_remote_code)")
    parser.add_argument("--seed", default=None, metavar="N",
                        help="seed for random weights (torchvision, timm and hf: --weights random, file.py:Name, "
                             "package.module:Name), 0 to 4294967295; the same seed gives the same weights "
                             "here, in the app and in session files. Default: a new seed, printed")
    parser.add_argument("--score-threshold", type=float, default=None, metavar="S",
                        help="detectors: keep the detections scoring at least S (0 to 1). Default: the model's own "
                             "(0 for random weights, which score near chance)")


def seed(args) -> int | None:
    return check_seed(args.seed, "--seed", text=True)


def check_model_args(args) -> None:
    """The model arguments that need no model, the seed and the score threshold, checked before torch is imported."""
    from inspector.core.detection.thresholds import check_score_threshold

    seed(args)
    if getattr(args, "score_threshold", None) is not None:
        check_score_threshold(args.score_threshold)


def seed_note(source: str, seed: int, flag: str = "--seed") -> str:
    """What the seed made: random weights where the loader drew them (torchvision, timm, hf: --weights random);
    a Python factory's weights are what it made under the seed, which need not be random (ToyMLP fixes its own)."""
    from inspector.core.sources.refs import is_factory

    if is_factory(source):
        return f"weights as the factory made them, under seed {seed} ({flag} {seed} makes them again)"
    return f"random weights, seed {seed} ({flag} {seed} gives them again)"


def load(args):
    from inspector.core import load_model  # torch: loaded when a command runs, so the app launches without it

    def progress(done: int, total: int) -> None:
        if total:
            end = "\n" if done >= total else ""
            print(f"\rdownloading weights: {done / total:6.1%}", end=end, file=sys.stderr, flush=True)

    loaded = load_model(args.model, args.weights, trust=args.trust, progress=progress, seed=seed(args))
    keep_scores(args, loaded)
    return loaded


def keep_scores(args, loaded) -> None:
    """--score-threshold on a loaded model: the detections it keeps (a SpecError for a model that keeps none)."""
    if getattr(args, "score_threshold", None) is not None:
        from inspector.core.detection.thresholds import set_score_threshold

        set_score_threshold(loaded.module, args.score_threshold)


def files_read(args, *more: tuple[str, str | None]) -> list[tuple[str, str | None]]:
    """The files a command reads, by the flag that names them (for `outputs.not_read`): `more` (its --input,
    --baseline, --session) and the model arguments' --weights and --model (file.py:Name reads file.py); a
    sample: input is the bundled picture itself."""
    from inspector.core.common.errors import InputError
    from inspector.core.inputs.samples import resolve_sample  # torch-free: --out is checked before torch loads
    from inspector.core.sources.refs import is_factory

    found = []
    for flag, source in (*more, ("--weights", args.weights), ("--model", args.model)):
        if flag == "--model" and source and is_factory(source):
            source = source.rsplit(":", 1)[0]
        if source and source.startswith("sample:"):
            try:
                source = str(resolve_sample(source[7:]))
            except InputError:
                source = None  # no such sample: said where the input is loaded
        found.append((flag, source))
    return found


def json_out(args) -> Path | None:
    """`--json FILE` of bench and sweep, checked before the long run."""
    return make_parent(output_path(args.json, flag="--json")) if args.json else None


def detection_lines(result, most: int = 20) -> list[str]:
    """A detector's detections as the commands print them, best first; the target's marked with `>`."""
    if result.detections is None:
        return []
    lines = [f"{'>' if k == result.target_detection else ' '} box:{k:<3} {d.score:7.2%}  {d.name} (class {d.label})  "
             f"[{', '.join(f'{v:.1f}' for v in d.box)}]" for k, d in enumerate(result.detections[:most])]
    if len(result.detections) > most:
        lines.append(f"  ... and {len(result.detections) - most} more (--json lists them all)")
    return lines or ["no detections above the score threshold"]
