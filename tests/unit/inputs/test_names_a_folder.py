"""What a name alone says of a remote engine's input (`names_a_folder`): the Input box on a remote engine steps
through a server folder it is typed, and runs a file of a kind an input is."""

from __future__ import annotations

import pytest

from inspector.core.inputs.samples import names_a_folder


@pytest.mark.parametrize("name", ["images", "/data/cats", "data/set.v2", "photos/2024", "relative/dir/"])
def test_a_name_with_no_input_suffix_is_a_folder(name):
    assert names_a_folder(name)


@pytest.mark.parametrize("name", ["sample:star", "camera:0", "a.png", "/data/B.JPG", "x.webp", "t.npy", "t.pt",
                                  "w.pth", "clip.MP4", "film.mkv"])
def test_a_sample_a_camera_or_a_file_of_an_input_kind_is_not(name):
    assert not names_a_folder(name)
