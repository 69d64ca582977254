"""Ctrl-C at any moment: exit 130 and one line, never a traceback or 'Exception ignored' (real SIGINT)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest


@pytest.fixture(autouse=True)
def python_default_sigint():
    """Each test starts with Python's own Ctrl-C handler and gives back what it found: the in-process tests
    assert that the dispatcher puts back the caller's handler, which is then Python's default (a full CI run
    found SIG_IGN left by a test that ran before in the same worker)."""
    found = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, found)


def _start(*argv: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "inspector", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})


@pytest.mark.parametrize("after_s", [0.3, 2.5, 4.0])
def test_two_ctrl_c_within_milliseconds_end_in_one_line(tmp_path, after_s):
    """While Python loads, while the model loads or runs, or as it finishes: two SIGINTs 2 ms apart."""
    process = _start("capture", "--model", "demo", "--input", "sample:star", "--layers", "all",
                     "--sites", "output,grad_output,grad_input", "--out", str(tmp_path / "c.npz"))
    time.sleep(after_s)
    for _ in range(2):
        process.send_signal(signal.SIGINT)
        time.sleep(0.002)
    out, err = process.communicate(timeout=120)
    _assert_one_line_or_done(process.returncode, err)


def test_ctrl_c_burst_while_the_commands_import_numpy_is_one_line(tmp_path):
    """A burst of SIGINTs from the moment the commands are halfway through importing numpy (Python's
    -X importtime says when): one fresh-clone CI run had its second SIGINT land while the first one's handler
    imported the CLI again, and printed two tracebacks."""
    process = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "inspector", "samples"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    said, halfway = [], threading.Event()

    def read():
        for line in process.stderr:
            if not line.startswith("import time:"):
                said.append(line)
            elif "numpy.lib._stride_tricks_impl" in line:
                halfway.set()

    reader = threading.Thread(target=read)
    reader.start()
    assert halfway.wait(60), "numpy was never imported"
    for _ in range(200):
        if process.poll() is not None:
            break
        process.send_signal(signal.SIGINT)
        time.sleep(0.002)
    process.wait(60)
    reader.join(60)
    assert process.returncode == 130 and "".join(said).strip().splitlines() == ["interrupted"], "".join(said)


def _assert_one_line_or_done(returncode: int, err: str) -> None:
    assert "Traceback" not in err and "Exception ignored" not in err, err
    if returncode == 0:  # it had finished before the signals came: nothing else was said
        assert err.strip() == ""
    else:
        assert returncode == 130 and err.strip().splitlines() == ["interrupted"], err


def test_ctrl_c_after_an_atlas_is_written_still_exits_cleanly(tmp_path):
    """A SIGINT during the shutdown after the atlas was written: exit 0, the atlas whole."""
    import numpy as np
    from PIL import Image

    data = tmp_path / "data"
    data.mkdir()
    for i in range(4):
        Image.fromarray(np.full((32, 32, 3), 40 * i, np.uint8)).save(data / f"{i}.png")
    process = _start("atlas", "--model", "demo", "--data", str(data), "--layers", "conv1", "--top", "2",
                     "--out", str(tmp_path / "atlas"))
    line = process.stdout.readline()  # printed once atlas.json is written, just before the shutdown
    assert "atlas of 4 images" in line
    process.send_signal(signal.SIGINT)
    time.sleep(0.002)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 0 and "Traceback" not in err and "Exception ignored" not in err, err
    assert (tmp_path / "atlas" / "atlas.json").is_file()


def test_ctrl_c_while_an_import_makes_a_class_is_one_line(monkeypatch, capsys):
    """Python 3.11 wraps a KeyboardInterrupt raised in a class's __set_name__ (a dataclass field while torch
    imports: one fresh-clone CI run caught the SIGINT there) in a RuntimeError: still an interrupt."""
    from inspector.cli import dispatch
    from inspector.core.common.interrupts import interrupted

    class Field:
        def __set_name__(self, owner, name):
            raise KeyboardInterrupt  # what the SIGINT handler raises, at this moment

    def run(_args):
        type("Component", (), {"input_placeholders": Field()})
        return 0

    monkeypatch.setattr(dispatch.COMMANDS["samples"], "run", run)
    assert dispatch.main(["samples"]) == 130
    assert capsys.readouterr().err == "interrupted\n"
    assert interrupted(RuntimeError("x")) is False


def _sigint_inside_a_weakref_callback() -> None:
    """A SIGINT whose handler runs inside a weakref callback, as one fresh-clone CI run had it (importlib's
    module-lock callback): Python can only report what that callback raises, as "Exception ignored"."""
    import weakref

    class Thing:
        pass

    def callback(_ref):
        signal.raise_signal(signal.SIGINT)
        for _ in range(100):  # bytecodes for the handler to run between
            pass

    thing = Thing()
    ref = weakref.ref(thing, callback)
    del thing
    assert ref() is None


def test_ctrl_c_swallowed_by_a_weakref_callback_is_kept_not_printed(monkeypatch, capsys):
    """The swallowed Ctrl-C is neither printed nor lost: the next Ctrl-C raises again (a handler that had
    'raised' ignored every later one, so the command ran on), and where the command ends it says so."""
    from inspector.cli import dispatch

    hook = sys.unraisablehook  # pytest's, which fails the test on what it is handed

    def run(_args):
        _sigint_inside_a_weakref_callback()
        return 0

    monkeypatch.setattr(dispatch.COMMANDS["samples"], "run", run)
    assert dispatch.main(["samples"]) == 130
    assert capsys.readouterr().err == "interrupted\n"

    def run_and_press_again(_args):
        _sigint_inside_a_weakref_callback()
        signal.raise_signal(signal.SIGINT)
        for _ in range(100):
            pass
        raise AssertionError("the second Ctrl-C was ignored")

    monkeypatch.setattr(dispatch.COMMANDS["samples"], "run", run_and_press_again)
    assert dispatch.main(["samples"]) == 130
    assert capsys.readouterr().err == "interrupted\n"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler and sys.unraisablehook is hook

    def run_and_fail(_args):  # the swallowed Ctrl-C, then an error it may have caused: said as the interrupt
        from inspector.core.common.errors import SpecError

        _sigint_inside_a_weakref_callback()
        raise SpecError("half-loaded")

    monkeypatch.setattr(dispatch.COMMANDS["samples"], "run", run_and_fail)
    assert dispatch.main(["samples"]) == 130
    assert capsys.readouterr().err == "interrupted\n"


def test_ctrl_c_while_gauss_legendre_nodes_are_found_stops_at_once(tmp_path):
    """20,000 Gauss-Legendre steps: their nodes take seconds to find (leggauss took minutes and Ctrl-C did not
    stop it); a SIGINT once the command has started them ends it within seconds, in one line."""
    process = _start("attribute", "--model", "demo", "--input", "sample:star", "--method", "ig", "--steps", "20000",
                     "--out", str(tmp_path / "o.npy"))
    time.sleep(4.0)
    process.send_signal(signal.SIGINT)
    sent = time.monotonic()
    out, err = process.communicate(timeout=120)
    assert time.monotonic() - sent < 5, "Ctrl-C did not stop the node search"
    assert process.returncode == 130 and err.strip().splitlines() == ["interrupted"], err
    assert not (tmp_path / "o.npy").exists()
