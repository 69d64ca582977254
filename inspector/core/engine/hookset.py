"""The one owner of a run's hooks: registers them on entry, removes every one on exit.

Forward sites use forward-pre and forward hooks. `grad_output` is a tensor hook on the
module's output, registered from the forward hook (in-place safe: a hook registered
before an in-place op sees the gradient of the value the module returned).
`grad_input` is a tensor hook on a private alias of each input made in the pre-hook,
so it sees exactly the gradient that flows back through this module -- what
`register_full_backward_hook` reports, without its failure on in-place models.
Hooks never touch Qt; backward hooks only write detached copies into the result.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from dataclasses import replace
from typing import Callable

import torch
from torch import nn
from torch.autograd.graph import get_gradient_edge

from ..attention.site import ablate_heads, attention_probs, supports_attention
from ..attention.supported import not_yet_text, supported_text
from ..edits import Edit
from ..common.errors import RunCancelled, SpecError
from ..common.keys import Key
from .result import Capture, RunResult
from .stats import StatsBatch, dtype_name, tensor_stats


def to_numpy(tensor: torch.Tensor, queued: bool = False):
    """A CPU copy that later in-place ops on the original cannot change. `queued`: a CUDA tensor's copy goes
    into pinned memory behind the work already queued, and nothing waits for it: read it only after the
    device is synchronised (`HookSet.finish_stats` does). A run's captures waited one by one: an H200 ran
    resnet50 with every leaf captured at 8x its plain forward + backward."""
    t = tensor.detach()
    if t.dtype == torch.bfloat16:
        t = t.float()
    if t.device.type == "cpu":
        return t.to("cpu", copy=True).numpy()
    if not queued or t.device.type != "cuda":
        return t.cpu().numpy()
    layout = (t.stride(),) if _dense(t) else ()  # as `.cpu()` keeps it: a permuted activation stays permuted
    host = (torch.empty_strided(t.shape, *layout, dtype=t.dtype, pin_memory=True) if layout
            else torch.empty(t.shape, dtype=t.dtype, pin_memory=True))
    host.copy_(t, non_blocking=True)
    return host.numpy()


def _dense(t: torch.Tensor) -> bool:
    """Whether t's strides lay its elements out with no gap or overlap (in some order of its dimensions)."""
    expected = 1
    for stride, size in sorted((st, n) for st, n in zip(t.stride(), t.shape) if n != 1):
        if stride != expected:
            return False
        expected *= size
    return True


def _tensor_positions(value) -> list[int] | None:
    """Where the tensors are in a module's inputs/outputs; None when it is a single tensor."""
    if isinstance(value, torch.Tensor):
        return None
    if isinstance(value, (tuple, list)):
        return [i for i, v in enumerate(value) if isinstance(v, torch.Tensor)]
    return []


def _shareable(t: torch.Tensor) -> bool:
    return t.device.type == "cpu" and t.dtype not in (torch.bfloat16,) and not t.is_complex() and not t.is_sparse


def _shares_storage(tensor: torch.Tensor, others: list[torch.Tensor]) -> bool:
    ptr = tensor.untyped_storage().data_ptr()
    return any(ptr == other.untyped_storage().data_ptr() for other in others)


