"""Issue 42 item 5: `network-inspector graph` writes the graph of one forward as SVG, PNG or JSON. Every command
runs in this process (cli_here.run_here: torch imported once); what each file holds is checked against the graph
and the values computed here, independently: nodes and edges from `record_graph`, boxes from the layout, statistics
and gradients from torch itself."""

from __future__ import annotations

import json
import re
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import torch
from cli_here import run_here
from PIL import Image

from inspector.core import load_input, load_model
from inspector.core.graph import Graph, record_graph
from inspector.core.graph.draw.figure import ALARM, FILL
from inspector.core.graph.draw.values import colour_at
from inspector.core.graph.layout.graph_layout import GraphLayout

SVG = "{http://www.w3.org/2000/svg}"
TINY = '''
import torch
from torch import nn


class Tiny(nn.Module):
    """Linear -> ReLU -> a residual add of the input."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.fc(x)) + x


class Broken(Tiny):
    """Its log takes only negative numbers: NaN from there on."""

    def forward(self, x):
        return self.act(torch.log(self.fc(x) - 10)) + x
'''
#: What each node of Tiny's graph says: its op and its path.
LABELS = {"input": ["input"], "fc": ["Linear", "fc"], "act": ["ReLU", "act"], "add()": ["add"], "output": ["output"]}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("graph")
    (folder / "tiny.py").write_text(TINY)
    np.save(folder / "x.npy", np.linspace(-1, 1, 8, dtype=np.float32)[None])
    return folder


def _graph(folder, *args: str, name: str = "Tiny", out: str = "tiny.svg"):
    """Run `graph` on tiny.py:NAME (seed 3) and return the file's path."""
    done = run_here("graph", "--model", f"{folder / 'tiny.py'}:{name}", "--seed", "3", "--input",
                    str(folder / "x.npy"), "--out", str(folder / out), *args)
    assert done.returncode == 0, done.stderr
    return folder / out


def _tiny(folder, name: str = "Tiny"):
    """The model and input the command loaded (the same seed gives the same weights)."""
    loaded = load_model(f"{folder / 'tiny.py'}:{name}", seed=3)
    return loaded, load_input(str(folder / "x.npy"), loaded.preprocess, loaded.input_shape)


def _svg(path):
    root = ET.parse(path).getroot()
    return root, {e.get("data-id"): e for e in root.iter(f"{SVG}rect") if e.get("class") == "node"}


def _hex(colour) -> str:
    return "#%02x%02x%02x" % tuple(colour)


def test_svg_draws_every_node_edge_and_shape(folder):
    root, nodes = _svg(_graph(folder))
    loaded, x = _tiny(folder)
    view = record_graph(loaded, x).closed()
    assert len(nodes) == len(view.nodes) == 5 and set(nodes) == set(LABELS)
    labels = {}
    for text in root.iter(f"{SVG}text"):
        if text.get("class") == "label":
            labels.setdefault(text.get("data-id"), []).append(text.text)
    assert labels == LABELS
    arrows = sorted(p.get("data-id") for p in root.iter(f"{SVG}polygon") if p.get("class") == "arrow")
    assert arrows == sorted(f"{e.source} -> {e.target}" for e in view.edges) and len(arrows) == 5
    shapes = {t.get("data-id"): t.text for t in root.iter(f"{SVG}text") if t.get("class") == "shape"}
    assert shapes == {"input": "1x8", "fc": "1x8", "act": "1x8", "add()": "1x8"}  # once per tensor
    assert [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "title"] == ["The graph of the forward"]
    assert {nodes[n].get("fill") for n in ("fc", "act")} == {_hex(FILL["module"])}


def test_png_size_follows_the_scale_and_boxes_are_where_the_layout_puts_them(folder):
    root, _ = _svg(_graph(folder))
    width, height = float(root.get("width")), float(root.get("height"))
    ox, oy = map(float, re.fullmatch(r"translate\(([\d.]+),([\d.]+)\)",
                                     root.find(f"{SVG}g[@class='graph']").get("transform")).groups())
    loaded, x = _tiny(folder)
    boxes = GraphLayout(record_graph(loaded, x)).layout().boxes
    for scale in (1.0, 2.5):
        picture = Image.open(_graph(folder, "--scale", str(scale), out=f"tiny{scale}.png")).convert("RGB")
        assert picture.size == (round(width * scale), round(height * scale))
        assert min(picture.size) >= 256
        for node, kind in (("fc", "module"), ("add()", "function"), ("input", "input")):
            box = boxes[node]
            inside = picture.getpixel((int((ox + box.x + 3) * scale), int((oy + box.y + box.height / 2) * scale)))
            beside = picture.getpixel((int((ox + box.x - 6) * scale), int((oy + box.y + box.height / 2) * scale)))
            assert np.abs(np.subtract(inside, FILL[kind])).max() <= 2, (node, scale)
            assert beside == (255, 255, 255)


def test_json_is_the_recorded_graph(folder):
    data = json.loads(_graph(folder, out="tiny.json").read_text())
    loaded, x = _tiny(folder)
    assert Graph.from_json(data) == record_graph(loaded, x)
    assert "values" not in data


def test_json_with_groups_is_that_view_of_the_graph(tmp_path):
    out = tmp_path / "demo.json"
    done = run_here("graph", "--model", "demo", "--groups", "closed", "--out", str(out))
    assert done.returncode == 0, done.stderr
    demo = load_model("demo")
    closed = record_graph(demo, demo.example_input()).closed()
    assert Graph.from_json(json.loads(out.read_text())) == closed and "block" in {n.id for n in closed.nodes}
    assert done.stdout.splitlines()[0] == f"{len(closed.nodes)} nodes, {len(closed.edges)} edges, 0 groups open -> {out}"


