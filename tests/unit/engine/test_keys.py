"""Capture keys and layer selection."""

from __future__ import annotations

import pytest
import torch
import torchvision
from torch import nn

from inspector.core import Key, SpecError, build_layer_tree, parse_key


@pytest.mark.parametrize("text, key", [
    ("fc1:output", Key("fc1", "output")),
    ("layer1.0.relu:output#1", Key("layer1.0.relu", "output", 1)),
    ("fc1.bias:grad", Key("fc1.bias", "grad")),
    ("input:grad", Key("", "grad")),
    ("output", Key("", "output")),
    ("input", Key("", "input")),
    ("x:output[1]", Key("x", "output", 0, 1)),
    ("relu1:grad_input", Key("relu1", "grad_input")),
    ("features.3.block.0:grad_output#12[0]", Key("features.3.block.0", "grad_output", 12, 0)),
    ("conv1:input", Key("conv1", "input")),
])
def test_parse_key_and_str_round_trip(text, key):
    assert parse_key(text) == key
    assert str(key) == text
    assert parse_key(str(parse_key(text))) == key


def test_key_surroundings_are_ignored_and_grad_sites_known():
    assert parse_key("  fc1:output \n") == Key("fc1", "output")
    assert parse_key("fc1.bias:grad").is_grad and parse_key("input:grad").is_grad
    assert parse_key("a:grad_output").is_grad and parse_key("a:grad_input").is_grad
    assert not parse_key("a:output").is_grad and not parse_key("a:input").is_grad
    assert parse_key("a:output#2[1]").site_key() == Key("a", "output")


def test_first_call_has_no_suffix():
    assert str(Key("layer1.0.relu", "output", 0)) == "layer1.0.relu:output"
    assert parse_key("layer1.0.relu:output#0") == parse_key("layer1.0.relu:output")


@pytest.mark.parametrize("text, fragment", [
    ("fc1", "Write LAYER:SITE"),
    ("fc1:", "Write LAYER:SITE"),
    (":output", "Write LAYER:SITE"),
    ("", "Write LAYER:SITE"),
    ("fc1:output#x", "Write LAYER:SITE"),
    ("fc1:output[a]", "Write LAYER:SITE"),
    ("fc1:output#-1", "Write LAYER:SITE"),
    ("fc1:output[1]#1", "Write LAYER:SITE"),
    ("a:b:output", "Write LAYER:SITE"),
    ("fc1:Output", "Write LAYER:SITE"),
    ("fc1:outptu", "Unknown site 'outptu'"),
    ("fc1:params", "Unknown site 'params'"),
])
def test_bad_keys_are_spec_errors_that_show_the_form(text, fragment):
    with pytest.raises(SpecError, match=fragment.replace("[", r"\[")) as info:
        parse_key(text)
    message = str(info.value)
    assert repr(text.strip()) in message
    if fragment.startswith("Unknown site"):
        for site in ("input", "output", "grad_output", "grad_input", "grad"):
            assert site in message
    else:
        assert "fc1:output" in message and "layer1.0.relu:output#1" in message


# --- layer selection ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def resnet():
    return torchvision.models.get_model("resnet18", weights=None)


@pytest.fixture(scope="module")
def tree(resnet):
    return build_layer_tree(resnet)


def test_select_all_is_every_leaf_in_model_order(resnet, tree):
    leaves = [name for name, m in resnet.named_modules() if name and not list(m.children())]
    assert tree.select("all") == leaves
    assert len(leaves) == 52  # 4 stem + 10 in layer1 + 3 * 12 (with downsample) + avgpool, fc
    assert leaves[0] == "conv1" and leaves[-1] == "fc"


def test_select_by_type(resnet, tree):
    convs = [name for name, m in resnet.named_modules() if isinstance(m, nn.Conv2d)]
    assert tree.select("type:Conv2d") == convs
    assert len(convs) == 20
    assert tree.select("type:BatchNorm*") == [n for n, m in resnet.named_modules() if isinstance(m, nn.BatchNorm2d)]
    assert tree.select("type:Linear") == ["fc"]


def test_select_globs_exact_names_and_lists(tree):
    assert tree.select("fc") == ["fc"]
    assert tree.select("layer1") == ["layer1"]  # an exact non-leaf path selects that module
    assert tree.select("fc, conv1") == ["conv1", "fc"]  # model order, not typed order
    assert tree.select(["fc", "conv1", "fc"]) == ["conv1", "fc"]
    assert tree.select("layer4.1.*") == ["layer4.1.conv1", "layer4.1.bn1", "layer4.1.relu", "layer4.1.conv2",
                                         "layer4.1.bn2"]
    assert tree.select("layer?.0.downsample.?") == [
        f"layer{i}.0.downsample.{j}" for i in (2, 3, 4) for j in (0, 1)
    ]
    assert tree.select("layer1.[01].conv2") == ["layer1.0.conv2", "layer1.1.conv2"]
    everything_in_layer4 = tree.select("layer4.*")
    assert "layer4.0" in everything_in_layer4 and "layer4.0.downsample.1" in everything_in_layer4
    assert "layer4" not in everything_in_layer4
    assert tree.select("") == [] and tree.select(" , ") == []
    assert tree.select("all,type:Linear") == tree.select("all")


def test_unknown_name_suggests_close_names(tree):
    with pytest.raises(SpecError) as info:
        tree.select("layer1.0.conv3")
    message = str(info.value)
    assert "No layer named 'layer1.0.conv3'" in message
    assert "Did you mean" in message and "layer1.0.conv1" in message and "layer1.0.conv2" in message
    assert "conv1" in message  # the examples of real names


def test_unknown_type_lists_types(tree):
    with pytest.raises(SpecError) as info:
        tree.select("type:Conv3d")
    message = str(info.value)
    assert "Conv3d" in message and "Conv2d" in message and "BatchNorm2d" in message and "Linear" in message


def test_glob_that_matches_nothing_is_an_error(tree):
    with pytest.raises(SpecError, match=r"No layer matches 'layer9\.\*'"):
        tree.select("layer9.*")


class SharedTwice(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.act = nn.ReLU()
        self.alias = self.act  # one module, two names
        self.fc = nn.Linear(2, 2)

    def forward(self, x):
        return self.act(self.fc(self.act(x)))


def test_layer_tree_counts_calls_and_keeps_the_first_name_of_a_shared_module():
    model = SharedTwice()
    tree = build_layer_tree(model, torch.zeros(1, 2))
    assert [layer.path for layer in tree] == ["", "act", "fc"]
    assert tree.get("act").calls == 2 and tree.get("fc").calls == 1
    assert tree.get("fc").output_shapes == ((1, 2),)
    assert tree.get("fc").parameters == 6 and tree.get("").parameters == 6
    assert tree.select("all") == ["act", "fc"]
    for module in model.modules():
        assert not module._forward_hooks
