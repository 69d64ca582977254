"""The graph of one forward of torchvision's and Hugging Face's models (random weights, no network): what their
source code says the graph holds (resnet18's residual adds, vit_b_16's two adds per block and its attention's
products, a detector's stages), and every captured edge's shape is the shape the engine captures there."""

from __future__ import annotations

import pytest
import torch
import torchvision

from inspector.core import build_layer_tree, capture
from inspector.core.graph import Graph, record_graph
from inspector.core.sources.loaded import LoadedModel

transformers = pytest.importorskip("transformers")


def _reaches(graph: Graph, source: str, target: str) -> bool:
    todo, seen = [source], {source}
    while todo:
        here = todo.pop()
        if here == target:
            return True
        for edge in graph.edges_from(here):
            if edge.target not in seen:
                seen.add(edge.target)
                todo.append(edge.target)
    return False


@pytest.fixture(scope="module")
def resnet18():
    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None).eval()
    x = torch.randn(1, 3, 64, 64)
    return model, x, record_graph(model, x)


def test_resnet18_has_its_eight_residual_adds(resnet18):
    _, _, graph = resnet18
    adds = [n for n in graph.nodes if n.op == "add"]
    blocks = [f"layer{i}.{j}" for i in range(1, 5) for j in range(2)]
    assert [n.id for n in adds] == [f"{b}.add()" for b in blocks]  # BasicBlock: `out += identity`
    assert all(n.kind == "function" and n.inplace for n in adds)
    # each reads the block's bn2 and the identity: the block's input (the block before's last ReLU, maxpool's
    # output for the first), or its downsample where the block changes the shape
    identity = {"layer1.0": "maxpool", "layer1.1": "layer1.0.relu#1", "layer2.0": "layer2.0.downsample.1",
                "layer2.1": "layer2.0.relu#1", "layer3.0": "layer3.0.downsample.1", "layer3.1": "layer3.0.relu#1",
                "layer4.0": "layer4.0.downsample.1", "layer4.1": "layer4.0.relu#1"}
    for block, node in zip(blocks, adds):
        assert [e.source for e in graph.edges_into(node.id)] == [f"{block}.bn2", identity[block]]


def test_resnet18_every_leaf_of_the_tree_is_a_node_and_nothing_else_is_a_module_node(resnet18):
    model, x, graph = resnet18
    leaves = build_layer_tree(model, x).leaves
    assert len(leaves) == 4 + 8 * 5 + 3 * 2 + 2  # conv1 bn1 relu maxpool, 8 blocks, 3 downsamples, avgpool fc
    assert {n.path for n in graph.nodes if n.kind == "module"} == set(leaves)
    # the blocks' ReLU runs twice: two nodes
    assert [n.id for n in graph.nodes if n.path == "layer1.0.relu"] == ["layer1.0.relu", "layer1.0.relu#1"]


def test_resnet18_every_edge_has_the_shape_the_engine_captures_there(resnet18):
    model, x, graph = resnet18
    result = capture(LoadedModel(model, "resnet18"), x, layers="all,layer1,layer2,layer3,layer4", sites="output")
    keyed = [e for e in graph.edges if e.key]
    # every tensor a module or the input made is one the engine captures
    assert {e.source for e in keyed} == {n.id for n in graph.nodes if n.kind in ("module", "input")}
    closed = [e for e in graph.closed().edges if e.source.startswith("layer")]
    assert [e.key for e in closed] == ["layer1:output", "layer2:output", "layer3:output", "layer4:output"]
    for edge in keyed + closed:
        captured = result.input if edge.key == "input" else result[edge.key]
        assert edge.shape == captured.shape, edge
        assert edge.dtype == str(captured.dtype)


def test_resnet18_closed_is_its_top_level_with_the_shapes_a_64_pixel_input_makes(resnet18):
    _, _, graph = resnet18
    top = graph.closed()
    assert [n.id for n in top.nodes] == ["input", "conv1", "bn1", "relu", "maxpool", "layer1", "layer2", "layer3",
                                         "layer4", "avgpool", "flatten()", "fc", "output"]
    # stride 2 twice (conv1, maxpool): 16 px into layer1; each later stage halves it and doubles the channels
    assert [(e.source, e.target, e.shape) for e in top.edges][4:10] == [
        ("maxpool", "layer1", (1, 64, 16, 16)), ("layer1", "layer2", (1, 64, 16, 16)),
        ("layer2", "layer3", (1, 128, 8, 8)), ("layer3", "layer4", (1, 256, 4, 4)),
        ("layer4", "avgpool", (1, 512, 2, 2)), ("avgpool", "flatten()", (1, 512, 1, 1))]
    third = graph.closed(["layer3"])
    assert [n.id for n in third.nodes if n.id.startswith("layer3")] == ["layer3.0", "layer3.1"]
    assert [g.id for g in third.groups] == ["layer3"]
    assert graph.groups_within(1) == ["layer1", "layer2", "layer3", "layer4"]


