"""The self-test's Qt-free steps: environment, torch, the demo model, captures and edits,
offline pretrained weights, checkpoints, untrusted pickles, samples, torchvision's ops, video decoding.

Each step takes the `Context` and raises (`SelfTestError` from `check`) on failure; each
imports what it needs, so importing this module imports neither torch nor Qt.
"""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path

from .base import EDITS, OFFLINE_MESSAGE, Context, SelfTestError, check


def step_environment(ctx: Context) -> None:
    """The sandbox holds: non-ASCII working folder, offline, empty TORCH_HOME, offscreen Qt."""
    import urllib.error
    import urllib.request

    cwd = Path.cwd()
    check(not str(cwd).isascii(), f"the working folder is ASCII-only: {cwd}")
    probe = cwd / "probe-ü.txt"
    probe.write_text("自检", encoding="utf-8")
    check(probe.read_text(encoding="utf-8") == "自检", "cannot round-trip a file in the working folder")
    check(os.environ.get("QT_QPA_PLATFORM", "").startswith("offscreen"), "QT_QPA_PLATFORM is not offscreen")
    check(Path(os.environ["TORCH_HOME"]) == ctx.torch_home, "TORCH_HOME is not the sandbox's")
    check(not any(ctx.torch_home.rglob("*")), f"TORCH_HOME is not empty: {ctx.torch_home}")
    try:
        urllib.request.urlopen("http://192.0.2.1/", timeout=1)
    except (urllib.error.URLError, OSError) as exc:
        check(OFFLINE_MESSAGE in str(exc), f"network refused for another reason: {exc}")
    else:
        raise SelfTestError("the network is reachable inside the self-test sandbox")
    from inspector.demo.paths import resources_dir

    resources = resources_dir()
    check(resources.is_dir(), f"the resources folder is missing: {resources}")
    if getattr(sys, "frozen", False):
        check(Path(sys._MEIPASS) in resources.parents, f"a bundle reads resources outside it: {resources}")
    ctx.info.update(platform=platform.platform(), python=sys.version.split()[0],
                    frozen=bool(getattr(sys, "frozen", False)), executable=sys.executable,
                    filesystem_encoding=sys.getfilesystemencoding(), utf8_mode=sys.flags.utf8_mode,
                    resources=str(resources), cwd=str(cwd))


def step_torch(ctx: Context) -> None:
    """torch imports and computes (a CUDA wheel must still work on a machine without a GPU)."""
    import torch

    x = torch.arange(6.0).reshape(2, 3).requires_grad_()
    (x.sin() @ torch.ones(3)).sum().backward()
    check(torch.allclose(x.grad, x.detach().cos()), "autograd gave a wrong gradient")
    ctx.info.update(torch=torch.__version__, cuda_available=torch.cuda.is_available(),
                    cuda_build=torch.version.cuda)
    if torch.cuda.is_available():  # a GPU machine: the bundled CUDA libraries must work too
        y = torch.nn.functional.conv2d(torch.ones(1, 3, 8, 8, device="cuda"), torch.ones(4, 3, 3, 3, device="cuda"))
        check(float(y.max()) == 27.0, "a convolution on the GPU gave a wrong result")
        ctx.info["cuda_device"] = torch.cuda.get_device_name(0)


def step_demo_model(ctx: Context) -> None:
    """The bundled demo weights load and classify the input."""
    import torch

    from inspector.core import layer_tree

    loaded = ctx.demo()
    check(loaded.labels and len(loaded.labels) >= 2, f"demo labels missing: {loaded.labels}")
    tree = layer_tree(loaded)
    relus = [l.path for l in tree.layers if l.is_leaf and l.type_name == "ReLU"]
    for key in EDITS:
        layer = key.split(":", 1)[0]
        check(layer in relus, f"the demo has no ReLU {layer!r} (ReLUs: {relus})")
    with torch.no_grad():
        logits = loaded.module(ctx.demo_input())
    check(tuple(logits.shape) == (1, len(loaded.labels)), f"unexpected logits shape {tuple(logits.shape)}")
    check(bool(torch.isfinite(logits).all()), "the demo's logits are not finite")


