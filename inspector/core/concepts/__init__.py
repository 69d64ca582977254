"""Concepts: a dictionary learned over one layer's activations on a folder of images.

Every position of a CNN's map (each (h, w) of NCHW) or every token of a ViT (NLC) of the layer's output over
the folder is a sample of C channels. `learn_concepts` streams them through the atlas's pass (`samples`: its
prefetched batches, layouts, progress, saved state, Ctrl-C and resume) into a sample cache on disk, fits K
concepts on it in batches bounded by `max_memory_mb` (`nmf`: scikit-learn's MiniBatchNMF.partial_fit; `sae`: a
top-k sparse autoencoder in torch), measures the fit on held-out images against PCA with the same K
(`measure`), and writes OUT_DIR/dictionary.safetensors, concepts.json and each concept's top images
(`pages`: the atlas's thumbnails, and a page with the region outlined). `load_dictionary` reads a dictionary
back as a `Dictionary` (coefficients, reconstruct, layout). `read_concepts` reads one image through a dictionary
(its coefficients, maps and concept relevance for a target), `concept_relevance_map` one concept's relevance over
the input (`on_image`)."""

from __future__ import annotations

import os
import shutil
from typing import Callable

import torch

from ..common.arguments import checked
from ..sources.devices import resolve_device
from ..common.errors import RunCancelled
from ..folder_jobs import JobLock, open_job, write_json
from ..storage.outputs import output_folder
from ..sources.loaded import LoadedModel, tree_of
from .dictionary import ConceptError, Dictionary, load_dictionary, nnls, save_dictionary
from .fit import run_fit, threads_for
from .identity import weights_digest
from .job import EPOCHS, ConceptJob, Settings, concept_job
from .measure import measure, top_images
from .on_image import ConceptReading, concept_relevance_map, read_concepts
from .resume import check_state
from .samples import run_pass
from .store import (
    CACHE_DIR,
    FOLDER,
    LOCK_FILE,
    RECORD_FILE,
    RESTART,
    SampleCache,
    State,
    forget_job,
    page_path,
    read_record,
)

ProgressFn = Callable[[str, int, int], None]  # (stage: "pass", "fit" or "measure", done, total)


@checked
def learn_concepts(loaded: LoadedModel, data_dir: str | os.PathLike, layer: str, out_dir: str | os.PathLike, *,
                   method: str = "nmf", k: int = 16, sparsity: int | None = None, seed: int = 0,
                   held_out: float = 0.2, epochs: int | None = None, max_memory_mb: float = 1024, top: int = 9,
                   batch: int = 16, device: str = "cpu", progress: ProgressFn | None = None,
                   cancel: Callable[[], bool] | None = None, restart: bool = False, pictures: bool = True,
                   use_ray: bool = False, ray_address: str | None = None) -> dict:
    """Learn K concepts of `layer` over the images in `data_dir` and write them to `out_dir`; the record
    (concepts.json's content). Cancelled (`cancel()` true between batches): the state is saved and RunCancelled
    raised; the same call later resumes there (`restart=True` starts over). Nothing is written when the arguments
    are wrong; a start that fails before any state was saved leaves nothing behind. `use_ray` (or a
    `ray_address`): the activation pass runs on Ray as the atlas's does (a local instance, or that cluster)."""
    out = output_folder(out_dir)
    settings = Settings(method, k, sparsity, seed, held_out, EPOCHS.get(method, 10) if epochs is None else epochs,
                        max_memory_mb, top, batch)
    job = concept_job(loaded, tree_of(loaded), data_dir, layer, settings, exclude=out)
    dev = resolve_device(device)
    if ray_address:
        from ..folder_jobs import check_address

        check_address(ray_address)  # at once, before anything is written (Ray retries for minutes)
    if method == "nmf":
        import sklearn.decomposition  # noqa: F401  (seconds to import: before the pass, not inside its first step)
    with JobLock(out, LOCK_FILE):
        done, started = open_job(out, FOLDER, job.key, job.arguments, restart)
        if done is not None:
            return done
        state = State(out, job.key, len(job.atlas.images))
        if state.load():
            check_state(state, job)
        else:
            shutil.rmtree(out / CACHE_DIR, ignore_errors=True)  # samples without a state to say whose
        loaded.module.to(dev)
        opened: list[SampleCache] = []

        def cache_of(channels: int) -> SampleCache:
            opened.append(SampleCache(out, channels, state.info["rows"], state.info["crc"]))
            return opened[-1]

        try:
            with torch.random.fork_rng(devices=[]):
                ray = (ray_address,) if (use_ray or ray_address) else None
                return _learn(loaded, job, state, cache_of, dev, progress, cancel, pictures, ray)
        except BaseException as exc:
            if started and not state.meta.is_file() and not isinstance(exc, RunCancelled):
                forget_job(out)  # a start that failed before any state was saved leaves nothing behind
            raise
        finally:
            for cache in opened:
                cache.close()


