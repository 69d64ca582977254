"""Issue 53, item 6: the headless commands on a remote engine write what a local run writes. A real `serve`
process on 127.0.0.1 and the command's own code (`main([...])`), each run once here and once with --engine: the
.npz, its manifest and the --json statistics byte for byte (the timings apart), CPU on both ends."""

from __future__ import annotations

import json

import pytest

from inspector.cli.dispatch import main

# the same numbers need the same arithmetic: the server's one thread here too (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("threads_as_the_server")


@pytest.fixture(scope="module")
def served(remote, tmp_path_factory):
    with remote.engine_server(tmp_path_factory.mktemp("headless")) as server:
        yield server


def without_timings(text: str) -> dict:
    data = json.loads(text)
    data.pop("timings", None)
    return data


def test_capture_on_the_engine_writes_the_bytes_a_local_capture_writes(served, tmp_path, capsys):
    common = ["capture", "--model", "demo", "--input", "sample:star", "--layers", "conv1,block.*",
              "--sites", "output,grad_output,params", "--edit", "relu1:grad_input=clamp(min=0)", "--target", "3",
              "--input-grad", "--manifest", "--json"]
    assert main([*common, "--out", str(tmp_path / "here.npz")]) == 0
    here = capsys.readouterr().out
    token = tmp_path / "token"
    token.write_text(served.token)
    assert main([*common, "--out", str(tmp_path / "there.npz"), "--engine", served.url,
                 "--token-file", str(token)]) == 0
    there = capsys.readouterr().out
    assert (tmp_path / "here.npz").read_bytes() == (tmp_path / "there.npz").read_bytes()
    assert without_timings(here) == without_timings(there)
    manifest_here = json.loads((tmp_path / "here.json").read_text())
    manifest_there = json.loads((tmp_path / "there.json").read_text())
    assert manifest_here == manifest_there and len(manifest_here["keys"]) > 10


def test_what_the_engine_does_not_take_is_said_before_connecting(served, tmp_path, capsys):
    assert main(["capture", "--model", "demo", "--input", "sample:star", "--session", str(tmp_path / "s.json"),
                 "--engine", served.url]) == 2
    assert "--session runs on this machine only" in capsys.readouterr().err
    assert main(["capture", "--model", "demo", "--input", "sample:star", "--token-file", "t"]) == 2
    assert "--token-file is the remote engine's token: add --engine URL." in capsys.readouterr().err
    assert main(["capture", "--model", "demo", "--input", "sample:star", "--engine", "http://nowhere"]) == 2
    assert capsys.readouterr().err == ("error: --engine is the address serve printed, ws://HOST:PORT or "
                                       "wss://HOST:PORT, not 'http://nowhere'.\n")


def test_a_wrong_token_is_one_line_and_nothing_is_written(served, tmp_path, capsys):
    token = tmp_path / "token"
    token.write_text("not-the-token")
    out = tmp_path / "x.npz"
    assert main(["capture", "--model", "demo", "--input", "sample:star", "--out", str(out), "--engine", served.url,
                 "--token-file", str(token)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {served.url} refused the connection (401)") and "\n" not in err
    assert not out.exists()


def test_diff_on_the_engine_writes_the_bytes_a_local_diff_writes(served, tmp_path, capsys):
    """Two random resnet18s (seeds 1 and 2), an edit on both: the .npz (first/, second/, diff/ of every key) and
    the --json report byte for byte; without --json, the table and the seed notes line for line."""
    token = tmp_path / "token"
    token.write_text(served.token)
    remote = ["--engine", served.url, "--token-file", str(token)]
    common = ["diff", "--model", "resnet18", "--weights", "random", "--seed", "1", "--against-model", "resnet18",
              "--against-weights", "random", "--against-seed", "2", "--input", "sample:star", "--layers",
              "layer1.*", "--edit", "relu:output=scale(2)"]
    assert main([*common, "--json", "--out", str(tmp_path / "here.npz")]) == 0
    here = capsys.readouterr().out
    assert main([*common, "--json", "--out", str(tmp_path / "there.npz"), *remote]) == 0
    assert capsys.readouterr().out == here and '"first_divergent"' in here
    assert (tmp_path / "here.npz").read_bytes() == (tmp_path / "there.npz").read_bytes()
    assert main(common) == 0
    table = capsys.readouterr().out
    assert main([*common, *remote]) == 0
    assert capsys.readouterr().out == table and "second model: " in table


@pytest.mark.parametrize("method, more, out", [
    ("gradcam", ["--metrics", "deletion,insertion", "--metric-steps", "8"], "map.png"),
    ("gradcam", ["--metrics", "deletion", "--metric-steps", "8", "--baseline", "blur"], "map.npy"),
    ("ig", ["--steps", "16", "--metrics", "deletion", "--metric-steps", "8"], "map.npy"),
    ("saliency", ["--sign", "positive", "--target", "3"], "map.png"),
    ("saliency", ["--metrics", "deletion,road", "--protocol", "rise2018", "--road-seed", "5", "--road-percentages",
                  "30,70"], "map.npy"),  # the protocol and ROAD's settings cross to the engine and back
])
def test_attribute_on_the_engine_writes_the_bytes_a_local_attribute_writes(served, tmp_path, capsys, method, more,
                                                                             out):
    """The map (.npy, or the overlay .png on the input the engine sent back) byte for byte, and the --json
    report equal (its seconds apart: the engine's are its own)."""
    token = tmp_path / "token"
    token.write_text(served.token)
    common = ["attribute", "--model", "demo", "--input", "sample:star", "--method", method, *more, "--json"]
    (tmp_path / "here").mkdir()
    (tmp_path / "there").mkdir()
    assert main([*common, "--out", str(tmp_path / "here" / out)]) == 0
    here = json.loads(capsys.readouterr().out)
    assert main([*common, "--out", str(tmp_path / "there" / out), "--engine", served.url,
                 "--token-file", str(token)]) == 0
    there = json.loads(capsys.readouterr().out)
    assert (tmp_path / "here" / out).read_bytes() == (tmp_path / "there" / out).read_bytes()
    for report in (here, there):
        report.pop("out")
    assert here == there and here["method"] == method
