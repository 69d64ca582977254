"""CLIP and SigLIP from an `hf:` folder as one model whose input is the image: `ImageText`.

Its forward is the image tower: pixel values in, the image's embedding out (normalised, as transformers'
`image_embeds`), so every method that runs a model on an image runs it. Its module tree is the image
tower's (`vision_model.encoder.layers.3.layer_norm1`, `visual_projection` for CLIP): Grad-CAM, capture and
edits see the layers that run on the image. The text tower is kept out of the tree: it runs once per prompt,
for a `text:` target (`target.prompts`), and its embedding is kept (`prompt_logits`). Prompts are tokenised
by the folder's own tokenizer, padded as the family was trained (SigLIP: to the most tokens), and cut to the
most tokens the text tower takes (`prompt_notes` says which were).
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from ..common.errors import ModelLoadError, SpecError

#: config.json's `architectures` that load as an ImageText, and their family.
FAMILIES = {"CLIPModel": "clip", "SiglipModel": "siglip"}
#: The files a tokenizer is read from (any one of them): a fast tokenizer's, a byte-pair vocabulary, sentencepiece's.
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.json", "spiece.model", "tokenizer.model")
#: transformers' placeholder for "no limit" in a tokenizer's model_max_length is larger than this.
_NO_LIMIT = 10**6


class ImageText(nn.Module):
    """An image-text model (transformers' CLIPModel or SiglipModel) as its image tower, with its text
    tower behind `prompt_logits`."""

    def __init__(self, whole: nn.Module, family: str, tokenizer=None, no_tokenizer: str | None = None) -> None:
        super().__init__()
        object.__setattr__(self, "_whole", whole)  # not a child: its text tower stays out of the module tree
        vision = whole.vision_model
        self.vision_model = getattr(vision, "vision_model", vision)  # older SigLIP: a wrapper around the transformer
        if getattr(whole, "visual_projection", None) is not None:
            self.visual_projection = whole.visual_projection
        self.config = whole.config
        self.family = family
        self.sigmoid_score = family == "siglip"  # SigLIP's score of one pair is a probability: the sigmoid
        self._tokenizer, self._no_tokenizer = tokenizer, no_tokenizer
        self._texts: dict[str, torch.Tensor] = {}  # prompt -> its normalised text embedding (1, D)
        text = whole.config.text_config
        limits = [getattr(text, "max_position_embeddings", None), getattr(tokenizer, "model_max_length", None)]
        self.max_tokens = min(int(n) for n in limits if isinstance(n, int) and 0 < n < _NO_LIMIT)

    def forward(self, pixel_values: torch.Tensor) -> torch.Tensor:
        found = self._whole.get_image_features(pixel_values=pixel_values)
        embeds = found if isinstance(found, torch.Tensor) else found.pooler_output
        return embeds / embeds.norm(p=2, dim=-1, keepdim=True)

    def _apply(self, fn, recurse=True):  # .to(), .half(), ...: the whole model, text tower too, once
        self._whole._apply(fn, recurse)
        self._texts.clear()
        return self

    def train(self, mode: bool = True):
        self._whole.train(mode)
        self.training = mode
        return self

    def _tokens(self, prompt: str, truncation: bool = True) -> dict:
        if self._tokenizer is None:
            raise SpecError(f"This model's tokenizer could not be read ({self._no_tokenizer}): it takes no text: "
                            f"target.")
        padding = "max_length" if self.family == "siglip" else True  # as each was trained
        return self._tokenizer([prompt], padding=padding, truncation=truncation, max_length=self.max_tokens,
                               return_tensors="pt")

    def prompt_notes(self, prompts) -> list[str]:
        """A note for each prompt the tokenizer cuts to the text tower's most tokens."""
        notes = []
        for prompt in dict.fromkeys(prompts):
            self._tokens(prompt)  # no tokenizer: said here, before the image runs
            count = len(self._tokenizer(prompt)["input_ids"])
            if count > self.max_tokens:
                notes.append(f"The prompt {prompt!r} is {count} tokens; the text tower reads {self.max_tokens}: it "
                             f"was cut to its first {self.max_tokens}.")
        return notes

    def text_embeds(self, prompts) -> torch.Tensor:
        """(P, D) normalised text embeddings of `prompts`, each computed once (kept until the model moves)."""
        for prompt in dict.fromkeys(p for p in prompts if p not in self._texts):
            tokens = self._tokens(prompt)
            device = next(self._whole.parameters()).device
            given = {k: v.to(device) for k, v in tokens.items() if k in ("input_ids", "attention_mask")}
            with torch.no_grad():
                found = self._whole.get_text_features(**given)
            embeds = found if isinstance(found, torch.Tensor) else found.pooler_output
            self._texts[prompt] = (embeds / embeds.norm(p=2, dim=-1, keepdim=True)).detach()
        return torch.cat([self._texts[p] for p in prompts])

    def prompt_logits(self, image_embeds: torch.Tensor, prompts) -> torch.Tensor:
        """(B, P): transformers' `logits_per_image` of the images and `prompts` (the cosine similarity times
        the logit scale; SigLIP: plus its logit bias). Only the image's side carries a gradient."""
        texts = self.text_embeds(prompts).to(image_embeds.dtype)
        logits = image_embeds @ texts.t() * self._whole.logit_scale.detach().exp().to(image_embeds.dtype)
        bias = getattr(self._whole, "logit_bias", None)
        return logits + bias.detach().to(image_embeds.dtype) if bias is not None else logits


def family_of(architecture: str | None) -> str | None:
    return FAMILIES.get(architecture or "")


def image_text(whole: nn.Module, family: str, folder: Path, source: str, output: str | None, trust: bool,
               transformers, notes: list[str]) -> ImageText:
    """`whole` (a CLIPModel or SiglipModel) as an ImageText with the folder's tokenizer; a note in `notes` when
    its prompts cannot be read (no tokenizer there, or one that needs a package not installed)."""
    if output:
        raise ModelLoadError(f"{source}: a {type(whole).__name__} loads as its image tower (its output the image "
                             f"embedding, scored against prompts by text: targets); it takes no #{output}.")
    try:
        if not any((folder / name).is_file() for name in TOKENIZER_FILES):  # (transformers would make an empty one)
            raise FileNotFoundError(f"{folder} has no tokenizer files ({', '.join(TOKENIZER_FILES[:2])}, ...)")
        tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder), local_files_only=True,
                                                               trust_remote_code=trust is True)
    except Exception as exc:  # noqa: BLE001 - said as a note: the image tower still loads
        reason = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".strip()
        notes.append(f"Its tokenizer could not be read ({reason}): text: targets are refused.")
        return ImageText(whole, family, None, reason)
    return ImageText(whole, family, tokenizer)
