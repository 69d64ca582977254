"""The graph of one forward, on small models whose graphs are written out by hand: every node (id, kind, op, group)
and every edge (ends, shape, dtype, capture key) is what reading the model's forward says it must be."""

from __future__ import annotations

import json
import warnings

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from inspector.core.common.errors import InspectorError, RunError
from inspector.core.graph import Edge, Graph, Group, Node, record_graph


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 3, padding=1)

    def forward(self, x):
        return x + F.relu(self.conv(x))  # a residual add around a functional ReLU


class Branchy(nn.Module):
    """A residual add (in `block`), a concatenation, a module called twice (`act`), a functional ReLU, a reshape."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.act = nn.ReLU()
        self.block = Block()
        self.fc = nn.Linear(8 * 4 * 4, 5)

    def forward(self, x):
        a = self.act(self.conv(x))
        c = torch.cat([a, self.block(a)], dim=1)
        d = self.act(c)
        return self.fc(d.reshape(d.shape[0], -1))


F32 = "float32"
MAP4, MAP8 = (1, 4, 4, 4), (1, 8, 4, 4)


def _recorded(model: nn.Module, x: torch.Tensor) -> Graph:
    torch.manual_seed(0)
    return record_graph(model.eval(), x)


def test_nodes_and_edges_equal_the_hand_written_graph():
    graph = _recorded(Branchy(), torch.randn(1, 3, 4, 4))
    assert graph.nodes == (
        Node("input", "input", "input"),
        Node("conv", "module", "Conv2d", "conv"),
        Node("act", "module", "ReLU", "act"),
        Node("block.conv", "module", "Conv2d", "block.conv", 0, "block"),
        Node("block.relu()", "function", "relu", "", 0, "block"),
        Node("block.add()", "function", "add", "", 0, "block"),
        Node("cat()", "function", "cat"),
        Node("act#1", "module", "ReLU", "act", 1),
        Node("reshape()", "function", "reshape"),
        Node("fc", "module", "Linear", "fc"),
        Node("output", "output", "output"),
    )
    assert graph.edges == (
        Edge("input", "conv", (1, 3, 4, 4), F32, None, "input"),
        Edge("conv", "act", MAP4, F32, None, "conv:output"),
        Edge("act", "block.conv", MAP4, F32, None, "act:output"),
        Edge("block.conv", "block.relu()", MAP4, F32, None, "block.conv:output"),
        Edge("act", "block.add()", MAP4, F32, None, "act:output"),
        Edge("block.relu()", "block.add()", MAP4, F32),
        Edge("act", "cat()", MAP4, F32, None, "act:output"),
        Edge("block.add()", "cat()", MAP4, F32),
        Edge("cat()", "act#1", MAP8, F32),
        Edge("act#1", "reshape()", MAP8, F32, None, "act:output#1"),
        Edge("reshape()", "fc", (1, 128), F32),
        Edge("fc", "output", (1, 5), F32, None, "fc:output"),
    )
    assert graph.groups == (Group("block", "block", "Block", 0, "", ("block.conv", "block.relu()", "block.add()"),
                                  (("block.add()", None, "block:output"),)),)
    assert graph.data_dependence == () and graph.caption == "The graph of the forward"


def test_a_closed_group_is_one_node_with_the_edges_across_its_border_once_per_tensor():
    closed = _recorded(Branchy(), torch.randn(1, 3, 4, 4)).closed()
    assert [(n.id, n.kind, n.op) for n in closed.nodes] == [
        ("input", "input", "input"), ("conv", "module", "Conv2d"), ("act", "module", "ReLU"),
        ("block", "group", "Block"), ("cat()", "function", "cat"), ("act#1", "module", "ReLU"),
        ("reshape()", "function", "reshape"), ("fc", "module", "Linear"), ("output", "output", "output")]
    # `act`'s output enters the block twice (its conv and its add): one edge; the block's add leaves it
    assert [(e.source, e.target, e.shape) for e in closed.edges] == [
        ("input", "conv", (1, 3, 4, 4)), ("conv", "act", MAP4), ("act", "block", MAP4), ("act", "cat()", MAP4),
        ("block", "cat()", MAP4), ("cat()", "act#1", MAP8), ("act#1", "reshape()", MAP8), ("reshape()", "fc", (1, 128)),
        ("fc", "output", (1, 5))]
    # the tensor the block returned is the engine's `block:output`
    assert [e.key for e in closed.edges if e.source == "block"] == ["block:output"]
    assert closed.groups == ()
    graph = _recorded(Branchy(), torch.randn(1, 3, 4, 4))
    assert graph.closed(["block"]) == graph  # every group open: the graph as recorded


class InPlace(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.shift = nn.Parameter(torch.ones(3))

    def forward(self, x):
        y = self.lin(x)
        y.relu_()
        y += x
        y[:, 0] = x[:, 1]  # __setitem__: y's maker is the setitem from now on
        z = y.contiguous().to(torch.float32) + self.shift  # folded, folded; a parameter is no edge
        scale = torch.ones_like(z)  # made from z's shape only: no node, no edge
        return (z * scale).to(torch.float64)  # a dtype change is a node


def test_in_place_ops_make_the_tensor_from_then_on_and_no_op_copies_are_folded():
    graph = _recorded(InPlace(), torch.randn(2, 3))
    assert [(n.id, n.op, n.inplace) for n in graph.nodes] == [
        ("input", "input", False), ("lin", "Linear", False), ("relu()", "relu", True), ("add()", "add", True),
        ("getitem()", "getitem", False), ("setitem()", "setitem", True), ("add()#1", "add", False),
        ("mul()", "mul", False), ("to()", "to", False), ("output", "output", False)]
    pair = (2, 3)
    assert [(e.source, e.target, e.shape, e.dtype) for e in graph.edges] == [
        ("input", "lin", pair, F32), ("lin", "relu()", pair, F32), ("relu()", "add()", pair, F32),
        ("input", "add()", pair, F32), ("input", "getitem()", pair, F32), ("add()", "setitem()", pair, F32),
        ("getitem()", "setitem()", (2,), F32), ("setitem()", "add()#1", pair, F32), ("add()#1", "mul()", pair, F32),
        ("mul()", "to()", pair, F32), ("to()", "output", pair, "float64")]


class Reads(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x):
        y = self.lin(x)
        if y.sum() > 0:  # control flow on the data
            return y * 2
        return y[y > 0]  # a boolean mask: the shape depends on the data


def test_reading_values_makes_it_this_inputs_forward_and_what_only_was_read_is_no_node():
    model = Reads().eval()
    with torch.no_grad():
        model.lin.weight.copy_(torch.eye(3))
        model.lin.bias.zero_()
    up = record_graph(model, torch.tensor([[1.0, 2.0, 3.0]]))
    assert up.data_dependence == ("bool() in the model's own forward",)
    assert up.caption == ("The graph of this input's forward (control flow depends on the data: bool() in the "
                          "model's own forward)")  # it said '(model): bool()', a node's name few would read
    # sum and gt were read into Python only: left out
    assert [n.id for n in up.nodes] == ["input", "lin", "mul()", "output"]
    down = record_graph(model, torch.tensor([[-1.0, -2.0, 3.0]]))
    assert down.data_dependence == ("bool() in the model's own forward", "a boolean mask in the model's own forward")
    assert [n.id for n in down.nodes] == ["input", "lin", "gt()", "getitem()", "output"]
    assert down.edges[-1] == Edge("getitem()", "output", (1,), F32)  # one value is > 0


class Raises(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x):
        if (self.lin(x) + 1).shape[0]:  # raised while the hooks and the mode are on
            raise ValueError("no good\nsecond line")


def test_a_model_that_raises_is_one_line_and_leaves_no_hook_and_no_mode():
    model = Raises()
    kept = model.lin.register_forward_hook(lambda *_: None)  # the user's own hook stays
    with pytest.raises(RunError) as raised:
        record_graph(model, torch.randn(1, 3))
    assert str(raised.value) == "The forward could not be recorded: the model raised ValueError: no good"
    assert list(model.lin._forward_hooks) == [kept.id] and not model.lin._forward_pre_hooks
    assert not model._forward_hooks and not model._forward_pre_hooks
    assert torch._C._len_torch_function_stack() == 0
    assert torch.is_grad_enabled()


def test_leaves_given_are_one_node_and_the_input_is_not_changed():
    x = torch.randn(1, 3, 4, 4)
    before = x.clone()
    graph = record_graph(Branchy().eval(), x, leaves=["block"])
    assert [n.id for n in graph.nodes if n.kind == "module"] == ["conv", "act", "block", "act#1", "fc"]
    assert graph.node("block") == Node("block", "module", "Block", "block")
    assert Edge("block", "cat()", MAP4, F32, None, "block:output") in graph.edges
    assert graph.groups == ()
    assert torch.equal(x, before)


def test_json_is_node_link_data_and_reads_back():
    graph = _recorded(Branchy(), torch.randn(1, 3, 4, 4))
    data = json.loads(json.dumps(graph.to_json()))
    assert data["edges"][0] == {"source": "input", "target": "conv", "shape": [1, 3, 4, 4], "dtype": "float32",
                                "index": None, "key": "input"}
    assert data["groups"] == [{"id": "block", "path": "block", "type": "Block", "call": 0, "parent": "",
                               "children": ["block.conv", "block.relu()", "block.add()"],
                               "outputs": [["block.add()", None, "block:output"]], "method": ""}]
    assert Graph.from_json(data) == graph


class Small(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x):
        return torch.relu(self.lin(x)) + x


def test_torchscript_is_one_node():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.jit.script is deprecated
        scripted = torch.jit.script(Small())
    graph = record_graph(scripted, torch.randn(1, 3))
    assert [(n.id, n.op) for n in graph.nodes] == [("input", "input"), ("(model)", "Small"), ("output", "output")]
    assert [e.key for e in graph.edges] == ["input", "output"]
    assert graph.notes == ("TorchScript runs compiled and takes no hooks: the model is one node.",)


def test_an_exported_program_records_as_it_runs():
    x = torch.randn(1, 3)
    program = torch.export.unflatten(torch.export.export(Small().eval(), (x,)))
    graph = record_graph(program, x)
    assert [(n.id, n.op) for n in graph.nodes] == [
        ("input", "input"), ("lin", "InterpreterModule"), ("relu()", "relu"), ("add()", "add"), ("output", "output")]
    assert [(e.source, e.target) for e in graph.edges] == [
        ("input", "lin"), ("lin", "relu()"), ("relu()", "add()"), ("input", "add()"), ("add()", "output")]


@pytest.mark.parametrize("call, error", [
    (lambda: record_graph("resnet18", torch.zeros(1, 3)), "model must be a torch.nn.Module or a loaded model"),
    (lambda: record_graph(Small(), [1.0, 2.0, 3.0]), "x must be a torch.Tensor"),
    (lambda: record_graph(Small(), torch.zeros(0, 3)), "The input holds no values (shape (0, 3))."),
    (lambda: record_graph(Small(), torch.zeros(1, 3), leaves=5), "record_graph(): leaves must be text"),
    (lambda: record_graph(Small(), torch.zeros(1, 3), leaves="lin,fc"), "No module named 'fc' in this model"),
])
def test_bad_arguments_are_one_line_inspector_errors(call, error):
    with pytest.raises(InspectorError) as raised:
        call()
    assert str(raised.value).startswith(error) and "\n" not in str(raised.value)


def test_a_cancelled_recording_stops_at_the_next_module_call_and_leaves_no_hook():
    import threading

    from inspector.core.common.errors import RunCancelled

    cancel = threading.Event()
    model = Branchy().eval()
    model.block.register_forward_pre_hook(lambda *_: cancel.set())  # asked while the forward runs
    with pytest.raises(RunCancelled):
        record_graph(model, torch.randn(1, 3, 4, 4), cancel=cancel)
    assert all(len(m._forward_pre_hooks) == (m is model.block) and not m._forward_hooks for m in model.modules())


class ThroughAView(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.keep = nn.Identity()  # a model without submodules is one node

    def forward(self, x):
        y = self.keep(x) * 1
        y[:, :2].mul_(3)  # changes y through a view: y is made by that mul from then on
        return y + 1


def test_a_change_through_a_view_makes_its_base():
    graph = record_graph(ThroughAView(), torch.randn(1, 4))
    assert [(e.source, e.target) for e in graph.edges] == [
        ("input", "keep"), ("keep", "mul()"), ("mul()", "getitem()"), ("getitem()", "mul()#1"),
        ("mul()#1", "add()"), ("add()", "output")]
