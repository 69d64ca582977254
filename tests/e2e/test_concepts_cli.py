"""`network-inspector concepts` as a command: the fit's table (its figures the record's), one-line refusals,
and Ctrl-C (SIGINT to the process) then the same command again resuming to the uninterrupted dictionary."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest
import torch
from cli_here import run_here

sys.path.insert(0, str(Path(__file__).parents[1] / "unit" / "concepts"))
from concepts_planted import planted_images  # noqa: E402

from inspector.core.concepts import load_dictionary  # noqa: E402

MODEL = str(Path(__file__).parents[1] / "unit" / "concepts" / "concepts_planted.py") + ":Planted"


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return planted_images(tmp_path_factory.mktemp("concepts") / "data", 40)


def command(data, out, *more):
    return ["concepts", "--model", MODEL, "--trust", "--seed", "0", "--data", str(data), "--layer", "mix", "--k", "3",
            "--out", str(out), *more]


def test_the_table_says_the_records_figures(data, tmp_path):
    done = run_here(*command(data, tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    record = json.loads((tmp_path / "out" / "concepts.json").read_text())
    fit = record["fit"]
    lines = done.stdout.splitlines()
    assert lines[0] == ("nmf K=3 on mix (8 channels, NCHW): 40 images, 8 held out; measured on 512 held-out samples")
    assert f"  variance explained            {fit['variance_explained']:.4f}" in lines
    assert f"  PCA, same K (3)               {fit['pca_variance_explained']:.4f}" in lines
    assert f"  sparsity (active per sample)  {fit['sparsity']:.2f} of 3" in lines
    assert f"  relative error |X-CD|/|X|     {fit['relative_error']:.4f}" in lines
    assert "  never active                  none" in lines
    assert "img/s" in done.stderr and ("step/s" in done.stderr or "s/step" in done.stderr)  # the bars' rates


def test_refusals_are_one_line(data, tmp_path):
    signed = run_here(*command(data, tmp_path / "signed")[:-6], "--layer", "signed", "--k", "3",
                      "--out", str(tmp_path / "signed"))
    assert signed.returncode == 2
    assert signed.stderr.strip().splitlines()[-1].startswith("error: Layer signed has negative values")
    assert signed.stderr.strip().endswith("learn them with the sparse autoencoder (method sae).")
    assert list((tmp_path / "signed").iterdir()) == []
    sae = run_here(*command(data, tmp_path / "sae"), "--method", "sae")
    assert (sae.returncode, sae.stderr.strip()) == (2, "error: --method sae needs --sparsity TOPK (the concepts "
                                                       "active per sample).")
    held = run_here(*command(data, tmp_path / "held"), "--held-out", "1.5")
    assert held.returncode == 2 and "--held-out is a fraction" in held.stderr


@pytest.mark.parametrize("more, says", [
    (("--epochs", "0"), "error: --epochs must be a whole number of at least 1, not 0."),  # it ran the default before
    (("--epochs", str(2**63)), f"error: --epochs {2**63} is more than 1000, the most passes over the samples (the "
                               f"fit's batches are planned for every pass before it starts; the defaults are nmf 10, "
                               f"sae 20)."),  # grew memory by 878 MB in 120 s before
    (("--top", str(10**9)), f"error: --top {10**9} is more than 100, the most images kept per channel (each one is "
                            f"kept in memory for every channel and cropped into a thumbnail of its own)."),
])
def test_epochs_and_top_are_bounded_in_one_line(data, tmp_path, more, says):
    """Issue 52 item 6: --top 1e9 passed 4.4 GB and died in numpy's _ArrayMemoryError."""
    done = run_here(*command(data, tmp_path / "out"), *more)
    assert (done.returncode, done.stderr.strip()) == (2, says)
    assert not (tmp_path / "out").exists()


def test_ctrl_c_then_the_same_command_resumes(data, tmp_path):
    out = tmp_path / "out"
    args = command(data, out, "--batch", "1")

    def interrupt_when_started():
        deadline = time.monotonic() + 60
        cache = out / "concepts.cache" / "train.f32"
        while time.monotonic() < deadline and not (cache.is_file() and cache.stat().st_size > 0):
            time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGINT)

    watcher = threading.Thread(target=interrupt_when_started, daemon=True)
    watcher.start()
    stopped = run_here(*args)
    watcher.join(60)
    assert stopped.returncode == 130, stopped.stderr
    assert "run it again with the same arguments to resume" in stopped.stderr
    assert (out / "concepts.partial.json").is_file() and not (out / "concepts.json").exists()
    resumed = run_here(*args)
    assert resumed.returncode == 0, resumed.stderr
    straight = run_here(*command(data, tmp_path / "straight", "--batch", "1"))
    assert straight.returncode == 0
    assert torch.equal(load_dictionary(out).components, load_dictionary(tmp_path / "straight").components)
