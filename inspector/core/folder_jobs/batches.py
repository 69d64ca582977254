"""Images decoded into batches ahead of the model: the next batch decodes on threads while one runs."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Iterator

import numpy as np
import torch

from ..inputs.files import open_image
from ..sources.preprocess import Preprocess

DECODE_THREADS = 2


def decode(path: Path, preprocess: Preprocess) -> torch.Tensor | str:
    """The model input (1, 3, H, W) of one image, or why it could not be read."""
    try:
        return preprocess(open_image(path))
    except Exception as exc:  # an unreadable file is skipped and listed, whatever the decoder raised
        return str(exc) or type(exc).__name__


def stack_groups(indices: list[int], tensors: list[torch.Tensor]) -> list[tuple[np.ndarray, torch.Tensor]]:
    """Consecutive inputs of one shape stacked into a batch (images of one size make one group)."""
    groups: list[tuple[list[int], list[torch.Tensor]]] = []
    for i, t in zip(indices, tensors):
        if groups and groups[-1][1][0].shape == t.shape:
            groups[-1][0].append(i)
            groups[-1][1].append(t)
        else:
            groups.append(([i], [t]))
    return [(np.array(ids, np.int64), torch.cat(ts)) for ids, ts in groups]


def split_decoded(decoded: list[tuple[int, torch.Tensor | str]]):
    """([(dataset indices, input batch)], [(index, why it was skipped)]) of decoded images."""
    good = [(i, t) for i, t in decoded if isinstance(t, torch.Tensor)]
    failed = [(i, t) for i, t in decoded if not isinstance(t, torch.Tensor)]
    return stack_groups([i for i, _ in good], [t for _, t in good]), failed


def prefetched_batches(files: tuple[Path, ...], preprocess: Preprocess, batch: int, indices: np.ndarray
                       ) -> Iterator[tuple[np.ndarray, list[tuple[np.ndarray, torch.Tensor]], list[tuple[int, str]]]]:
    """(the batch's dataset indices, [(indices, input batch)], [(index, why it was skipped)]) for `indices`
    (the images still to do), `batch` at a time."""
    chunks = [indices[i:i + batch] for i in range(0, len(indices), batch)]
    with ThreadPoolExecutor(DECODE_THREADS, thread_name_prefix="atlas-decode") as pool:
        def submit(chunk):
            return [(int(i), pool.submit(decode, files[i], preprocess)) for i in chunk]

        pending = submit(chunks[0]) if chunks else None
        for b, chunk in enumerate(chunks):
            current, pending = pending, submit(chunks[b + 1]) if b + 1 < len(chunks) else None
            yield (chunk, *split_decoded([(i, f.result()) for i, f in current]))
