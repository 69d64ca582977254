"""`bench --prompts`: issue 56's speed lines, each against its plain-PyTorch baseline in the same process,
interleaved, median of `repeats` after a warm-up:

    text-prompt Grad-CAM (`attribute --method gradcam --target text:"..."` on an hf: CLIP folder, a new prompt each
        time, so its text tower runs once each) vs one plain forward of the vision tower with a hook at the same
        layer, one forward of the text tower on the prompt, autograd.grad(score, activation) and the CAM
    LeGrad (`attribute --method legrad` on a torchvision ViT) vs one plain forward + backward to the input

The CLIP is ViT-B/16-sized (transformers' CLIPConfig defaults: a 12-block 768-wide vision tower on 224 x 224
images, 16 x 16 patches; a 12-block 512-wide text tower of 77 tokens), random weights (seed 0), written to a
temporary folder with a byte-pair tokenizer built here offline from a letters-only vocabulary (no download).
"""

from __future__ import annotations

import json
import statistics
import string
import tempfile
from pathlib import Path

import torch
import torch.nn.functional as F

from .timing import timed

CAM_LAYER = "vision_model.encoder.layers.11.layer_norm1"  # what Grad-CAM picks on a CLIP: the last block's norm
LEGRAD_MODELS = ("vit_b_16",)


def clip_folder(folder: Path):
    """A ViT-B/16-sized CLIPModel (random weights, seed 0), its image processor and an offline tokenizer in `folder`;
    returns the model and the tokenizer."""
    import transformers

    vocab = {"<|startoftext|>": 0, "<|endoftext|>": 1}
    for letter in string.ascii_lowercase:
        vocab[letter] = len(vocab)
        vocab[letter + "</w>"] = len(vocab)
    (folder / "vocab.json").write_text(json.dumps(vocab))
    (folder / "merges.txt").write_text("#version: 0.2\n")
    tok = transformers.CLIPTokenizer(str(folder / "vocab.json"), str(folder / "merges.txt"), pad_token="<|endoftext|>")
    tok.save_pretrained(folder)
    config = transformers.CLIPConfig(text_config={"vocab_size": len(vocab), "bos_token_id": 0, "eos_token_id": 1,
                                                  "pad_token_id": 1},
                                     vision_config={"patch_size": 16})
    torch.manual_seed(0)
    model = transformers.CLIPModel(config).eval()
    model.save_pretrained(folder)
    transformers.CLIPImageProcessor().save_pretrained(folder)
    return model, tok


def plain_prompt_gradcam(whole, tok, x: torch.Tensor, prompt: str, layer: str = CAM_LAYER) -> torch.Tensor:
    """Grad-CAM of the image-prompt score (CLIP's logit) at `layer` with a hook and autograd only (the baseline):
    the vision tower forward, the text tower forward on `prompt`, the gradient to the layer, the CAM upsampled
    and scaled to [0, 1]."""
    kept = {}
    handle = whole.get_submodule(layer).register_forward_hook(lambda _m, _i, out: kept.__setitem__("a", out))
    try:
        image = whole.get_image_features(pixel_values=x)
    finally:
        handle.remove()
    image = image if isinstance(image, torch.Tensor) else image.pooler_output
    with torch.no_grad():
        text = whole.get_text_features(**tok([prompt], padding=True, return_tensors="pt"))
        text = text if isinstance(text, torch.Tensor) else text.pooler_output
    score = whole.logit_scale.exp() * (F.normalize(image, dim=-1) @ F.normalize(text, dim=-1).t())[0, 0]
    (grad,) = torch.autograd.grad(score, kept["a"])
    acts, grads = kept["a"][0, 1:].detach(), grad[0, 1:]  # the patch tokens, the class token left out
    side = int(acts.shape[0] ** 0.5)
    cam = torch.relu(acts @ grads.mean(dim=0)).reshape(1, 1, side, side)
    cam = F.interpolate(cam, size=x.shape[-2:], mode="bilinear", align_corners=False)[0, 0]
    lo, hi = cam.min(), cam.max()
    return (cam - lo) / (hi - lo) if hi > lo else torch.zeros_like(cam)  # Grad-CAM's map: from 0 to 1


def bench_prompt_gradcam(repeats: int = 3, log=print) -> dict:
    from inspector.core import load_model
    from inspector.core.attribution import attribute

    with tempfile.TemporaryDirectory() as tmp:
        whole, tok = clip_folder(Path(tmp))
        loaded = load_model(f"hf:{tmp}")
        x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(1))
        letters = iter(string.ascii_lowercase * 4)
        ours, plain, found = [], [], []
        for _ in range(repeats + 1):  # a new prompt each time: its text tower runs; the first is a warm-up
            prompt = f"a photo of a {next(letters)} dog"
            ours.append(timed(lambda p=prompt: found.append(attribute(loaded, x, "gradcam", f'text:"{p}"')), "cpu"))
            prompt = f"a photo of a {next(letters)} cat"
            plain.append(timed(lambda p=prompt: plain_prompt_gradcam(whole, tok, x, p), "cpu"))
        if found[0].layer != CAM_LAYER:  # the baseline's layer, or the row compares two different maps
            raise RuntimeError(f"Grad-CAM chose {found[0].layer}, the baseline {CAM_LAYER}.")
    med = lambda values: statistics.median(values[1:])  # noqa: E731 - the warm-up left out
    return {"row": "text-prompt gradcam", "model": "CLIP ViT-B/16 (random)", "ours_s": med(ours),
            "plain_s": med(plain), "ratio": med(ours) / med(plain), "target": 1.2}


def plain_forward_backward(module, x: torch.Tensor, target: int) -> torch.Tensor:
    given = x.clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(module(given)[0, target], given)
    return grad


def bench_legrad(name: str, repeats: int = 3) -> dict:
    from inspector.core import load_model
    from inspector.core.attribution import attribute

    loaded = load_model(name, "random", seed=0)
    for layer in loaded.module.modules():  # a zero-initialised head (torchvision's ViT) makes every map zero
        if isinstance(layer, torch.nn.Linear) and not layer.weight.any():
            torch.nn.init.normal_(layer.weight, std=0.02, generator=torch.Generator().manual_seed(2))
    x = torch.randn(1, *loaded.input_shape[1:], generator=torch.Generator().manual_seed(1))
    ours, plain = [], []
    for _ in range(repeats + 1):
        ours.append(timed(lambda: attribute(loaded, x, "legrad", 3), "cpu"))
        plain.append(timed(lambda: plain_forward_backward(loaded.module, x, 3), "cpu"))
    med = lambda values: statistics.median(values[1:])  # noqa: E731
    return {"row": "legrad", "model": f"{name} (random)", "ours_s": med(ours), "plain_s": med(plain),
            "ratio": med(ours) / med(plain), "target": 1.5}


def format_row(row: dict) -> str:
    verdict = "ok" if row["ratio"] <= row["target"] else "OVER"
    return (f"{row['row']:<22}{row['model']:<26}{row['ours_s'] * 1000:9.0f} ms vs plain {row['plain_s'] * 1000:8.0f}"
            f" ms = {row['ratio']:.2f}x (target <= {row['target']:g}) {verdict}")


def main(models=LEGRAD_MODELS, repeats: int = 3, log=print) -> list[dict]:
    log(f"issue 56's speed lines: torch threads {torch.get_num_threads()}, cpu, median of {repeats} after a warm-up, "
        f"interleaved")
    rows = [bench_prompt_gradcam(repeats, log)]
    log(format_row(rows[-1]))
    for name in models:
        rows.append(bench_legrad(name, repeats))
        log(format_row(rows[-1]))
    return rows
