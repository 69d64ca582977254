"""BatchNorm folded into the convolution before it, while a job's batches of copies run on a CPU (integrated
gradients' path points, SmoothGrad's noisy copies, occlusion's occluded copies, the deletion and insertion
images): an eval-mode BatchNorm reading a convolution's output, which nothing else reads, computes

    (conv(x, W, b) - mean) * s + beta  =  conv(x, W * s, (b - mean) * s + beta),   s = gamma / sqrt(var + eps)

so the convolution runs with that weight and bias (`folded`) and the BatchNorm passes its input on: one
kernel instead of two, forward and backward (resnet50's occlusion: BatchNorm took 93 of 1,164 ms of kernel
time; `bench --attribution --against unfolded` times whole jobs both ways). The numbers are the same to
float32 rounding (resnet50's maps move by relL2 1e-5 to 7e-4); the folded weight and bias are constants, so
these passes give the input's gradient and none to the weights.

Which pairs fold is found once per model and input shape, by watching a forward of one copy (`find_pairs`):
every torch function called on a convolution's output (a TorchFunctionMode) must be called by the one
BatchNorm it feeds, each of the two modules called once, the model not returning that output, and no
tensor's values read into Python (then what runs may depend on the input). A second forward, folded, must
give the first one's outputs to rounding, else nothing folds (a read the watch cannot see: TorchScript, a
module's forward called directly). A model with a hook on any module (the app's edits, a user's) or a
global module hook folds nothing; only exact torch.nn classes fold (Conv1d/2d/3d, BatchNorm1d/2d/3d: a
subclass may compute something else), and each pair is checked again at every job (swapped out, training).
"""

from __future__ import annotations

import contextlib
import weakref

import torch
from torch import nn
from torch.nn.modules import module as _module_hooks
from torch.overrides import TorchFunctionMode

from .fast_passes import PLAIN_NORMS, ThreadSwitch, on_cpu

_CONVS = (nn.Conv1d, nn.Conv2d, nn.Conv3d)
_FOLDING = ThreadSwitch()  # off in a thread inside `unfolded()`
#: per module: {input shape: ((conv path, norm path), ...)}
_PAIRS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_HOOKS = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")
#: torch functions that read a tensor's values into Python
_VALUE_READS = frozenset({"__bool__", "__int__", "__float__", "__index__", "item", "tolist", "numpy"})
_GLOBAL_HOOKS = ("_global_forward_hooks", "_global_forward_pre_hooks", "_global_backward_hooks",
                 "_global_backward_pre_hooks")


def _hooked(m: nn.Module) -> bool:
    return any(getattr(m, name, None) for name in _HOOKS)


def _global_hooks() -> bool:
    return any(getattr(_module_hooks, name, None) for name in _GLOBAL_HOOKS)


