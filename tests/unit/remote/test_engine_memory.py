"""Issue 53: `serve`'s engine thread allocates from glibc's main arena. On an arena of its own (glibc's default for
a new thread) a run's freed captures went back to the system and the next run faulted them in again: a resnet50
run with every leaf ticked took thousands of page faults and 3-36 ms more CPU there than on the main thread.
Checked in a fresh interpreter: how many arenas glibc reports (`malloc_stats`) once a thread has allocated."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

CHILD = """
import ctypes, sys, threading
from inspector.core.engine.allocator import one_malloc_arena
libc = ctypes.CDLL("libc.so.6")
print(one_malloc_arena() if sys.argv[1] == "one" else "-", flush=True)
libc.malloc.restype = ctypes.c_void_p
thread = threading.Thread(target=lambda: libc.free(ctypes.c_void_p(libc.malloc(1000))))  # its first allocation
thread.start()
thread.join()
libc.malloc_stats()  # one "Arena N:" block per arena, on stderr
"""

glibc = pytest.mark.skipif(not (getattr(os, "confstr", None) and "glibc" in (os.confstr("CS_GNU_LIBC_VERSION") or "")),
                           reason="glibc's arenas (macOS, Windows and musl allocate otherwise)")


def arenas_after_a_thread(mode: str) -> tuple[str, int]:
    done = subprocess.run([sys.executable, "-c", CHILD, mode], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip(), sum(line.startswith("Arena ") for line in done.stderr.splitlines())


@glibc
def test_a_thread_started_after_it_allocates_from_the_main_arena():
    assert arenas_after_a_thread("default") == ("-", 2)  # glibc's default: the thread's own arena
    assert arenas_after_a_thread("one") == ("True", 1)


def test_serve_sets_it_before_anything_else(monkeypatch):
    """`serve` calls it first thing: before the engine, the Ray check and the server make any thread."""
    from types import SimpleNamespace

    from inspector.cli import serve
    from inspector.core.engine import allocator

    class Called(Exception):
        pass

    def called():
        raise Called

    monkeypatch.setattr(allocator, "one_malloc_arena", called)
    with pytest.raises(Called):
        serve.run(SimpleNamespace())  # no arguments at all: whatever read one first would fail on it