def test_vit_b_16_has_two_residual_adds_per_block_and_the_attentions_products():
    torch.manual_seed(0)
    model = torchvision.models.vit_b_16(weights=None, image_size=32).eval()  # 2x2 patches + the class token
    graph = record_graph(model, torch.randn(1, 3, 32, 32))
    tokens = (1, 5, 768)
    for i in range(12):
        block = f"encoder.layers.encoder_layer_{i}"
        adds = [n.id for n in graph.nodes if n.group == block and n.op == "add"]
        assert adds == [f"{block}.add()", f"{block}.add()#1"]
        assert all([e.shape for e in graph.edges_into(a)] == [tokens, tokens] for a in adds)
        # nn.MultiheadAttention runs F.multi_head_attention_forward: its products are recorded in its group
        attention = f"{block}.self_attention"
        products = [n.id for n in graph.nodes if n.group == attention and n.op in ("linear", "matmul", "bmm",
                                                                                     "scaled_dot_product_attention")]
        assert products == [f"{attention}.linear()", f"{attention}.scaled_dot_product_attention()",
                            f"{attention}.linear()#1"]  # in-projection, attention of 12 heads, out-projection
        product = graph.node(products[1])
        assert [e.shape for e in graph.edges_into(product.id)] == [(1, 12, 5, 64)] * 3  # q, k, v
        assert _reaches(graph, products[0], products[1]) and _reaches(graph, products[1], products[2])
        assert _reaches(graph, products[2], f"{block}.add()")
    assert [n.id for n in graph.closed().nodes] == ["input", "conv_proj", "reshape()", "permute()", "cat()",
                                                    "encoder", "getitem()", "heads", "output"]


def test_a_torchvision_detector_records_the_graph_of_this_inputs_forward():
    torch.manual_seed(0)
    model = torchvision.models.detection.fasterrcnn_mobilenet_v3_large_320_fpn(
        weights=None, weights_backbone=None).eval()
    graph = record_graph(model, torch.rand(1, 3, 64, 64))
    assert "nms() in rpn" in graph.data_dependence
    assert graph.caption.startswith("The graph of this input's forward (control flow depends on the data: ")
    top = graph.closed()
    # the boxes scaled back to the input's size: functions of `transform.postprocess`, one group
    assert [n.id for n in top.nodes] == ["input", "transform", "backbone", "rpn", "roi_heads",
                                         "transform.postprocess(...)", "output"]
    assert graph.group("transform.postprocess(...)").method == "postprocess"
    assert "rpn.filter_proposals(...)" in [g.id for g in graph.groups]  # inside rpn, a group of its own
    # the transform resizes the square image to the model's 320 pixels
    assert ("transform", "backbone", (1, 3, 320, 320)) in [(e.source, e.target, e.shape) for e in top.edges]
    ids = {n.id for n in graph.nodes}
    assert all(e.source in ids and e.target in ids for e in graph.edges)


def test_a_hugging_face_vit_from_a_config_records_its_attention():
    config = transformers.ViTConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                                    image_size=32, patch_size=8, num_labels=3, attn_implementation="eager")
    torch.manual_seed(0)
    model = transformers.ViTForImageClassification(config).eval()
    x = torch.randn(1, 3, 32, 32)
    graph = record_graph(model, x)
    assert graph.data_dependence == ()
    assert {n.path for n in graph.nodes if n.kind == "module"} == set(build_layer_tree(model, x).leaves)
    products: dict[str, list[str]] = {}
    for node in graph.nodes:
        if node.op in ("matmul", "softmax"):
            products.setdefault(node.group, []).append(node.op)
    assert len(products) == 2  # one attention per layer (ViTSelfAttention, or ViTAttention in transformers 5)
    for group, ops in products.items():
        assert "Attention" in graph.group(group).type_name
        assert ops == ["matmul", "softmax", "matmul"]  # scores, probabilities, their product with the values
    assert [n.id for n in graph.closed().nodes] == ["input", "vit", "getitem()", "classifier", "output"]
