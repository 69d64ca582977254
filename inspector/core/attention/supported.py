"""Which attention modules the `attention` site and head ablation support, said once for people:
every message that names them (the warnings, the errors, the app's hints) and the manual
(docs/tasks/attention.md) are made from this table, kept beside the code that decides it
(`site.supports_attention`). Torch-free."""

from __future__ import annotations

#: Supported, by family: what the probabilities are worked out for.
SUPPORTED: tuple[str, ...] = (
    "nn.MultiheadAttention (torchvision's ViT)",
    "timm's ViT, Swin, BEiT and EVA attention",
    "transformers' ViT, DeiT, DINOv2, CLIP and SigLIP attention",
)
#: Attention modules that look alike but are not reproduced yet: they get a warning, not wrong numbers.
NOT_YET: tuple[str, ...] = (
    "Swin V2's cosine attention",
    "CaiT's talking heads",
    "transformers' BEiT and Swin attention",
)


def supported_text() -> str:
    """`nn.MultiheadAttention (torchvision's ViT); timm's ...; transformers' ...`."""
    return "; ".join(SUPPORTED)


def not_yet_text() -> str:
    return ", ".join(NOT_YET[:-1]) + " and " + NOT_YET[-1]
