"""Jobs over a folder of images, whatever they compute: the channel atlas and the concepts stand on this.

What identifies a job and lists its images (`job`), the arguments they share (`arguments`), the images decoded a
batch ahead (`batches`), the after-batch loop with its checkpoint and cancel (`loop`), how a layer's output holds
channels and positions (`layout`), a job folder's life by one set of rules (`folder`), a running top K with statistics (`top`), the job folder's lock, JSON and .npz
files (`files`) and the rules its saved state is checked by (`state`), the thumbnails cut around a top entry
(`thumbnails`), and the same job on Ray (`ray`). A kind of job imports this face, never the modules behind it
(a contract in pyproject.toml).

The face loads a module when one of its names is first asked for: the commands check a folder job's arguments
(`check_counts`, `check_address`) before torch is imported.
"""

from __future__ import annotations

import importlib

#: each module behind the face -> the names it gives (NAME=ITS_NAME where the face calls it otherwise)
_MODULES = {
    "arguments": ("check_address", "check_counts", "check_top"),
    "batches": ("decode", "prefetched_batches", "split_decoded", "stack_groups"),
    "files": ("JobLock", "LOCK_FILE", "not_a_file", "npz_headers", "read_json", "read_member", "write_json"),
    "job": ("FolderJob", "job_of", "listing"),
    "folder": ("FolderKind", "check_folder", "check_out_dir", "forget_job", "open_job", "run_job", "saved_record"),
    "layout": ("Layout", "layer_tensor", "layout_of"),
    "loop": ("CHECKPOINT_EVERY_S", "after_batch", "skip_record"),
    "ray": (
        "RESIZE", "batch_tensors", "decode_batch", "host_copy", "local_instance", "on_host", "ray_for_job",
        "replica_rows",
    ),
    "state": (
        "Damaged", "KINDS", "REASON_MOST", "check_count", "check_digest", "check_done", "check_fields",
        "check_job_arguments", "check_kind", "digest", "expect", "only", "read_job_file", "read_record", "save_state",
        "skipped_images", "whole",
    ),
    "thumbnails": (
        "argmax_region", "region_box", "regions_path", "thumbnail_dir", "thumbnail_file", "thumbnail_path",
        "thumbnail_relative", "write_thumbnails",
    ),
    "top": ("LayerPartial", "LayerTop", "TOP_FIELDS=FIELDS"),
}
_WHERE = {name.split("=")[0]: (module, name.split("=")[-1]) for module, names in _MODULES.items() for name in names}

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    try:
        module, own = _WHERE[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f".{module}", __name__), own)
    globals()[name] = value  # asked for once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
