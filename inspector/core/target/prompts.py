"""What a `text:` target makes of an image-text model's output (CLIP, SigLIP): the score of the image and a
prompt, or the first prompt's probability among several.

The model (`sources.image_text.ImageText`) returns the image's embedding; it scores that embedding against
prompts with its own text tower (`prompt_logits`: transformers' `logits_per_image`, one column a prompt) and
says whether one prompt's score is a sigmoid (SigLIP) or the logit itself (CLIP). A model without a text
tower has no `prompt_logits`: a `text:` target is refused in one line, before any forward where the caller
checks first (`check_prompts`)."""

from __future__ import annotations

import torch

from ..common.errors import SpecError
from .text import Target


def _scorer(model, target: Target):
    scorer = getattr(model, "prompt_logits", None)
    if not callable(scorer):
        raise SpecError(f"Target {target} needs an image-text model (CLIP or SigLIP from an hf: folder with its "
                        f"text tower and tokenizer); this model has no text tower.")
    return scorer


def check_prompts(model, target: Target) -> tuple[str, ...]:
    """Nothing for a target that is not `text:`; else a SpecError for a model without a text tower (or a
    tokenizer it could not read), and the notes on prompts its tokenizer cuts to the model's most tokens."""
    if target.kind != "text":
        return ()
    _scorer(model, target)
    return tuple(model.prompt_notes(target.prompts))


def prompt_objective(output: torch.Tensor, target: Target, model) -> torch.Tensor:
    """The objective of a `text:` target, summed over the batch: one prompt's score (CLIP: the logit, the
    cosine similarity times the logit scale; SigLIP: the sigmoid of its logit, the probability it gives the
    pair); several prompts: the first one's softmax probability among them (CLIP's zero-shot rule)."""
    logits = _scorer(model, target)(output, target.prompts)
    if len(target.prompts) > 1:
        return torch.softmax(logits, dim=1)[:, 0].sum()
    one = logits[:, 0]
    return (torch.sigmoid(one) if model.sigmoid_score else one).sum()
