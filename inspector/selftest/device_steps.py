"""`--self-test --device cuda`: every engine path run on the device and checked against the CPU.

Capture with edits, the attribution methods (all but attention rollout, which needs a ViT) with their
deletion and insertion scores (the demo's class and the demo detector's box), the channel atlas, a diff, and
the app offscreen with the device picked: each on `device`, with the same numbers as on the CPU (to float32
rounding across kernels; TF32 off while the device runs; a detector's maps in relative L2, see DETECTOR_REL_L2).
Built for a GPU; any device torch knows works (the tests run them with `cpu`, where they must agree exactly).
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from .base import EDITS, SITES, Context, check
from .runner import Step

#: Agreement with the CPU: float32 kernels (cuDNN, TF32 off) reorder sums.
RTOL, ATOL_OF_MAX = 1e-3, 1e-4


def _close(a, b) -> bool:
    import numpy as np

    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    scale = max(float(np.abs(b).max()) if b.size else 0.0, 1e-12)
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=RTOL, atol=ATOL_OF_MAX * scale))


#: A detector's gradients pass discrete choices (max-pooling's ties on the flat-coloured shapes, ReLU at 0, top-k,
#: NMS) that float32 rounding flips differently in different kernels: a few pixels take another pixel's gradient.
#: On an H200 the demo detector's saliency of box:0 moved by 1.2% of its peak at 442 of 31,684 pixels from the CPU's
#: (relL2 4.1e-3, integrated gradients 4.3e-4), as much as the CPU's own with one thread or two, with oneDNN or
#: without, moves from float64's. Its maps and curves agree in relative L2 instead; a wrong box, class or input
#: is off by the order of 1.
DETECTOR_REL_L2 = 2e-2


def _near(a, b) -> bool:
    import numpy as np

    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return a.shape == b.shape and float(np.linalg.norm(a - b)) <= DETECTOR_REL_L2 * max(float(np.linalg.norm(b)), 1e-30)


#: The methods checked, with options that keep them short (noise and masks are drawn on the CPU: the same
#: on every device).
CLASSIFIER_METHODS = (("saliency", {}), ("gradcam", {}), ("guided", {}), ("guided-gradcam", {}),
                      ("ig", {"steps": 8}), ("smoothgrad", {"samples": 4, "seed": 1}),
                      ("occlusion", {"window": 16, "stride": 16}), ("eigencam", {}))
DETECTOR_METHODS = (("saliency", {}), ("gradcam", {}), ("ig", {"steps": 4}),
                    ("smoothgrad", {"samples": 3, "seed": 1}), ("drise", {"masks": 8, "seed": 1}))


@contextlib.contextmanager
def exact_float32():
    """TF32 off while in the block (cuDNN's convolutions use it by default on Ampere and later: 1e-3
    relative, as large as the agreement checked), and as it was after."""
    import torch

    kept = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = kept


def _named(device: str) -> str:
    """The device's name as a tensor on it reports it (`cuda` is `cuda:0`, `mps` is `mps:0`)."""
    import torch

    from inspector.core.sources.devices import resolve_device

    return str(torch.empty(0, device=resolve_device(device)).device)


def _attribution(loaded, x, method: str, target: str, options: dict, device: str):
    """The map and its scores as the app's worker makes them: the model moved, the input as decoded."""
    from inspector.core.attribution import attribute
    from inspector.core.sources.devices import resolve_device
    from inspector.core.attribution.scores.faithfulness import scored

    loaded.module.to(resolve_device(device))
    try:
        found = attribute(loaded, x, method, target, None, dict(options) or None)
        if method == "eigencam":  # class-agnostic: no score to follow
            return found
        return scored(loaded, x, found, ("deletion", "insertion"), 8, "black")
    finally:
        loaded.module.to("cpu")


