"""NMF fitted on streamed batches: scikit-learn's MiniBatchNMF, one `partial_fit` per batch.

The reference implementation (Lefèvre, Bach and Févotte's online multiplicative updates), well kept and
streamed: memory is one batch, not the folder. The forget factor is set as its own `fit` sets it
(0.7 ** (batch / samples)), so the statistics of earlier batches fade over an epoch, not a batch. Its state
between batches (components, the running numerator and denominator, the step count) is saved as arrays and
put back into a fresh estimator (`load`): a resumed fit takes the same steps as an uninterrupted one."""

from __future__ import annotations

import numpy as np

FORGET = 0.7  # MiniBatchNMF's default, per pass over the data


class NmfFit:
    def __init__(self, k: int, channels: int, seed: int, batch_rows: int, total_rows: int) -> None:
        self.k, self.channels, self.seed = k, channels, seed
        self.forget = FORGET ** (min(batch_rows, total_rows) / max(total_rows, 1))
        self.model = None

    def _estimator(self, rows: int):
        from sklearn.decomposition import MiniBatchNMF

        init = "nndsvda" if self.k <= min(rows, self.channels) else "random"
        return MiniBatchNMF(self.k, init=init, batch_size=rows, forget_factor=self.forget, random_state=self.seed)

    def step(self, x: np.ndarray) -> None:
        if self.model is None:
            self.model = self._estimator(x.shape[0])
            self.first_rows = x.shape[0]
        self.model.partial_fit(x)

    def state(self) -> dict[str, np.ndarray]:
        if self.model is None:
            return {}
        m = self.model
        return {"components": m.components_, "numerator": m._components_numerator,
                "denominator": m._components_denominator, "steps": np.array([m.n_steps_, self.first_rows], np.int64)}

    def load(self, arrays: dict[str, np.ndarray]) -> None:
        """Put a saved state back: a fresh estimator checks its parameters on a batch as large as its first
        (which sets the same forget rate), then takes the saved arrays (scikit-learn's own attributes)."""
        if "components" not in arrays:
            return
        steps, rows = (int(v) for v in arrays["steps"])
        self.first_rows = rows
        self.model = self._estimator(rows)
        probe = np.ones((rows, self.channels), arrays["components"].dtype)
        self.model._check_params(probe)
        self.model.n_features_in_ = self.channels
        self.model.components_ = np.array(arrays["components"])
        self.model._components_numerator = np.array(arrays["numerator"])
        self.model._components_denominator = np.array(arrays["denominator"])
        self.model.n_components_ = self.k
        self.model.n_steps_ = steps

    def components(self) -> np.ndarray:
        """(K, C) unit rows (a row that never grew stays 0)."""
        h = np.asarray(self.model.components_, np.float64)
        norm = np.linalg.norm(h, axis=1, keepdims=True)
        return (h / np.where(norm > 0, norm, 1)).astype(np.float32)
