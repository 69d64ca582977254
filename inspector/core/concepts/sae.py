"""A sparse autoencoder in torch: top-k of a ReLU encoder, a pre-bias taken off before encoding and added
back after decoding (tied), decoder rows kept at unit norm, Adam. Trained on the samples scaled to unit mean
squared norm about their first batch's mean (the scale folded back when the dictionary is written, so its
coefficients are in the layer's own units). Seeded: the same seed and batches give the same weights."""

from __future__ import annotations

import numpy as np
import torch

from .dictionary import top_k

LR = 0.03  # Adam's step, over sqrt(C): a unit decoder row's coordinates are about 1/sqrt(C)
_PARAMS = ("encoder", "encoder_bias", "decoder", "pre_bias")
BETAS, EPS = (0.9, 0.999), 1e-8  # Adam's defaults


class SaeFit:
    def __init__(self, k: int, channels: int, sparsity: int, seed: int, lr: float | None = None) -> None:
        self.k, self.channels, self.sparsity = k, channels, sparsity
        gen = torch.Generator().manual_seed(seed)
        decoder = torch.randn(k, channels, generator=gen, dtype=torch.float32)
        decoder /= decoder.norm(dim=1, keepdim=True)
        self.p = {"encoder": decoder.clone(), "encoder_bias": torch.zeros(k), "decoder": decoder,
                  "pre_bias": torch.zeros(channels)}
        for t in self.p.values():
            t.requires_grad_(True)
        self.scale = 0.0  # set by the first batch
        self.lr = lr or LR / channels ** 0.5
        self.steps = 0
        self.m = {n: torch.zeros_like(t) for n, t in self.p.items()}  # Adam's moments, by hand: torch.optim
        self.v = {n: torch.zeros_like(t) for n, t in self.p.items()}  # imports torch._dynamo (seconds)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        z = top_k(torch.relu((x - self.p["pre_bias"]) @ self.p["encoder"].T + self.p["encoder_bias"]), self.sparsity)
        return z, z @ self.p["decoder"] + self.p["pre_bias"]

    def step(self, x: np.ndarray) -> None:
        x = torch.from_numpy(np.ascontiguousarray(x, np.float32))
        if self.scale == 0.0:
            mean = x.mean(0)
            self.scale = float(((x - mean) ** 2).sum(1).mean().sqrt()) or 1.0
            with torch.no_grad():
                self.p["pre_bias"].copy_(mean / self.scale)
        x = x / self.scale
        with torch.enable_grad():
            _, rebuilt = self.forward(x)
            loss = ((rebuilt - x) ** 2).sum(1).mean()
            grads = torch.autograd.grad(loss, [self.p[n] for n in _PARAMS])
        self.steps += 1
        with torch.no_grad():
            for n, g in zip(_PARAMS, grads):
                self.m[n].mul_(BETAS[0]).add_(g, alpha=1 - BETAS[0])
                self.v[n].mul_(BETAS[1]).addcmul_(g, g, value=1 - BETAS[1])
                m_hat = self.m[n] / (1 - BETAS[0] ** self.steps)
                v_hat = self.v[n] / (1 - BETAS[1] ** self.steps)
                self.p[n].sub_(self.lr * m_hat / (v_hat.sqrt() + EPS))
            d = self.p["decoder"]
            d /= d.norm(dim=1, keepdim=True).clamp_min(1e-12)

    def state(self) -> dict[str, np.ndarray]:
        out = {f"{what}/{n}": d[n].detach().numpy().copy() for what, d in (("p", self.p), ("m", self.m), ("v", self.v))
               for n in _PARAMS}
        out["scale_steps"] = np.array([self.scale, self.steps], np.float64)
        return out

    def load(self, arrays: dict[str, np.ndarray]) -> None:
        if "scale_steps" not in arrays:
            return
        with torch.no_grad():
            for what, d in (("p", self.p), ("m", self.m), ("v", self.v)):
                for n in _PARAMS:
                    d[n].copy_(torch.from_numpy(np.array(arrays[f"{what}/{n}"])))
        self.scale, self.steps = float(arrays["scale_steps"][0]), int(arrays["scale_steps"][1])

    def tensors(self) -> dict[str, torch.Tensor]:
        """The dictionary in the layer's units: coefficients s*z, so the encoder's bias and the pre-bias scale by s."""
        s = self.scale or 1.0
        return {"components": self.p["decoder"].detach().clone(), "encoder.weight": self.p["encoder"].detach().clone(),
                "encoder.bias": self.p["encoder_bias"].detach() * s, "pre_bias": self.p["pre_bias"].detach() * s}
