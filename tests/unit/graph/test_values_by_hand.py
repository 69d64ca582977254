"""The values on the graph of small models whose numbers are worked out by hand or by an independent autograd
computation: statistics and gradient L2 per node and edge, the first NaN/Inf and the path to it, refusals, and
that the model keeps no hook."""

from __future__ import annotations

import math
import threading

import pytest
import torch
from torch import nn

from inspector.core.common.errors import MismatchError, RunCancelled
from inspector.core.graph import record_graph
from inspector.core.graph.values.entry import compare_edits, graph_values


class Residual(nn.Module):
    """x -> Linear (weights set) -> ReLU -> + x."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.act = nn.ReLU()
        with torch.no_grad():
            self.fc.weight.copy_(torch.tensor([[1.0, 0, 0], [0, -1, 0], [0, 0, 2]]))
            self.fc.bias.copy_(torch.tensor([0.0, 0, -1]))

    def forward(self, x):
        return self.act(self.fc(x)) + x


X = torch.tensor([[1.0, 3.0, 0.25]])  # fc: [1, -3, -0.5]; relu: [1, 0, 0]; add: [2, 3, 0.25], top class 1


@pytest.fixture(scope="module")
def residual():
    model = Residual().eval()
    graph = record_graph(model, X)
    return model, graph, graph_values(model, X, graph)


def test_every_node_gets_the_statistics_of_its_output_worked_out_by_hand(residual):
    _, graph, values = residual
    assert [n.id for n in graph.nodes] == ["input", "fc", "act", "add()", "output"]
    assert set(values.nodes) == {n.id for n in graph.nodes}
    expected = {"input": (1 + 3 + 0.25, 1 + 9 + 1 / 16, 0), "fc": (1 + 3 + 0.5, 1 + 9 + 0.25, 0),
                "act": (1, 1, 2), "add()": (2 + 3 + 0.25, 4 + 9 + 1 / 16, 0), "output": (5.25, 13.0625, 0)}
    for node, (absolute, squares, zeros) in expected.items():
        got = values.nodes[node]
        assert got.mean_abs == pytest.approx(absolute / 3), node
        assert got.l2 == pytest.approx(math.sqrt(squares)), node
        assert got.zero_fraction == pytest.approx(zeros / 3), node
        assert (got.nan, got.inf) == (0, 0)
    assert values.first_nonfinite is None and values.nonfinite_path == ()
    assert values.target == "1" and values.gradients


def test_gradient_l2_at_each_node_equals_autograd_on_the_model_written_by_hand(residual):
    model, graph, values = residual
    x = X.clone().requires_grad_()
    y = x @ model.fc.weight.T + model.fc.bias
    r = torch.relu(y)
    z = r + x
    gx, gy, gr, gz = torch.autograd.grad(z[0, 1], [x, y, r, z])
    expected = {"input": gx, "fc": gy, "act": gr, "add()": gz, "output": gz}
    for node, grad in expected.items():
        assert values.nodes[node].grad_l2 == pytest.approx(float(grad.norm()), abs=1e-7), node
    assert values.nodes["fc"].grad_l2 == 0  # ReLU closed for the target class: by hand, [0, 0, 0]
    assert values.nodes["add()"].grad_l2 == 1
    for edge, grad in zip(graph.edges, values.edges):  # an edge's width: its tensor's gradient
        assert grad == pytest.approx(float(expected[edge.source].norm()), abs=1e-7), edge


def test_a_chosen_target_is_the_backward_s_start(residual):
    model, graph, _ = residual
    values = graph_values(model, X, graph, target=2)
    assert values.nodes["add()"].grad_l2 == 1 and values.target == "2"
    assert values.nodes["fc"].grad_l2 == 0  # relu(-0.5) is closed too


class Log(nn.Module):
    def forward(self, x):
        return torch.log(x)


class Poisoned(nn.Module):
    """Two branches added, then a log of negative values (NaN) and of zero (-Inf), then a head."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(3, 3)
        self.b = nn.Linear(3, 3)
        self.log = Log()
        self.head = nn.Linear(3, 2)
        with torch.no_grad():
            for layer in (self.a, self.b):
                layer.weight.copy_(torch.eye(3))
                layer.bias.zero_()

    def forward(self, x):
        return self.head(self.log(self.a(x) + self.b(x)))


def test_the_first_nan_is_the_node_that_made_it_with_a_path_from_the_input():
    model = Poisoned().eval()
    x = torch.tensor([[-1.0, 0.0, 0.5]])  # a + b: [-2, 0, 1]; log: [NaN, -Inf, 0]
    graph = record_graph(model, x)
    values = graph_values(model, x, graph)
    assert values.first_nonfinite == "log"
    assert values.nonfinite_path == ("input", "a", "add()", "log")
    log = values.nodes["log"]
    assert (log.nan, log.inf, log.zero_fraction, log.mean_abs) == (1, 1, pytest.approx(1 / 3), 0)
    assert all(values.nodes[n].nan == values.nodes[n].inf == 0 for n in ("input", "a", "b", "add()"))
    assert values.nodes["head"].nan == 2  # everything after it


class Switch(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up, self.down = nn.Linear(2, 2), nn.Linear(2, 2)

    def forward(self, x):
        return self.up(x) if x.sum() > 0 else self.down(x)


def test_a_forward_that_went_another_way_is_refused_and_the_model_keeps_no_hook():
    model = Switch().eval()
    graph = record_graph(model, torch.ones(1, 2))
    with pytest.raises(MismatchError, match="not the graph's"):
        graph_values(model, -torch.ones(1, 2), graph)
    assert all(not m._forward_hooks and not m._forward_pre_hooks for m in model.modules())
    assert graph_values(model, torch.ones(1, 2) * 2, graph).nodes["up"].l2 > 0


def test_cancel_stops_the_run():
    model = Residual().eval()
    graph = record_graph(model, X)
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(RunCancelled):
        graph_values(model, X, graph, cancel=cancel)
    assert all(not m._forward_hooks and not m._forward_pre_hooks for m in model.modules())


def test_an_integer_input_gets_values_and_gradients_from_the_parameters():
    model = nn.Sequential(nn.Embedding(5, 4), nn.Flatten(), nn.Linear(8, 3)).eval()
    x = torch.tensor([[1, 4]])
    graph = record_graph(model, x)
    values = graph_values(model, x, graph)
    assert values.nodes["input"].mean_abs == 2.5 and values.nodes["input"].grad_l2 is None
    assert values.gradients and values.nodes["0"].grad_l2 > 0


class SelfAttention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attn = nn.MultiheadAttention(4, 2, batch_first=True)

    def forward(self, x):
        return self.attn(x, x, x, need_weights=False)[0]


def test_an_edit_that_sends_the_forward_another_way_is_refused_and_one_that_does_not_is_applied():
    torch.manual_seed(0)
    model = SelfAttention().eval()
    x = torch.randn(1, 3, 4)
    graph = record_graph(model, x)
    with pytest.raises(MismatchError, match="an edit of an attention module's input"):  # q, k, v: three tensors
        graph_values(model, x, graph, edits=["attn:input=scale(2)"])
    with pytest.raises(MismatchError, match="another way"):
        compare_edits(model, x, graph, ["attn:input=scale(2)"])
    diff = compare_edits(model, x, graph, ["attn:output=scale(2)"])
    assert diff.change["output"] == pytest.approx(1.0) and diff.change["input"] == 0
