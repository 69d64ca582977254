"""The CLI (its `main`, in this process) on mistakes: one line, exit 2, nothing run that cannot be kept,
nothing silently ignored."""

from __future__ import annotations

import json

import numpy as np
import pytest

from inspector import cli
from inspector.cli import common as cli_common


def _fail(*_args, **_kwargs):
    raise AssertionError("the model was loaded although the command was going to fail")


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_error(capsys, *argv: str) -> str:
    code, out, err = run_cli(capsys, *argv)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: "), err
    assert out == ""
    return lines[0]


@pytest.fixture
def no_model(monkeypatch):
    monkeypatch.setattr(cli_common, "load", _fail)  # the loader the commands call


@pytest.fixture
def no_session(monkeypatch):
    import inspector.core.workbench as workbench

    monkeypatch.setattr(workbench.Workbench, "execute", _fail)


@pytest.mark.parametrize("command", ["capture", "attribute"])
def test_unwritable_out_is_refused_before_the_model_loads(capsys, tmp_path, no_model, command):
    (tmp_path / "some_file.png").write_bytes(b"x")
    extra = ["--method", "saliency"] if command == "attribute" else []
    base = [command, "--model", "demo", "--input", "sample:star", *extra, "--out"]
    assert "cannot write in /proc" in one_error(capsys, *base, "/proc/x/y.png")
    message = one_error(capsys, *base, str(tmp_path / "some_file.png" / "c.png"))
    assert f"{tmp_path / 'some_file.png'} is a file, not a folder" in message
    assert "is a folder; name a file inside it" in one_error(capsys, *base, str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["some_file.png"]


@pytest.mark.parametrize("command", ["bench", "sweep"])
def test_bench_and_sweep_check_their_json_file_before_running(capsys, monkeypatch, command):
    import inspector.bench.engine as engine
    import inspector.bench.sweep as sweep

    monkeypatch.setattr(engine, "bench_model", _fail)
    monkeypatch.setattr(sweep, "main", _fail)
    assert "--json /proc/x/rows.json: cannot write in /proc" in one_error(
        capsys, command, "--models", "resnet18", "--json", "/proc/x/rows.json")


def test_attribute_out_with_an_ending_no_writer_knows(capsys, tmp_path, no_model):
    message = one_error(capsys, "attribute", "--method", "saliency", "--input", "sample:star",
                        "--out", str(tmp_path / "heat.xyz"))
    assert "cannot write .xyz; use .npy, .png, .jpg" in message
    message = one_error(capsys, "attribute", "--method", "saliency", "--input", "sample:star",
                        "--out", str(tmp_path / "heat.h5"))  # Pillow registers .h5 with a stub that cannot save
    assert "Cannot write a picture as 'heat.h5'" in message


def test_session_replay_checks_out_before_running(capsys, tmp_path, no_session):
    session = tmp_path / "s.inspector.json"
    session.write_text(json.dumps({"format": "network-inspector-session", "input": "sample:star"}))
    assert "cannot write in /proc" in one_error(capsys, "capture", "--session", str(session),
                                                "--out", "/proc/x/y.npz")


def test_manifest_without_out_is_an_error(capsys, no_model):
    assert "--manifest is written beside the .npz" in one_error(
        capsys, "capture", "--model", "demo", "--input", "sample:star", "--manifest")


def test_out_prints_the_file_written(capsys, tmp_path):
    code, out, err = run_cli(capsys, "capture", "--model", "demo", "--input", "sample:star", "--layers", "fc",
                             "--sites", "output", "--out", str(tmp_path / "foo"))
    assert code == 0, err
    assert out.strip().splitlines()[-1].endswith(f"-> {tmp_path / 'foo.npz'}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["foo.npz"]


@pytest.mark.parametrize("flag, words", [("--layers", "No layers given"), ("--sites", "No sites given")])
@pytest.mark.parametrize("value", ["", " ", ","])
def test_an_empty_list_is_an_error(capsys, flag, words, value):
    assert words in one_error(capsys, "capture", "--model", "demo", "--input", "sample:star", flag, value)


@pytest.mark.parametrize("target, words", [("-1", "Class index must be >= 0, got -1."),
                                           ("9", "Class index 9 is out of range: the model has 8 outputs."),
                                           ("2.5", "Unknown target '2.5'")])
def test_cli_target_words(capsys, target, words):
    assert words in one_error(capsys, "capture", "--model", "demo", "--input", "sample:star", "--layers", "fc",
                              "--target", target)


def test_nan_input_is_a_warning_and_json_stays_valid(capsys, tmp_path):
    x = np.zeros((1, 3, 64, 64), np.float32)
    x[0, 0, 0, :3] = np.nan
    x[0, 1, 5, 5] = np.inf
    path = tmp_path / "x.npy"
    np.save(path, x)
    code, out, err = run_cli(capsys, "capture", "--model", "demo", "--input", str(path), "--layers", "conv1",
                             "--sites", "output", "--target", "sum", "--json")
    assert code == 0, err
    assert "warning: The model's input holds 3 NaN and 1 Inf of 12288 values" in err

    def refuse(token):
        raise AssertionError(f"{token} is not JSON")

    summary = json.loads(out, parse_constant=refuse)
    stats = summary["captures"]["conv1:output"]
    assert stats["nan"] > 0 and stats["inf"] > 0  # statistics are over the finite values, these counted
    assert summary["objective"] == "NaN"  # NaN + Inf + ... summed
    assert {p["probability"] for p in summary["predictions"]} == {"NaN"}
    assert "warning: The model's output holds 8 NaN of 8 values." in err
    assert any("input holds 3 NaN and 1 Inf" in w for w in summary["warnings"])


def test_the_files_written_are_the_files_printed(capsys, tmp_path):
    code, out, err = run_cli(capsys, "attribute", "--method", "saliency", "--model", "demo", "--input", "sample:star",
                             "--out", str(tmp_path / "H.NPY"))
    assert code == 0, err
    assert out.splitlines()[0].endswith(f"-> {tmp_path / 'H.NPY'}")
    assert np.load(tmp_path / "H.NPY").shape == (64, 64)
    code, out, err = run_cli(capsys, "capture", "--model", "demo", "--input", "sample:star", "--layers", "fc",
                             "--out", str(tmp_path / "Q.NPZ"))
    assert code == 0, err
    assert out.strip().splitlines()[-1].endswith(f"-> {tmp_path / 'Q.NPZ.npz'}")  # numpy's rule: .npz added
    assert sorted(p.name for p in tmp_path.iterdir()) == ["H.NPY", "Q.NPZ.npz"]
