"""Tiny CLIP and SigLIP folders for the tests, as `save_pretrained` writes them: both towers from small configs
with random weights, an image processor, and a tokenizer built here offline (CLIP's byte-pair tokenizer from a
letters-only vocabulary; SigLIP's sentencepiece tokenizer stood in for by a word-level fast tokenizer that
pads, as SigLIP's does, with no attention mask)."""

from __future__ import annotations

import json
from pathlib import Path

import torch
import transformers
from tokenizers import Tokenizer, models, pre_tokenizers, processors

TOWER = dict(hidden_size=16, intermediate_size=32, num_hidden_layers=2, num_attention_heads=2)
IMAGE = dict(TOWER, image_size=32, patch_size=8)
#: the words SigLIP's stand-in tokenizer knows (others are <unk>)
WORDS = ["<pad>", "</s>", "<unk>", "a", "photo", "of", "dog", "cat", "car", "the", "red", "big"]
#: the most tokens each text tower reads (small, so a long prompt is cut)
CLIP_TOKENS, SIGLIP_TOKENS = 24, 8


def clip_folder(folder: Path, seed: int = 0, tokenizer: bool = True):
    """A CLIPModel saved in `folder` (32x32 images, 4x4 patches and a class token); returns the model and its
    tokenizer (None without one)."""
    folder.mkdir(parents=True, exist_ok=True)
    vocab = {"<|startoftext|>": 0, "<|endoftext|>": 1}
    for letter in "abcdefghijklmnopqrstuvwxyz":
        vocab[letter] = len(vocab)
        vocab[letter + "</w>"] = len(vocab)
    tok = None
    if tokenizer:
        (folder / "vocab.json").write_text(json.dumps(vocab))
        (folder / "merges.txt").write_text("#version: 0.2\n")
        tok = transformers.CLIPTokenizer(str(folder / "vocab.json"), str(folder / "merges.txt"),
                                         pad_token="<|endoftext|>")
        tok.save_pretrained(folder)
    config = transformers.CLIPConfig(
        text_config=dict(TOWER, vocab_size=len(vocab), max_position_embeddings=CLIP_TOKENS, bos_token_id=0,
                         eos_token_id=1, pad_token_id=1),
        vision_config=IMAGE, projection_dim=8, logit_scale_init_value=1.5)
    torch.manual_seed(seed)
    model = transformers.CLIPModel(config).eval()
    model.save_pretrained(folder)
    transformers.CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}).save_pretrained(
        folder)
    return model, tok


def siglip_folder(folder: Path, seed: int = 0):
    """A SiglipModel saved in `folder` (32x32 images, 4x4 patches, no class token, attention pooling)."""
    folder.mkdir(parents=True, exist_ok=True)
    words = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="<unk>"))
    words.pre_tokenizer = pre_tokenizers.Whitespace()
    words.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 1)])
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=words, pad_token="<pad>", eos_token="</s>",
                                               unk_token="<unk>", model_input_names=["input_ids"])
    tok.save_pretrained(folder)
    config = transformers.SiglipConfig(
        text_config=dict(TOWER, vocab_size=len(WORDS), max_position_embeddings=SIGLIP_TOKENS, pad_token_id=0,
                         bos_token_id=None, eos_token_id=1),
        vision_config=IMAGE)
    torch.manual_seed(seed)
    model = transformers.SiglipModel(config).eval()
    with torch.no_grad():  # a bias and scale of their own, so a formula that drops either is seen
        model.logit_scale.fill_(0.7)
        model.logit_bias.fill_(-0.4)
    model.save_pretrained(folder)
    transformers.SiglipImageProcessor(size={"height": 32, "width": 32}).save_pretrained(folder)
    return model, tok


def reference_logits(model, tok, siglip: bool, prompts, x: torch.Tensor) -> torch.Tensor:
    """transformers' own `logits_per_image` (B, P) of `x` and `prompts`, tokenised as each family's docs do."""
    padding = "max_length" if siglip else True
    tokens = tok(list(prompts), padding=padding, truncation=True,
                 max_length=SIGLIP_TOKENS if siglip else CLIP_TOKENS, return_tensors="pt")
    return model(**tokens, pixel_values=x).logits_per_image
