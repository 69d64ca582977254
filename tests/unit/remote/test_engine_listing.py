"""Issue 53 item 4: the server lists its folders (`list`, in the info lane) for the app's choosers on a remote engine,
strictly inside its data root: against a real `network-inspector serve` on 127.0.0.1. Each listing is checked
against os.listdir / os.stat of the same folder, worked out here by hand; a folder outside the root, a `..` that
climbs out and a link that leads out are refused in one line, and a link out inside a listed folder is left out."""

from __future__ import annotations

import os
import re
import subprocess

import pytest

from inspector.protocol.errors import ProtocolError
from inspector.remote.errors import EngineError

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp", ".gif")


@pytest.fixture(scope="module")
def served(remote, tmp_path_factory):
    top = tmp_path_factory.mktemp("listing")
    outside = top / "outside"
    outside.mkdir()
    (outside / "secret.png").write_bytes(b"\x89PNG not really")
    with remote.engine_server(top / "server") as server:
        root = server.root
        (root / "images" / "cats").mkdir(parents=True)
        (root / "images" / "a.png").write_bytes(b"a" * 10)
        (root / "images" / "B.JPG").write_bytes(b"b" * 7)
        (root / "images" / "notes.txt").write_text("not an image")
        (root / "images" / "cats" / "c.webp").write_bytes(b"c" * 3)
        (root / "images" / "cats" / "deeper").mkdir()
        (root / "images" / "cats" / "deeper" / "d.gif").write_bytes(b"d" * 5)
        (root / "weights.safetensors").write_bytes(b"w" * 21)
        (root / "out-link").symlink_to(outside, target_is_directory=True)  # a link that leads out
        (root / "images" / "secret.png").symlink_to(outside / "secret.png")  # an entry that leads out
        (root / "in-link").symlink_to(root / "images", target_is_directory=True)  # a link that stays in
        server.outside = outside
        yield server


def by_hand(folder, images_only: bool) -> list:
    """The listing of `folder` worked out from os.listdir and os.stat: folders first, then by name."""
    rows = []
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        if os.path.isdir(path):
            rows.append([name, True, None])
        elif not images_only or os.path.splitext(name)[1].lower() in IMAGE_SUFFIXES:
            rows.append([name, False, os.stat(path).st_size])
    return sorted(rows, key=lambda r: (not r[1], r[0].lower(), r[0]))


def test_a_folder_is_listed_as_os_listdir_says_inside_the_root(served):
    root = served.root
    with served.client() as engine:
        assert "list" in engine.hello["serves"]
        top = engine.call("list", {"path": "", "show": "all"})
        images = engine.call("list", {"path": str(root / "images"), "show": "images"})
        every = engine.call("list", {"path": "images", "show": "all"})
        linked = engine.call("list", {"path": "in-link", "show": "images"})
    # the root: its folders (the link out left out) and its one file
    assert top["root"] == str(root) and top["path"] == str(root) and top["parent"] is None
    assert top["default_root"] is False and top["sep"] == os.sep
    assert top["entries"] == [["images", True, None], ["in-link", True, None], ["weights.safetensors", False, 21]]
    assert top["outside"] == 1 and top["more"] == 0
    # images only: the folders and image files of os.listdir (notes.txt out; secret.png leads out of the root)
    assert images["entries"] == [["cats", True, None], ["a.png", False, 10], ["B.JPG", False, 7]]
    assert images["outside"] == 1 and images["parent"] == str(root)
    assert images["path"] == str(root / "images")
    assert sorted(e[0] for e in every["entries"]) == sorted(set(os.listdir(root / "images")) - {"secret.png"})
    assert every["entries"] == [r for r in by_hand(root / "images", False) if r[0] != "secret.png"]
    assert [e for e in every["entries"] if e[0] == "notes.txt"] == [["notes.txt", False, len("not an image")]]
    # a link that stays inside lists what it leads to, under its own name
    assert linked["entries"] == images["entries"] and linked["path"] == str(root / "in-link")


def test_every_image_below_a_folder_as_a_folder_input_steps_through_them(served):
    from inspector.core.inputs.folders import FolderInput

    root = served.root
    with served.client() as engine:
        nested = engine.call("list", {"path": "images", "show": "nested"})
    here = FolderInput.open(root / "images")  # the in-process rule, on the same folder
    assert [e[0] for e in nested["entries"]] == [f for f in here.files if f != "secret.png"]
    assert [e[0] for e in nested["entries"]] == ["B.JPG", "a.png", "cats/c.webp", "cats/deeper/d.gif"]
    assert [e[2] for e in nested["entries"]] == [7, 10, 3, 5] and nested["outside"] == 1


@pytest.mark.parametrize("path, said", [
    ("{outside}", "The folder {outside} is outside this server's data root ({root}): refused."),
    ("images/../..", "The folder images/../.. is outside this server's data root ({root}): refused."),
    ("out-link", "The folder out-link is outside this server's data root ({root}): refused."),
    ("out-link/*", "The folder out-link/* is outside this server's data root ({root}): refused."),
    ("weights.safetensors", "The folder weights.safetensors is not a folder on this server."),
    ("gone", "The folder gone is not there on this server."),
], ids=["outside", "climbs-out", "link-out", "pattern-through-a-link", "a-file", "not-there"])
def test_a_folder_it_may_not_list_is_refused_in_one_line(served, path, said):
    with served.client() as engine:
        with pytest.raises(EngineError) as refused:
            engine.call("list", {"path": path.format(outside=served.outside), "show": "all"})
        assert engine.call("devices")  # the connection serves on
    message = str(refused.value)
    assert message == said.format(outside=served.outside, root=served.root) and "\n" not in message
    assert refused.value.failure.what == "files"


def test_a_list_request_of_another_shape_is_one_error_line():
    from inspector.protocol.schemas import check_body

    for body in (None, {"path": "x"}, {"path": 3, "show": "all"}, {"path": "x", "show": "everything"},
                 {"path": "x", "show": "all", "more": 1}):
        with pytest.raises(ProtocolError, match=r'^A list request\'s body is \{"path": a folder, "show": '):
            check_body("list", body)
    check_body("list", {"path": "", "show": "nested"})


def test_without_a_data_root_the_working_folder_is_the_root_and_a_refusal_says_so(remote, tmp_path):
    """`serve` with no --data-root: the folder it started in is listed, and a folder outside names that default."""
    from inspector.remote.client import EngineClient

    process = subprocess.Popen(remote.serve_command("--port", "0", "--token-file", str(tmp_path / "token")),
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=tmp_path)
    try:
        line = remote.first_line(process, 60)
        url = re.search(r"(ws://[^\s;]+)", line).group(1)
        with EngineClient(url, (tmp_path / "token").read_text().strip(), timeout=30) as engine:
            top = engine.call("list", {"path": "", "show": "all"})
            with pytest.raises(EngineError) as refused:
                engine.call("list", {"path": "..", "show": "all"})
    finally:
        remote.stop(process)
    assert top["root"] == str(tmp_path.resolve()) and top["default_root"] is True
    assert [e[0] for e in top["entries"]] == sorted(os.listdir(tmp_path), key=lambda n: (n.lower(), n))
    assert str(refused.value) == (f"The folder .. is outside this server's data root ({tmp_path.resolve()}): "
                                  f"refused. (This server has no --data-root: its data root is the folder it was "
                                  f"started in.)")
