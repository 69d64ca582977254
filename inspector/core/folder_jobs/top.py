"""The atlas's streaming state per layer: the top K images of every channel and running statistics.

Memory is independent of the dataset: per channel K (score, image, position) entries and four
numbers (count, mean, M2, positives). Batches and shards combine with Chan's parallel merge in
float64, so the order they arrive in changes the statistics only at float64 rounding. Entries are
ordered by score, best first, ties by the lower image index, so the top K of a dataset is the same
whatever the batching or sharding (in process, resumed, or merged from Ray workers).
Torch-free (numpy), so Ray's driver and the app can use it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FIELDS = ("score", "image", "pos", "count", "mean", "m2", "positive")


@dataclass
class LayerPartial:
    """What one batch (or one shard) adds to a layer: candidate entries and statistics per channel.

    Candidates are (channel, image, score, position) rows; the statistics are over all the
    batch's images and positions: count, mean, M2 (sum of squared deviations), positive count."""

    channel: np.ndarray  # (n,) int64
    image: np.ndarray  # (n,) int64, the image's index in the dataset's sorted file list
    score: np.ndarray  # (n,) float32
    pos: np.ndarray  # (n,) int64, flat position in the feature map
    count: np.ndarray  # (C,) float64
    mean: np.ndarray  # (C,) float64
    m2: np.ndarray  # (C,) float64
    positive: np.ndarray  # (C,) int64

    @classmethod
    def from_sums(cls, channel, image, score, pos, count, total, squares, positive) -> "LayerPartial":
        """From float64 sums and sums of squares over a batch."""
        count = np.asarray(count, np.float64)
        total = np.asarray(total, np.float64)
        mean = np.divide(total, count, out=np.zeros_like(total), where=count > 0)
        m2 = np.maximum(np.asarray(squares, np.float64) - total * mean, 0.0)
        return cls(np.asarray(channel, np.int64), np.asarray(image, np.int64), np.asarray(score, np.float32),
                   np.asarray(pos, np.int64), count, mean, m2, np.asarray(positive, np.int64))


class LayerTop:
    """The running top K and statistics of one layer's C channels."""

    def __init__(self, channels: int, top: int, width: int) -> None:
        self.channels, self.top, self.width = channels, top, width  # width: the map's, for (y, x)
        self.score = np.full((channels, top), -np.inf, np.float32)
        self.image = np.full((channels, top), -1, np.int64)
        self.pos = np.zeros((channels, top), np.int64)
        self.count = np.zeros(channels, np.float64)
        self.mean = np.zeros(channels, np.float64)
        self.m2 = np.zeros(channels, np.float64)
        self.positive = np.zeros(channels, np.int64)

    def threshold(self) -> np.ndarray:
        """(C,) the K-th best score so far (-inf while fewer than K): a candidate must reach it."""
        return self.score[:, -1].copy()

    def add(self, part: LayerPartial) -> None:
        self._merge_stats(part.count, part.mean, part.m2, part.positive)
        if part.channel.size:
            self._merge_top(part.channel, part.image, part.score, part.pos)

    def merge(self, other: "LayerTop") -> None:
        """Fold another shard's state into this one."""
        self._merge_stats(other.count, other.mean, other.m2, other.positive)
        kept = other.image >= 0
        channel = np.nonzero(kept)[0]
        self._merge_top(channel, other.image[kept], other.score[kept], other.pos[kept])

    def _merge_stats(self, count, mean, m2, positive) -> None:
        total = self.count + count
        safe = np.where(total > 0, total, 1.0)
        delta = mean - self.mean
        self.mean = self.mean + delta * (count / safe)
        self.m2 = self.m2 + m2 + delta * delta * (self.count * count / safe)
        self.count = total
        self.positive = self.positive + positive

    def _merge_top(self, channel, image, score, pos) -> None:
        channel = np.asarray(channel, np.int64)
        order = np.argsort(channel, kind="stable")
        channel, image, score, pos = channel[order], image[order], score[order], pos[order]
        counts = np.bincount(channel, minlength=self.channels)
        width = self.top + int(counts.max())
        s = np.full((self.channels, width), -np.inf, np.float32)
        im = np.full((self.channels, width), np.iinfo(np.int64).max, np.int64)
        p = np.zeros((self.channels, width), np.int64)
        s[:, :self.top], im[:, :self.top], p[:, :self.top] = self.score, self.image, self.pos
        im[:, :self.top][self.image < 0] = np.iinfo(np.int64).max
        starts = np.cumsum(counts) - counts
        column = self.top + np.arange(channel.size) - np.repeat(starts, counts)
        s[channel, column], im[channel, column], p[channel, column] = score, image, pos
        # best first: higher score, then lower image index (a NaN score sorts last)
        key = np.where(np.isnan(s), np.inf, -s.astype(np.float64))
        best = np.lexsort((im, key), axis=-1)[:, :self.top]
        self.score = np.take_along_axis(s, best, 1)
        self.image = np.take_along_axis(im, best, 1)
        self.pos = np.take_along_axis(p, best, 1)
        empty = self.image == np.iinfo(np.int64).max
        self.image[empty], self.score[empty], self.pos[empty] = -1, -np.inf, 0

    # -- results ------------------------------------------------------------------
    def std(self) -> np.ndarray:
        return np.sqrt(np.divide(self.m2, self.count, out=np.zeros_like(self.m2), where=self.count > 0))

    def frac_positive(self) -> np.ndarray:
        return np.divide(self.positive, self.count, out=np.zeros_like(self.count), where=self.count > 0)

    def entries(self, channel: int) -> list[tuple[int, float, int, int]]:
        """(image, score, y, x) of a channel's kept entries, best first."""
        out = []
        for image, score, pos in zip(self.image[channel], self.score[channel], self.pos[channel]):
            if image >= 0:
                out.append((int(image), float(score), int(pos) // self.width, int(pos) % self.width))
        return out

    # -- checkpoint / transfer -----------------------------------------------------
    def state(self, prefix: str) -> dict[str, np.ndarray]:
        out = {f"{prefix}/{name}": getattr(self, name) for name in FIELDS}
        out[f"{prefix}/shape"] = np.array([self.channels, self.top, self.width], np.int64)
        return out

    @classmethod
    def from_state(cls, arrays, prefix: str) -> "LayerTop":
        channels, top, width = (int(v) for v in arrays[f"{prefix}/shape"])
        layer = cls(channels, top, width)
        for name in FIELDS:
            setattr(layer, name, np.array(arrays[f"{prefix}/{name}"]))
        return layer
