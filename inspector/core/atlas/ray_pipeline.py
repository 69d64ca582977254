"""The atlas job as a Ray Data pipeline: decode tasks, model replicas as actors, partials merged here.

Images are read and decoded by parallel Ray tasks (`map_batches` with a function), then reduced by
model replicas (`map_batches` with a class: one actor per GPU when the job asks for a GPU device and
the cluster has GPUs, else CPU actors). Each replica sends back, per batch, only what can enter the
top K (it keeps its own running thresholds) and the batch's statistics; the driver merges them as
they stream in (`LayerTop.add`), so its memory stays independent of the dataset. The top K equals
the in-process job's (same ranking rule, ties by image index); statistics agree to float rounding.
Cancelling saves which images are done, so the job resumes (here or in process) when run again.

Ray is imported only here, and only when `--ray` is asked for.
"""

from __future__ import annotations

import contextlib
import copy
import io
import itertools
import json
import logging
import time
from pathlib import Path

import numpy as np
import torch

from ..devices import resolve_device
from ..errors import AtlasError
from .batches import decode, stack_groups
from .job import checkpoint_of
from .loop import after_batch, check_finished_state, skip_record
from .reduce import AtlasPass, to_partial
from .topk import LayerPartial, LayerTop

RESIZE = "\0resize"
_PARTIAL_FIELDS = ("channel", "image", "score", "pos", "count", "mean", "m2", "positive")


def batch_tensors(batch: dict, preprocess) -> tuple[list[int], list[torch.Tensor], list[list]]:
    """A decoded batch (`decode_batch`'s rows) as the images read (their indices and (1, C, H, W) tensors) and the
    ones skipped ([index, why]); an image the decode task left for the replica (`RESIZE`) is decoded here."""
    good, tensors, skipped = [], [], []
    for row, (i, why) in enumerate(zip(batch["index"], batch["error"])):
        if why == RESIZE:
            t = decode(Path(batch["path"][row]), preprocess)
            if isinstance(t, str):
                skipped.append([int(i), t])
                continue
        elif why:
            skipped.append([int(i), str(why)])
            continue
        else:
            t = torch.from_numpy(np.ascontiguousarray(batch["pixels"][row]))[None]
        good.append(int(i))
        tensors.append(t)
    return good, tensors, skipped


def pack(partials: dict[int, tuple[LayerPartial, int, int, int]], indices: np.ndarray, skipped: list,
         seen: np.ndarray) -> bytes:
    """A batch's partials (layer number -> (partial, channels, map width, positions)) as bytes (npz, no pickle);
    `seen`: the positions each of `indices` gave over the layers (0: skipped)."""
    arrays = {"indices": np.asarray(indices, np.int64), "seen": np.asarray(seen, np.int64),
              "skipped": np.frombuffer(json.dumps(skipped).encode(), np.uint8)}
    for number, (part, channels, width, positions) in partials.items():
        arrays[f"L{number}/shape"] = np.array([channels, width, positions], np.int64)
        for name in _PARTIAL_FIELDS:
            arrays[f"L{number}/{name}"] = getattr(part, name)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def unpack(blob: bytes):
    with np.load(io.BytesIO(blob), allow_pickle=False) as arrays:
        indices, seen = arrays["indices"], arrays["seen"]
        skipped = json.loads(arrays["skipped"].tobytes().decode())
        layers = {}
        for key in arrays.files:
            if key.endswith("/shape"):
                number = int(key[1:].split("/")[0])
                channels, width, positions = (int(v) for v in arrays[key])
                part = LayerPartial(*(arrays[f"L{number}/{name}"] for name in _PARTIAL_FIELDS))
                layers[number] = (part, channels, width, positions)
    return indices, skipped, layers, seen


