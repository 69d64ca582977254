"""Issue 42 item 5, the rest: `graph --layers` (which module calls are nodes) and `graph --values change` (two runs
compared node by node: --edit, edited vs baseline; --against, a second checkpoint). The numbers are checked against
torch run here by hand and against `diff --json`, another command's own computation."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import torch
from cli_here import run_here
from safetensors.torch import save_file

from inspector.core import load_input, load_model
from inspector.core.graph.draw.figure import DIVERGENT

SVG = "{http://www.w3.org/2000/svg}"
TINY = '''
from torch import nn


class Tiny(nn.Module):
    """Linear -> ReLU -> a residual add of the input."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.fc(x)) + x
'''


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("change")
    (folder / "tiny.py").write_text(TINY)
    np.save(folder / "x.npy", np.linspace(-1, 1, 8, dtype=np.float32)[None])
    demo = load_model("demo").module.state_dict()
    perturbed = {k: v.clone() for k, v in demo.items()}
    g = torch.Generator().manual_seed(0)
    perturbed["block.conv2.weight"] += 0.05 * torch.randn(perturbed["block.conv2.weight"].shape, generator=g)
    save_file(perturbed, str(folder / "demo2.safetensors"))
    return folder


def _json(*args: str, out) -> dict:
    done = run_here("graph", *args, "--out", str(out))
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text()), done.stdout


def test_edit_change_is_the_relative_change_worked_out_by_hand(folder):
    data, said = _json("--model", f"{folder / 'tiny.py'}:Tiny", "--seed", "3", "--input", str(folder / "x.npy"),
                       "--values", "change", "--edit", "fc:output=scale(2)", out=folder / "edit.json")
    values = data["values"]
    loaded = load_model(f"{folder / 'tiny.py'}:Tiny", seed=3)
    x = load_input(str(folder / "x.npy"), loaded.preprocess, loaded.input_shape)
    with torch.no_grad():
        act = torch.relu(loaded.module.fc(x))
    add = (act.norm() / (act + x).norm()).item()  # (2 relu(fc) + x) - (relu(fc) + x) = relu(fc), by hand
    assert values["shown"] == "change" and values["names"] == ["baseline", "edited"]
    assert values["change"] == pytest.approx({"input": 0.0, "fc": 1.0, "act": 1.0, "add()": add, "output": add},
                                             rel=1e-5, abs=1e-7)
    assert values["first_divergent"] == "fc" and "first divergent: fc (relative L2 1, above 0.001)" in said


def test_against_divergence_equals_diff_json_and_the_first_divergent_is_outlined(folder):
    common = ("--model", "demo", "--input", "sample:star")
    weights = str(folder / "demo2.safetensors")
    data, said = _json(*common, "--values", "change", "--against", weights, out=folder / "against.json")
    done = run_here("diff", *common, "--against", weights, "--json")
    assert done.returncode == 0, done.stderr
    diff = json.loads(done.stdout)
    rows = {r["key"]: r["rel_l2"] for r in diff["rows"] if ":grad" not in r["key"]}
    change = data["values"]["change"]
    # diff's key per node: LAYER:output, the second call's LAYER:output#1, the model's output
    keyed = {k.replace("#", ":output#") if "#" in k else k if k == "output" else f"{k}:output": v
             for k, v in change.items() if k != "input" and "(" not in k}
    assert set(keyed) == set(rows) and len(rows) == 21
    for key, rel in rows.items():
        assert keyed[key] == pytest.approx(rel, rel=1e-5, abs=1e-7), key
    assert rows["block.conv2:output"] > 0.1 and rows["block.relu:output"] == 0  # the perturbed weight's reach
    assert f"{data['values']['first_divergent']}:output" == diff["first_divergent"] == "block.conv2:output"
    assert "first divergent: block.conv2 (relative L2" in said
    svg = folder / "against.svg"
    assert run_here("graph", *common, "--values", "change", "--against", weights, "--groups", "open",
                    "--out", str(svg)).returncode == 0
    outlined = [(r.get("data-id"), r.get("stroke")) for r in ET.parse(svg).getroot().iter(f"{SVG}rect")
                if r.get("class") == "outline"]
    assert outlined == [("block.conv2", "#%02x%02x%02x" % DIVERGENT)]
    closed = folder / "closed.svg"  # the block closed: the group holding block.conv2 is outlined
    assert run_here("graph", *common, "--values", "change", "--against", weights, "--out", str(closed)).returncode == 0
    assert [r.get("data-id") for r in ET.parse(closed).getroot().iter(f"{SVG}rect")
            if r.get("class") == "outline"] == ["block"]


DEMO_TOP = ["input", "conv1", "bn1", "relu1", "pool1", "conv2", "bn2", "relu2", "pool2", "block", "conv3", "bn3",
            "relu3", "pool", "flatten", "fc", "output"]


@pytest.mark.parametrize("layers", ["block", "type:ResidualBlock", "bl*k"])
def test_layers_names_the_modules_drawn_as_one_node(folder, layers):
    data, _ = _json("--model", "demo", "--layers", layers, out=folder / "layers.json")
    assert [n["id"] for n in data["nodes"]] == DEMO_TOP and data["groups"] == []
    assert {n["id"]: n["kind"] for n in data["nodes"]}["block"] == "module"


def test_layers_all_is_every_leaf_and_an_unknown_layer_is_one_line(folder):
    data, _ = _json("--model", "demo", "--layers", "all", out=folder / "all.json")
    ids = [n["id"] for n in data["nodes"]]
    assert "block" not in ids and {"block.conv1", "block.relu", "block.relu#1", "block.add()"} <= set(ids)
    done = run_here("graph", "--model", "demo", "--layers", "blok", "--out", str(folder / "x.json"))
    assert done.returncode == 2 and done.stderr.splitlines()[-1].startswith("error: No layer named 'blok'. Did you "
                                                                            "mean: block,")