def _tensors(value):
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _tensors(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _tensors(v)


class _Uses(TorchFunctionMode):
    """While a forward runs: the convolutions' outputs, which BatchNorms take them as input, whether anything
    else reads them, and whether the forward reads a tensor's values into Python (`if`, `.item()`: then what
    runs may depend on the input, and one forward says nothing about the next)."""

    def __init__(self) -> None:
        super().__init__()
        self.made: dict[int, tuple[nn.Module, torch.Tensor]] = {}  # id(output) -> (conv, output kept alive)
        self.read_elsewhere: set[int] = set()
        self.fed: dict[nn.Module, int | None] = {}  # norm -> id(its input) where a convolution made it
        self.feeds: dict[int, int] = {}  # id(a convolution's output) -> how many norms took it
        self.calls: dict[nn.Module, int] = {}
        self.inside: list[tuple[nn.Module, int]] = []  # the norms running now, with id(their input)
        self.values_read = False

    def conv_done(self, conv, _inputs, output) -> None:
        self.calls[conv] = self.calls.get(conv, 0) + 1
        # a batch's output only: an unbatched one has its channels first, where the norm's are second
        if isinstance(output, torch.Tensor) and output.ndim == len(conv.kernel_size) + 2:
            self.made[id(output)] = (conv, output)

    def norm_starts(self, norm, inputs) -> None:
        self.calls[norm] = self.calls.get(norm, 0) + 1
        first = inputs[0] if inputs else None
        # looked up now, while the input lives: the convolutions' outputs are kept, so an id found among them is
        # that output; a later look-up could find a convolution's output made where a freed input used to be
        self.fed[norm] = id(first) if id(first) in self.made else None
        if self.fed[norm] is not None:
            self.feeds[id(first)] = self.feeds.get(id(first), 0) + 1
        self.inside.append((norm, id(first)))

    def norm_done(self, norm, _inputs, _output) -> None:
        self.inside.pop()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if getattr(func, "__name__", "") in _VALUE_READS:
            self.values_read = True
        for t in _tensors((args, kwargs or {})):
            if id(t) in self.made and not (self.inside and self.inside[-1][1] == id(t)):
                self.read_elsewhere.add(id(t))
        return func(*args, **(kwargs or {}))


def find_pairs(module: nn.Module, x: torch.Tensor) -> tuple[tuple[str, str], ...]:
    """(conv path, norm path) of every pair that folds, found by a forward of x's first copy (no gradients), and
    checked by a second forward, folded, that must give the first's outputs to rounding (else none folds: a
    read the watch cannot see, TorchScript say, or a module's forward called directly)."""
    named = {m: p for p, m in module.named_modules()}
    convs = [m for m in named if type(m) in _CONVS]
    norms = [m for m in named if type(m) in PLAIN_NORMS]
    if not convs or not norms:
        return ()
    uses, handles = _Uses(), []
    try:
        handles += [m.register_forward_hook(uses.conv_done) for m in convs]
        handles += [m.register_forward_pre_hook(uses.norm_starts) for m in norms]
        handles += [m.register_forward_hook(uses.norm_done) for m in norms]
        with torch.no_grad(), uses:
            watched = module(x[:1])
    finally:
        for h in handles:
            h.remove()
    if uses.values_read:
        return ()
    returned = {id(t) for t in _tensors(watched)}  # a convolution's output the model returns is read there
    pairs = []
    for norm in norms:
        made = uses.fed.get(norm)
        conv = uses.made.get(made, (None,))[0]
        if (conv is not None and uses.calls.get(conv) == 1 and uses.calls.get(norm) == 1
                and uses.feeds.get(made) == 1 and made not in uses.read_elsewhere and made not in returned
                and conv.out_channels == norm.num_features):
            pairs.append((named[conv], named[norm]))
    if pairs:
        patched: list[nn.Module] = []
        try:
            _fold(module, pairs, patched)
            with torch.no_grad():
                again = module(x[:1])
        finally:
            _unfold(patched)
        if not same_outputs(watched, again):
            return ()
    return tuple(pairs)


def same_outputs(a, b) -> bool:
    """The same outputs to the rounding folding brings: equal non-float tensors, floats within a relative L2 of
    1e4 times their dtype's epsilon, at most 0.05 (float32: 1.2e-3, float64: 2e-12, half types: 0.05; a fold
    that reads the wrong values is off by the size of the values)."""
    first, second = list(_tensors(a)), list(_tensors(b))
    if len(first) != len(second):
        return False
    for p, q in zip(first, second):
        if p.shape != q.shape or p.dtype != q.dtype:
            return False
        if not p.is_floating_point():
            if not torch.equal(p, q):
                return False
            continue
        tolerance = min(1e4 * torch.finfo(p.dtype).eps, 0.05)
        p, q = p.double(), q.double()
        if not bool(torch.isfinite(p).eq(torch.isfinite(q)).all()):
            return False
        p, q = torch.nan_to_num(p), torch.nan_to_num(q)
        if float((p - q).norm()) > tolerance * max(float(p.norm()), 1e-30):
            return False
    return True


class _FoldedConv:
    """A convolution's `forward` while folded: its own kernel with the folded weight and bias."""

    def __init__(self, conv: nn.Module, weight: torch.Tensor, bias: torch.Tensor) -> None:
        self.conv, self.weight, self.bias = conv, weight, bias

    def __call__(self, *args, **kwargs) -> torch.Tensor:
        x = args[0] if args else kwargs["input"]
        return type(self.conv)._conv_forward(self.conv, x, self.weight, self.bias)


def conv_weights(conv: nn.Module) -> tuple[torch.Tensor, torch.Tensor | None]:
    """The weight and bias `conv` runs with now: the folded ones while it is folded, else its own."""
    forward = vars(conv).get("forward")
    if isinstance(forward, _FoldedConv):
        return forward.weight, forward.bias
    return conv.weight, conv.bias


def _passed_on(*args, **kwargs) -> torch.Tensor:
    """A folded BatchNorm's `forward`: its input, already normalised by the convolution before it."""
    return args[0] if args else kwargs["input"]


def folded(conv: nn.Module, norm: nn.Module) -> tuple[torch.Tensor, torch.Tensor]:
    """The convolution's weight and bias with the BatchNorm folded in, in the weight's dtype: the scale and the
    bias worked out in float64, the weight times the scale (rounded to the weight's dtype) in its own dtype."""
    wide = torch.float64
    scale = 1.0 / torch.sqrt(norm.running_var.detach().to(wide) + norm.eps)
    if norm.weight is not None:
        scale = scale * norm.weight.detach().to(wide)
    bias = -norm.running_mean.detach().to(wide)
    if conv.bias is not None:
        bias = bias + conv.bias.detach().to(wide)
    bias = bias * scale
    if norm.bias is not None:
        bias = bias + norm.bias.detach().to(wide)
    scale = scale.to(conv.weight.dtype).reshape((-1,) + (1,) * (conv.weight.ndim - 1))
    return conv.weight.detach() * scale, bias.to(conv.weight.dtype)


def pairs_of(module: nn.Module, x: torch.Tensor) -> tuple[tuple[str, str], ...]:
    """The pairs that fold in `module` for inputs of x's shape (found once, then remembered)."""
    try:
        known = _PAIRS.setdefault(module, {})
    except TypeError:  # a module that cannot be a weak dictionary's key (its own __eq__): found each job
        known = {}
    shape = tuple(x.shape[1:])
    if shape not in known:
        try:
            known[shape] = find_pairs(module, x)
        except Exception:  # a model that cannot run watched folds nothing; its job runs (or fails) as it would
            known[shape] = ()
    return known[shape]


def _fold(module: nn.Module, pairs, patched: list) -> None:
    """Patch each pair that is still what it was found to be (exact classes, eval mode, running statistics)."""
    for conv_path, norm_path in pairs:
        try:
            conv, norm = module.get_submodule(conv_path), module.get_submodule(norm_path)
        except AttributeError:  # swapped out since: not folded
            continue
        if (type(conv) not in _CONVS or type(norm) not in PLAIN_NORMS or norm.training or norm.running_var is None
                or conv.out_channels != norm.num_features):
            continue
        weight, bias = folded(conv, norm)
        patched += [conv, norm]  # first: an interrupt between the two lines below still unpatches both
        conv.forward = _FoldedConv(conv, weight, bias)
        norm.forward = _passed_on


def _unfold(patched: list) -> None:
    for m in patched:
        vars(m).pop("forward", None)


def plain(module: nn.Module) -> bool:
    """No hook anywhere (a hook on a module around a convolution can read its output too) and no forward of
    any module replaced already (another block's patch)."""
    return not _global_hooks() and not any(_hooked(m) or "forward" in vars(m) for m in module.modules())


@contextlib.contextmanager
def folded_norms(module: nn.Module, x: torch.Tensor):
    """While in the block, every pair that folds runs folded: on a CPU, and only in a model with no hooks (its
    own or global) and no forward replaced. Only for passes that want no weight gradients."""
    patched: list[nn.Module] = []
    try:
        if on_cpu(module) and _FOLDING.on and plain(module):
            _fold(module, pairs_of(module, x), patched)
        yield
    finally:
        _unfold(patched)


def unfolded():
    """While in the block, `folded_norms` folds nothing in this thread: what `bench --attribution --against
    unfolded` measures the folding against."""
    return _FOLDING.off()
