"""How many copies of the input one pass takes (integrated gradients' path points, occlusion's occluded
copies, the deletion and insertion images), from the memory one copy takes and the memory free on the
device, instead of asking the user for an internal batch size (captum's `internal_batch_size`).

One copy's memory is measured: a forward pass (the job's first, or one of the single input) with a hook
on every leaf module adds up the bytes of their outputs (what autograd keeps for the backward pass; a pass
with gradients also holds their gradients, so twice that; TorchScript takes no hooks, so a model with it inside
takes a CPU's batch on any device). The free memory is the device's (CUDA: the driver's free memory and what
torch's allocator caches unused; CPU and MPS: the memory the system has available, psutil's), of which a
`share` is used, and at most `max_memory` bytes. A pass that cannot fit one copy is refused before it starts.

A model may take fewer copies in one forward than that (`sources.loaded.most_batch`, found once per model): a
`.pt2` program exported with torch.export's default static batch takes one, so its copies run one at a time,
whether the batch is picked here or asked for by hand (`fit_batch`).
"""

from __future__ import annotations

import re

import psutil
import torch
from torch import nn

from ...common.arguments import shown_value
from ...common.errors import RunCancelled, SpecError
from ...common.hooks import Hooked
from ...sources.loaded import most_batch

SHARE = 0.5  # of the free memory, at most
MOST = 64  # copies a pass, at most, on a GPU: progress and Esc keep a pass short
# On a CPU a larger batch is hardly faster per copy (resnet50 channels-last, 2 threads, freed memory kept, ms a
# copy: forward 48 at 4, 46 at 8, 45 at 16; forward + backward 102-104 at 4, 8 and 16) and makes Esc wait
# longer (vit_b_16: 0.2 s a copy forward, 0.4 s with backward): at most this many there.
CPU_MOST = {True: 8, False: 8}  # with gradients, without


def free_memory(device: torch.device) -> int:
    """Bytes free for tensors on `device`. On CUDA the driver's free memory and what torch's caching allocator
    holds but no tensor uses (kept from an earlier job: the driver counts it as taken, torch reuses it)."""
    if device.type == "cuda":
        cached = torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device)
        return int(torch.cuda.mem_get_info(device)[0] + max(cached, 0))
    return int(psutil.virtual_memory().available)


class LeafBytes(Hooked):
    """Adds up the bytes of every leaf module's outputs in the model's last forward pass inside the block:
    what autograd keeps for the backward pass. Measured on a forward the job runs anyway, it costs no pass.
    TorchScript modules take no hooks: what runs inside them is not counted."""

    def __init__(self, module: nn.Module) -> None:
        self.module, self.total = module, 0

    def _count(self, _module, _inputs, output) -> None:
        for t in output if isinstance(output, (tuple, list)) else (output,):
            if isinstance(t, torch.Tensor):
                self.total += t.numel() * t.element_size()

    def _restart(self, _module, _inputs) -> None:  # a forward that failed part way (a layout tried) is not kept
        self.total = 0

    def _register(self):
        for m in self.module.modules():
            if isinstance(m, torch.jit.ScriptModule):
                continue
            if m is self.module:
                yield m.register_forward_pre_hook(self._restart)
            if not any(True for _ in m.children()):
                yield m.register_forward_hook(self._count)

    def per_copy(self, x: torch.Tensor, copies: int, grad: bool) -> int:
        """One copy of x's memory in a pass, the forward inside the block having run `copies` copies: its
        outputs' bytes (twice that with gradients, which a pass holds too), plus the copy itself."""
        per = self.total // copies * (2 if grad else 1)
        return per + x[:1].numel() * x.element_size() * (2 if grad else 1)


def copy_bytes(module: nn.Module, x: torch.Tensor, grad: bool) -> int:
    """The memory one copy of x (batch 1) takes in a pass, measured by a forward of it (`LeafBytes`)."""
    with torch.no_grad(), LeafBytes(module) as counted:
        module(x[:1])
    return counted.per_copy(x, 1, grad)


#: Memory sizes are below this many bytes (more than any machine has; what a signed 64-bit count holds).
MEMORY_BOUND = 2**63


