"""Issue 53, item 6: `network-inspector graph --engine URL` writes what a local `graph` writes. A real `serve`
process on 127.0.0.1 and the command's own code (`main([...])`), each run once here and once with --engine: the
.json (node-link data and every node's values), the .svg and the .png byte for byte, and what it prints line for
line, CPU on both ends. The graph and its values are worked out on the engine; opened, laid out and drawn here."""

from __future__ import annotations

import json

import pytest

from inspector.cli.dispatch import main

# the same numbers need the same arithmetic: the server's one thread here too (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("threads_as_the_server")


@pytest.fixture(scope="module")
def served(remote, tmp_path_factory):
    with remote.engine_server(tmp_path_factory.mktemp("headless-graph")) as server:
        yield server


@pytest.fixture(scope="module")
def against(served):
    """A second checkpoint of the demo model (one weight moved), in the server's data root: read by both runs."""
    import torch
    from safetensors.torch import save_file

    from inspector.core import load_model

    state = {k: v.clone() for k, v in load_model("demo").module.state_dict().items()}
    g = torch.Generator().manual_seed(0)
    state["block.conv2.weight"] += 0.05 * torch.randn(state["block.conv2.weight"].shape, generator=g)
    path = served.root / "demo2.safetensors"
    save_file(state, str(path))
    return str(path)


def both(served, tmp_path, capsys, args: list[str], suffix: str) -> tuple[bytes, str]:
    """`graph ARGS` run here and on the engine: the bytes and what it printed, the two runs' asserted equal."""
    token = tmp_path / "token"
    token.write_text(served.token)
    here, there = tmp_path / f"here{suffix}", tmp_path / f"there{suffix}"
    assert main(["graph", *args, "--out", str(here)]) == 0
    said_here = capsys.readouterr().out
    assert main(["graph", *args, "--out", str(there), "--engine", served.url, "--token-file", str(token)]) == 0
    said_there = capsys.readouterr().out
    assert there.read_bytes() == here.read_bytes()
    assert said_there.replace(str(there), "OUT") == said_here.replace(str(here), "OUT")
    return here.read_bytes(), said_here


def test_the_whole_graph_as_json_with_a_runs_values_is_the_local_bytes(served, tmp_path, capsys):
    data, said = both(served, tmp_path, capsys, ["--model", "demo", "--input", "sample:star", "--values", "gradient",
                                                  "--edit", "relu1:output=scale(2)", "--target", "3"], ".json")
    graph = json.loads(data)
    assert "conv1" in [n["id"] for n in graph["nodes"]] and len(graph["edges"]) > 10
    assert graph["values"]["nodes"]["conv1"]["grad_l2"] > 0 and graph["values"]["target"]
    assert said.startswith(f"{len(graph['nodes'])} nodes, {len(graph['edges'])} edges")


def test_a_figure_with_a_group_open_and_edits_compared_is_the_local_svg(served, tmp_path, capsys):
    data, said = both(served, tmp_path, capsys, ["--model", "demo", "--input", "sample:star", "--open", "block",
                                                  "--values", "change", "--edit", "relu1:output=zero()"], ".svg")
    assert data.startswith(b"<svg") or b"<svg" in data[:200]
    assert "first divergent: " in said and "1 group open" in said


def test_the_default_input_and_leaves_drawn_as_png_are_the_local_bytes(served, tmp_path, capsys):
    data, said = both(served, tmp_path, capsys, ["--model", "demo", "--layers", "block"], ".png")
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and said.startswith("17 nodes, 16 edges, 0 groups open")  # block: one node


def test_divergence_against_a_checkpoint_on_the_engine_is_the_local_json(served, tmp_path, capsys, against):
    data, said = both(served, tmp_path, capsys, ["--model", "demo", "--input", "sample:star", "--groups", "1",
                                                  "--values", "change", "--against", against], ".json")
    values = json.loads(data)["values"]
    assert values["first_divergent"] and values["names"][1] == against
    assert f"first divergent: {values['first_divergent']}" in said


def test_what_graph_does_not_take_on_the_engine_is_said_before_connecting(served, tmp_path, capsys):
    assert main(["graph", "--model", "demo", "--out", str(tmp_path / "g.json"), "--engine", "http://nowhere"]) == 2
    assert capsys.readouterr().err == ("error: --engine is the address serve printed, ws://HOST:PORT or "
                                       "wss://HOST:PORT, not 'http://nowhere'.\n")
    assert main(["graph", "--model", "demo", "--out", str(tmp_path / "g.json"), "--token-file", "t"]) == 2
    assert "--token-file is the remote engine's token: add --engine URL." in capsys.readouterr().err
    assert not (tmp_path / "g.json").exists()


def test_an_input_outside_the_data_root_is_refused_and_nothing_is_written(served, tmp_path, capsys):
    import numpy as np

    outside = tmp_path / "x.npy"
    np.save(outside, np.zeros((1, 3, 64, 64), np.float32))
    token = tmp_path / "token"
    token.write_text(served.token)
    out = tmp_path / "g.json"
    assert main(["graph", "--model", "demo", "--input", str(outside), "--out", str(out), "--engine", served.url,
                 "--token-file", str(token)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"error: The input {outside} is outside this server's data root ({served.root}): refused.", err
    assert not out.exists()