def decode_batch(batch: dict, preprocess) -> dict:
    """Ray task: a batch of (index, path) rows -> decoded model inputs (failed ones flagged, zero pixels)."""
    decoded = [decode(Path(p), preprocess) for p in batch["path"]]
    shape = next((tuple(t.shape[1:]) for t in decoded if not isinstance(t, str)), (3, 1, 1))
    pixels = np.zeros((len(decoded), *shape), np.float32)
    errors = []
    for row, t in enumerate(decoded):
        if isinstance(t, str):
            errors.append(t)
        elif tuple(t.shape[1:]) == shape:
            pixels[row] = t[0].numpy()
            errors.append("")
        else:  # another size in the same batch: decoded again by the replica, which groups by shape
            errors.append(RESIZE)
    return {"index": batch["index"], "path": batch["path"], "pixels": pixels, "error": np.array(errors, dtype=object)}


class Replica:
    """Ray actor: a model replica reducing batches with the atlas's hooks."""

    def __init__(self, module_ref: list, layers: list[str], grid, top: int, device: str, preprocess) -> None:
        import ray  # in the actor, where Ray runs

        self.device = resolve_device(device)
        self.module = ray.get(module_ref[0]).to(self.device).eval()
        self.layers, self.top, self.preprocess = layers, top, preprocess
        self.atlas_pass = AtlasPass(self.module, layers, grid)
        self.tops: dict[str, LayerTop] = {}
        self.torch = torch

    def __call__(self, batch: dict) -> dict:
        torch = self.torch
        indices = batch["index"]
        good, tensors, skipped = batch_tensors(batch, self.preprocess)
        collected: dict[int, list] = {}
        seen = dict.fromkeys((int(i) for i in indices), 0)
        for images, x in stack_groups(good, tensors):
            thresholds = {p: torch.as_tensor(t.threshold(), device=self.device) for p, t in self.tops.items()}
            reduced = self.atlas_pass.run(x.to(self.device), thresholds, inclusive=True)
            for number, path in enumerate(self.layers):
                layout = self.atlas_pass.layouts[path]
                part = to_partial(reduced[path], images)
                mine = self.tops.get(path) or self.tops.setdefault(path, LayerTop(layout.channels, self.top,
                                                                                  layout.width))
                mine.add(part)
                collected.setdefault(number, []).append((part, layout.channels, layout.width,
                                                         layout.height * layout.width))
                for i in images:
                    seen[int(i)] += reduced[path].positions
        merged = {n: (_concat([p[0] for p in parts]), *parts[0][1:]) for n, parts in collected.items()}
        payload = pack(merged, indices, skipped, np.array([seen[int(i)] for i in indices], np.int64))
        return {"payload": np.array([payload], dtype=object)}


def _concat(parts: list[LayerPartial]) -> LayerPartial:
    if len(parts) == 1:
        return parts[0]
    acc = LayerTop(len(parts[0].count), 1, 1)  # Chan's merge of the statistics
    for p in parts:
        acc.add(LayerPartial(p.channel[:0], p.image[:0], p.score[:0], p.pos[:0], p.count, p.mean, p.m2, p.positive))
    return LayerPartial(*(np.concatenate([getattr(p, f) for p in parts]) for f in _PARTIAL_FIELDS[:4]),
                        acc.count, acc.mean, acc.m2, acc.positive)


def _token_auth_where_there_is_a_token() -> None:
    """Send the cluster's token when there is one: a driver joining an existing cluster does not
    authenticate unless RAY_AUTH_MODE says so, while `ray start` (Ray >= 2.59) starts clusters that
    require the token it writes to ~/.ray/auth_token. An explicit RAY_AUTH_MODE is left as it is."""
    import os

    if "RAY_AUTH_MODE" in os.environ:
        return
    if os.environ.get("RAY_AUTH_TOKEN") or os.environ.get("RAY_AUTH_TOKEN_PATH") or \
            (Path.home() / ".ray" / "auth_token").is_file():
        os.environ["RAY_AUTH_MODE"] = "token"


