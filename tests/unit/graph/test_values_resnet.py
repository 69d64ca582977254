"""The values on torchvision's resnet18 (random weights): every node and edge of its graph gets them, a closed
group's are those of the node that makes what it returns, and every module node's numbers equal the statistics
of the engine's own captures of that call (output and grad_output)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torchvision

from inspector.core.graph import record_graph
from inspector.core.graph.values.entry import compare_edits, graph_values
from inspector.core.common.keys import Key
from inspector.core.engine.runner import run
from inspector.core.runspec import RunSpec


@pytest.fixture(scope="module")
def resnet18():
    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None).eval()
    x = torch.randn(1, 3, 64, 64)
    graph = record_graph(model, x)
    return model, x, graph, graph_values(model, x, graph)


def test_every_node_and_edge_gets_values(resnet18):
    _, _, graph, values = resnet18
    assert set(values.nodes) == {n.id for n in graph.nodes}
    assert all(v.grad_l2 is not None and v.grad_l2 > 0 for v in values.nodes.values())
    assert len(values.edges) == len(graph.edges) and all(g is not None for g in values.edges)
    assert values.first_nonfinite is None and values.gradients


def test_a_closed_group_takes_the_values_of_the_node_that_makes_its_output(resnet18):
    _, _, graph, values = resnet18
    view = graph.closed()
    shown = values.for_view(view)
    assert set(shown.nodes) == {n.id for n in view.nodes}
    (maker, index, key), = graph.group("layer1").outputs
    assert key == "layer1:output" and maker == "layer1.1.relu#1"
    assert shown.nodes["layer1"] == values.tensors[(maker, index)] == values.nodes[maker]
    for edge, grad in zip(view.edges, shown.edges):
        if edge.source == "layer1":
            assert grad == values.nodes[maker].grad_l2
    opened = values.for_view(graph.closed(["layer2"]))
    assert opened.nodes["layer2.0"] == values.nodes[graph.group("layer2.0").outputs[0][0]]


def test_module_nodes_equal_the_engine_s_captures(resnet18):
    model, x, graph, values = resnet18
    modules = sorted({n.path for n in graph.nodes if n.kind == "module"})
    result = run(model, x, RunSpec.make(modules, ["output", "grad_output"]))
    checked = 0
    for node in graph.nodes:
        if node.kind != "module":
            continue
        got = values.nodes[node.id]
        out = result.captures[str(Key(node.path, "output", node.call))]
        grad = result.captures[str(Key(node.path, "grad_output", node.call))]
        assert got.l2 == pytest.approx(out.stats.l2, rel=1e-5), node.id
        assert got.zero_fraction == pytest.approx(out.stats.zero_fraction), node.id
        assert got.mean_abs == pytest.approx(float(np.abs(out.array).mean()), rel=1e-5), node.id
        assert (got.nan, got.inf) == (out.stats.nan, out.stats.inf)
        assert got.grad_l2 == pytest.approx(grad.stats.l2, rel=1e-4, abs=1e-12), node.id
        checked += 1
    assert checked == 4 + 8 * 6 + 3 * 2 + 2  # stem, 8 blocks (ReLU called twice), 3 downsamples, pool and fc


def test_an_edit_in_layer2_reaches_only_what_comes_after_it(resnet18):
    model, x, graph, _ = resnet18
    diff = compare_edits(model, x, graph, ["layer2.0.conv1:output=scale(0.5)"])
    order = [n.id for n in graph.nodes]
    at = order.index("layer2.0.conv1")
    assert all(diff.change[n] == 0 for n in order[:at])
    assert diff.change["layer2.0.conv1"] == pytest.approx(0.5)
    assert diff.first_divergent == "layer2.0.conv1" and diff.change["fc"] > 0
    assert diff.change["layer2.0.downsample.0"] == 0  # the other branch


def test_a_detector_gets_values_at_every_node_and_says_when_its_objective_is_empty():
    torch.manual_seed(0)
    model = torchvision.models.detection.fasterrcnn_mobilenet_v3_large_320_fpn(weights=None,
                                                                               weights_backbone=None).eval()
    x = torch.rand(1, 3, 320, 320)
    graph = record_graph(model, x)
    values = graph_values(model, x, graph)
    assert set(values.nodes) == {n.id for n in graph.nodes}
    assert values.gradients
    if values.target == "auto":  # random weights: nothing above the score threshold
        assert any("detected nothing" in note for note in values.notes)


def test_the_records_are_torch_free_and_cross_as_json():
    import json
    import subprocess
    import sys

    code = "import sys, inspector.core.graph.values.numbers, inspector.core.graph.values.comparison; print('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "False\n"
    model = torchvision.models.resnet18(weights=None).eval()
    x = torch.randn(1, 3, 32, 32)
    graph = record_graph(model, x)
    data = json.loads(json.dumps(graph_values(model, x, graph).to_json()))
    assert set(data["nodes"]) == {n.id for n in graph.nodes} and len(data["edges"]) == len(graph.edges)
    assert all(not m._forward_hooks and not m._forward_pre_hooks for m in model.modules())


def test_a_graph_recorded_with_chosen_leaves_gets_values_at_its_nodes(resnet18):
    model, x, _, _ = resnet18
    graph = record_graph(model, x, leaves="layer1,layer4.1")
    values = graph_values(model, x, graph)
    assert {"layer1", "layer4.1"} <= set(values.nodes) and set(values.nodes) == {n.id for n in graph.nodes}
    assert values.nodes["layer4.1"].grad_l2 > 0