def step_capture(ctx: Context) -> None:
    """Every site on every leaf captured, finite, and both edits had exactly their effect."""
    import numpy as np

    from inspector.core import layer_tree

    base, edited = ctx.run(()), ctx.run(EDITS)
    tree = layer_tree(ctx.demo())
    leaves = [l for l in tree.layers if l.is_leaf and l.path and l.calls]
    check(leaves, "the demo has no leaf modules")
    for layer in leaves:
        for site in ("input", "output", "grad_output", "grad_input"):
            check(f"{layer.path}:{site}" in edited.captures, f"no capture {layer.path}:{site}")
    module = ctx.demo().module
    for name, param in module.named_parameters():
        if param.requires_grad:
            check(f"{name}:grad" in edited.captures, f"no capture {name}:grad")
    for run in (base, edited):
        for key, array in run.arrays().items():
            check(np.isfinite(array).all(), f"{key} holds NaN or Inf")
    check(edited.input_grad is not None and np.abs(edited.input_grad).sum() > 0, "the input gradient is zero")

    def close(a, b) -> bool:
        return np.allclose(a, b, rtol=1e-4, atol=1e-6 * max(float(np.abs(b).max()), 1e-12))

    check(base["relu1:grad_input"].min() < 0, "baseline relu1:grad_input has no negative value to clamp")
    check(edited["relu1:grad_input"].min() >= 0, "clamp(min=0) on relu1:grad_input left negative values")
    check(not np.allclose(base["conv1.weight:grad"], edited["conv1.weight:grad"]),
          "the relu1 edit did not change conv1's weight gradient")
    check(close(edited["relu3:grad_input"], 2 * base["relu3:grad_input"]), "scale(2) did not double relu3:grad_input")
    check(close(edited["conv3.weight:grad"], 2 * base["conv3.weight:grad"]),
          "scale(2) on relu3 did not double conv3's weight gradient")
    check(close(edited["relu1:output"], base["relu1:output"]), "gradient edits changed an activation")
    ctx.info["captures"] = len(edited.captures)


def step_offline_pretrained(ctx: Context) -> None:
    """Offline, pretrained torchvision weights fail with a message naming the file to place."""
    from inspector.core import InspectorError, load_model

    try:
        load_model("resnet18", "pretrained")
    except InspectorError as exc:
        message = str(exc)
    else:
        raise SelfTestError("pretrained weights loaded although the network is off and TORCH_HOME is empty")
    check(str(ctx.torch_home) in message, f"the message does not point into TORCH_HOME: {message}")
    check(not [p for p in ctx.torch_home.rglob("*") if p.is_file()], "a file was written into TORCH_HOME")


def step_checkpoints(ctx: Context) -> None:
    """A safetensors file and a weights-only torch checkpoint of the demo weights round-trip."""
    import torch
    from safetensors.torch import save_file

    from inspector.core import load_model
    from inspector.core.sources.checkpoints import read_checkpoint

    state = {k: v.detach().clone().contiguous() for k, v in ctx.demo().module.state_dict().items()}
    files = {Path.cwd() / "權重-ü.safetensors": lambda p: save_file(state, str(p)),
             Path.cwd() / "權重-ü.pt": lambda p: torch.save({"state_dict": state}, p)}
    for path, save in files.items():
        save(path)
        read = read_checkpoint(path)
        check(isinstance(read, dict) and read.keys() == state.keys(), f"{path.name}: keys differ")
        for k, v in state.items():
            check(torch.equal(read[k], v), f"{path.name}: {k} differs after the round trip")
        again = load_model("demo", weights=str(path))
        check(torch.equal(again.module.conv1.weight, state["conv1.weight"]), f"{path.name}: not applied")


