"""Seeds of random weights: checked, picked, and applied without touching the caller's RNG state.

`check_seed` and `new_seed` are torch-free (session files and the app use them before the
engine loads); `seeded` imports torch when entered.
"""

from __future__ import annotations

import contextlib
import secrets
from typing import Iterator

from ..errors import SpecError

#: Seeds are whole numbers that fit 32 bits unsigned (numpy's legacy seeding takes no more).
MAX_SEED = 2**32 - 1


def check_seed(value: object, what: str = "seed", text: bool = False) -> int | None:
    """`value` as a seed (None stays None); a bool, a float, a negative or too large number raises
    SpecError naming `what`, and so does text unless `text` (the command line's digits) is set."""
    if value is None:
        return None
    seed = None
    if isinstance(value, int) and not isinstance(value, bool):
        seed = value
    elif text and isinstance(value, str) and value.strip().isdigit() and value.strip().isascii():
        seed = int(value.strip())
    if seed is None or not 0 <= seed <= MAX_SEED:
        raise SpecError(f"{what} must be a whole number from 0 to {MAX_SEED}, not {value!r}.")
    return seed


def new_seed() -> int:
    """A fresh seed that the app's seed box can also show (below 2**31)."""
    return secrets.randbelow(2**31)


@contextlib.contextmanager
def seeded(seed: int) -> Iterator[None]:
    """Run the block with torch's CPU generator, Python's `random` and numpy's global RNG seeded
    with `seed`; their states (and CUDA's, when CUDA is initialised) are restored afterwards."""
    import random

    import numpy as np
    import torch

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
