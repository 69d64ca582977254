import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
if os.environ["QT_QPA_PLATFORM"] == "offscreen":  # its own screen is 800x800, under the window's minimum size:
    # the tests' screen is a 1280x800 laptop's, which the first window fits (inspector.gui.window.window_fit)
    os.environ["QT_QPA_PLATFORM"] = "offscreen:configfile=" + os.path.join(os.path.dirname(__file__),
                                                                           "offscreen_screen.json")
# Two cores: torch's intra-op threads fighting the app's worker thread (and parallel CLI
# subprocesses) made single runs many times slower. One thread each is faster overall.
os.environ.setdefault("OMP_NUM_THREADS", "1")

import pytest  # noqa: E402 - after the environment the app and torch read


def pytest_xdist_auto_num_workers(config):
    """`-n auto`: one process per core, at most four (each imports torch and Qt: ~1 GB)."""
    return max(1, min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))


@pytest.fixture()
def threads_as_the_server():
    """A test that compares numbers with `network-inspector serve`'s: torch here on the threads the server runs on
    (the suite's OMP_NUM_THREADS, one), whatever an earlier test in this process set (a mean summed on two threads
    differs in its last digits); put back after."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def shapes():
    """shapes(folder, count, seed) -> folder: `count` of the demo's shapes, 0.png … as `render(i, rng)` draws them
    (shape i mod 8) from one generator seeded `seed`, written into `folder` (made)."""
    def write(folder, count: int, seed: int):
        import numpy as np

        from inspector.demo.shapes import render

        folder.mkdir(parents=True, exist_ok=True)
        rng = np.random.default_rng(seed)
        for i in range(count):
            render(i, rng).save(folder / f"{i}.png")
        return folder
    return write
