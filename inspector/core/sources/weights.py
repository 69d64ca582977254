"""The weights word and the random-weights rule, one definition for every family of model:
`random` (also `default` and empty), `pretrained`, or a weights file; a seed only for random
weights; the note that says which seed random weights were made with."""

from __future__ import annotations

import contextlib
import random
from typing import Iterator

import numpy as np
import torch

from ..common.errors import ModelLoadError, SpecError
from .checkpoints import weights_into
from .loaded import LoadedModel
from .seeds import new_seed

RANDOM_WORDS = (None, "", "random", "default")


def is_random(weights: str | None) -> bool:
    """`random`, `default`, empty or None: weights made by the model's own initialisation."""
    return weights in RANDOM_WORDS


def random_note(seed: int) -> str:
    """What a model with random weights says of them."""
    return f"Random weights (seed {seed}): activations show structure, not learned features."


def pick(seed: int | None) -> int:
    """The seed given, or a new one."""
    return new_seed() if seed is None else seed


def no_seed(seed: int | None, why: str) -> None:
    """SpecError when a seed is given for weights that are not random (`why` says where they come from)."""
    if seed is not None:
        raise SpecError(f"A seed is for random weights; {why}. Leave the seed out.")


def no_seed_unless_random(seed: int | None, weights: str) -> None:
    """A seed only with random weights: pretrained weights and a weights file are not random."""
    if not is_random(weights):
        no_seed(seed, "pretrained weights are not random" if weights == "pretrained"
                else f"the weights come from {weights}")


def apply_weights_file(loaded: LoadedModel, weights: str, trust: bool) -> None:
    """Load a weights file into `loaded` (a whole pickled model only with trust)."""
    if weights == "pretrained":
        raise ModelLoadError(f"--weights pretrained is for torchvision models; {loaded.source} has none.")
    module = weights_into(loaded.module, weights, trust)
    if module is not loaded.module:
        loaded.module = module
        loaded.notes.append(f"Whole model loaded from trusted pickle {weights}.")
    loaded.weights = str(weights)


@contextlib.contextmanager
def seeded(seed: int) -> Iterator[None]:
    """Run the block with torch's CPU generator, Python's `random` and numpy's global RNG seeded
    with `seed`; their states (and CUDA's, when CUDA is initialised) are restored afterwards."""
    cuda = list(range(torch.cuda.device_count())) if torch.cuda.is_initialized() else []
    py_state, np_state = random.getstate(), np.random.get_state()
    with torch.random.fork_rng(devices=cuda):
        torch.default_generator.manual_seed(seed)
        random.seed(seed)
        np.random.seed(seed)
        try:
            yield
        finally:
            random.setstate(py_state)
            np.random.set_state(np_state)
