"""A folder of images as the app's input: the files `core.inputs.list_images` finds, stepped through."""

from __future__ import annotations

import pytest

from inspector.core.common.errors import InputError
from inspector.core.inputs.folders import FolderInput


def touch(root, rel):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x")


def test_the_images_nested_sorted_by_relative_path_other_files_left_out(tmp_path):
    for rel in ("b.png", "a/z.JPG", "a/b/c.webp", "notes.txt", "A.bmp", "m.tiff"):
        touch(tmp_path, rel)
    assert FolderInput.open(tmp_path).files == ("A.bmp", "a/b/c.webp", "a/z.JPG", "b.png", "m.tiff")


def test_an_empty_folder_and_a_file_are_clear_errors(tmp_path, monkeypatch):
    touch(tmp_path, "readme.txt")
    with pytest.raises(InputError, match="No images in"):
        FolderInput.open(tmp_path)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError) as error:
        FolderInput.open("readme.txt")
    assert str(error.value) == "Image folder is not a folder: readme.txt (a file)"


def test_stepping_is_clamped_and_labelled(tmp_path):
    for rel in ("1.png", "sub/2.png", "3.png"):
        touch(tmp_path, rel)
    folder = FolderInput.open(tmp_path)
    assert folder.files == ("1.png", "3.png", "sub/2.png") and len(folder) == 3
    assert folder.at(-5).index == 0 and folder.at(99).index == 2
    last = folder.at(2)
    assert last.label() == "3 of 3: sub/2.png" and last.path == str(tmp_path / "sub" / "2.png")
    assert folder.index_of(str(tmp_path / "3.png")) == 1 and folder.index_of("/elsewhere/3.png") is None
