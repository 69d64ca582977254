"""The sanity checks as evaluation metrics (Adebayo et al., NeurIPS 2018): MPRT and random-logit of each map, by the
project's checks (`attribution.sanity`), with the evaluation's settings (`settings.METRIC_OPTIONS`: the mode, the
threshold and the seeds, fixed unless told, so a job resumed gives the same files). Each check takes the map the job
made (its class, its noise seed and baseline) as its original, so the original is not made again."""

from __future__ import annotations

import math

from ..attribution.sanity.random_logit import random_logit as random_logit_check
from ..attribution.sanity.randomisation import mprt as mprt_check
from .settings import method_options


def _number(value) -> float:
    """A similarity or a verdict as a number: NaN where it is undefined (None)."""
    return math.nan if value is None else float(value)


def mprt(loaded, x, found, settings) -> dict[str, float]:
    """MPRT of the map `found` (settings' mprt mode, mprt_seed, mprt_threshold): the similarities at the step the
    verdict reads (cascading: every layer re-initialised; independent: the step least like the original; the last
    step where the verdict is undefined) and `changes`, 1 when the map changes with the model, 0 when not, NaN when
    undefined (the original map is constant)."""
    checked = mprt_check(loaded, x, found.method, None, None, method_options(found.method), settings.option("mprt"),
                         settings.option("mprt_seed"), settings.option("mprt_threshold"), original=found)
    final = checked.similarities[checked.decided_by or len(checked.similarities) - 1]
    return {"spearman_abs_final": _number(final.spearman_abs), "spearman_final": _number(final.spearman_signed),
            "ssim_final": _number(final.ssim), "changes": _number(checked.changes)}


def random_logit(loaded, x, found, settings) -> dict[str, float]:
    """Random-logit of the map `found`: the similarity of the map of another class (drawn from settings'
    random_logit_seed) to it."""
    checked = random_logit_check(loaded, x, found.method, None, None, method_options(found.method),
                                 settings.option("random_logit_seed"), original=found)
    alike = checked.similarity
    return {"spearman_abs": _number(alike.spearman_abs), "spearman": _number(alike.spearman_signed),
            "ssim": _number(alike.ssim)}
