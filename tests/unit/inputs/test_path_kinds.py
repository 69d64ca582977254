"""Issue 40, item 7: every reader and writer names what a path is, in one line, as the user typed it: a name
over 255 bytes (checked before anything is opened: open and stat raise ENAMETOOLONG), a FIFO (never opened: it
blocks), a link to /dev/zero, a folder named x.mp4, or nothing there. Real fixtures, made here; the exact
messages are worked out by hand."""

from __future__ import annotations

import os
import threading

import pytest

from inspector.core.common.errors import AtlasError, InputError, ModelLoadError, SpecError, WriteError

LONG = "n" * 300 + ".png"  # one name of 304 bytes
LONG_SHOWN = "n" * 40 + "..." + "n" * 26 + ".png"  # the first 40 and last 30 characters
TOO_LONG = "(a name in it is 304 bytes long, and names here take at most 255)"


@pytest.fixture
def here(tmp_path, monkeypatch):
    """The test's folder as the current one, with a FIFO, a link to /dev/zero, a folder named x.mp4 and a file."""
    monkeypatch.chdir(tmp_path)
    os.mkfifo("fifo.png")
    os.symlink("/dev/zero", "zero.npy")
    os.mkdir("x.mp4")
    with open("plain.txt", "w") as file:
        file.write("text")
    return tmp_path


def _no_block(call):
    """`call()`'s exception; a reader that opens the FIFO blocks, which fails the test instead of hanging it."""
    box = {}

    def run():
        try:
            call()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(10)
    if thread.is_alive():
        with open("fifo.png", "wb"):  # unblock the reader so the thread ends
            pass
        pytest.fail("the reader opened the FIFO and blocked")
    return box.get("error")


def _input(path):
    from inspector.core import load_input

    return load_input(path)


def _video(path):
    from inspector.core.inputs.video import VideoReader

    return VideoReader(path)


def _weights(path):
    from inspector.core import load_model

    return load_model("demo", path)


def _program(path):
    from inspector.core import load_model

    return load_model(path, trust=True)


INPUT = [
    (LONG, f"Input file name too long: {LONG_SHOWN} {TOO_LONG}"),
    (f"sub/{LONG}/x.png", f"Input file name too long: sub/{'n' * 36}...{'n' * 20}.png/x.png {TOO_LONG}"),
    ("fifo.png", "Input file is not a regular file: fifo.png (a FIFO)"),
    ("zero.npy", "Input file is not a regular file: zero.npy (a link to /dev/zero, a character device)"),
    ("x.mp4", "Input file is a folder, not a file: x.mp4; name a file inside it"),
    ("missing.png", "Input file not found: missing.png"),
    ("plain.txt/x.png", "Input file not found: plain.txt/x.png (a part of the path is a file, not a folder)"),
]


@pytest.mark.parametrize("path, message", INPUT)
def test_the_input_names_what_its_path_is(here, path, message):
    error = _no_block(lambda: _input(path))
    assert type(error) is InputError and str(error) == message


@pytest.mark.parametrize("path, message", [
    (LONG[:-4] + ".mp4", f"Video file name too long: {'n' * 40}...{'n' * 26}.mp4 {TOO_LONG}"),
    ("x.mp4", "Video file is a folder, not a file: x.mp4; name a file inside it"),
    ("zero.npy", "Video file is not a regular file: zero.npy (a link to /dev/zero, a character device)"),
    ("fifo.png", "Video file is not a regular file: fifo.png (a FIFO)"),
])
def test_a_video_names_what_its_path_is(here, path, message):
    error = _no_block(lambda: _video(path))
    assert type(error) is InputError and str(error) == message


@pytest.mark.parametrize("path, message", [
    (LONG[:-4] + ".pt", f"Weights file name too long: {'n' * 40}...{'n' * 27}.pt {TOO_LONG.replace('304', '303')}"),
    ("fifo.png", "Weights file is not a regular file: fifo.png (a FIFO)"),
    ("zero.npy", "Weights file is not a regular file: zero.npy (a link to /dev/zero, a character device)"),
    ("x.mp4", "Weights file is a folder, not a file: x.mp4; name a file inside it"),
    ("missing.pt", "Weights file not found: missing.pt"),
])
def test_the_weights_name_what_their_path_is(here, path, message):
    error = _no_block(lambda: _weights(path))
    assert type(error) is ModelLoadError and str(error) == message