def on_host(module: torch.nn.Module) -> torch.nn.Module:
    """`module` for Ray to ship to its replicas, on the CPU: the module itself where it is there already (Ray
    pickles it), else a copy whose parameters and buffers are copied straight to the CPU. The caller's
    module stays where it is (a GPU, say), and is never copied twice on the device."""
    tensors = list(itertools.chain(module.parameters(), module.buffers()))
    if all(t.device.type == "cpu" for t in tensors):
        return module
    return host_copy(module, tensors)


def host_copy(module: torch.nn.Module, tensors: list | None = None) -> torch.nn.Module:
    """A deep copy of `module` with every parameter and buffer copied to the CPU (the copy's parameters keep
    their requires_grad); the module is left as it was."""
    tensors = list(itertools.chain(module.parameters(), module.buffers())) if tensors is None else tensors
    memo: dict = {}
    for t in tensors:
        host = t.detach().to("cpu", copy=True)
        memo[id(t)] = torch.nn.Parameter(host, t.requires_grad) if isinstance(t, torch.nn.Parameter) else host
    return copy.deepcopy(module, memo)


#: CPUs of the local instance the job starts (None: all this machine's cores); the tests take fewer
LOCAL_CPUS: int | None = None


def _is_ray(process) -> bool:
    """Whether `process` (psutil) is one of Ray's: its GCS, raylet, agents, workers and actors (`ray::...`)."""
    import psutil

    try:
        cmdline = process.cmdline()
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return False
    return any(part.startswith("ray::") or "/ray/" in part or part.endswith(("raylet", "gcs_server"))
               for part in cmdline)


def _init(ray, address: str | None, **options) -> None:
    try:
        ray.init(address=address or None, include_dashboard=False, logging_level=logging.WARNING,
                 log_to_driver=False, **options)
    except Exception as exc:
        hint = (" (a cluster with token authentication, the default since Ray 2.59 for clusters started "
                "with `ray start`, needs its token here: RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH or "
                "~/.ray/auth_token; see `ray get-auth-token`)") if address else ""
        raise AtlasError(f"Cannot start or reach Ray{' at ' + address if address else ''}: {exc}{hint}") from None


@contextlib.contextmanager
def local_instance(num_cpus: int | None = None):
    """A Ray instance on this machine for the length of the block: started here, and when the block ends
    shut down with every process it started gone (its GCS, raylet, agents, workers and actors).
    `ray.shutdown()` returns before its workers have exited, and one of them can outlive it for minutes,
    its parent gone (issue 40, item 14): they are waited for, and those still there after 10 s killed.
    Workers run this interpreter directly: not through `uv run`, which Ray otherwise puts before each worker
    when the driver runs under uv (a wrapper process per worker, and the project packed and unpacked for it)."""
    import psutil
    import ray

    try:
        from ray._private import ray_constants
    except ImportError:  # another Ray: its workers as it starts them
        ray_constants = None
    me = psutil.Process()
    before = {p.pid for p in me.children(recursive=True)}
    uv_hook = getattr(ray_constants, "RAY_ENABLE_UV_RUN_RUNTIME_ENV", None)
    if uv_hook is not None:
        ray_constants.RAY_ENABLE_UV_RUN_RUNTIME_ENV = False  # read by ray.init only
    try:
        _init(ray, None, num_cpus=num_cpus)
    finally:
        if uv_hook is not None:
            ray_constants.RAY_ENABLE_UV_RUN_RUNTIME_ENV = uv_hook
    seen: dict[int, psutil.Process] = {}

    def remember() -> None:
        for p in me.children(recursive=True):
            if p.pid not in before and p.pid not in seen and _is_ray(p):
                seen[p.pid] = p

    try:
        remember()
        yield
    finally:
        remember()  # the workers and actors are the raylet's children until it goes
        try:
            ray.shutdown()
        finally:
            _reap(list(seen.values()))


