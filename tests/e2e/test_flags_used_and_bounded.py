"""Issue 52 item 6, through the commands: an attribute option the run would not use (--tolerance or --max-steps
without --steps auto, --steps on a method without steps, a scores' option without --metrics), a memory size too
large to hold, and graph --against naming a folder, a device or a FIFO were ignored, a traceback, or "no such file";
each is now one line, exit 2, before the model loads (before torch where nothing of torch is needed). The commands
run one after another in one new interpreter (cli_here.answers_in_one_interpreter)."""

from __future__ import annotations

import os
import stat

import pytest
from cli_here import answers_in_one_interpreter, refused_early, run_here

ATTRIBUTE = ("attribute", "--model", "demo", "--input", "sample:star", "--out", "{tmp}/o.npy", "--method")
GRAPH = ("graph", "--model", "demo", "--input", "sample:star", "--out", "{tmp}/g.svg", "--values", "change",
         "--against")

EARLY = {  # what is refused before torch is imported: the arguments, and the one line said
    "tolerance without auto": ((*ATTRIBUTE, "ig", "--tolerance", "0.1"),
                               "error: --tolerance applies to ig with --steps auto only: add --steps auto, or leave "
                               "--tolerance out."),
    "max steps at its default": ((*ATTRIBUTE, "ig", "--steps", "20", "--max-steps", "512"),
                                 "error: --max-steps applies to ig with --steps auto only: add --steps auto, or "
                                 "leave --max-steps out."),
    "steps auto on saliency": ((*ATTRIBUTE, "saliency", "--steps", "auto"),
                               "error: saliency takes no --steps; --steps is for ig, smoothgrad (of ig)."),
    "steps on smoothgrad of saliency": ((*ATTRIBUTE, "smoothgrad", "--steps", "auto"),
                                        "error: --steps applies to smoothgrad with --of ig only: add --of ig, or "
                                        "leave --steps out."),
    "tolerance on smoothgrad": ((*ATTRIBUTE, "smoothgrad", "--of", "ig", "--steps", "auto", "--tolerance", "0.1"),
                                "error: smoothgrad takes no --tolerance; --tolerance is for ig (steps auto)."),
    "window on gradcam": ((*ATTRIBUTE, "gradcam", "--window", "8"),
                          "error: gradcam takes no --window; --window is for occlusion."),
    "baseline without metrics": ((*ATTRIBUTE, "saliency", "--baseline", "black"),
                                 "error: saliency takes no --baseline without --metrics; --baseline is for ig, "
                                 "smoothgrad (of ig), occlusion, the metrics."),
    "batch without metrics": ((*ATTRIBUTE, "gradcam", "--batch", "4"),
                              "error: gradcam takes no --batch without --metrics; --batch is for ig, smoothgrad, "
                              "occlusion, drise."),
    "against a folder": ((*GRAPH, "{tmp}/w"),
                         "error: --against weights file is a folder, not a file: {tmp}/w; name a file inside it"),
    "against a device": ((*GRAPH, "{tmp}/null"),
                         "error: --against weights file is not a regular file: {tmp}/null (a character device)"),
    "against a fifo": ((*GRAPH, "{tmp}/fifo"), "error: --against weights file is not a regular file: {tmp}/fifo "
                                               "(a FIFO)"),
}
MEMORY = ((*ATTRIBUTE, "ig", "--max-memory", "9" * 400),  # after torch, before the model
          "error: A memory size is below 2**63 bytes (8,388,608 TB), not '" + "9" * 56 + "....")


@pytest.fixture(scope="module")
def answers(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("used")
    (tmp / "w").mkdir()
    os.mknod(tmp / "null", stat.S_IFCHR | 0o666, os.makedev(1, 5))
    os.mkfifo(tmp / "fifo")
    commands = [[a.format(tmp=tmp) for a in argv] for argv, _ in (*EARLY.values(), MEMORY)]
    return tmp, dict(zip([*EARLY, "memory"], answers_in_one_interpreter(commands)))


@pytest.mark.parametrize("case", EARLY)
def test_an_option_not_used_or_a_weights_path_that_is_no_file_is_refused_before_torch(answers, case):
    tmp, found = answers
    refused_early(found[case], EARLY[case][1].format(tmp=tmp))


def test_a_memory_size_too_large_is_one_line_before_the_model(answers):
    _, found = answers
    refused_early(found["memory"], MEMORY[1], torch_imported=True)
    assert sorted(os.listdir(answers[0])) == ["fifo", "null", "w"]  # no map written by any of them


def test_options_that_are_used_still_run(tmp_path):
    """The scores' baseline and batch with --metrics on a method that has none; --tolerance with --steps auto."""
    out = str(tmp_path / "o.npy")
    done = run_here("attribute", "--model", "demo", "--input", "sample:star", "--method", "saliency", "--baseline",
                    "black", "--batch", "8", "--metrics", "deletion", "--metric-steps", "4", "--out", out)
    assert done.returncode == 0, done.stderr
    done = run_here("attribute", "--model", "demo", "--input", "sample:star", "--method", "ig", "--steps", "auto",
                    "--tolerance", "0.5", "--max-steps", "9", "--out", out)
    assert done.returncode == 0, done.stderr
    assert "(5 steps, nested trapezoid, chosen for a gap within 0.5 of |f(x) - f(baseline)|)" in done.stdout


def test_steps_auto_stopped_by_max_steps_says_so(tmp_path):
    """A tolerance the demo cannot meet in 9 points (the gap at 5 points is about 1% of |f(x) - f(b)|, at 9 about
    0.3%): the run stops at 9, says it stopped, and the note says the next level (17) would pass --max-steps 16."""
    done = run_here("attribute", "--model", "demo", "--input", "sample:star", "--method", "ig", "--steps", "auto",
                    "--tolerance", "1e-6", "--max-steps", "16", "--out", str(tmp_path / "o.npy"))
    assert done.returncode == 0, done.stderr
    assert "(9 steps, nested trapezoid, stopped by --max-steps 16 before a gap within 1e-06 of " \
           "|f(x) - f(baseline)|)" in done.stdout
    assert "its levels take 5, 9, 17, 33, ... points, and the next, 17, would pass max_steps 16." in done.stdout