@pytest.mark.parametrize("path, message", [
    (LONG[:-4] + ".pt2", f"Model file name too long: {'n' * 40}...{'n' * 26}.pt2 {TOO_LONG}"),
    ("x.pt2", "Model file is not a regular file: x.pt2 (a link to /dev/zero, a character device)"),
])
def test_a_model_file_names_what_its_path_is(here, path, message):
    os.symlink("/dev/zero", "x.pt2")
    error = _no_block(lambda: _program(path))
    assert type(error) is ModelLoadError and str(error) == message


def test_a_python_file_and_an_hf_folder_name_a_long_name(here):
    from inspector.core import load_model

    with pytest.raises(ModelLoadError) as error:
        load_model(f"{LONG[:-4]}.py:Net")
    assert str(error.value) == f"Python file name too long: {'n' * 40}...{'n' * 27}.py " \
                               f"{TOO_LONG.replace('304', '303')}"
    with pytest.raises(ModelLoadError) as error:
        load_model(f"hf:./{LONG[:-4]}")
    assert str(error.value) == f"The hf: folder name too long: ./{'n' * 38}...{'n' * 30} " \
                               "(a name in it is 300 bytes long, and names here take at most 255)"


def test_a_session_file_and_its_input_name_what_their_path_is(here):
    from inspector.core.session.file import Session, load_session, save_session

    error = _no_block(lambda: load_session("fifo.png"))
    assert type(error) is SpecError and str(error) == "Session file is not a regular file: fifo.png (a FIFO)"
    with pytest.raises(SpecError) as error:
        load_session(LONG)
    assert str(error.value) == f"Session file name too long: {LONG_SHOWN} {TOO_LONG}"
    save_session(Session(input=LONG), "s.inspector.json")
    with pytest.raises(SpecError) as error:
        load_session("s.inspector.json")
    assert str(error.value) == f"s.inspector.json: its input name too long: {LONG_SHOWN} {TOO_LONG}"


def test_a_folder_of_images_names_what_its_path_is(here):
    from inspector.core.inputs.files import is_image_set, list_images
    from inspector.core.inputs.folders import FolderInput

    assert not is_image_set(LONG)
    with pytest.raises(InputError) as error:
        list_images(LONG)
    assert str(error.value) == f"The data name too long: {LONG_SHOWN} {TOO_LONG}"
    with pytest.raises(InputError) as error:
        FolderInput.open(LONG)
    assert str(error.value) == f"Image folder name too long: {LONG_SHOWN} {TOO_LONG}"
    with pytest.raises(InputError) as error:
        FolderInput.open("zero.npy")
    assert str(error.value) == "Image folder is not a folder: zero.npy (a link to /dev/zero, a character device)"


def test_outputs_and_writers_name_a_long_name(here):
    from inspector.core.storage.outputs import output_folder, output_path
    from inspector.core.storage.writes import make_folder, write_bytes

    with pytest.raises(SpecError) as error:
        output_path(LONG[:-4] + ".npy")
    assert str(error.value) == f"--out name too long: {'n' * 40}...{'n' * 26}.npy {TOO_LONG}"
    with pytest.raises(SpecError) as error:
        output_folder(f"a/{LONG}")
    assert str(error.value) == f"--out name too long: a/{'n' * 38}...{'n' * 26}.png {TOO_LONG}"
    with pytest.raises(WriteError) as error:
        write_bytes(LONG, b"x")
    assert str(error.value) == f"Could not write {LONG_SHOWN}: the name is too long {TOO_LONG}."
    with pytest.raises(WriteError) as error:
        make_folder(LONG)
    assert str(error.value) == f"Could not make the folder {LONG_SHOWN}: the name is too long {TOO_LONG}."
    assert sorted(os.listdir(".")) == ["fifo.png", "plain.txt", "x.mp4", "zero.npy"]


def test_the_atlas_names_a_long_name_and_a_nul(here):
    from inspector.core import load_model
    from inspector.core.atlas import read_atlas, run_atlas
    from inspector.core.atlas.pictures import open_atlas

    for call in (read_atlas, open_atlas):
        with pytest.raises(AtlasError) as error:
            call(LONG)
        assert str(error.value) == f"The atlas folder name too long: {LONG_SHOWN} {TOO_LONG}"
    demo = load_model("demo")
    with pytest.raises(SpecError) as error:
        run_atlas(demo, ".", "conv1", 1, "a\x00b")
    assert str(error.value) == "--out holds a NUL byte (\\x00), which no path can: 'a\\x00b'"
    with pytest.raises(InputError) as error:
        run_atlas(demo, LONG, "conv1", 1, "atlas")
    assert str(error.value) == f"The data name too long: {LONG_SHOWN} {TOO_LONG}"
    assert sorted(os.listdir(".")) == ["fifo.png", "plain.txt", "x.mp4", "zero.npy"]
