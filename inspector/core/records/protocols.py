"""How a map's scores are computed, as named presets: torch-free, so a command refuses an unknown name or a bad
setting before torch loads.

A `Protocol` fixes every setting of the deletion and insertion games (Petsiuk et al., RISE, BMVC 2018): how many
pixels each step changes, what deletion puts in place of the input, what insertion starts from. The pixel order
(the map's picture under its sign, records.signs), the score (the softmax probability of the map's class) and the
AUC ((sum - first/2 - last/2) / (points - 1)) are the same in every protocol. `curve.protocol` and
`curve.settings` carry them with every number (inspector.core.attribution.scores.faithfulness.Curve).

ROAD (Rong et al., ICML 2022) has settings of its own, checked here too: the percentages removed and the noise of
its imputation (inspector.core.attribution.scores.road).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from ..common.errors import SpecError

#: The games a protocol fixes; `--metrics` takes these and the other metrics (records.methods.METRICS).
GAMES = ("deletion", "insertion")


@dataclass(frozen=True)
class Protocol:
    """One named preset of the deletion and insertion games.

    `steps`: K equal steps, the first floor(i * H * W / K) pixels changed after step i (a caller may give its own
    K), or None; then `pixels_a_step` pixels a step, ceil(H * W / pixels_a_step) steps, fixed. `deletion_to`:
    "baseline" (the map's: the method's own, or the one named; zeros by default) or "zeros" (of the model's input,
    so the mean colour after a normalisation). `insertion_from`: "baseline" or "blur" (the input under a Gaussian
    kernel `blur_kernel` pixels wide, sigma `blur_sigma`, zero-padded, as the reference code convolves)."""

    name: str
    source: str  # where it comes from, in words
    steps: int | None
    pixels_a_step: int | None = None
    deletion_to: str = "baseline"
    insertion_from: str = "baseline"
    blur_kernel: int | None = None
    blur_sigma: float | None = None
    classes_only: bool = False  # scores a class's softmax probability only (no box, no objective)

    @property
    def takes_baseline(self) -> bool:
        """A game of this protocol reads the map's baseline (the method's own or the one named)."""
        return "baseline" in (self.deletion_to, self.insertion_from)

    def step_counts(self, pixels: int, steps: int | None = None) -> list[int]:
        """The pixels changed at each point of a curve over an image of `pixels` pixels: K + 1 counts from 0."""
        if self.steps is None:
            if steps is not None:
                raise SpecError(f"The protocol {self.name} fixes its steps ({self.pixels_a_step} pixels a step): "
                                "leave the metric steps out, or use the protocol inspector.")
            k = -(-pixels // self.pixels_a_step)
            return [min(self.pixels_a_step * i, pixels) for i in range(k + 1)]
        k = self.steps if steps is None else steps
        return [(i * pixels) // k for i in range(k + 1)]

    def settings(self, pixels: int, steps: int | None = None) -> tuple[tuple[str, object], ...]:
        """Every setting of the games on an image of `pixels` pixels, (name, value) in the order said."""
        made = len(self.step_counts(pixels, steps)) - 1
        first = (("steps", made),) if self.steps is not None else (("pixels a step", self.pixels_a_step),
                                                                   ("steps", made))
        return first + (("deletion to", _ENDS[self.deletion_to]), ("insertion from", self._start()))

    def _start(self) -> str:
        if self.insertion_from == "blur":
            return f"the input blurred (Gaussian, kernel {self.blur_kernel}, sigma {self.blur_sigma:g}, zero padding)"
        return _ENDS[self.insertion_from]


_ENDS = {"baseline": "the baseline", "zeros": "zeros of the model's input"}

#: The protocols by name; the first is the default.
PROTOCOLS: dict[str, Protocol] = {p.name: p for p in (
    Protocol("inspector", "this project's: K equal steps (--metric-steps, default 50), both games over the map's "
             "baseline (the method's own, or --baseline; zeros by default)", steps=50),
    Protocol("rise2018", "Petsiuk et al., RISE (BMVC 2018), as their reference code (evaluation.py, CausalMetric) "
             "computes it: 224 pixels a step, deletion to zeros of the normalised input, insertion from the input "
             "under a Gaussian blur (kernel 11, sigma 5)", steps=None, pixels_a_step=224, deletion_to="zeros",
             insertion_from="blur", blur_kernel=11, blur_sigma=5.0, classes_only=True),
)}
DEFAULT_PROTOCOL = "inspector"


def check_protocol(name) -> Protocol:
    """The protocol named `name`; a SpecError in one line naming the protocols otherwise."""
    if not isinstance(name, str) or name not in PROTOCOLS:
        raise SpecError(f"Unknown protocol {name!r}. Protocols: {', '.join(PROTOCOLS)}.")
    return PROTOCOLS[name]


def protocols_help() -> str:
    """The protocols in words (the command's help)."""
    return "; ".join(f"{p.name}: {p.source}" for p in PROTOCOLS.values())


# ROAD's settings
ROAD_PERCENTAGES = (10, 20, 30, 40, 50, 60, 70, 80, 90)
ROAD_NOISE = 0.01
#: The curves ROAD draws: most relevant first, least relevant first.
ROAD_CURVES = ("road-morf", "road-lerf")


def check_road(noise, percentages) -> tuple[float, ...]:
    """ROAD's `percentages` as numbers, each at least 0 and below 100, sorted, each once, when `noise` is a number at
    least 0; a SpecError in one line otherwise."""
    if isinstance(noise, bool) or not isinstance(noise, (int, float)) or not math.isfinite(noise) or noise < 0:
        raise SpecError(f"ROAD's noise is a standard deviation, 0 or more, not {noise!r}.")
    try:
        values = tuple(percentages)
    except TypeError:
        values = (percentages,)
    if not values:
        raise SpecError("ROAD needs at least one percentage of pixels to remove.")
    for p in values:
        if isinstance(p, bool) or not isinstance(p, (int, float)):
            raise SpecError(f"ROAD's percentages are numbers from 0 to 100, not {p!r}.")
        if not math.isfinite(p) or not 0 <= p <= 100:
            raise SpecError(f"ROAD's percentages are numbers from 0 to 100, not {p:g}.")
        if p == 100:
            raise SpecError("ROAD cannot remove 100 % of the pixels: none would be left to impute them from.")
    return tuple(sorted({float(p) for p in values}))


def parse_percentages(text: str) -> tuple[float, ...]:
    """`--road-percentages 10,20,30`: the numbers, checked (check_road); a SpecError in one line otherwise."""
    try:
        values = tuple(float(t) for t in text.split(",") if t.strip())
    except ValueError:
        raise SpecError(f"ROAD's percentages are numbers from 0 to 100, comma-separated, not {text!r}.") from None
    return check_road(0.0, values)


def road_removed(pixels: int, percentage: float) -> int:
    """How many of `pixels` pixels ROAD removes at `percentage` %: those at or above the map's (100 - percentage)th
    percentile under numpy's linear interpolation, as pytorch-grad-cam picks them for a map without ties:
    pixels - ceil((100 - percentage) / 100 * (pixels - 1)), in exact arithmetic (the authors' int(pixels * p)
    differs by one pixel at some sizes); none at 0 %, where grad-cam's threshold would still take the top pixel."""
    if percentage == 0:
        return 0
    kept = Fraction(100) - Fraction(percentage)
    return pixels - math.ceil(kept * (pixels - 1) / 100)
