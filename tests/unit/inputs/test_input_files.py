"""Input files whatever their name's case, folders given as inputs, and pickles that would run code."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

from inspector.core import InputError, load_input


def test_upper_case_npy_is_a_tensor_file(tmp_path):
    a = np.arange(12, dtype=np.float32).reshape(1, 3, 2, 2)
    np.save(tmp_path / "X.NPY", a)  # numpy appends .npy: X.NPY.npy
    os.rename(tmp_path / "X.NPY.npy", tmp_path / "X.NPY")
    torch.testing.assert_close(load_input(tmp_path / "X.NPY"), torch.from_numpy(a))


@pytest.mark.parametrize("name", ["X.PT", "X.Pth"])
def test_upper_case_pt_is_a_tensor_file(tmp_path, name):
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    torch.save(t, tmp_path / name)
    torch.testing.assert_close(load_input(tmp_path / name), t)


@pytest.mark.parametrize("name", ["pictures", "pictures.png", "tensors.npy"])
def test_a_folder_says_it_is_a_folder(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)  # the path as typed: relative
    os.mkdir(name)
    with pytest.raises(InputError) as error:
        load_input(name)
    assert str(error.value) == f"Input file is a folder, not a file: {name}; name a file inside it"


class _Payload:
    def __reduce__(self):
        return (os.mkdir, (str(_Payload.marker),))


def test_a_pickle_with_code_is_refused_in_our_words_and_never_runs(tmp_path):
    _Payload.marker = tmp_path / "ran"
    path = tmp_path / "evil.PT"
    torch.save(_Payload(), path)
    with pytest.raises(InputError) as info:
        load_input(path)
    message = str(info.value)
    assert message.startswith("evil.PT is a pickle that would import code when loaded (")
    assert "mkdir" in message and "could run anything" in message
    assert "weights_only" not in message and "\n" not in message
    assert not _Payload.marker.exists()


def test_a_pickled_npy_is_refused_without_advice_to_unpickle(tmp_path):
    path = tmp_path / "obj.npy"
    np.save(path, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(InputError) as info:
        load_input(path)
    assert str(info.value).startswith("obj.npy holds pickled Python objects, which could run code when loaded")
    assert "allow_pickle" not in str(info.value)


def test_a_folder_as_weights_says_it_is_a_folder(tmp_path, monkeypatch):
    from inspector.core import ModelLoadError, load_model

    monkeypatch.chdir(tmp_path)
    os.mkdir("w.pt")
    with pytest.raises(ModelLoadError) as error:
        load_model("inspector.demo.toy:ToyMLP", weights="w.pt")
    assert str(error.value) == "Weights file is a folder, not a file: w.pt; name a file inside it"


def test_a_damaged_pt_file_is_one_line(tmp_path):
    path = tmp_path / "x.pt"
    path.write_bytes(b"\x80\x02not really a pickle at all")
    with pytest.raises(InputError, match="x.pt is not a tensor file this tool can read"):
        load_input(path)


def test_refusing_a_pickle_that_imports_code_says_one_line_and_no_torch_warning(tmp_path):
    """A raw protocol-4 pickle: torch warned about the protocol in two lines before our refusal."""
    import pickle
    import subprocess
    import sys

    path = tmp_path / "raw4.pt"
    with open(path, "wb") as file:
        pickle.dump({"w": torch.zeros(2)}, file, protocol=4)
    for extra in (["--weights", str(path), "--input", "sample:star"], ["--input", str(path)]):
        done = subprocess.run([sys.executable, "-m", "inspector", "capture", "--model", "demo", *extra],
                              capture_output=True, text=True, timeout=120)
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2 and len(lines) == 1 and "would import code" in lines[0], done.stderr


def test_an_empty_image_is_named_by_its_file_name_like_the_other_reasons(tmp_path):
    from inspector.core.inputs.files import open_image

    (tmp_path / "empty.png").write_bytes(b"")
    with pytest.raises(InputError) as error:
        open_image(tmp_path / "empty.png")
    assert str(error.value) == "empty.png is empty (0 bytes)."
