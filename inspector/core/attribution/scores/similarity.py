"""How alike two attribution maps are, as the sanity checks compare them (Adebayo et al., NeurIPS 2018):
Spearman's rank correlation of their absolute pictures and of their signed pictures, and SSIM (Wang et al.,
2004) of their absolute pictures, each scaled to [0, 1] by its largest value.

A map's pictures are the project's one rule (records.signs: summed over channels, then |v| or v); a map
that is no image (one value per feature) is compared as it is, flattened, and has no SSIM.

- Spearman: the Pearson correlation of the two maps' ranks, ties given their average rank (scipy's
  `rankdata(method="average")`). A constant map has no order: its correlation with a map that has one is
  0 (it keeps none of the other's ranking), and two constant maps correlate 1 (neither ranks anything).
- SSIM: scikit-image's `structural_similarity` with its defaults (a 7 x 7 uniform window, K1 0.01, K2 0.03,
  the sample covariance, the mean over windows that lie wholly inside the picture), data range 1; the
  window is the largest odd side up to 7 that fits a smaller picture, and a picture under 3 pixels a side
  has no SSIM (None).

Both give exactly 1 for a map compared with itself. Numpy only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...records.signs import picture_of

SSIM_WINDOW = 7  # scikit-image's default side
_K1, _K2 = 0.01, 0.03


@dataclass(frozen=True)
class Similarity:
    """How alike a map is to the original: Spearman of |map| and of the signed map, SSIM of |map| (None
    where the map is no picture of at least 3 x 3)."""

    spearman_abs: float
    spearman_signed: float
    ssim: float | None

    def as_json(self) -> dict:
        return {"spearman_abs": self.spearman_abs, "spearman_signed": self.spearman_signed, "ssim": self.ssim}


def ranks(values: np.ndarray) -> np.ndarray:
    """The 1-based ranks of `values` (flattened), ties given their average rank."""
    flat = np.asarray(values, dtype=np.float64).reshape(-1)
    _unique, inverse, counts = np.unique(flat, return_inverse=True, return_counts=True)
    last = np.cumsum(counts)  # the highest rank in each group of equal values
    return (last - (counts - 1) / 2.0)[inverse.reshape(-1)]


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rank correlation of two arrays of the same size (see the module's docstring for constants)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.size != b.size:
        raise ValueError(f"Spearman compares two maps of the same size, not {a.size} and {b.size} values.")
    ra, rb = ranks(a), ranks(b)
    ra, rb = ra - ra.mean(), rb - rb.mean()
    # sums of products, not `@`: a BLAS dot wakes OpenBLAS's threads, which then spin beside torch's on the same
    # cores (MPRT on resnet18, 2 cores: every map after it 75 -> 135 ms)
    sa, sb = float((ra * ra).sum()), float((rb * rb).sum())
    if sa == 0.0 or sb == 0.0:
        return 1.0 if sa == sb else 0.0
    return float(np.clip(float((ra * rb).sum()) / np.sqrt(sa * sb), -1.0, 1.0))


def ssim(a: np.ndarray, b: np.ndarray, data_range: float = 1.0) -> float | None:
    """The mean SSIM of two (H, W) pictures (scikit-image's defaults, see the module's docstring); None for a
    picture under 3 pixels a side."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 2:
        raise ValueError(f"SSIM compares two (H, W) pictures of the same shape, not {a.shape} and {b.shape}.")
    side = min(SSIM_WINDOW, *a.shape)
    side -= 1 - side % 2  # odd
    if side < 3:
        return None

    from scipy.ndimage import uniform_filter

    pad = (side - 1) // 2

    def mean(v):  # the mean over each window that lies wholly inside the picture (running sums, as scikit-image)
        return uniform_filter(v, size=side)[pad:v.shape[0] - pad, pad:v.shape[1] - pad]

    ux, uy = mean(a), mean(b)
    uxx, uyy, uxy = mean(a * a), mean(b * b), mean(a * b)
    norm = side * side / (side * side - 1.0)  # the sample covariance
    vx, vy, vxy = norm * (uxx - ux * ux), norm * (uyy - uy * uy), norm * (uxy - ux * uy)
    c1, c2 = (_K1 * data_range) ** 2, (_K2 * data_range) ** 2
    s = ((2 * ux * uy + c1) * (2 * vxy + c2)) / ((ux * ux + uy * uy + c1) * (vx + vy + c2))
    return float(s.mean())


def pictures(attribution_map: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(|map|, signed map) as compared: an image's pictures (records.signs), else the values flattened."""
    m = np.asarray(attribution_map, dtype=np.float64)
    if m.ndim in (2, 3):
        return picture_of(m, "absolute").astype(np.float64), picture_of(m, "signed").astype(np.float64)
    flat = np.nan_to_num(m.reshape(-1), nan=0.0, posinf=0.0, neginf=0.0)
    return np.abs(flat), flat


def scaled(picture: np.ndarray) -> np.ndarray:
    """A non-negative picture divided by its largest value (all zeros stays zeros): [0, 1], SSIM's range."""
    top = float(picture.max()) if picture.size else 0.0
    return picture / top if top > 0 else np.zeros_like(picture)


def similarity(original: np.ndarray, other: np.ndarray) -> Similarity:
    """How alike map `other` is to map `original` (same shape)."""
    if np.shape(original) != np.shape(other):
        raise ValueError(f"The maps compared differ in shape: {np.shape(original)} and {np.shape(other)}.")
    abs_a, signed_a = pictures(original)
    abs_b, signed_b = pictures(other)
    structural = ssim(scaled(abs_a), scaled(abs_b)) if abs_a.ndim == 2 else None
    return Similarity(spearman(abs_a, abs_b), spearman(signed_a, signed_b), structural)
