"""`network-inspector --self-test`: from source in a subprocess, and its failure reporting in-process."""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from inspector import selftest
from inspector.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]
SELFTEST_MODULES = ["inspector.selftest", "inspector.selftest.base", "inspector.selftest.steps",
                    "inspector.selftest.qt_steps", "inspector.selftest.sandbox", "inspector.selftest.runner",
                    "inspector.selftest.device_steps"]


def test_the_package_holds_every_module_and_no_old_module_is_left():
    on_disk = {p.stem for p in (ROOT / "inspector" / "selftest").glob("*.py")}
    assert on_disk == {"__init__", "__main__", "base", "steps", "qt_steps", "device_steps", "sandbox", "runner"}
    assert not (ROOT / "inspector" / "selftest.py").exists() and not (ROOT / "inspector" / "selftest_qt.py").exists()
    for path in (ROOT / "inspector" / "selftest").glob("*.py"):
        assert len(path.read_text(encoding="utf-8").splitlines()) < 300, path.name


@pytest.mark.parametrize("module", SELFTEST_MODULES)
def test_each_module_imports_on_its_own_without_torch_or_qt(module):
    code = (f"import sys, importlib\n"
            f"importlib.import_module({module!r})\n"
            "heavy = [m for m in ('torch', 'PySide6', 'pyqtgraph') if m in sys.modules]\n"
            "assert not heavy, heavy\n"
            "print('imported')\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "imported", proc.stderr


def test_submodules_never_import_the_package_itself():
    """No cycle: the steps take what they share from `base`, never from the package's __init__."""
    for path in (ROOT / "inspector" / "selftest").glob("*.py"):
        if path.stem in ("__init__", "__main__"):
            continue
        text = path.read_text(encoding="utf-8")
        assert "from inspector.selftest import" not in text and "from . import" not in text, path.name
        assert "import inspector.selftest\n" not in text, path.name


def test_steps_list_names_each_step_function_once():
    from inspector.selftest import qt_steps, steps

    functions = {f for _, f in selftest.STEPS}
    assert len(functions) == len(selftest.STEPS) == 13
    assert {selftest.step_mosaic, selftest.step_app_window} == {qt_steps.step_mosaic, qt_steps.step_app_window}
    assert all(getattr(steps, f.__name__, None) is f or getattr(qt_steps, f.__name__, None) is f for f in functions)


def test_python_dash_m_selftest_runs_one_step(tmp_path):
    report = tmp_path / "only.json"
    proc = subprocess.run([sys.executable, "-m", "inspector.selftest", "--only", "environment", "--json",
                           str(report)], cwd=ROOT, capture_output=True, text=True, encoding="utf-8", timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(report.read_text(encoding="utf-8"))
    assert [s["name"] for s in data["steps"]] == ["environment"] and data["ok"] is True


def test_self_test_from_source_passes_every_step(tmp_path):
    report = tmp_path / "x.json"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONIOENCODING": "utf-8"}
    proc = subprocess.run([sys.executable, "-m", "inspector", "--self-test", "--json", str(report)],
                          cwd=ROOT, env=env, capture_output=True, text=True, encoding="utf-8", timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["ok"] is True
    names = [s["name"] for s in data["steps"]]
    assert names == [name for name, _ in selftest.STEPS]
    assert all(s["ok"] and s["error"] is None and s["seconds"] >= 0 for s in data["steps"]), data["steps"]
    for name in names:
        assert any(line.startswith("PASS") and f" {name} " in line for line in proc.stdout.splitlines()), name
    assert data["info"]["captures"] > 0 and data["info"]["samples"] > 0
    # issue 25, item 16: nothing in the terminal that is not the user's business
    assert "nanobind" not in proc.stderr and "propagateSizeHints" not in proc.stderr, proc.stderr[:2000]


def _fine(ctx: selftest.Context) -> None:
    ctx.info["fine"] = True


def _broken(ctx: selftest.Context) -> None:
    selftest.check(False, "the broken step broke")


def _crashing(ctx: selftest.Context) -> None:
    raise RuntimeError("unexpected")


def test_a_failing_step_fails_the_run_and_is_named(tmp_path):
    out = io.StringIO()
    code = selftest.run_selftest(tmp_path / "r.json", [("fine", _fine), ("broken", _broken), ("after", _fine)],
                                 out=out)
    assert code != 0
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert data["ok"] is False and data["failed"] == ["broken"]
    assert [(s["name"], s["ok"]) for s in data["steps"]] == [("fine", True), ("broken", False), ("after", True)]
    assert "the broken step broke" in data["steps"][1]["error"]
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("PASS  fine") and lines[1].startswith("FAIL  broken") and "broke" in lines[1]
    assert "FAILED: broken" in lines[-1]


def test_cli_exit_code_and_json_name_the_failing_step(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(selftest, "STEPS", [("fine", _fine), ("crashing", _crashing)])
    report = tmp_path / "sub" / "r.json"
    assert cli_main(["--self-test", "--json", str(report)]) == 1
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["failed"] == ["crashing"]
    assert data["steps"][1]["error"].startswith("RuntimeError: unexpected")
    assert "FAIL  crashing" in capsys.readouterr().out


def test_only_passing_steps_exit_zero(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(selftest, "STEPS", [("fine", _fine)])
    assert cli_main(["--debug", "--self-test"]) == 0
    assert "self-test passed" in capsys.readouterr().out


def test_sandbox_is_non_ascii_offline_and_restored(tmp_path):
    cwd, torch_home = os.getcwd(), os.environ.get("TORCH_HOME")
    seen = {}

    def look(ctx: selftest.Context) -> None:
        seen["cwd"] = Path.cwd()
        seen["root"] = ctx.root
        with pytest.raises(OSError, match=selftest.OFFLINE_MESSAGE):
            socket.create_connection(("192.0.2.1", 80), timeout=1)
        selftest.step_environment(ctx)

    assert selftest.run_selftest(None, [("look", look)], out=io.StringIO()) == 0
    assert seen["cwd"] == seen["root"] and not str(seen["root"]).isascii()
    assert not seen["root"].exists()
    assert os.getcwd() == cwd and os.environ.get("TORCH_HOME") == torch_home
    assert socket.create_connection is not None and socket.getaddrinfo.__module__ == "socket"


def test_a_step_that_kills_the_process_is_named_in_the_report(tmp_path):
    report = tmp_path / "r.json"
    code = ("import os, sys\n"
            "from inspector import selftest\n"
            "steps = [('fine', lambda ctx: None), ('dies', lambda ctx: os._exit(3)), ('never', lambda ctx: None)]\n"
            f"selftest.run_selftest({str(report)!r}, steps)\n")
    env = {**os.environ, "TMPDIR": str(tmp_path)}  # the dead process cannot remove its sandbox folder
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 3
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["ok"] is False and data["failed"] == ["dies"]
    assert [s["name"] for s in data["steps"]] == ["fine", "dies"]
    assert "process died" in data["steps"][1]["error"]


def test_device_steps_run_every_engine_path_and_agree_with_the_cpu(tmp_path, monkeypatch):
    """The steps `--self-test --device cuda` adds, run here with the CPU as the device (no GPU in CI):
    capture with edits, attribution, the atlas, diff and the app offscreen all pass."""
    from inspector.selftest.device_steps import device_steps

    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    report = tmp_path / "report.json"
    assert selftest.run_selftest(report, device_steps("cpu"), out=out) == 0, out.getvalue()
    names = [step["name"] for step in json.loads(report.read_text())["steps"]]
    assert names == ["cpu_capture", "cpu_attribution", "cpu_atlas", "cpu_diff", "cpu_app"]


def test_self_test_on_a_device_this_machine_lacks_says_so_in_one_line(capsys, monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert selftest.main(["--self-test", "--device", "cuda"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: no CUDA device: this machine has none")
    assert selftest.main(["--self-test", "--device", "tpu"]) == 2
    assert "unknown device 'tpu'" in capsys.readouterr().err


@pytest.mark.numeric
def test_a_detectors_maps_are_compared_across_kernels_in_relative_l2():
    """A GPU's detector maps are checked against the CPU's as float32 against float64 must be: on an H200 the demo
    detector's saliency of box:0 differed from the CPU's at 442 pixels by up to 1.2% of its peak (the step failed),
    and so does this CPU's float32 from float64 (max-pooling's ties on the flat shapes break elsewhere). The check
    takes those and still refuses another box's map or another image's."""
    import copy

    import numpy as np
    import torch

    from inspector.core import load_input, load_model
    from inspector.core.attribution import attribute
    from inspector.selftest.device_steps import _near

    detector = load_model("demo-detector")
    image = load_input("sample:detect_four_shapes", detector.preprocess, detector.input_shape)
    wide = copy.deepcopy(detector)
    wide.module.double()
    for method, options in (("saliency", None), ("ig", {"steps": 4})):
        exact = attribute(wide, image.double(), method, "box:0", None, options).map
        threads = torch.get_num_threads()
        try:
            for count in (1, 2):
                torch.set_num_threads(count)
                found = attribute(detector, image, method, "box:0", None, options).map
                assert _near(found, exact), (method, count)
        finally:
            torch.set_num_threads(threads)
        assert not _near(attribute(detector, image, method, "box:1", None, options).map, exact)
        assert not _near(attribute(detector, image.flip(-1), method, "box:0", None, options).map, exact)
    assert not _near(np.ones((2, 2)), np.ones((2, 3)))
