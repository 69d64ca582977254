"""Numbers for people: NaN and Inf spelled out, never "nan%"; the statistics line of a capture."""

from __future__ import annotations

import math

from inspector.core.records.stats import TensorStats


def fmt(value: float, spec: str = ".4g") -> str:
    """`value` formatted with `spec`; NaN as "NaN", infinities as "Inf" / "-Inf"."""
    value = float(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Inf" if value > 0 else "-Inf"
    return format(value, spec)


def fmt_percent(value: float, digits: int = 1) -> str:
    return fmt(value, f".{digits}%")


def nonfinite_text(nan: int, inf: int) -> str:
    """"NaN 3  Inf 1" for the non-finite counts that are not zero; "" when there are none."""
    parts = [f"NaN {nan}"] if nan else []
    if inf:
        parts.append(f"Inf {inf}")
    return "  ".join(parts)


def format_stats(stats: TensorStats | None) -> str:
    """One line: shape, dtype and the statistics; NaN/Inf counts first when there are any, and the
    statistics said to be over the finite values (or absent when there is none)."""
    if stats is None:
        return ""
    shape = "×".join(map(str, stats.shape))
    n = math.prod(stats.shape)
    head = f"{shape} {stats.dtype}"
    bad = stats.nan + stats.inf
    if bad:
        head += f"   {nonfinite_text(stats.nan, stats.inf)} of {n} values"
        if bad >= n:
            return head + "   (no finite values)"
        head += f"   over the {n - bad} finite values:"
    return (f"{head}   mean {fmt(stats.mean)}   std {fmt(stats.std)}   min {fmt(stats.min)}   "
            f"max {fmt(stats.max)}   zeros {fmt_percent(stats.zero_fraction)}   L2 {fmt(stats.l2)}")


LONG_NAME = 24  # characters: a module path longer than this may not fit on one line of a panel


def breakable(name: str) -> str:
    """A long module path (`vit.embeddings.patch_embeddings.projection:output`) for a label that wraps and is not
    selected from: it may break after its dots and before its colon (zero-width spaces), so that it wraps whole
    rather than being cut at the panel's edge. A short one is left as it is."""
    if len(name) <= LONG_NAME:
        return name
    return name.replace(".", ".\u200b").replace(":", "\u200b:")


def keep_pairs(text: str, between: str = "   ") -> str:
    """`text` for a label that wraps: only between its parts (split at `between`), each part — "mean 0.25",
    "min -5.874" — kept on one line by non-breaking spaces."""
    return between.join(part.replace(" ", "\u00a0") for part in text.split(between))
