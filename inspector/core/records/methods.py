"""The attribution methods as one table: a torch-free record per method that every surface reads.

A `Method` says what a method explains (a class, or nothing: class-agnostic), whether it works at a layer,
its options (each an `Option`: kind, default, range, help, the CLI's flag), whether it takes a baseline of its
own, whether it runs in passes (progress, cancel), the sign its maps are drawn and scored with, which models
it serves, whether Compare all offers it, and where its arithmetic lives (`run`, "module:function", imported
only when a map is made). The CLI's flags and help, the app's chooser and option widgets, the option checks,
sessions and exports all read `METHODS`; a new method is one module and one `register(Method(...))`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

#: Integrated gradients' quadratures: captum's names (`core.integrated.path_nodes`).
QUADRATURES = ("gausslegendre", "riemann_left", "riemann_right", "riemann_middle", "riemann_trapezoid")
GAUSS_MOST = 20_000  # Gauss-Legendre points, at most: finding n nodes takes O(n^2) time (20,000: 4 s on a laptop core)


def gauss_too_many(quadrature: str, steps) -> str | None:
    """Why `steps` Gauss-Legendre points are not taken (more than GAUSS_MOST), else None: one rule for the
    method and for the CLI, which says it before the model loads."""
    if quadrature != "gausslegendre" or isinstance(steps, bool) or not isinstance(steps, int) or steps <= GAUSS_MOST:
        return None
    return (f"Gauss-Legendre takes at most {GAUSS_MOST:,} steps (its nodes take time that grows as steps squared "
            f"to find), not {steps:,}: use --quadrature riemann_trapezoid for more.")
#: SmoothGrad's kinds (captum's NoiseTunnel: mean, mean of squares, variance) and the maps it smooths.
SMOOTH_KINDS = ("smoothgrad", "smoothgrad-sq", "vargrad")
SMOOTHED = ("saliency", "guided", "ig")
BASELINES = ("zero", "mean", "black", "white", "blur", "uniform")  # by name (inspector.core.attribution.scores.baselines); or a file
METRICS = ("deletion", "insertion", "road")  # the scores of a map (inspector.core.attribution.scores.faithfulness)
#: The curves each metric draws (a Curve's `metric`): ROAD one for each order (records.protocols).
METRIC_CURVES = {"deletion": ("deletion",), "insertion": ("insertion",), "road": ("road-morf", "road-lerf")}
#: What a map can explain: a class (a detector: a box), or nothing (class-agnostic).
EXPLAINS = ("class", "nothing")


@dataclass(frozen=True)
class Option:
    """One option of a method, as every surface offers it. `kind`: whole, number, choice, text, baseline
    (a name from BASELINES or a file; a tensor through the API) or memory (bytes or "2GB"). `auto`: what
    None means, in a word ("auto", "new"), where None is allowed. `low`/`high`: the range (`high` the
    app's box; None: no limit). `app`: offered in the app (the rest are the CLI's and the API's)."""

    name: str
    kind: str
    default: object
    help: str
    choices: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None
    auto: str | None = None
    flag: str | None = None  # the CLI's flag when not --NAME (two methods' seeds: --noise-seed, --mask-seed)
    app: bool = True
    when: tuple[str, str] | None = None  # (option, value): taken only when that option has that value
    auto_value: object = None  # what the option is when it says `auto` (None; ig's steps: "auto")

    def applies(self, values: dict) -> bool:
        """Whether this option is taken with the method's other `values` (its `when`)."""
        return self.when is None or values.get(self.when[0]) == self.when[1]

    @property
    def cli_flag(self) -> str:
        return self.flag or "--" + self.name.replace("_", "-")

    @property
    def dest(self) -> str:
        """The argparse destination of `cli_flag`."""
        return self.cli_flag[2:].replace("-", "_")


@dataclass(frozen=True)
class Method:
    """One attribution method (see the module's docstring)."""

    name: str
    title: str
    help: str
    run: str  # "module:function" making its Attribution: function(model, x, target, layer, options)
    explains: str = "class"
    layer: bool = False
    options: tuple[Option, ...] = ()
    baseline: bool = False  # starts from or fills in a baseline of its own (else: one for the scores only)
    passes: bool = False  # runs in passes: progress, rate and cancel
    sign: str = "positive"  # its maps' default sign (records.signs); SmoothGrad's depends on what it smooths
    classifiers: bool = True  # serves classifiers (and segmenters, ...)
    detectors: bool = True  # explains a detector's box
    compare: bool = False  # Compare all offers it for a classifier
    compare_boxes: bool = False  # ... and for a detector
    vits_only: bool = False  # of the classifiers, serves vision transformers only (the rest: a one-line why)

    @property
    def option_names(self) -> tuple[str, ...]:
        return tuple(o.name for o in self.options)

    def option(self, name: str) -> Option | None:
        return next((o for o in self.options if o.name == name), None)


# The options, shared by the methods that take them.
_BATCH = Option("batch", "whole", None, "copies of the input a pass (default: as many as half the free memory holds, "
                "measured on one copy, at most 64)", low=1, auto="auto", app=False)
_MEMORY = Option("max_memory", "memory", None, "the most memory a pass may take, e.g. 2GB (default: half of what "
                 "is free)", auto="auto", app=False)
_BASELINE = (
    Option("baseline", "baseline", None, "what the map starts from or fills in, and the scores put in place of the "
           "input: zero (default), mean, black, white, blur, uniform, or an image or tensor file of the input's size",
           choices=BASELINES, auto="zero"),
    Option("blur_sigma", "number", None, "baseline blur: the blur's sigma in pixels (default a twentieth of the "
           "input's side)", low=0, auto="auto", app=False),
    Option("baseline_seed", "whole", None, "baseline uniform: makes the noise repeatable", low=0, auto="new",
           app=False),
)
_IG = (
    Option("steps", "whole", 50, "points on the path from the baseline (default 50), or auto: points added (a "
           "nested trapezoid rule, each level reusing the last one's gradients) until the completeness gap is "
           "within the tolerance or the points reach --max-steps", low=1, high=5000, auto="auto", auto_value="auto"),
    Option("quadrature", "choice", "gausslegendre", "how the path is integrated (captum's nodes and weights; "
           "default gausslegendre; steps auto: a nested trapezoid)", choices=QUADRATURES),
    Option("tolerance", "number", 0.01, "steps auto: the completeness gap to reach, as a fraction of "
           "|f(x) - f(baseline)| (default 0.01)", low=0.0, high=1.0, when=("steps", "auto")),
    Option("max_steps", "whole", 512, "steps auto: the most points (default 512)", low=3, high=5000,
           when=("steps", "auto")),
    _BATCH, _MEMORY, *_BASELINE,
)
_SMOOTH = (
    Option("of", "choice", "saliency", "the map it smooths", choices=SMOOTHED),
    Option("kind", "choice", "smoothgrad", "the mean, mean of squares or variance of the maps (default smoothgrad)",
           choices=SMOOTH_KINDS, flag="--smooth"),
    Option("samples", "whole", 25, "noisy copies of the input (default 25)", low=1, high=5000),
    Option("noise", "number", 0.15, "the noise's standard deviation as a fraction of the input's range "
           "(default 0.15)", low=0, high=1.0),
    Option("seed", "whole", None, "makes the noise repeatable", low=0, auto="new", flag="--noise-seed"),
)
_OCCLUSION = (
    Option("window", "whole", None, "the window's side in pixels (default a tenth of the input's side)", low=1,
           high=4096, auto="auto"),
    Option("stride", "whole", None, "pixels between windows (default window/2)", low=1, high=4096, auto="auto"),
    _BATCH, _MEMORY, *_BASELINE,
)
_DRISE = (
    Option("masks", "whole", 500, "random masks (default 500)", low=1, high=100_000),
    Option("cell", "whole", None, "a mask cell's side in pixels (default a sixteenth of the input's side)", low=1,
           high=4096, auto="auto"),
    Option("probability", "number", 0.5, "the chance a mask cell keeps the image (default 0.5)", low=0.05, high=1.0),
    Option("seed", "whole", None, "makes the masks repeatable", low=0, auto="new", flag="--mask-seed"),
    _BATCH, _MEMORY,
)

_ROWS = (
    Method("saliency", "saliency", "|d score / d input|, the largest over channels",
           "inspector.core.attribution.gradients:saliency_map", compare=True, compare_boxes=True),
    Method("gradcam", "Grad-CAM", "the layer's maps weighted by their mean gradient (default layer: the feature map "
           "the head reads)", "inspector.core.attribution.cams.gradcam:gradcam_map", layer=True, compare=True,
           compare_boxes=True),
    Method("guided", "guided backprop", "the input gradient with only positive gradients through each activation",
           "inspector.core.attribution.gradients:guided_map", sign="signed", compare=True, compare_boxes=True),
    Method("guided-gradcam", "guided Grad-CAM", "guided backprop times the upsampled Grad-CAM",
           "inspector.core.attribution.gradients:guided_gradcam_map", layer=True, sign="signed"),
    Method("rollout", "attention rollout", "attention across a transformer's attention modules (class-agnostic)",
           "inspector.core.attribution.rollout:rollout_map", explains="nothing", detectors=False, vits_only=True),
    Method("legrad", "LeGrad", "each block's score's gradient at that block's attention, positive part averaged over "
           "heads, queries and blocks (vision transformers)", "inspector.core.attribution.legrad:legrad_map",
           options=(Option("blocks", "whole", None, "the last blocks averaged (default all)", low=1, high=1000,
                           auto="all"),), detectors=False, vits_only=True),
    Method("chefer", "Chefer relevance", "attention times its gradient, propagated through the blocks: the class "
           "token's relevance (vision transformers), or a box's query's (DETR)",
           "inspector.core.attribution.chefer:chefer_map", vits_only=True),
    Method("ig", "integrated gradients", "gradients along the path from a baseline to the input, integrated",
           "inspector.core.attribution.integrated:ig_map", options=_IG, baseline=True, passes=True, sign="signed",
           compare=True, compare_boxes=True),
    Method("smoothgrad", "SmoothGrad", "a map averaged over noisy copies of the input",
           "inspector.core.attribution.smoothgrad:smoothgrad_map",
           options=(*_SMOOTH, *(replace(o, when=("of", "ig")) if o.name not in ("batch", "max_memory") else o
                                for o in _IG if o.name not in ("tolerance", "max_steps"))), passes=True, compare=True,
           compare_boxes=True),
    Method("occlusion", "occlusion", "the score's change as a window of the baseline slides over the input",
           "inspector.core.attribution.occlusion:occlusion_map", options=_OCCLUSION, baseline=True, passes=True,
           sign="signed", compare=True, compare_boxes=True),
    Method("eigencam", "EigenCAM", "the first principal component of the layer's maps (class-agnostic)",
           "inspector.core.attribution.cams.eigencam:eigencam_map", explains="nothing", layer=True, compare_boxes=True),
    Method("drise", "D-RISE", "random masks weighted by how well each keeps the box (detectors)",
           "inspector.core.attribution.drise:drise_map", options=_DRISE, passes=True, classifiers=False,
           compare_boxes=True),
)

#: The baseline options every method takes for its scores (deletion and insertion put it in place of the input).
SCORES_BASELINE = _BASELINE
#: Every method by name, in the order they are offered.
METHODS: dict[str, Method] = {m.name: m for m in _ROWS}
#: The sign option every method takes (records.signs), said here once for the CLI and the checks.
SIGN_HELP = ("what of the map is drawn and scored: positive, negative or absolute values, or signed (a diverging "
             "picture; the metrics remove the most positive pixels first). Default: signed for ig, occlusion and "
             "guided maps (and SmoothGrad's mean of them), positive for the rest")


def register(method: Method) -> Method:
    """Add `method` to the table (a plug-in's, or a test's); its name must be new."""
    if method.name in METHODS:
        raise ValueError(f"An attribution method named {method.name!r} is already registered.")
    if method.explains not in EXPLAINS:
        raise ValueError(f"A method explains one of {', '.join(EXPLAINS)}, not {method.explains!r}.")
    METHODS[method.name] = method
    return method


def unregister(name: str) -> None:
    """Take a registered method out again (a test's, when it is done)."""
    METHODS.pop(name, None)


def method_names() -> tuple[str, ...]:
    return tuple(METHODS)


def layer_methods() -> tuple[str, ...]:
    """The methods that work at a layer (the rest ignore one)."""
    return tuple(m.name for m in METHODS.values() if m.layer)


def class_agnostic() -> tuple[str, ...]:
    """The methods that explain no class."""
    return tuple(m.name for m in METHODS.values() if m.explains == "nothing")


def compared(boxes: bool) -> tuple[str, ...]:
    """What Compare all computes: for a detector's boxes, or for a class."""
    return tuple(m.name for m in METHODS.values() if (m.compare_boxes if boxes else m.compare))


def app_options(name: str, values: dict | None = None) -> tuple[str, ...]:
    """The options of method `name` the app offers, with its other option `values` (SmoothGrad of ig: ig's
    steps, quadrature and baseline too); none for a method not in the table."""
    method = METHODS.get(name)
    return tuple(o.name for o in method.options if o.app and o.applies(values or {})) if method else ()


def made_words(method: str, details: dict) -> list[str]:
    """How a map was made, in words, from its details (`Attribution.details`): one sentence for each of the
    smoothing, the occluded windows and the masks it was made with. Said once, for the command's lines, the
    app's caption and so the saved figure; a method with none of them has none."""
    words = []
    if "samples" in details:  # SmoothGrad, VarGrad, SmoothGrad^2: the one rule for "METHOD of BASE"
        path = f" ({details['steps']} steps, {details['quadrature']})" if "steps" in details else ""
        words.append(f"{method} of {details['of']}{path}: {details['samples']} noisy copies, noise sigma "
                     f"{details['sigma']:.3g} ({details['noise']} of the input's range), noise seed {details['seed']}")
    if "windows" in details:
        words.append(f"{details['windows']} windows of {details['window']} pixels, stride {details['stride']}")
    if "masks" in details:
        words.append(f"{details['masks']} masks of {details['cell']}-pixel cells kept with probability "
                     f"{details['probability']:g}, mask seed {details['seed']}")
    return words