def parse_memory(text: str | int | None) -> int | None:
    """"2GB", "512 MB", "1.5g", or a number of bytes -> bytes (None stays None), at least 1, below MEMORY_BOUND."""
    if text is None:
        return None
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    else:
        match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([kmgt]?)(i?b)?\s*", str(text).lower())
        if not match:
            raise SpecError(f"A memory size is a number with KB, MB, GB or TB (2GB, 512MB), not {shown_value(text)}.")
        units = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
        value = float(match.group(1)) * units[match.group(2)]  # 400 digits: inf, too large below
    if value < 1:
        raise SpecError(f"A memory size is above 0, not {shown_value(text)}.")
    if value >= MEMORY_BOUND:
        raise SpecError(f"A memory size is below 2**63 bytes ({MEMORY_BOUND // 2**40:,} TB), not {shown_value(text)}.")
    return int(value)


def _size(n: float) -> str:
    return f"{n / 2**10:,.0f} KB" if n < 2**20 else f"{n / 2**20:,.0f} MB"


def pick_batch(module: nn.Module, x: torch.Tensor, total: int, grad: bool, max_memory: int | None = None,
               device: torch.device | None = None, need: int | None = None) -> int:
    """Copies a pass for `total` copies of x: as many as fit in SHARE of the free memory (and `max_memory`),
    at most MOST on a GPU and CPU_MOST on a CPU; a SpecError when not even one fits. `need`: one copy's
    bytes where the caller measured them (`LeafBytes`), else measured here by a forward of x. A model with
    TorchScript inside (which takes no hooks, so is not measured) takes at most CPU_MOST on any device; none takes
    more than one forward of it takes (`fit_batch`)."""
    device = device or next((p.device for p in module.parameters()), torch.device("cpu"))
    need = copy_bytes(module, x, grad) if need is None else need
    free = free_memory(device)
    budget = SHARE * free if max_memory is None else min(SHARE * free, max_memory)
    if need > budget:
        capped = max_memory is not None and max_memory < SHARE * free
        advice = "Raise --max-memory." if capped else "Use a smaller input, or free memory."
        raise SpecError(f"One pass over one copy of the input needs about {_size(need)}; {_size(budget)} may be "
                        f"used on {device.type}" + (" (--max-memory)" if capped else "") +
                        f", of {_size(free)} free. {advice}")
    blind = any(isinstance(m, torch.jit.ScriptModule) for m in module.modules())
    most = MOST if device.type == "cuda" and not blind else CPU_MOST[grad]
    return fit_batch(module, max(1, min(total, most, int(budget // need))))


def fit_batch(module: nn.Module, batch: int) -> int:
    """`batch` copies a pass (picked, or asked for by hand), at most the copies one forward of the model takes
    (`most_batch`: one for a program exported with a static batch)."""
    most = most_batch(module)
    return batch if most is None else max(1, min(batch, most))


def takes(module: nn.Module, copies: int) -> bool:
    """Whether one forward of the model takes `copies` copies of an input together (`fit_batch`)."""
    return fit_batch(module, copies) == copies


def check_batch(batch: int | None, picked: bool = True) -> None:
    """A batch asked for by hand is a whole number of at least 1 (None, where `picked`: picked here)."""
    if (batch is not None or not picked) and (isinstance(batch, bool) or not isinstance(batch, int) or batch < 1):
        raise SpecError(f"batch must be a whole number of at least 1, not {batch!r}.")


def passes(total: int, batch: int) -> list[slice]:
    """`total` copies in ceil(total / batch) passes of at most `batch`, their sizes differing by one at most:
    a short last pass costs more a copy (resnet50 on a CPU, forward + backward: 131 ms a copy at 2, 99 at 8)."""
    return list(_equal_passes(total, batch))


def _equal_passes(total: int, batch: int):
    """`passes`, one slice at a time (a billion copies take no memory until they run)."""
    check_batch(batch, picked=False)
    if total < 1:
        return
    count = -(-total // batch)
    for i in range(count):
        yield slice(i * total // count, (i + 1) * total // count)


def each_pass(total: int, batch: int, what: str, cancel=None, progress=None):
    """The one pass loop of every method that runs in passes: `total` copies in equal passes of at most `batch`
    (`passes`), one slice at a time; before each, `cancel()` True stops the job (RunCancelled, "WHAT
    cancelled."); after each, `progress(done, total)`."""
    for part in _equal_passes(total, batch):
        if cancel is not None and cancel():
            raise RunCancelled(f"{what} cancelled.")
        yield part
        if progress is not None:
            progress(part.stop, total)