def _independent(folder):
    """Tiny's values computed with torch: each node's output and its gradient for the top class."""
    loaded, x = _tiny(folder)
    m = loaded.module
    x = x.clone().requires_grad_(True)
    fc = m.fc(x)
    act = torch.relu(fc)
    out = act + x
    for t in (fc, act, out):
        t.retain_grad()
    out[0, out.argmax()].backward()
    return {name: (t.detach(), t.grad) for name, t in (("input", x), ("fc", fc), ("act", act), ("add()", out))}


def test_values_in_json_equal_torchs(folder):
    data = json.loads(_graph(folder, "--values", "activation", out="tiny_values.json").read_text())
    values = data["values"]
    assert values["shown"] == "activation" and values["first_nonfinite"] is None
    for node, (t, grad) in _independent(folder).items():
        got = values["nodes"][node]
        assert got["mean_abs"] == pytest.approx(t.abs().mean().item(), rel=1e-5)
        assert got["l2"] == pytest.approx(t.norm().item(), rel=1e-5)
        assert got["zero_fraction"] == pytest.approx((t == 0).float().mean().item())
        assert got["grad_l2"] == pytest.approx(grad.norm().item(), rel=1e-5)


def test_svg_colours_nodes_by_their_values_with_a_colour_bar(folder):
    root, nodes = _svg(_graph(folder, "--values", "activation", out="tiny_values.svg"))
    means = {node: t.abs().mean().item() for node, (t, _) in _independent(folder).items()}
    means["output"] = means["add()"]
    lo, hi = min(means.values()), max(means.values())
    for node, mean in means.items():
        expected = colour_at((mean - lo) / (hi - lo))
        assert np.abs(np.subtract(list(bytes.fromhex(nodes[node].get("fill")[1:])), expected)).max() <= 1, node
    ticks = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "tick-label"]
    assert ticks == [f"{lo:.3g}", f"{(lo + hi) / 2:.3g}", f"{hi:.3g}"]
    assert sum(r.get("class") == "bar" for r in root.iter(f"{SVG}rect")) > 10


def test_gradient_values_make_edges_as_wide_as_their_gradient(folder):
    root, _ = _svg(_graph(folder, "--values", "gradient", out="tiny_grad.svg"))
    grads = {node: g.norm().item() for node, (_, g) in _independent(folder).items()}
    widths = {e.get("data-id"): float(e.get("stroke-width")) for e in root.iter(f"{SVG}polyline")
              if e.get("class") == "edge"}
    lo, hi = min(grads.values()), max(grads.values())
    for edge, width in widths.items():
        source = edge.split(" -> ")[0]
        assert width == pytest.approx(1 + 4 * (grads[source] - lo) / (hi - lo), abs=0.01), edge


def test_first_nan_is_red_and_its_path_outlined(folder):
    root, nodes = _svg(_graph(folder, "--values", "nan", name="Broken", out="broken.svg"))
    assert nodes["log()"].get("fill") == _hex(ALARM)
    outlined = {n for n, rect in nodes.items() if rect.get("stroke") == _hex(ALARM)}
    assert outlined == {"input", "fc", "sub()", "log()"}
    red = {e.get("data-id") for e in root.iter(f"{SVG}polyline") if e.get("stroke") == _hex(ALARM)}
    assert red == {"input -> fc", "fc -> sub()", "sub() -> log()"}
    notes = " ".join(t.text for t in root.iter(f"{SVG}text") if t.get("class") == "note")
    assert "log(), the first node whose output holds NaN or Inf" in notes


def test_resnet18_groups_1_opens_the_top_level_groups(tmp_path):
    out = tmp_path / "r18.svg"
    done = run_here("graph", "--model", "resnet18", "--seed", "1", "--groups", "1", "--out", str(out))
    assert done.returncode == 0, done.stderr
    root, nodes = _svg(out)
    frames = {r.get("data-id") for r in root.iter(f"{SVG}rect") if r.get("class") == "frame"}
    assert frames == {"layer1", "layer2", "layer3", "layer4"}
    assert {"layer1.0", "layer1.1", "layer4.1", "conv1", "fc"} <= set(nodes) and "layer1" not in nodes
    titles = [t.text.split() for t in root.iter(f"{SVG}text") if t.get("class") == "frame-title"]
    assert ["layer1", "(Sequential)"] in titles
    unknown = run_here("graph", "--model", "resnet18", "--seed", "1", "--open", "layer1,layer9", "--out", str(out))
    assert unknown.returncode == 2
    assert unknown.stderr.splitlines()[-1].startswith("error: --open: this model has no module 'layer9' (it opens")
    leaf = run_here("graph", "--model", "resnet18", "--seed", "1", "--open", "layer1.0.conv1", "--out", str(out))
    assert leaf.returncode == 2 and "'layer1.0.conv1' is a leaf module (one node), not a group" in leaf.stderr


def test_a_torchscript_program_is_one_node_and_says_so_in_the_foot(folder):
    loaded, x = _tiny(folder)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.jit.trace is deprecated
        torch.jit.trace(loaded.module, x).save(str(folder / "tiny.pt"))
    out = folder / "script.svg"
    done = run_here("graph", "--model", str(folder / "tiny.pt"), "--trust", "--input", str(folder / "x.npy"),
                    "--out", str(out))
    assert done.returncode == 0, done.stderr
    root, nodes = _svg(out)
    assert set(nodes) == {"input", "(model)", "output"}
    notes = " ".join(t.text for t in root.iter(f"{SVG}text") if t.get("class") == "note")
    assert notes == "TorchScript runs compiled and takes no hooks: the model is one node."
    assert "note: TorchScript runs compiled and takes no hooks: the model is one node." in done.stdout