class _Malicious:
    """Unpickling this would create the directory `marker`."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.mkdir, (self.marker,))


def step_untrusted_pickle(ctx: Context) -> None:
    """A pickle that would run code is refused (UntrustedCodeError) and its code never runs."""
    import pickle

    import torch

    from inspector.core import UntrustedCodeError
    from inspector.core.sources.checkpoints import read_checkpoint

    marker = Path.cwd() / "pwned-ü"
    files = {Path.cwd() / "evil-ü.pt": lambda p: torch.save({"state_dict": _Malicious(str(marker))}, p),
             Path.cwd() / "evil-ü.pkl": lambda p: p.write_bytes(pickle.dumps(_Malicious(str(marker)), protocol=2))}
    for path, save in files.items():
        save(path)
        check(not marker.exists(), "writing the malicious file ran it")
        try:
            read_checkpoint(path)
        except UntrustedCodeError as exc:
            check("mkdir" in str(exc), f"{path.name}: the refusal does not name the code: {exc}")
        else:
            raise SelfTestError(f"{path.name}: a malicious pickle was not refused")
        check(not marker.exists(), f"{path.name}: the malicious pickle ran")


def step_samples(ctx: Context) -> None:
    """Every bundled sample image decodes; the sample tensors load."""
    import numpy as np

    from inspector.core.inputs.files import load_input, open_image, samples_dir

    folder = samples_dir()
    images = sorted(folder.glob("*.png"))
    check(images, f"no sample images in {folder}")
    for path in images:
        image = open_image(path)
        check(image.mode == "RGB" and image.width > 0 and image.height > 0, f"{path.name} decoded badly")
        check(np.asarray(image).std() > 0, f"{path.name} is one flat colour")
    for path in sorted(folder.glob("*.npy")):
        check(load_input(str(path)).numel() > 0, f"{path.name} is empty")
    ctx.info["samples"] = len(images)


def step_torchvision_ops(ctx: Context) -> None:
    """torchvision's compiled ops (torchvision._C) load: nms on three boxes."""
    import torch
    import torchvision.ops

    boxes = torch.tensor([[0.0, 0.0, 10.0, 10.0], [1.0, 1.0, 11.0, 11.0], [20.0, 20.0, 30.0, 30.0]])
    keep = torchvision.ops.nms(boxes, torch.tensor([0.9, 0.8, 0.7]), iou_threshold=0.5)
    check(keep.tolist() == [0, 2], f"nms kept {keep.tolist()}, expected [0, 2]")
    ctx.info["torchvision"] = torchvision.__version__


def step_zoo_models(ctx: Context) -> None:
    """timm and transformers models load and capture inside the bundle: a timm ViT with random weights,
    and a tiny transformers ViT saved with save_pretrained and opened as `hf:FOLDER` (transformers
    imports its model families by name, which a bundle must have collected); the attention site
    equals the model's own eager attention weights."""
    import torch
    import transformers
    from transformers.utils import logging

    from inspector.core import capture, load_model

    logging.disable_progress_bar()  # save_pretrained's bar is not a step's output
    timm_vit = load_model("timm:vit_tiny_patch16_224", "random", seed=0)
    result = capture(timm_vit, torch.zeros(timm_vit.input_shape), layers="blocks.11.attn", sites="attention")
    probs = result["blocks.11.attn:attention"]
    check(probs.shape == (1, 3, 197, 197), f"timm attention has shape {probs.shape}")
    check(abs(float(probs.sum(-1).mean()) - 1.0) < 1e-4, "timm attention rows do not sum to 1")
    config = transformers.ViTConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=4, intermediate_size=64,
                                    image_size=32, patch_size=8, num_labels=2, id2label={0: "no", 1: "yes"},
                                    label2id={"no": 0, "yes": 1}, attn_implementation="eager")
    torch.manual_seed(0)
    model = transformers.ViTForImageClassification(config).eval()
    folder = ctx.root / "tiny-vit-ü"
    model.save_pretrained(folder)
    x = torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        expected = model(pixel_values=x, output_attentions=True)
    loaded = load_model(f"hf:{folder}")
    check(loaded.labels == ["no", "yes"], f"hf: labels are {loaded.labels}")
    result = capture(loaded, x, layers="vit.layers.0.attention", sites="attention")
    check(torch.allclose(torch.from_numpy(result["vit.layers.0.attention:attention"]), expected.attentions[0],
                         atol=1e-6), "hf: attention differs from the model's eager attention weights")
    check(torch.allclose(torch.from_numpy(result.output), expected.logits, atol=1e-6), "hf: logits differ")


def step_video(ctx: Context) -> None:
    """PyAV (FFmpeg) is there: a 6-frame MPEG-4 video written in the sandbox decodes frame by frame."""
    import numpy as np

    from inspector.core.inputs.video import VideoReader, write_video

    greys = [30 + 30 * i for i in range(6)]
    path = write_video(ctx.root / "video-ü.mp4", [np.full((16, 24, 3), g, np.uint8) for g in greys], fps=12)
    with VideoReader(str(path)) as reader:
        frames = [frame.rgb for frame in reader.frames()]
        check(reader.fps == 12 and reader.size == (24, 16), f"video read as {reader.fps} fps, {reader.size}")
    means = [float(f.mean()) for f in frames]
    check(len(frames) == 6 and all(abs(m - g) <= 3 for m, g in zip(means, greys)), f"decoded frames {means}")
    import av

    ctx.info["av"] = av.__version__
