"""Issue 52 item 5, through the commands: an --out that is a FIFO, a character device (made here, and /dev/null
itself), or a link to a socket is refused in one line, exit 2, before the model loads (capture and graph: before
torch is imported; attribute after it; capture, attribute and graph had replaced a FIFO with their file after the run; `capture --out /dev/null` wrote /dev/null.npz). An --out
that is a link to a regular file is written through: the link stays and names the new file. The commands run one
after another in one new interpreter (cli_here.answers_in_one_interpreter), the one that writes last."""

from __future__ import annotations

import os
import socket
import stat
import zipfile

import pytest
from cli_here import answers_in_one_interpreter, refused_early

CAPTURE = ("capture", "--model", "demo", "--input", "sample:star", "--layers", "conv1")
ATTRIBUTE = ("attribute", "--model", "demo", "--input", "sample:star", "--method", "saliency")
GRAPH = ("graph", "--model", "demo", "--input", "sample:star")
NOT_REGULAR = "error: --out {shown} is not a regular file ({kind}); name a file to write."

CASES = {  # the command, the --out given (in the test's folder unless absolute), and what it says
    "capture fifo": ((*CAPTURE, "--out"), "fifo.npz", NOT_REGULAR.format(shown="{tmp}/fifo.npz", kind="a FIFO")),
    "capture fifo as typed": ((*CAPTURE, "--out"), "fifo", NOT_REGULAR.format(shown="{tmp}/fifo", kind="a FIFO")),
    "capture fifo by its stem": ((*CAPTURE, "--out"), "only",
                                 NOT_REGULAR.format(shown="{tmp}/only.npz", kind="a FIFO")),
    "capture device": ((*CAPTURE, "--out"), "null",
                       NOT_REGULAR.format(shown="{tmp}/null", kind="a character device")),
    "capture /dev/null": ((*CAPTURE, "--out"), "/dev/null",
                          NOT_REGULAR.format(shown="/dev/null", kind="a character device")),
    "capture manifest": ((*CAPTURE, "--manifest", "--out"), "m.npz",
                         "error: --manifest {tmp}/m.json is not a regular file (a FIFO); name a file to write."),
    "graph fifo": ((*GRAPH, "--out"), "fifo.svg", NOT_REGULAR.format(shown="{tmp}/fifo.svg", kind="a FIFO")),
    "graph socket link": ((*GRAPH, "--out"), "sock.svg",
                          NOT_REGULAR.format(shown="{tmp}/sock.svg", kind="a link to {tmp}/s, a socket")),
    "attribute fifo": ((*ATTRIBUTE, "--out"), "fifo.npy", NOT_REGULAR.format(shown="{tmp}/fifo.npy", kind="a FIFO")),
}
TORCH_FIRST = {"attribute fifo"}  # attribute checks --out after torch is imported, before the model loads
FIFOS = ["fifo", "fifo.npy", "fifo.npz", "fifo.svg", "m.json", "only.npz"]
FOLDER = sorted([*FIFOS, "link.npz", "null", "real", "s", "sock.svg"])


@pytest.fixture(scope="module")
def answers(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("kinds")
    here = os.getcwd()
    os.chdir(tmp)  # a unix socket's path is at most 107 bytes: bound by a short relative name
    try:
        for name in FIFOS:
            os.mkfifo(name)
        os.mknod("null", stat.S_IFCHR | 0o666, os.makedev(1, 5))
        sock = socket.socket(socket.AF_UNIX)
        sock.bind("s")
        os.symlink("s", "sock.svg")
        os.mkdir("real")
        open("real/out.npz", "wb").close()
        os.symlink("real/out.npz", "link.npz")
    finally:
        os.chdir(here)
    commands = [(*argv, out if out.startswith("/") else f"{tmp}/{out}") for argv, out, _ in CASES.values()]
    dev_null_npz = os.path.exists("/dev/null.npz")
    try:
        with sock:
            found = answers_in_one_interpreter([*commands, (*CAPTURE, "--out", f"{tmp}/link.npz")])
    finally:
        if not dev_null_npz and os.path.exists("/dev/null.npz"):  # what the old code wrote: not left behind
            os.remove("/dev/null.npz")
    return tmp, dict(zip([*CASES, "link"], found))


@pytest.mark.parametrize("case", CASES)
def test_an_out_that_is_not_a_regular_file_is_refused_before_torch(answers, case):
    tmp, found = answers
    refused_early(found[case], CASES[case][2].format(tmp=tmp), torch_imported=case in TORCH_FIRST)


def test_nothing_was_written_over_and_dev_null_is_still_a_device(answers):
    tmp, _ = answers
    assert sorted(os.listdir(tmp)) == FOLDER  # no temporary file, no fifo.npz.npz
    for name in FIFOS:
        assert stat.S_ISFIFO(os.lstat(tmp / name).st_mode), name
    assert stat.S_ISCHR(os.lstat(tmp / "null").st_mode) and stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert not os.path.exists("/dev/null.npz")


def test_an_out_that_links_to_a_regular_file_is_written_through(answers):
    tmp, found = answers
    assert found["link"][0] == 0, found["link"]
    assert os.readlink(tmp / "link.npz") == "real/out.npz" and os.listdir(tmp / "real") == ["out.npz"]
    with zipfile.ZipFile(tmp / "real/out.npz") as npz:  # the capture's arrays, in the file the link names
        assert "conv1:output.npy" in npz.namelist()
