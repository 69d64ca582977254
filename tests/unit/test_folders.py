"""A folder of images as an input: which files, in which order, and the clear errors."""

from __future__ import annotations

import pytest

from inspector.core.errors import InputError
from inspector.core.folders import FolderInput, list_images


def touch(root, rel):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x")


def test_images_nested_sorted_by_path_parts_hidden_and_other_files_left_out(tmp_path):
    for rel in ("b.png", "a/z.JPG", "a/b/c.webp", "notes.txt", ".hidden.png", ".cache/x.png", "A.bmp", "m.tiff"):
        touch(tmp_path, rel)
    assert list_images(tmp_path) == ["A.bmp", "a/b/c.webp", "a/z.JPG", "b.png", "m.tiff"]


def test_an_empty_folder_and_a_file_are_clear_errors(tmp_path):
    touch(tmp_path, "readme.txt")
    with pytest.raises(InputError, match="No image files in"):
        list_images(tmp_path)
    with pytest.raises(InputError, match="Not a folder"):
        list_images(tmp_path / "readme.txt")


def test_stepping_is_clamped_and_labelled(tmp_path):
    for rel in ("1.png", "sub/2.png", "3.png"):
        touch(tmp_path, rel)
    folder = FolderInput.open(tmp_path)
    assert folder.files == ("1.png", "3.png", "sub/2.png") and len(folder) == 3
    assert folder.at(-5).index == 0 and folder.at(99).index == 2
    last = folder.at(2)
    assert last.label() == "3 of 3: sub/2.png" and last.path == str(tmp_path / "sub" / "2.png")
    assert folder.index_of(str(tmp_path / "3.png")) == 1 and folder.index_of("/elsewhere/3.png") is None
