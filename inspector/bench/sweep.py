"""`network-inspector sweep`: load many models and capture every leaf, to find the ones that break.

For each model (random weights, seed 0, the default input size it declares): build the layer
tree, then capture `output` and `grad_output` of every leaf that runs. One line per model with
its leaf count and timings, or the error; nothing stops the sweep but a device that is not there. The
default list is every torchvision classification, segmentation and detection model plus `TIMM_MODELS`
(timm families).
"""

from __future__ import annotations

import gc
import time
import traceback
from dataclasses import asdict, dataclass
from typing import Callable

#: timm models across families (ViT, DeiT, BEiT, EVA, Swin, ConvNeXt, EfficientNet, ResNet variants,
#: RegNet, MobileNet, MaxViT, CoAtNet, PoolFormer, ...), small members where a family has them.
TIMM_MODELS = (
    "vit_tiny_patch16_224", "vit_small_patch16_224", "vit_base_patch32_224", "vit_small_patch14_reg4_dinov2",
    "deit_tiny_patch16_224", "deit_tiny_distilled_patch16_224", "beit_base_patch16_224", "eva02_tiny_patch14_224",
    "swin_tiny_patch4_window7_224", "swinv2_tiny_window8_256", "convnext_atto", "convnext_tiny", "convnextv2_atto",
    "efficientnet_b0", "efficientnetv2_rw_t", "tf_efficientnet_lite0", "resnet18", "resnet50d", "resnext26ts",
    "seresnext26d_32x4d", "regnetx_002", "regnety_002", "mobilenetv3_small_100", "mobilenetv4_conv_small",
    "ghostnet_100", "maxvit_nano_rw_256", "coatnet_nano_rw_224", "poolformer_s12", "levit_128s", "mixer_b16_224",
    "cait_xxs24_224", "xcit_nano_12_p16_224", "densenet121", "inception_v3", "dla34", "hrnet_w18_small",
    "fastvit_t8", "edgenext_xx_small", "repvgg_a0", "pvt_v2_b0",
)

#: transformers image models across families (config class, model class), at their default sizes;
#: `sweep --hf` writes each config to a folder and loads it as `hf:FOLDER` with random weights.
HF_MODELS = (
    ("ViTConfig", "ViTForImageClassification"), ("DeiTConfig", "DeiTForImageClassificationWithTeacher"),
    ("Dinov2Config", "Dinov2ForImageClassification"),
    ("Dinov2WithRegistersConfig", "Dinov2WithRegistersForImageClassification"),
    ("CLIPVisionConfig", "CLIPVisionModelWithProjection"), ("SiglipVisionConfig", "SiglipVisionModel"),
    ("ConvNextConfig", "ConvNextForImageClassification"), ("ConvNextV2Config", "ConvNextV2ForImageClassification"),
    ("SwinConfig", "SwinForImageClassification"), ("Swinv2Config", "Swinv2ForImageClassification"),
    ("BeitConfig", "BeitForImageClassification"), ("Data2VecVisionConfig", "Data2VecVisionForImageClassification"),
    ("SegformerConfig", "SegformerForSemanticSegmentation"), ("MobileViTConfig", "MobileViTForImageClassification"),
    ("LevitConfig", "LevitForImageClassification"), ("ResNetConfig", "ResNetForImageClassification"),
    ("RegNetConfig", "RegNetForImageClassification"), ("EfficientNetConfig", "EfficientNetForImageClassification"),
)


def hf_sources(folder) -> list[str]:
    """Write each of HF_MODELS' default configs (naming its model class) under `folder`; their sources."""
    from pathlib import Path

    import transformers

    sources = []
    for config_name, model_name in HF_MODELS:
        config = getattr(transformers, config_name)()
        config.architectures = [model_name]
        path = Path(folder) / model_name
        config.save_pretrained(path)
        sources.append(f"hf:{path}")
    return sources


@dataclass
class SweepRow:
    model: str
    ok: bool
    leaves: int = 0
    captures: int = 0
    input_shape: tuple[int, ...] = ()
    load_s: float = 0.0
    tree_s: float = 0.0
    capture_s: float = 0.0
    detections: int | None = None  # a detector's, with the target box:0
    error: str = ""


def default_models() -> list[str]:
    from inspector.core.sources.torchvision_models import torchvision_names

    return torchvision_names() + [f"timm:{name}" for name in TIMM_MODELS]


def sweep_model(source: str, device: str = "cpu") -> SweepRow:
    """Load `source` with random weights, build its tree, capture output and grad_output of every leaf
    (a detector: an image in [0, 1], the target box:0)."""
    import torch

    from inspector.core import capture, load_model
    from inspector.core.sources.devices import resolve_device
    from inspector.core.sources.layers import build_layer_tree

    row, device = SweepRow(source, False), resolve_device(device)
    try:
        start = time.perf_counter()
        loaded = load_model(source, "random", seed=0)
        loaded.module.to(device)
        row.load_s = time.perf_counter() - start
        x = loaded.example_input()
        if x is None:
            raise ValueError("the model declares no input size")
        detector = loaded.task == "detection"
        noise = torch.rand if detector else torch.randn
        x = noise(x.shape, generator=torch.Generator().manual_seed(0)).to(device)
        row.input_shape = tuple(x.shape)
        start = time.perf_counter()
        tree = build_layer_tree(loaded.module, x)
        row.tree_s = time.perf_counter() - start
        leaves = [l.path for l in tree if l.is_leaf and l.path and l.calls]
        row.leaves = len(leaves)
        start = time.perf_counter()
        result = capture(loaded, x, layers=leaves, sites="output,grad_output", target="box:0" if detector else None,
                         device=device)
        row.capture_s = time.perf_counter() - start
        row.captures = len(result.captures)
        row.detections = None if result.detections is None else len(result.detections)
        row.ok = True
    except Exception as exc:  # noqa: BLE001 - the sweep reports every failure and goes on
        row.error = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
        row.error += "" if row.error else traceback.format_exc(limit=1)
    finally:
        gc.collect()
    return row


def format_row(row: SweepRow) -> str:
    if not row.ok:
        return f"{row.model:<44} FAILED  {row.error}"
    shape = "x".join(map(str, row.input_shape[1:]))
    found = "" if row.detections is None else f"  {row.detections} detections"
    return (f"{row.model:<44} ok {row.leaves:>5} leaves {row.captures:>5} captures  {shape:>11}  "
            f"load {row.load_s:6.2f} s  tree {row.tree_s:6.2f} s  capture {row.capture_s:6.2f} s{found}")


def main(models: list[str] | None = None, device: str = "cpu", log: Callable[[str], None] = print) -> list[dict]:
    rows = []
    for source in models or default_models():
        row = sweep_model(source, device)
        log(format_row(row))
        rows.append(asdict(row))
    failed = [r["model"] for r in rows if not r["ok"]]
    log(f"{len(rows) - len(failed)} of {len(rows)} models ok" + (f"; failed: {', '.join(failed)}" if failed else ""))
    return rows
