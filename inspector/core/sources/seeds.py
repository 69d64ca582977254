"""Seeds of random weights: checked and picked, torch-free (session files and the app use them
before the engine loads). Applying one is `weights.seeded`."""

from __future__ import annotations

import secrets

from ..common.errors import SpecError

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
