"""Query-based detectors of transformers (DETR, Conditional and Deformable DETR, RT-DETR, D-FINE) built from tiny
configs with random weights, saved with their image processor as `save_pretrained` writes them, and what the
tests compare them with: transformers' own pipeline (its processor, the model, `post_process_object_detection`)
and each detection's score worked out by hand from the logits."""

from __future__ import annotations

import torch

FAMILIES = ("detr", "conditional_detr", "deformable_detr", "rt_detr", "rt_detr_v2", "d_fine")
#: The families whose processor is RT-DETR's (a stretch to 64 x 64, no normalising) and whose head a focal loss trains.
RT_DETRS = ("rt_detr", "rt_detr_v2", "d_fine")
LABELS = 3  # classes
QUERIES = 6

_HEADS = dict(encoder_layers=1, encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=16,
              decoder_ffn_dim=16, num_queries=QUERIES, num_labels=LABELS)


def _resnet(transformers, stages):
    return transformers.ResNetConfig(embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1],
                                     layer_type="basic", out_features=stages)


def _config(transformers, family: str):
    """A tiny config of `family` that builds offline (no timm or hub backbone, no pretrained backbone)."""
    t = transformers
    if family in ("detr", "conditional_detr", "deformable_detr"):
        cls = {"detr": t.DetrConfig, "conditional_detr": t.ConditionalDetrConfig,
               "deformable_detr": t.DeformableDetrConfig}[family]
        extra = dict(num_feature_levels=2, encoder_n_points=2, decoder_n_points=2, d_model=32,
                     decoder_layers=2) if family == "deformable_detr" else dict(d_model=16, decoder_layers=1)
        stages = ["stage1", "stage2"] if family == "deformable_detr" else ["stage2"]
        return cls(use_timm_backbone=False, backbone_config=_resnet(t, stages), use_pretrained_backbone=False,
                   **_HEADS, **extra)
    if family in ("rt_detr", "rt_detr_v2"):
        backbone = t.RTDetrResNetConfig(embedding_size=8, hidden_sizes=[8, 16, 16, 16], depths=[1, 1, 1, 1],
                                        layer_type="basic", out_features=["stage2", "stage3", "stage4"])
        cls, extra = ((t.RTDetrConfig, dict(decoder_layers=1)) if family == "rt_detr" else
                      (t.RTDetrV2Config, dict(decoder_layers=2, decoder_n_points=2)))
    else:
        backbone = t.HGNetV2Config(stem_channels=[3, 8, 8], stage_in_channels=[8, 16, 16, 16],
                                   stage_mid_channels=[8, 8, 8, 8], stage_out_channels=[16, 16, 16, 16],
                                   stage_num_blocks=[1, 1, 1, 1], stage_numb_of_layers=[1, 1, 1, 1],
                                   stage_kernel_size=[3, 3, 3, 3], hidden_sizes=[16, 16, 16, 16],
                                   out_features=["stage2", "stage3", "stage4"])
        cls, extra = t.DFineConfig, dict(decoder_layers=2, hidden_expansion=0.5, decoder_n_points=[2, 2, 2])
    return cls(backbone_config=backbone, use_pretrained_backbone=False, d_model=16, encoder_hidden_dim=16,
               encoder_in_channels=[16, 16, 16], decoder_in_channels=[16, 16, 16], anchor_image_size=None,
               **_HEADS, **extra)


def _processor(transformers, family: str):
    """The family's image processor, at a small size: DETR's keep the aspect (shortest edge 48, longest 72),
    RT-DETR's and D-FINE's stretch to 64 x 64."""
    if family in RT_DETRS:
        return transformers.RTDetrImageProcessor(size={"height": 64, "width": 64})
    cls = {"detr": "DetrImageProcessor", "conditional_detr": "ConditionalDetrImageProcessor",
           "deformable_detr": "DeformableDetrImageProcessor"}[family]
    return getattr(transformers, cls)(size={"shortest_edge": 48, "longest_edge": 72})


#: Each family's object-detection class in transformers.
CLASSES = {"detr": "DetrForObjectDetection", "conditional_detr": "ConditionalDetrForObjectDetection",
           "deformable_detr": "DeformableDetrForObjectDetection", "rt_detr": "RTDetrForObjectDetection",
           "rt_detr_v2": "RTDetrV2ForObjectDetection", "d_fine": "DFineForObjectDetection"}


def model_class(family: str):
    import transformers

    return getattr(transformers, CLASSES[family])


def save_detector(family: str, folder, confident: bool = False) -> None:
    """A tiny `family` detector with random weights (seeded, jittered so that no two queries score alike) and its
    image processor, written to `folder` by `save_pretrained`. `confident` (DETR): its class head leans to class 0
    and away from "no object", so that its queries score above the processor's default threshold (0.5)."""
    import transformers
    from transformers.utils import logging

    logging.disable_progress_bar()  # its tqdm bars start a monitor thread (the app's tests check for leaks)
    torch.manual_seed(0)
    model = model_class(family)(_config(transformers, family)).eval()
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in model.parameters():
            if p.is_floating_point():
                p.add_(torch.randn(p.shape, generator=generator) * 0.3)
        if confident:
            model.class_labels_classifier.bias += torch.tensor([3.0] + [0.0] * (LABELS - 1) + [-5.0])
    model.save_pretrained(str(folder))
    _processor(transformers, family).save_pretrained(str(folder))


def reference(family: str, folder, x: torch.Tensor, threshold: float) -> dict:
    """transformers' own answer to x (1, 3, H, W) in [0, 1]: the folder's processor (no rescale: x is in [0, 1]
    already), the model as `from_pretrained` loads it, `post_process_object_detection` at the input's size."""
    import transformers

    processor = transformers.AutoImageProcessor.from_pretrained(str(folder))
    model = model_class(family).from_pretrained(str(folder)).eval()
    inputs = processor(images=x[0], do_rescale=False, return_tensors="pt")
    extra = {"use_focal_loss": model.config.use_focal_loss} if family in RT_DETRS else {}
    with torch.no_grad():
        found = processor.post_process_object_detection(model(**inputs), threshold=threshold,
                                                        target_sizes=[tuple(x.shape[-2:])], **extra)
    return found[0]


def scores_by_hand(family: str, logits: torch.Tensor) -> torch.Tensor:
    """Every detection's score of one image's logits (queries, classes), best first, as each family's paper
    scores it: DETR a softmax over the classes and "no object", its best class; the rest a sigmoid per class,
    the best query x class pairs: at most 100 (Conditional, Deformable DETR), as many as the queries (RT-DETR,
    D-FINE)."""
    if family == "detr":
        scores = logits.softmax(-1)[:, :-1].max(-1).values
    else:
        scores = logits.sigmoid().flatten()
    most = QUERIES if family in RT_DETRS else 100
    return scores[torch.argsort(scores.detach(), descending=True, stable=True)][:most]