def _reap(processes: list, wait_s: float = 10.0) -> None:
    """Wait for `processes` (psutil) to exit; kill those still there after `wait_s`."""
    import psutil

    _, alive = psutil.wait_procs(processes, timeout=wait_s)
    for p in alive:
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            p.kill()
    psutil.wait_procs(alive, timeout=wait_s)


def run_on_ray(loaded, job, out: Path, device: str, progress, cancel, address: str | None):
    """The job's layers' LayerTop and skipped files, computed on Ray (a local instance when `address` is None
    and Ray is not started in this process yet: started for the job and gone with every process after it)."""
    with ray_for_job(address) as ray:
        return _run(ray, loaded, job, out, device, progress, cancel)


@contextlib.contextmanager
def ray_for_job(address: str | None):
    """Ray (the module, with ray.data imported) for one job: the caller's instance where Ray is started in this
    process already; else the cluster at `address`, joined for the block; else a local instance, started for the
    block and gone with every process after it. The concepts' pass runs in it too."""
    if address:
        _token_auth_where_there_is_a_token()  # before Ray is imported: it reads the mode then
    try:
        import ray
        import ray.data
    except ImportError:
        raise AtlasError("--ray needs Ray: pip install 'network-inspector[ray]' (or uv sync --extra ray).") from None
    if ray.is_initialized():
        instance = contextlib.nullcontext()  # the caller's: it stays as it is
    elif address:
        instance = _joined(ray, address)
    else:
        instance = local_instance(LOCAL_CPUS)
    with instance:
        yield ray


@contextlib.contextmanager
def _joined(ray, address: str):
    """A running cluster, joined for the block and left after it (its processes are the cluster's)."""
    import inspector

    _init(ray, address, runtime_env={"py_modules": [str(Path(inspector.__file__).parent)]})
    try:
        yield
    finally:
        ray.shutdown()


def _run(ray, loaded, job, out: Path, device: str, progress, cancel):
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    checkpoint = checkpoint_of(job, out)
    done, tops, skipped = checkpoint.load()
    check_finished_state(loaded.module, job, checkpoint, tops, done)
    todo = np.nonzero(~done)[0]
    files = [str(Path(p).resolve()) for p in job.images.files]
    resources = ray.cluster_resources()
    gpus = int(resources.get("GPU", 0)) if not device.startswith("cpu") else 0
    replicas = gpus or max(1, int(resources.get("CPU", 1)) // 2)
    module_ref = ray.put(on_host(loaded.module))  # not .cpu(): that moves the caller's model
    ds = ray.data.from_items([{"index": int(i), "path": files[i]} for i in todo],
                             override_num_blocks=max(1, min(len(todo) // job.batch, 4 * replicas)))
    # half a CPU per decode task: also keeps Ray from fusing decoding into the replicas
    ds = ds.map_batches(decode_batch, batch_size=job.batch, fn_kwargs={"preprocess": job.preprocess},
                        batch_format="numpy", num_cpus=0.5)
    ds = ds.map_batches(Replica, batch_size=job.batch, batch_format="numpy",
                        fn_constructor_args=([module_ref], list(job.layers), job.grid, job.top,
                                             "cuda" if gpus else "cpu", job.preprocess),
                        compute=ray.data.ActorPoolStrategy(size=replicas),
                        num_gpus=1 if gpus else 0, num_cpus=1)
    saved_at = time.monotonic()
    if progress:
        progress(int(done.sum()), len(done))
    for row in ds.iter_rows():
        indices, failed, layers, seen = unpack(row["payload"])
        skipped.extend(skip_record(job, i, why) for i, why in failed)
        for number, (part, channels, width, positions) in layers.items():
            path = job.layers[number]
            layer = tops.get(path) or tops.setdefault(path, LayerTop(channels, job.top, width))
            checkpoint.check_fits(path, layer, channels, width, positions)
            layer.add(part)
        checkpoint.seen[indices] += seen
        done[indices] = True
        saved_at = after_batch(checkpoint, done, tops, skipped, progress, cancel, saved_at)
    return tops, skipped