def _learn(loaded, job: ConceptJob, state: State, cache_of, dev, progress, cancel, pictures: bool, ray) -> dict:
    if state.info["phase"] == "pass":
        if ray is None:
            cache = run_pass(loaded, job, state, cache_of, dev, progress, cancel)
        else:
            from .ray_samples import run_pass_on_ray
            from .samples import image_batch

            if "batch" not in state.info:
                state.info["batch"] = image_batch(loaded, job, dev)
            cache = run_pass_on_ray(loaded, job, state, cache_of, str(dev), progress, cancel, ray[0])
        if cache is None:
            skipped = state.info["skipped"]
            raise ConceptError(f"None of the {len(job.atlas.images)} files in {job.atlas.images.root} could be read "
                               f"as an image ({skipped[0]['path']}: {skipped[0]['reason']}).")
        state.info["phase"] = "fit"
        state.save()
    else:
        cache = cache_of(state.info["channels"])
    fitter = run_fit(job, state, cache, progress, cancel)
    dictionary = _dictionary(loaded, job, state, fitter)
    step = (lambda done, total: progress("measure", done, total)) if progress else None
    if step:
        step(0, int((state.start >= 0).sum()))  # the fit's bar closes: the held-out figures are worked out
    with threads_for(dictionary.channels * dictionary.k * 1024):
        fit = measure(dictionary, job, state, cache)
        tops = top_images(dictionary, job, state, cache, step)
    record = _record(loaded, job, state, dictionary, fit, tops)
    out = state.out
    save_dictionary(out, dictionary)
    if pictures:
        from .pages import write_pictures

        write_pictures(loaded, job, out, record)
    write_json(out / RECORD_FILE, record)
    state.clear()
    return record


def _dictionary(loaded, job: ConceptJob, state: State, fitter) -> Dictionary:
    s = job.settings
    common = dict(layer=job.layer, layout=state.info["layout"], model=loaded.source, weights=loaded.weights,
                  seed=loaded.seed, digest=weights_digest(loaded.module))
    if s.method == "nmf":
        found = Dictionary("nmf", torch.from_numpy(fitter.components()), **common)
    else:
        t = fitter.tensors()
        found = Dictionary("sae", t["components"], sparsity=s.sparsity, encoder_weight=t["encoder.weight"],
                           encoder_bias=t["encoder.bias"], pre_bias=t["pre_bias"], **common)
    if not all(torch.isfinite(t).all() for t in found.tensors().values()):
        resumed = f"; it resumed a saved state: {RESTART}" if state.resumed else ""
        raise ConceptError(f"The fit diverged: the dictionary holds NaN or infinite values (the layer's samples or the "
                           f"fit's values are not finite){resumed}.")
    return found


def _record(loaded, job: ConceptJob, state: State, dictionary: Dictionary, fit: dict, tops) -> dict:
    images = job.atlas.images
    names = {}
    active = fit.pop("active_fraction")
    std, positive = tops.std(), tops.frac_positive()
    concepts = []
    for c in range(dictionary.k):
        entries = [{"image": names.get(i) or names.setdefault(i, images.relative(images.files[i])), "score": score,
                    "y": y, "x": x} for i, score, y, x in tops.entries(c)]
        concepts.append({"id": c, "active_fraction": active[c], "mean": float(tops.mean[c]), "std": float(std[c]),
                         "frac_positive": float(positive[c]), "max": entries[0]["score"] if entries else None,
                         "top": entries})
    skipped = sorted(state.info["skipped"], key=lambda s: s["path"])
    a = job.arguments
    return {"model": loaded.source, "weights": loaded.weights, "seed": loaded.seed, "layer": job.layer,
            "layout": dictionary.layout, "channels": dictionary.channels, "method": dictionary.method,
            "k": dictionary.k, "sparsity": dictionary.sparsity, "fit_seed": a["fit_seed"], "epochs": a["epochs"],
            "held_out": a["held_out"], "max_memory_mb": a["max_memory_mb"], "preprocess": a["preprocess"],
            "batch": {"images": int(state.info["batch"]), "samples": int(state.info["batch_rows"])},
            "data": {"root": a["data"], "files": job.listing, "skipped": skipped,
                     "held_out": [images.relative(images.files[i]) for i in range(len(images)) if job.held[i]]},
            "images": int((state.start >= 0).sum()), "fit": fit, "concepts": concepts}


__all__ = ["learn_concepts", "load_dictionary", "Dictionary", "ConceptError", "nnls", "read_record", "page_path",
           "Settings", "ConceptReading", "read_concepts", "concept_relevance_map"]