def device_steps(device: str) -> list[Step]:
    """The steps that run the engine's paths on `device` (named `DEVICE_capture`, ...)."""
    name = device.replace(":", "")

    def capture(ctx: Context) -> None:
        """Every site on every leaf with both edits, on the device, equals the CPU's."""
        from inspector.core import capture as run

        with exact_float32():
            on = run(ctx.demo(), ctx.demo_input(), layers="all", sites=SITES, edits=list(EDITS), target="top1",
                     device=device, input_grad=True)
        cpu = ctx.run(EDITS)
        ctx.demo().module.to("cpu")
        check(on.device == _named(device), f"the run went to {on.device}, not {device}")
        check(set(on.captures) == set(cpu.captures), "the device's captures are not the CPU's")
        for key in cpu.captures:
            check(_close(on[key], cpu[key]), f"{key} differs between {device} and the CPU")
        ctx.info[f"{name}_captures"] = len(on.captures)

    def attribution(ctx: Context) -> None:
        """Every attribution method, with the deletion and insertion scores, on the device equals the CPU's:
        the demo's and the demo detector's box, the input left on the CPU as the app and the CLI hand it over."""
        from inspector.core import load_input, load_model

        detector = load_model("demo-detector")
        image = load_input("sample:detect_four_shapes", detector.preprocess, detector.input_shape)
        cases = [(ctx.demo(), ctx.demo_input(), "top1", CLASSIFIER_METHODS),
                 (detector, image, "box:0", DETECTOR_METHODS)]
        for loaded, x, target, methods in cases:
            for method, options in methods:
                with exact_float32():
                    on = _attribution(loaded, x, method, target, options, device)
                cpu = _attribution(loaded, x, method, target, options, "cpu")
                what = f"{method} of {loaded.source} ({target})"
                agree = _near if loaded is detector else _close
                check(agree(on.map, cpu.map), f"{what}: the map differs between {device} and the CPU")
                check([c.metric for c in on.curves] == [c.metric for c in cpu.curves], f"{what}: other scores")
                for ours, theirs in zip(on.curves, cpu.curves):
                    check(agree(ours.scores, theirs.scores),
                          f"{what}: the {theirs.metric} curve differs between {device} and the CPU")
        ctx.info[f"{name}_attribution_methods"] = sum(len(case[3]) for case in cases)

    def atlas(ctx: Context) -> None:
        """An atlas of six images on the device has the CPU's statistics and top scores."""
        import numpy as np
        from PIL import Image

        from inspector.core.atlas import run_atlas

        data = Path.cwd() / f"{name}-atlas-data"
        data.mkdir(exist_ok=True)
        rng = np.random.default_rng(0)
        for i in range(6):
            Image.fromarray(rng.integers(0, 256, (48, 48, 3), dtype=np.uint8)).save(data / f"{i}.png")
        with exact_float32():
            on = run_atlas(ctx.demo(), str(data), "conv1,conv2", 3, str(Path.cwd() / f"{name}-atlas"), batch=4,
                           device=device)
        cpu = run_atlas(ctx.demo(), str(data), "conv1,conv2", 3, str(Path.cwd() / f"{name}-atlas-cpu"), batch=4)
        ctx.demo().module.to("cpu")
        for layer, theirs in cpu["layers"].items():
            ours = on["layers"][layer]
            for field in ("mean", "std", "frac_positive"):
                check(_close(ours[field], theirs[field]), f"{layer} {field} differs between {device} and the CPU")
            scores = [[e["score"] for e in channel] for channel in ours["top"]]
            check(_close(scores, [[e["score"] for e in channel] for channel in theirs["top"]]),
                  f"{layer}'s top scores differ between {device} and the CPU")

    def diff(ctx: Context) -> None:
        """The demo against random weights of itself: the same table on the device as on the CPU."""
        from inspector.core import diff_models, load_model

        first = ctx.demo()
        second = load_model("demo")
        with __import__("torch").no_grad():
            for p in second.module.parameters():
                p.mul_(1.01)  # a slightly different second model
        x = ctx.demo_input()
        with exact_float32():
            on = diff_models(first, second, x, "conv1,conv2,fc", "output", device=device)
        first.module.to("cpu")
        second.module.to("cpu")
        cpu = diff_models(first, second, x, "conv1,conv2,fc", "output", device="cpu")
        check([r.key for r in on.rows] == [r.key for r in cpu.rows], "the diff rows differ")
        check(_close([r.rel_l2 for r in on.rows], [r.rel_l2 for r in cpu.rows]),
              f"the relative differences differ between {device} and the CPU")

    def app(ctx: Context) -> None:
        """The app offscreen with the device picked runs the demo there."""
        from .qt_steps import first_run_shown

        with first_run_shown(ctx, f"{name}-設定.ini", restore=True, device=device) as (_window, shown):
            ran_on = shown.result.device
            check(ran_on == _named(device), f"the app ran on {ran_on}, not {device}")

    return [(f"{name}_capture", capture), (f"{name}_attribution", attribution), (f"{name}_atlas", atlas),
            (f"{name}_diff", diff), (f"{name}_app", app)]


def missing_device(device: str) -> str | None:
    """Why `device` cannot be tested here (one line), or None when it can."""
    import torch

    kind = device.split(":")[0]
    if kind == "cuda" and not torch.cuda.is_available():
        build = torch.version.cuda or "none"
        return f"no CUDA device: this machine has none that torch {torch.__version__} (CUDA build {build}) can use."
    if kind == "mps" and not torch.backends.mps.is_available():
        return "no MPS device: this machine has none torch can use."
    if kind not in ("cpu", "cuda", "mps"):
        return f"unknown device {device!r}: use cuda, cuda:N, mps or cpu."
    if kind == "cuda" and ":" in device:
        index = device.split(":", 1)[1]
        if not index.isdigit() or int(index) >= torch.cuda.device_count():
            return f"no CUDA device {device}: this machine has {torch.cuda.device_count()}."
    return None
