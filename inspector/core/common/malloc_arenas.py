"""The C allocator's arenas: every thread given glibc's main arena (`one_malloc_arena`).

glibc gives each new thread an arena of its own, made of 64 MB heaps that it hands back to the system as soon as
they empty. An engine that runs on a thread of its own (`serve`'s engine thread) frees a run's captures, and the
next run faults the same memory in again: a resnet50 run with every leaf ticked (the last outcome kept, as the
server keeps it) took 5,600-22,000 page faults on such a thread and none on the main thread, 3-36 ms more CPU
(median 14) and 12-140 ms more wall time (2-core machine, same process, in turns). With the main arena: no faults,
and the thread's run took what the main thread's did.
"""

from __future__ import annotations

import os

M_ARENA_MAX = -8  # glibc's malloc.h: mallopt's "at most this many arenas"


def one_malloc_arena() -> bool:
    """Threads that allocate for the first time from now on share glibc's main arena (as `MALLOC_ARENA_MAX=1`
    would, set before the process started). Call it before the threads start. Whether it was set: False where the
    C library is not glibc (macOS, Windows, musl), whose allocators need nothing here."""
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc"):
            return False
    except (AttributeError, ValueError, OSError):  # no confstr (Windows) or no such name
        return False
    import ctypes

    try:
        return bool(ctypes.CDLL("libc.so.6").mallopt(M_ARENA_MAX, 1))
    except (OSError, AttributeError):
        return False
