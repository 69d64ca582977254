"""The layout of recorded models (torchvision resnet18 and a small ViT, random weights): every layout well formed
(`test_layout_checks`) with the top level closed, each top-level group open, each group two deep open and every
group open; opening a group keeps the other top-level boxes in order and closing it gives the first layout back."""

from __future__ import annotations

import pytest
import torch
import torchvision
from test_layout_checks import assert_same_order, assert_well_formed

from inspector.core.graph import Graph, record_graph
from inspector.core.graph.layout.graph_layout import GraphLayout


def _resnet18() -> Graph:
    torch.manual_seed(0)
    return record_graph(torchvision.models.resnet18(weights=None).eval(), torch.randn(1, 3, 64, 64))


def _vit() -> Graph:
    torch.manual_seed(0)
    model = torchvision.models.VisionTransformer(image_size=32, patch_size=16, num_layers=2, num_heads=2,
                                                 hidden_dim=16, mlp_dim=32).eval()
    return record_graph(model, torch.randn(1, 3, 32, 32))


@pytest.fixture(scope="module", params=["resnet18", "vit"])
def graph(request) -> Graph:
    return {"resnet18": _resnet18, "vit": _vit}[request.param]()


def test_every_top_level_group_opened_and_closed_again(graph):
    layouts = GraphLayout(graph)
    first = layouts.layout()
    assert_well_formed(first)
    assert set(first.boxes) == {n.id for n in graph.closed().nodes}
    tops = [g.id for g in graph.groups if not g.parent]
    assert tops
    for group in tops:
        opened = layouts.layout({group})
        assert_well_formed(opened)
        assert_same_order(first, opened, [i for i in first.boxes if i != group])
        assert layouts.layout() == first


def test_groups_two_deep_and_everything_open(graph):
    layouts = GraphLayout(graph)
    for group in [g for g in graph.groups if graph.depth(g.id) == 2]:
        parent = graph.group(group.id).parent
        outer = layouts.layout({parent})
        inner = layouts.layout({parent, group.id})
        assert_well_formed(inner)
        assert_same_order(outer, inner, [i for i in outer.boxes if i != group.id])
        assert layouts.layout({parent}) == outer
    everything = layouts.layout(g.id for g in graph.groups)
    assert_well_formed(everything)
    assert set(everything.boxes) == {n.id for n in graph.nodes}


def test_resnet18_as_drawn():
    """The stem and the four stages closed stand in one column, in the order they ran; layer1 open holds its two
    blocks one above the other, and each block's residual add has the block's input beside its convolutions."""
    layouts = GraphLayout(_resnet18())
    first = layouts.layout()
    ys = [first.boxes[i].y for i in ["input", "conv1", "bn1", "relu", "maxpool", "layer1", "layer2", "layer3",
                                     "layer4", "avgpool", "flatten()", "fc", "output"]]
    assert ys == sorted(ys) and len(set(ys)) == len(ys)
    opened = layouts.layout({"layer1", "layer1.0"})
    block, later = opened.frames["layer1.0"], opened.boxes["layer1.1"]
    assert block.y + block.height < later.y
    skip = next(r for r in opened.routes if (r.source, r.target) == ("maxpool", "layer1.0.add()"))
    conv2 = opened.boxes["layer1.0.conv2"]
    beside = [x for x, y in skip.points if conv2.y <= y <= conv2.y + conv2.height]
    assert beside and all(x > conv2.x + conv2.width or x < conv2.x for x in beside)
