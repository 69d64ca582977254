"""Which attribution method explains which family of models: one torch-free table. The docs' models page shows it
(`inspector.docs.support_table` writes it; a test checks the page holds it as written) and a test runs every
cell on a tiny model of each family: a "yes" makes a finite map of the input's size, a "no" is the one-line
error of that method on that model, which says the cell's reason in the same words.

A cell is "yes" unless `REFUSED` names it; every method of the method table (records.methods) is a column.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Family:
    """A family of models as the docs name it: `title` (the table's column), the models it covers, the target its
    maps explain, and the small models with random weights each cell is tested on."""

    name: str
    title: str
    models: str
    target: str
    tested: tuple[str, ...]


FAMILIES: tuple[Family, ...] = (
    Family("classifier", "Classifier (CNN)", "torchvision's and timm's convolutional classifiers (`resnet18`, "
           "`timm:convnext_tiny`)", "a class: `top1`, `3`", ("resnet18", "timm ConvNeXt")),
    Family("segmenter", "Segmenter", "torchvision's segmentation models (`deeplabv3_resnet50`, "
           "`lraspp_mobilenet_v3_large`)", "`seg:CLASS[@X0,Y0,X1,Y1]`", ("lraspp_mobilenet_v3_large",)),
    Family("detector", "Detector (torchvision)", "torchvision's detectors (`fasterrcnn_resnet50_fpn`, ...)",
           "`box:K`, `box:X0,Y0,X1,Y1[@CLASS]`", ("fasterrcnn_mobilenet_v3_large_320_fpn",)),
    Family("query-detector", "DETR, Conditional DETR", "query-based detectors with dense attention from `hf:` "
           "folders", "`box:K`, `box:X0,Y0,X1,Y1[@CLASS]`", ("DETR",)),
    Family("deformable-detector", "Deformable DETR, RT-DETR, D-FINE", "query-based detectors with deformable "
           "attention from `hf:` folders", "`box:K`, `box:X0,Y0,X1,Y1[@CLASS]`", ("Deformable DETR",)),
    Family("clip", "CLIP", "an `hf:` CLIP folder (both towers and its tokenizer)", '`text:"PROMPT"`', ("CLIP",)),
    Family("siglip", "SigLIP", "an `hf:` SigLIP folder (both towers; its head pools the patches: no class token)",
           '`text:"PROMPT"`', ("SigLIP",)),
    Family("vit", "Vision transformer", "ViTs with a class token: torchvision's `vit_b_16`, timm's ViT and DeiT, "
           "transformers' ViT, DeiT and DINOv2", "a class: `top1`, `3`",
           ("torchvision ViT", "timm ViT", "transformers ViT")),
)

#: The reasons, in the words each method's one-line error says them.
NO_GRID = "this model has no patch grid"
NO_BOXES = "does not explain detections yet"
NO_DETECTIONS = "this model detects nothing"
NO_CLASS_TOKEN = "this model has no class token"
NO_DETR_ATTENTION = "reads DETR's attention only"
NO_DENSE_ATTENTION = "deformable attention has no dense map"

_ATTENTION = ("rollout", "legrad", "chefer")  # the methods that read a vision transformer's attention

#: (family, method) -> why that method does not explain that family; every other cell is "yes".
REFUSED: dict[tuple[str, str], str] = {
    **{(family, method): NO_GRID for family in ("classifier", "segmenter") for method in _ATTENTION},
    **{(family, method): NO_BOXES for family in ("detector", "query-detector", "deformable-detector")
       for method in ("rollout", "legrad")},
    ("detector", "chefer"): NO_DETR_ATTENTION,
    ("deformable-detector", "chefer"): NO_DENSE_ATTENTION,
    **{(family, "drise"): NO_DETECTIONS for family in ("classifier", "segmenter", "clip", "siglip", "vit")},
    ("siglip", "chefer"): NO_CLASS_TOKEN,
}


def family(name: str) -> Family:
    return next(f for f in FAMILIES if f.name == name)


def refusal(family_name: str, method: str) -> str | None:
    """Why `method` does not explain `family_name`'s models, or None: it does."""
    return REFUSED.get((family_name, method))
