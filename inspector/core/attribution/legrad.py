"""LeGrad (Bousselham et al., ICCV 2025): the gradient of each block's own score with respect to that block's
attention probabilities, as the reference code (WalBouss/LeGrad) and torch-cam 0.5 compute it.

Block l's score s^l is the model's head applied to block l's tokens as if they were the last block's: their mean
over every token (class token included) in place of each token, so the final norm, the class token's read-out
(or the patches' mean) and the classifier give head(norm(mean z^l)); with an attention pool (timm's MAP head,
SigLIP's) the pool reads block l's tokens themselves and the gradient is taken at the pool's attention instead
(its first latent query). Per block: ReLU of d s^l / d A^l, the mean over heads and queries, the prefix tokens
left out; the mean over blocks is the map on the patch grid, upsampled to the input and scaled to [0, 1].

One forward and one backward: each block takes its input detached (so a block's score reaches no earlier
block's attention, as the reference's one autograd.grad per block), and the last block hands the head its own
tokens followed by each block's, a batch the head reads in one call.
"""

from __future__ import annotations

import torch
from torch import nn

from ..attention.taps import AttentionTaps
from ..common.errors import SpecError
from ..common.hooks import Hooked
from ..target.objective import Target, objective, parse_target, primary_output
from ..sources.loaded import LoadedModel
from .cams.layers import upsample
from .record import Attribution, _device, _unwrap
from .vit_blocks import VitBlocks, find_blocks, patch_part


def _hidden(args: tuple, kwargs: dict):
    """A block's incoming tokens and where they were passed (a position or a keyword)."""
    if args:
        return args[0], 0
    return kwargs.get("hidden_states", kwargs.get("x")), "hidden_states" if "hidden_states" in kwargs else "x"


class _Stack(Hooked):
    """Hooks on the chosen blocks: each takes its input detached (a fresh leaf) and keeps its output; the last
    block returns its own tokens then each chosen block's copy (their mean, or themselves for a pool)."""

    def __init__(self, modules: dict[str, nn.Module], vit: VitBlocks, chosen: tuple[str, ...]) -> None:
        self.modules, self.chosen, self.last, self.pool = modules, chosen, vit.blocks[-1], vit.pool is not None
        self.outputs: dict[str, torch.Tensor] = {}

    def _register(self):
        for path in self.chosen:
            block = self.modules[path]
            if not self.pool:
                yield block.register_forward_pre_hook(self._detach, with_kwargs=True)
            yield block.register_forward_hook(self._keep(path))

    @staticmethod
    def _detach(_block, args, kwargs):
        tokens, where = _hidden(args, kwargs)
        fresh = tokens.detach().requires_grad_(True)
        if where == 0:
            return (fresh,) + tuple(args[1:]), kwargs
        return args, dict(kwargs, **{where: fresh})

    def _keep(self, path: str):
        def hook(_block, _args, output):
            tokens = output[0] if isinstance(output, tuple) else output
            if not isinstance(tokens, torch.Tensor) or tokens.dim() != 3:
                raise SpecError(f"LeGrad reads a block's tokens (batch, tokens, width); {path} returns "
                                f"{type(tokens).__name__}.")
            self.outputs[path] = tokens
            if path != self.last:
                return None
            copies = [self._copy(self.outputs[p]) for p in self.chosen]
            stacked = torch.cat([tokens] + copies, dim=0)
            return (stacked,) + tuple(output[1:]) if isinstance(output, tuple) else stacked
        return hook

    def _copy(self, tokens: torch.Tensor) -> torch.Tensor:
        if self.pool:
            return tokens.detach().requires_grad_(True)
        return tokens.mean(dim=1, keepdim=True).expand_as(tokens)


def legrad(model: LoadedModel | nn.Module, x: torch.Tensor, target=None, blocks: int | None = None) -> Attribution:
    """LeGrad's map of `target` (see the module's docstring) over the last `blocks` blocks (None: all, as the
    paper's aggregation "over all layers")."""
    module, _labels = _unwrap(model)
    hw = tuple(x.shape[-2:])
    vit = find_blocks(module, hw, "LeGrad")
    if blocks is not None and not 1 <= blocks <= len(vit.blocks):
        raise SpecError(f"LeGrad: blocks is 1 to {len(vit.blocks)} (this model's blocks), not {blocks}.")
    chosen = vit.blocks[-blocks:] if blocks else vit.blocks
    wanted = parse_target(target)
    modules = dict(module.named_modules())
    tapped = [vit.pool] if vit.pool else [vit.attention[vit.blocks.index(b)] for b in chosen]
    x = x.detach().to(_device(module)).requires_grad_(True)
    batch = x.shape[0]
    with AttentionTaps({p: modules[p] for p in tapped}) as taps, _Stack(modules, vit, chosen), torch.enable_grad():
        output = module(x)
    if len(taps.taps) != len(tapped):
        raise SpecError(f"LeGrad: {len(taps.taps)} attention calls for {len(tapped)} attention modules (one called "
                        f"more than once?).")
    logits = primary_output(output)
    if logits.shape[0] != batch * (len(chosen) + 1):
        raise SpecError(f"LeGrad hands the head {len(chosen) + 1} copies of the tokens in one batch; this model's "
                        f"output has {logits.shape[0]} rows, not {batch * (len(chosen) + 1)}.")
    _obj, index, resolved = objective(logits[:batch], wanted, hw, module)
    same = Target("index", index) if index is not None else resolved
    rows = [logits[batch * (i + 1):batch * (i + 2)] for i in range(len(chosen))]
    total = sum(objective(r, same, hw, module)[0] for r in rows)
    if not total.requires_grad:
        raise SpecError(f"LeGrad: the target ({resolved}) does not depend on the attention of this model.")
    grads = torch.autograd.grad(total, [t.node for t in taps.taps], allow_unused=True)
    layers = _relevance(taps.taps, grads, vit, batch, len(chosen))
    cam = patch_part(torch.stack(layers).mean(dim=0)[0], vit.grid, "LeGrad").float().cpu().numpy()
    how = (f"through the attention pool {vit.pool}" if vit.pool else "the head reading the mean of the block's tokens")
    notes = (f"LeGrad over {'all ' if len(chosen) == len(vit.blocks) else 'the last '}{len(chosen)} of "
             f"{len(vit.blocks)} blocks, each block's score {how}",)
    return Attribution("legrad", upsample(cam, hw), str(resolved), index, None, cam, notes=notes,
                       details=(("blocks", len(chosen)),))


def _relevance(taps, grads, vit: VitBlocks, batch: int, count: int) -> list[torch.Tensor]:
    """Each chosen block's (B, S) map over the keys: ReLU of d s^l / d A, averaged over heads and queries (a
    pool: its first latent query, rows of block l's copy)."""
    if vit.pool:
        (tap,), (grad,) = taps, grads
        found = tap.probs_grad(grad).clamp(min=0).mean(dim=1)[:, 0]
        return [found[batch * (i + 1):batch * (i + 2)] for i in range(count)]
    return [tap.probs_grad(grad).clamp(min=0).mean(dim=(1, 2)) for tap, grad in zip(taps, grads)]


def legrad_map(model, x, target, layer, options) -> Attribution:
    return legrad(model, x, target, options.get("blocks"))
