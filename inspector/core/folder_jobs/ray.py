"""What a folder job on Ray needs whatever it computes: Ray itself for the job (the caller's instance, a cluster
joined, or a local instance gone with every process after it), decode tasks that turn (index, path) rows into model
inputs, and the model shipped to the replicas from the host. The atlas's pipeline and the concepts' pass stand on
it. Ray is imported only when a job runs on it.
"""

from __future__ import annotations

import contextlib
import copy
import itertools
import logging
from pathlib import Path

import numpy as np
import torch

from ..common.errors import AtlasError
from .batches import decode

RESIZE = "\0resize"


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


def replica_rows(ray, module: torch.nn.Module, files, todo: np.ndarray, batch: int, preprocess, replica: type,
                 arguments: tuple, device: str):
    """The rows `replica` actors give for the images `todo` of `files`, `batch` at a time: decode tasks
    (`decode_batch`), then the replicas, each made as replica([module], *arguments, "cuda" or "cpu", preprocess):
    one per GPU when `device` is not the CPU and the cluster has GPUs, else one per two CPUs. The model is
    shipped from the host (`on_host`), never moved."""
    ray.data.DataContext.get_current().enable_progress_bars = False
    paths = [str(Path(p).resolve()) for p in files]
    resources = ray.cluster_resources()
    gpus = int(resources.get("GPU", 0)) if not str(device).startswith("cpu") else 0
    replicas = gpus or max(1, int(resources.get("CPU", 1)) // 2)
    module_ref = ray.put(on_host(module))  # not .cpu(): that moves the caller's model
    ds = ray.data.from_items([{"index": int(i), "path": paths[i]} for i in todo],
                             override_num_blocks=max(1, min(len(todo) // batch, 4 * replicas)))
    # half a CPU per decode task: also keeps Ray from fusing decoding into the replicas
    ds = ds.map_batches(decode_batch, batch_size=batch, fn_kwargs={"preprocess": preprocess},
                        batch_format="numpy", num_cpus=0.5)
    ds = ds.map_batches(replica, batch_size=batch, batch_format="numpy",
                        fn_constructor_args=([module_ref], *arguments, "cuda" if gpus else "cpu", preprocess),
                        compute=ray.data.ActorPoolStrategy(size=replicas), num_gpus=1 if gpus else 0, num_cpus=1)
    return ds.iter_rows()
