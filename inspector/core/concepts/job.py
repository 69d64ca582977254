"""What identifies a concepts job: a folder job (model, weights, seed, data listing, layer, batch,
preprocessing: `folder_jobs.job_of`) and the fit's settings (method, K, sparsity, fit seed, held-out
fraction, epochs, memory bound, top images). The held-out images: a seeded shuffle of the listing."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..common.errors import SpecError
from ..folder_jobs import FolderJob, check_top, job_of, listing
from ..sources.layers import LayerTree

#: passes over the samples by default, and at most
EPOCHS = {"nmf": 10, "sae": 20}
EPOCHS_MOST = 1000
#: samples a fitting batch holds per MB of --max-memory for one channel: a batch's rows and the fit's
#: work on them (sklearn's copies and updates, the SAE's activations and Adam) take about 8 copies
COPIES = 8
MB = 2**20


@dataclass(frozen=True)
class Settings:
    """The fit's settings, as the user gave them."""

    method: str = "nmf"
    k: int = 16
    sparsity: int | None = None
    seed: int = 0
    held_out: float = 0.2
    epochs: int = 3
    max_memory_mb: float = 1024
    top: int = 9
    batch: int = 16

    def check(self) -> None:
        if self.method not in ("nmf", "sae"):
            raise SpecError(f"--method must be nmf or sae, not {self.method!r}.")
        if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1:
            raise SpecError(f"--k must be a whole number of at least 1, not {self.k!r}.")
        if self.method == "sae":
            sparsity = self.sparsity
            if isinstance(sparsity, bool) or not isinstance(sparsity, int) or not 1 <= sparsity <= self.k:
                raise SpecError(f"--sparsity (the top-k of the sparse autoencoder) must be from 1 to --k ({self.k}), "
                                f"not {self.sparsity!r}.")
        elif self.sparsity is not None:
            raise SpecError("--sparsity is the sparse autoencoder's top-k; NMF takes none (leave it out).")
        if not 0 <= self.held_out < 1:
            raise SpecError(f"--held-out is a fraction of the images from 0 to below 1, not {self.held_out!r}.")
        memory = self.max_memory_mb
        if isinstance(memory, bool) or not isinstance(memory, (int, float)) or not 0 < memory * MB < 2**63:
            raise SpecError(f"--max-memory is a number of MB above 0 and below 2**63 bytes ({2**63 // MB:,} MB), "
                            f"not {memory!r}.")
        for name, value in (("--epochs", self.epochs), ("--top", self.top), ("--batch", self.batch)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise SpecError(f"{name} must be a whole number of at least 1, not {value!r}.")
        if self.epochs > EPOCHS_MOST:
            raise SpecError(f"--epochs {self.epochs} is more than {EPOCHS_MOST}, the most passes over the samples (the "
                            f"fit's batches are planned for every pass before it starts; the defaults are nmf "
                            f"{EPOCHS['nmf']}, sae {EPOCHS['sae']}).")
        check_top(self.top)
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or not 0 <= self.seed < 2**32:
            raise SpecError(f"--fit-seed must be from 0 to 4294967295, not {self.seed!r}.")


@dataclass(frozen=True)
class ConceptJob:
    atlas: FolderJob  # the images, the one layer, the preprocessing, the token grid
    settings: Settings
    layer: str
    held: np.ndarray  # (n,) bool: which images are held out for measuring the fit
    arguments: dict
    listing: list
    key: str

    def sample_rows(self, channels: int) -> int:
        """Samples in one fitting batch: what --max-memory holds (at least 64)."""
        return max(64, int(self.settings.max_memory_mb * MB) // (COPIES * 4 * max(channels, self.settings.k)))


def concept_job(loaded, tree: LayerTree, data_dir, layer: str, settings: Settings,
                exclude: Path | None = None) -> ConceptJob:
    """Check the arguments (SpecError, InputError) and work out the job's key; writes nothing."""
    settings.check()
    atlas = job_of(loaded, tree, data_dir, layer, 1, settings.batch, exclude=exclude)
    if len(atlas.layers) != 1:
        raise SpecError(f"--layer selects {len(atlas.layers)} layers ({', '.join(atlas.layers[:5])}"
                        f"{', ...' if len(atlas.layers) > 5 else ''}); a dictionary is of one layer: name one.")
    n = len(atlas.images)
    order = np.random.default_rng(settings.seed).permutation(n)
    held = np.zeros(n, bool)
    held[order[:int(round(settings.held_out * n))]] = True
    if held.all():
        raise SpecError(f"--held-out {settings.held_out} leaves none of the {n} images to learn from.")
    files = listing(atlas.images)
    arguments = {**{k: v for k, v in atlas.arguments.items() if k not in ("layers", "top")},
                 "layer": atlas.layers[0], "method": settings.method, "k": settings.k,
                 "sparsity": settings.sparsity, "fit_seed": settings.seed, "held_out": settings.held_out,
                 "epochs": settings.epochs, "max_memory_mb": settings.max_memory_mb, "top": settings.top}
    digest = hashlib.sha256(json.dumps([arguments, files], sort_keys=True).encode()).hexdigest()[:16]
    return ConceptJob(atlas, settings, atlas.layers[0], held, arguments, files, digest)
