"""Keeping freed CPU memory for reuse, so that runs holding many captures do not page-fault.

glibc's malloc serves blocks above a (dynamic) threshold with fresh `mmap`s and gives them
back to the kernel on `free`. A run that keeps every leaf's output and gradient cannot reuse
the memory of tensors that die during the pass, so each new activation is fresh pages: the
first write to each 4 KiB page is a page fault. On resnet50 (245 MB of captures) that cost
~40 ms a run, a quarter of a forward + backward. Raising the mmap threshold to glibc's
maximum (32 MiB) and the trim threshold keeps freed blocks in the heap, where the next run
finds them already mapped. The cost is that the process keeps its peak memory mapped
instead of returning it to the kernel between runs; the peak itself does not grow.

PyTorch's own CPU tuning guide recommends a caching allocator (jemalloc, tcmalloc) for the
same reason; this needs nothing installed. It is a no-op off glibc (macOS, Windows, musl).

One arena for every thread (`one_malloc_arena`, which `serve` calls first): glibc gives each new thread an arena of its own, made of 64 MB heaps that it hands back to the system as soon as
they empty. An engine that runs on a thread of its own (`serve`'s engine thread) frees a run's captures, and the
next run faults the same memory in again: a resnet50 run with every leaf ticked (the last outcome kept, as the
server keeps it) took 5,600-22,000 page faults on such a thread and none on the main thread, 3-36 ms more CPU
(median 14) and 12-140 ms more wall time (2-core machine, same process, in turns). With the main arena: no faults,
and the thread's run took what the main thread's did.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8  # glibc's malloc.h: mallopt's "at most this many arenas"
MMAP_THRESHOLD_MAX = 32 << 20  # glibc's upper limit on 64-bit (DEFAULT_MMAP_THRESHOLD_MAX)
TRIM_THRESHOLD = 1 << 30

_state = {"tuned": None}


def _glibc():
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.gnu_get_libc_version.restype = ctypes.c_char_p
        libc.gnu_get_libc_version()
    except (OSError, AttributeError):
        return None  # not glibc
    return libc


def keep_freed_memory() -> bool:
    """Tune glibc's malloc once per process (see the module text). True when it is tuned.

    The CLI and the app call this at start; Python API users may call it too.
    """
    if _state["tuned"] is None:
        libc = _glibc()
        _state["tuned"] = bool(
            libc is not None
            and libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_MAX) == 1
            and libc.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1
        )
    return _state["tuned"]


def one_malloc_arena() -> bool:
    """Threads that allocate for the first time from now on share glibc's main arena (as `MALLOC_ARENA_MAX=1`
    would, set before the process started). Call it before the threads start. Whether it was set: False where the
    C library is not glibc (macOS, Windows, musl), whose allocators need nothing here."""
    libc = _glibc()
    return bool(libc is not None and libc.mallopt(M_ARENA_MAX, 1) == 1)


def allocator_note() -> str:
    """One line for benchmark reports."""
    if _state["tuned"]:
        return "CPU allocator: glibc malloc keeps freed blocks up to 32 MiB (inspector.core.engine.allocator)"
    return "CPU allocator: as the platform ships it"
