"""Every cell of the models page's method-by-family table (inspector.core.records.support), run: each method of the
method table on small models of each family with random weights, through `attribute` with the target the family
takes. A "yes" makes a finite map of the input's size that is not all zero; a "no" is a one-line SpecError that
says the cell's reason in its words."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from inspector.core import load_model
from inspector.core.attribution.entry import attribute
from inspector.core.common.errors import SpecError
from inspector.core.records.methods import METHODS
from inspector.core.records.support import FAMILIES, refusal

transformers = pytest.importorskip("transformers")
timm = pytest.importorskip("timm")
torchvision = pytest.importorskip("torchvision")

UNIT = Path(__file__).parents[1]
sys.path[:0] = [str(UNIT / "sources"), str(UNIT / "detection")]
from clip_folders import clip_folder, siglip_folder  # noqa: E402
from query_detectors import save_detector  # noqa: E402

#: Each method's fewest passes: the cells ask whether a method runs on a family, not how well it converges.
FEW = {"ig": {"steps": 4}, "smoothgrad": {"samples": 2, "seed": 0}, "drise": {"masks": 4, "seed": 0, "batch": 4}}


def _tiny_vit() -> nn.Module:
    torch.manual_seed(0)
    model = torchvision.models.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2,
                                                 hidden_dim=16, mlp_dim=32, num_classes=5).eval()
    nn.init.normal_(model.heads.head.weight)  # torchvision starts the head at zero: every gradient would be 0
    return model


def _timm_vit() -> nn.Module:
    torch.manual_seed(0)
    return timm.models.VisionTransformer(img_size=32, patch_size=8, embed_dim=16, depth=2, num_heads=2,
                                         num_classes=5).eval()


def _hf_vit() -> nn.Module:
    torch.manual_seed(0)
    config = transformers.ViTConfig(hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
                                    image_size=32, patch_size=8, num_labels=5)
    return transformers.ViTForImageClassification(config).eval()


def _convnext() -> nn.Module:
    torch.manual_seed(0)
    return timm.models.ConvNeXt(depths=(1, 1, 1, 1), dims=(8, 16, 16, 16), num_classes=5).eval()


def _folder(root: Path, name: str, save) -> object:
    save(root / name)
    return load_model(f"hf:{root / name}")


def _detector(root: Path, family: str) -> object:
    from inspector.core.detection.thresholds import set_score_threshold

    save_detector(family, root / family)
    loaded = load_model(f"hf:{root / family}")
    set_score_threshold(loaded.module, 0.0)  # random weights: every query a box
    return loaded


#: member (as records.support names it) -> (build(root folder), input height and width, target)
MEMBERS = {
    "resnet18": (lambda _r: load_model("resnet18", seed=0), (64, 64), 3),
    "timm ConvNeXt": (lambda _r: _convnext(), (64, 64), 3),
    "lraspp_mobilenet_v3_large": (lambda _r: load_model("lraspp_mobilenet_v3_large", seed=0), (64, 64), "seg:15"),
    "fasterrcnn_mobilenet_v3_large_320_fpn": (lambda _r: load_model("fasterrcnn_mobilenet_v3_large_320_fpn", seed=0),
                                              (64, 64), "box:0"),
    "DETR": (lambda r: _detector(r, "detr"), (40, 60), "box:0"),
    "Deformable DETR": (lambda r: _detector(r, "deformable_detr"), (40, 60), "box:0"),
    "CLIP": (lambda r: _folder(r, "clip", clip_folder), (32, 32), 'text:"a dog"'),
    "SigLIP": (lambda r: _folder(r, "siglip", siglip_folder), (32, 32), 'text:"a dog"'),
    "torchvision ViT": (lambda _r: _tiny_vit(), (32, 32), 3),
    "timm ViT": (lambda _r: _timm_vit(), (32, 32), 3),
    "transformers ViT": (lambda _r: _hf_vit(), (32, 32), 3),
}
CELLS = [(f.name, member, method) for f in FAMILIES for member in f.tested for method in METHODS]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    from transformers.utils import logging

    logging.disable_progress_bar()
    root, built = tmp_path_factory.mktemp("families"), {}

    def model(member: str):
        if member not in built:
            built[member] = MEMBERS[member][0](root)
        return built[member]
    return model


def test_every_member_the_table_names_is_built_here():
    assert sorted(MEMBERS) == sorted(m for f in FAMILIES for m in f.tested)


@pytest.mark.parametrize(("family", "member", "method"), CELLS, ids=[f"{m}-{x}" for _f, m, x in CELLS])
def test_the_cell(models, family, member, method):
    model, (height, width) = models(member), MEMBERS[member][1]
    x = torch.rand(1, 3, height, width, generator=torch.Generator().manual_seed(0))
    options = dict(FEW.get(method, {}))
    if method == "occlusion":
        options.update(window=height // 2, stride=height // 2)  # four windows or so
    why = refusal(family, method)
    if why is not None:
        with pytest.raises(SpecError) as refused:
            attribute(model, x, method, MEMBERS[member][2], options=options)
        said = str(refused.value)
        assert why in said and "\n" not in said, said
        return
    found = np.asarray(attribute(model, x, method, MEMBERS[member][2], options=options).map)
    assert found.shape[-2:] == (height, width) and found.ndim in (2, 3)
    assert np.isfinite(found).all() and np.abs(found).max() > 0
