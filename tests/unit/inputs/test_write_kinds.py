"""Issue 52 item 5: the one writer writes regular files only. A FIFO, a character device, a socket, a link to one of
them or a link that names nothing is refused in one line that says what it is, and stays exactly what it was (the
writer had renamed its temporary file over each: a device node replaced by JSON when run as root). A link to a
regular file is written through: the link stays, the file it names is replaced whole. The nodes are real and made
here (os.mkfifo, os.mknod, a bound unix socket); the device is a copy of /dev/null's numbers in the test's folder,
so a writer that replaced it would replace only that copy."""

from __future__ import annotations

import json
import os
import socket
import stat

import numpy as np
import pytest
from PIL import Image

from inspector.core.common.errors import SpecError, WriteError
from inspector.core.storage.outputs import output_path
from inspector.core.session.file import Session, save_session
from inspector.core.storage.writes import atomic_file, save_image, save_npy, save_npz, write_bytes, write_json, write_text

WRITERS = {
    "write_bytes": lambda p: write_bytes(p, b"new"),
    "write_text": lambda p: write_text(p, "new"),
    "write_json": lambda p: write_json(p, {"a": 1}),
    "save_npz": lambda p: save_npz(p, {"a": np.zeros(3)}),
    "save_npy": lambda p: save_npy(p, np.zeros(3)),
    "save_image": lambda p: save_image(p, Image.new("L", (2, 2))),
    "save_session": lambda p: save_session(Session(), p),
}


@pytest.fixture
def nodes(tmp_path, monkeypatch):
    """The test's folder as the current one, holding a FIFO, a character device (1, 5), a bound unix socket, a link
    to each, a link to nothing and a regular file. Yields the (name, S_IS* test) of each node to check after."""
    monkeypatch.chdir(tmp_path)  # a unix socket's path is at most 107 bytes: bound by a short relative name
    os.mkfifo("fifo.png")
    os.mknod("chr.png", stat.S_IFCHR | 0o666, os.makedev(1, 5))
    sock = socket.socket(socket.AF_UNIX)
    sock.bind("sock.png")
    for name in ("fifo", "chr", "sock"):
        os.symlink(f"{name}.png", f"to-{name}.png")
    os.symlink("gone.png", "dangling.png")
    with sock:
        yield {"fifo.png": stat.S_ISFIFO, "chr.png": stat.S_ISCHR, "sock.png": stat.S_ISSOCK,
               "to-fifo.png": stat.S_ISLNK, "to-chr.png": stat.S_ISLNK, "to-sock.png": stat.S_ISLNK,
               "dangling.png": stat.S_ISLNK}


REFUSED = {
    "fifo.png": "a FIFO",
    "chr.png": "a character device",
    "sock.png": "a socket",
    "to-fifo.png": "a link to {tmp}/fifo.png, a FIFO",
    "to-chr.png": "a link to {tmp}/chr.png, a character device",
    "to-sock.png": "a link to {tmp}/sock.png, a socket",
    "dangling.png": "a link to gone.png, which is not there",
}


def _unchanged(tmp_path, nodes) -> None:
    """Every node is still the kind it was, the links name what they named, and no temporary file is left."""
    for name, kind in nodes.items():
        assert kind(os.lstat(name).st_mode), name
    assert {name: os.readlink(name) for name in os.listdir(tmp_path) if os.path.islink(name)} == {
        "to-fifo.png": "fifo.png", "to-chr.png": "chr.png", "to-sock.png": "sock.png", "dangling.png": "gone.png"}
    assert sorted(os.listdir(tmp_path)) == sorted(nodes)


@pytest.mark.parametrize("writer", WRITERS)
@pytest.mark.parametrize("name", REFUSED)
def test_every_writer_refuses_what_is_not_a_regular_file(tmp_path, nodes, writer, name):
    with pytest.raises(WriteError) as error:
        WRITERS[writer](name)
    kind = REFUSED[name].format(tmp=os.path.realpath(tmp_path))
    assert str(error.value) == f"Could not write {name}: it is not a regular file ({kind})."
    assert error.value.path is not None
    _unchanged(tmp_path, nodes)


def test_a_link_to_a_regular_file_is_written_through_and_stays_a_link(tmp_path, monkeypatch):
    """The link is kept and names the same file; that file holds the new bytes, keeps its permissions and is a new
    inode (renamed into place whole, not written over in place). A chain of two links is followed to its end."""
    monkeypatch.chdir(tmp_path)
    os.mkdir("real")
    with open("real/s.json", "w") as file:
        file.write("old")
    os.chmod("real/s.json", 0o640)
    before = os.stat("real/s.json").st_ino
    os.symlink("real/s.json", "link.json")
    os.symlink("link.json", "link2.json")
    save_session(Session(model="resnet18"), "link2.json")
    assert (os.readlink("link2.json"), os.readlink("link.json")) == ("link.json", "real/s.json")
    assert json.loads((tmp_path / "real/s.json").read_text())["model"]["source"] == "resnet18"
    assert stat.S_IMODE(os.stat("real/s.json").st_mode) == 0o640 and os.stat("real/s.json").st_ino != before
    assert sorted(os.listdir(".")) == ["link.json", "link2.json", "real"] and os.listdir("real") == ["s.json"]


def test_a_failed_write_through_a_link_leaves_its_file_as_it_was(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.mkdir("real")
    with open("real/a.bin", "wb") as file:
        file.write(b"old")
    os.symlink("real/a.bin", "link.bin")
    with pytest.raises(RuntimeError), atomic_file("link.bin") as file:
        file.write(b"half")
        raise RuntimeError("stopped")
    assert (tmp_path / "real/a.bin").read_bytes() == b"old" and os.readlink("link.bin") == "real/a.bin"
    assert os.listdir("real") == ["a.bin"]


@pytest.mark.parametrize("typed, suffix, said", [
    ("/dev/null", ".npz", "--out /dev/null is not a regular file (a character device); name a file to write."),
    ("/dev/zero", None, "--out /dev/zero is not a regular file (a character device); name a file to write."),
    ("chr.png", ".npz", "--out chr.png is not a regular file (a character device); name a file to write."),
    ("fifo", ".npz", "--out fifo.npz is not a regular file (a FIFO); name a file to write."),
    ("to-sock.png", None, "--out to-sock.png is not a regular file (a link to {tmp}/sock.png, a socket); "
                          "name a file to write."),
    ("dangling.png", None, "--out dangling.png is not a regular file (a link to gone.png, which is not there); "
                           "name a file to write."),
])
def test_the_commands_early_check_refuses_what_is_not_a_regular_file_as_typed(tmp_path, nodes, typed, suffix, said):
    """output_path opens and writes nothing, so /dev/null itself is safe to name here: it is refused as /dev/null,
    not turned into /dev/null.npz (whose folder is writable by root)."""
    os.mkfifo("fifo.npz")
    with pytest.raises(SpecError) as error:
        output_path(typed, suffix)
    assert str(error.value) == said.format(tmp=os.path.realpath(tmp_path))


def test_the_commands_early_check_takes_a_link_to_a_regular_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    open("real.npz", "wb").close()
    os.symlink("real.npz", "out.npz")
    assert output_path("out.npz", ".npz") == tmp_path.joinpath("out.npz").relative_to(tmp_path)