class HookSet:
    """Hooks for one run. Use as a context manager; `grad_edges` are the gradients to ask for."""

    def __init__(
        self,
        modules: dict[str, nn.Module],
        captured: dict[str, set[str]],
        edits: list[Edit],
        result: RunResult,
        cancel: threading.Event | None = None,
        keep_arrays: bool = True,
        with_stats: bool | Callable[[str, str], bool] = True,
        safe: frozenset[str] = frozenset(),
        defer_stats: bool = False,
    ) -> None:
        self.modules = modules
        self.captured = captured  # path -> module sites to capture
        self.result = result
        self.cancel = cancel
        self.keep_arrays = keep_arrays
        # (layer, site) -> statistics during the run? The others are left to complete_statistics
        # when `defer_stats`, and to nobody otherwise.
        self.with_stats = with_stats if callable(with_stats) else (lambda _layer, _site, on=with_stats: on)
        self.defer_stats = defer_stats
        self.safe = safe  # capture keys that may share the model's memory instead of a copy
        self.stats = StatsBatch()
        self.queued: set[torch.device] = set()  # CUDA devices with copies to the host not yet waited for
        # (key, tensor, version when captured, shared?) for every CPU capture
        self._tracked: list[tuple[str, torch.Tensor, int, bool]] = []
        self.edits: dict[tuple[str, str], list[Edit]] = defaultdict(list)
        for edit in edits:
            if edit.enabled:
                self.edits[(edit.key.layer, edit.key.site)].append(edit)
        self.applied: set[int] = set()  # id() of each edit that changed a tensor (or a module's computation)
        self.handles: list = []
        self.grad_edges: list = []
        self.expected_grads: dict[str, Key] = {}
        self.fired: set[str] = set()
        self.calls: dict[str, int] = defaultdict(int)
        self._open_calls: dict[str, list[int]] = defaultdict(list)
        self._open_aliases: dict[str, list[list[torch.Tensor]]] = defaultdict(list)
        self._noted: set[str] = set()
        # > 0 while the attention probabilities are worked out beside the model (`_attention_hook`): the
        # submodules that calls (qkv, q_norm, q_proj, ...) get their edits but are neither counted nor captured
        self._aside = 0

    # -- lifecycle ---------------------------------------------------------------
    def __enter__(self) -> "HookSet":
        asked = [p for p, sites in self.captured.items() if "attention" in sites]
        if asked and not any(supports_attention(self.modules[p]) for p in asked):
            self.result.log("warning", f"No attention captured: none of the ticked modules ({', '.join(asked[:3])}"
                                       f"{', ...' if len(asked) > 3 else ''}) is an attention module this app knows "
                                       f"({supported_text()}; {not_yet_text()} add biases or mix heads in ways "
                                       f"it does not reproduce yet).")
        try:
            self._ablate_heads()
            for path in sorted(set(self.captured) | {layer for layer, _ in self.edits if layer in self.modules}):
                module = self.modules[path]
                try:
                    self.handles.append(module.register_forward_pre_hook(self._pre_hook(path)))
                    if "attention" in self.captured.get(path, ()) and supports_attention(module):
                        self.handles.append(module.register_forward_pre_hook(self._attention_hook(path),
                                                                             with_kwargs=True))
                    self.handles.append(module.register_forward_hook(self._post_hook(path)))
                except (RuntimeError, AttributeError, NotImplementedError) as exc:
                    raise SpecError(f"{path} ({type(module).__name__}) cannot be hooked: {exc}") from None
                self.result.log("registered", f"{path} ({type(module).__name__})")
        except BaseException:
            self.close()
            raise
        return self

    def _ablate_heads(self) -> None:
        """zero_heads edits: hooks that change the attention module's computation (see inspector.core.attention.site)."""
        for (path, site), edits in self.edits.items():
            if site == "attention":
                heads = sorted({h for edit in edits for h in dict(edit.args)["heads"]})
                self.handles.extend(ablate_heads(self.modules[path], heads))
                self.result.log("registered", f"{path}: heads {heads} zeroed")

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Remove every handle; safe to call twice. Tracked tensors are kept for mutated_keys()."""
        module_hooks = len(self.handles)
        while self.handles:
            self.handles.pop().remove()
        self.grad_edges.clear()
        if module_hooks:
            self.result.log("removed", f"{module_hooks} hooks")

    def check_cancel(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise RunCancelled()

    # -- helpers -----------------------------------------------------------------
    def _wants(self, path: str, site: str) -> bool:
        return site in self.captured.get(path, ()) or (path, site) in self.edits

    def _edit(self, key: Key, tensor: torch.Tensor) -> torch.Tensor:
        for edit in self.edits.get((key.layer, key.site), ()):
            if edit.matches(key):
                tensor = edit.apply(tensor)
                self.applied.add(id(edit))
        return tensor

    def store(self, key: Key, tensor: torch.Tensor) -> None:
        name = str(key)
        array = None
        stats = None
        now = self.with_stats(key.layer, key.site)
        if self.keep_arrays:
            t = tensor.detach()
            shareable = _shareable(t)
            shared = shareable and name in self.safe
            array = t.numpy() if shared else to_numpy(t, queued=True)
            if t.device.type == "cuda":
                self.queued.add(t.device)
            if shareable:
                self._tracked.append((name, t, t._version, shared))
            if now:  # reduced now, read back with the others in finish_stats()
                self.stats.add(name, t, None if shared else torch.from_numpy(array))
            elif self.defer_stats:  # from the array after the run (a shared one is copied before
                self.result.stats_deferred[name] = dtype_name(t)  # an in-place module changes it)
        elif now:
            stats = tensor_stats(tensor)
        self.result.captures[name] = Capture(key, stats, array)

    def finish_stats(self) -> None:
        """Fill in the statistics of the captures stored since the last call, once every copy queued to the
        host has arrived (the arrays, and the values the exact statistics read)."""
        for device in self.queued:
            torch.cuda.synchronize(device)
        self.queued.clear()
        for name, stats in self.stats.resolve().items():
            self.result.captures[name] = replace(self.result.captures[name], stats=stats)

    def protect_before_inplace(self, tensor: torch.Tensor) -> None:
        """An in-place module is about to change `tensor`: copy any capture that shares it."""
        ptr = tensor.untyped_storage().data_ptr()
        for i, (name, t, version, shared) in enumerate(self._tracked):
            # Already changed since the capture: too late to copy; mutated_keys() reports it.
            if shared and t._version == version and t.untyped_storage().data_ptr() == ptr:
                capture = self.result.captures[name]
                copy = t.numpy().copy()
                self.result.captures[name] = Capture(capture.key, capture.stats, copy)
                self.stats.keep_values(name, torch.from_numpy(copy))
                self._tracked[i] = (name, t, version, False)

    def tracked_keys(self) -> set[str]:
        return {name for name, *_ in self._tracked}

    def mutated_keys(self) -> set[str]:
        """CPU captures whose tensors the model changed in place after they were taken."""
        return {name for name, t, version, _shared in self._tracked if t._version != version}

    def note_once(self, tag: str, kind, message: str) -> None:
        if tag not in self._noted:
            self._noted.add(tag)
            self.result.log(kind, message)

    def _watch_grad(self, tensor: torch.Tensor, key: Key) -> None:
        capture = key.site in self.captured.get(key.layer, ())
        name = str(key)

        def hook(grad: torch.Tensor):
            self.check_cancel()
            edited = self._edit(key, grad)
            if capture:
                self.store(key, edited)
            self.fired.add(name)
            self.result.log("fired", name)
            return None if edited is grad else edited

        self.handles.append(tensor.register_hook(hook))
        if capture:
            self.expected_grads[name] = key
            self.grad_edges.append(get_gradient_edge(tensor))

    def _tap(self, module: nn.Module, path: str, tensor: torch.Tensor) -> torch.Tensor:
        """A private alias of an input: only this module uses it, so its gradient is this module's."""
        base = tensor if tensor.requires_grad else tensor.detach().requires_grad_()
        if getattr(module, "inplace", False):
            self.note_once(
                f"clone:{path}",
                "note",
                f"{path}: runs in place, so its input was copied to capture grad_input "
                f"(the module's result is unchanged).",
            )
            return base.clone()
        return base[...]  # an alias with the very same strides (view_as may change a size-1 dim's stride)

    # -- hooks -------------------------------------------------------------------
    def _pre_hook(self, path: str):
        def hook(module: nn.Module, args: tuple):
            self.check_cancel()
            if self._aside:
                return self._edited_aside(path, "input", args)
            call = self.calls[path]
            self.calls[path] += 1
            self._open_calls[path].append(call)
            aliases: list[torch.Tensor] = []
            self._open_aliases[path].append(aliases)
            if self.safe and getattr(module, "inplace", False):
                for arg in args:
                    if isinstance(arg, torch.Tensor):
                        self.protect_before_inplace(arg)
            want_input = self._wants(path, "input")
            want_grad = self._wants(path, "grad_input")
            if not (want_input or want_grad):
                return None
            positions = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor)]
            many = len(positions) > 1
            new_args = list(args)
            for slot, i in enumerate(positions):
                index = slot if many else None
                tensor = self._edit(Key(path, "input", call, index), args[i])
                if "input" in self.captured.get(path, ()):
                    self.store(Key(path, "input", call, index), tensor)
                if want_grad and tensor.is_floating_point():
                    tensor = self._tap(module, path, tensor)
                    self._watch_grad(tensor, Key(path, "grad_input", call, index))
                    if tensor._base is not None:
                        aliases.append(tensor)
                new_args[i] = tensor
            self.result.log("fired", str(Key(path, "input", call)))
            return tuple(new_args)

        return hook

    def _edited_aside(self, path: str, site: str, given):
        """`given` (a call's arguments or output) as the edits of `path` leave it, for the pass that works out
        attention probabilities beside the model: it sees what the model's own call sees (an edit of qkv
        changes the probabilities), but it is not a call of the model, so nothing is counted, captured or
        watched. The edits match the call the model makes next (the pass runs before the attention module's)."""
        if (path, site) not in self.edits:
            return None
        call = self.calls[path]
        if isinstance(given, torch.Tensor):
            return self._edit(Key(path, site, call), given)
        positions = _tensor_positions(given) if site == "output" else [
            i for i, a in enumerate(given) if isinstance(a, torch.Tensor)]
        if not positions:
            return None
        items = list(given)
        many = len(positions) > 1
        for slot, i in enumerate(positions):
            items[i] = self._edit(Key(path, site, call, slot if many else None), items[i])
        if site == "input" or type(given) is tuple:
            return tuple(items)
        return type(given)(*items) if hasattr(given, "_fields") else type(given)(items)

    def _attention_hook(self, path: str):
        """Store the attention probabilities this call of the module computes (worked out beside it)."""
        def hook(module: nn.Module, args: tuple, kwargs: dict):
            call = self._open_calls[path][-1] if self._open_calls[path] else 0
            self._aside += 1
            try:
                probs = attention_probs(module, args, kwargs)
            finally:
                self._aside -= 1
            self.store(Key(path, "attention", call), probs)
            return None

        return hook

    def _post_hook(self, path: str):
        def hook(module: nn.Module, args: tuple, output):
            self.check_cancel()
            if self._aside:
                return self._edited_aside(path, "output", output)
            stack = self._open_calls[path]
            call = stack.pop() if stack else 0
            aliases = self._open_aliases[path].pop() if self._open_aliases[path] else []
            positions = _tensor_positions(output)
            if positions == []:
                if self._wants(path, "output") or self._wants(path, "grad_output"):
                    self.note_once(
                        f"out:{path}", "warning", f"{path}: output is a {type(output).__name__}, not tensors; not captured."
                    )
                return None
            items = [output] if positions is None else [output[i] for i in positions]
            many = positions is not None and len(items) > 1
            new_items = []
            for slot, tensor in enumerate(items):
                key = Key(path, "output", call, slot if many else None)
                if aliases and _shares_storage(tensor, aliases):
                    # The module handed back (a view of) our input alias; a later in-place op on
                    # it would rewrite the alias's history and lose grad_input. Hand on a copy.
                    tensor = tensor.clone()
                    self.note_once(f"alias:{path}", "note",
                                   f"{path}: returns a view of its input, so its output was copied "
                                   f"to keep grad_input exact (values unchanged).")
                tensor = self._edit(key, tensor)
                if "output" in self.captured.get(path, ()):
                    self.store(key, tensor)
                if self._wants(path, "grad_output") and tensor.requires_grad:
                    if any(tensor is a for a in args):
                        # An input handed back as is (Identity, eval Dropout): hook an alias, so this
                        # module's grad hooks run before those already on its input.
                        tensor = tensor[...]
                    self._watch_grad(tensor, Key(path, "grad_output", call, key.index))
                new_items.append(tensor)
            self.result.log("fired", str(Key(path, "output", call)))
            if all(a is b for a, b in zip(items, new_items)):
                return None
            if positions is None:
                return new_items[0]
            rebuilt = list(output)
            for i, tensor in zip(positions, new_items):
                rebuilt[i] = tensor
            if isinstance(output, tuple):
                return type(output)(*rebuilt) if hasattr(output, "_fields") else tuple(rebuilt)
            return rebuilt

        return hook
