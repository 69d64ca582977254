"""Two runs compared on the graph: an edit's reach (0 before the edited node, the change worked out independently
at and after it), two checkpoints' divergence (0 before the layer whose weights differ, first divergent there,
equal to the engine's `diff` per layer), and the memory bound (more rounds, the same numbers)."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

from inspector.core.compare.diff import DEFAULT_THRESHOLD, compare_results
from inspector.core.graph import record_graph
from inspector.core.graph.values.entry import compare_edits, compare_models
from inspector.core.engine.runner import run
from inspector.core.runspec import RunSpec


class Chain(nn.Module):
    """l1 -> block (Linear, ReLU) -> + l1's output -> l3."""

    def __init__(self) -> None:
        super().__init__()
        self.l1 = nn.Linear(4, 4)
        self.block = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
        self.l3 = nn.Linear(4, 3)

    def forward(self, x):
        h = self.l1(x)
        return self.l3(self.block(h) + h)


def _rel(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((b - a).norm() / a.norm())


@pytest.fixture(scope="module")
def chain():
    torch.manual_seed(0)
    model = Chain().eval()
    x = torch.randn(2, 4)
    return model, x, record_graph(model, x)


def _by_hand(model: Chain, x: torch.Tensor, scale_l1: float = 1.0, scale_block: float = 1.0) -> dict:
    """Every node's output, with l1's output and the block's output scaled as the edits do."""
    with torch.no_grad():
        h = model.l1(x) * scale_l1
        b0 = model.block[0](h)
        b1 = torch.relu(b0) * scale_block
        s = b1 + h
        return {"input": x, "l1": h, "block.0": b0, "block.1": b1, "add()": s, "l3": model.l3(s)}


def test_an_edit_changes_nothing_before_its_node_and_what_autograd_free_arithmetic_says_after(chain):
    model, x, graph = chain
    diff = compare_edits(model, x, graph, ["l1:output=scale(2)"])
    base, edited = _by_hand(model, x), _by_hand(model, x, scale_l1=2)
    assert diff.change["input"] == 0
    assert diff.change["l1"] == pytest.approx(1.0)
    for node in ("block.0", "block.1", "add()", "l3"):
        assert diff.change[node] == pytest.approx(_rel(base[node], edited[node]), rel=1e-5), node
    assert diff.change["output"] == diff.change["l3"]
    assert diff.first_divergent == "l1" and diff.threshold == DEFAULT_THRESHOLD
    assert diff.names == ("baseline", "edited") and diff.rounds == 1
    assert diff.second.nodes["l1"].l2 == pytest.approx(2 * diff.first.nodes["l1"].l2)


def test_an_edit_of_a_group_s_output_is_the_change_of_the_node_that_made_it_and_of_the_closed_group(chain):
    model, x, graph = chain
    diff = compare_edits(model, x, graph, ["block:output=scale(3)"])  # the engine's hooks on a non-leaf module
    assert [n.id for n in graph.nodes] == [n.id for n in diff.graph.nodes]  # the edit's own mul is no node
    base, edited = _by_hand(model, x), _by_hand(model, x, scale_block=3)
    assert (diff.change["l1"], diff.change["block.0"]) == (0, 0)
    assert diff.change["block.1"] == pytest.approx(2.0)
    assert diff.change["add()"] == pytest.approx(_rel(base["add()"], edited["add()"]), rel=1e-5)
    closed = diff.for_view(graph.closed())
    assert closed.change["block"] == pytest.approx(2.0) and closed.first_divergent == "block"
    assert closed.second.nodes["block"] == diff.second.nodes["block.1"]


def test_zero_from_the_engine_s_table_at_a_leaf_in_the_middle(chain):
    model, x, graph = chain
    diff = compare_edits(model, x, graph, ["block.0:output=zero()"])
    assert diff.change["block.0"] == pytest.approx(1.0) and diff.second.nodes["block.0"].zero_fraction == 1
    assert diff.change["block.1"] == pytest.approx(1.0)  # relu(0) = 0: all of it gone
    assert diff.first_divergent == "block.0" and diff.change["l1"] == 0


def test_the_memory_bound_takes_more_rounds_and_gives_the_same_numbers(chain):
    model, x, graph = chain
    whole = compare_edits(model, x, graph, ["l1:output=scale(2)"])
    bounded = compare_edits(model, x, graph, ["l1:output=scale(2)"], memory_bytes=0)  # one tensor per round
    assert bounded.rounds == len(whole.tensors) and whole.rounds == 1
    assert bounded.change == pytest.approx(whole.change)
    assert bounded.first_divergent == whole.first_divergent


def test_two_checkpoints_diverge_from_the_layer_whose_weights_differ(chain):
    model, x, graph = chain
    other = copy.deepcopy(model)
    with torch.no_grad():
        other.block[0].weight.add_(0.1)
    diff = compare_models(model, other, x, graph)
    assert (diff.change["input"], diff.change["l1"]) == (0, 0)
    assert all(diff.change[n] > 0 for n in ("block.0", "add()", "l3"))
    assert diff.first_divergent == "block.0"
    assert diff.for_view(graph.closed()).first_divergent == "block"
    # the same relative L2 per layer as `diff` (the engine's captures compared)
    spec = RunSpec.make(["l1", "block.0", "block.1", "l3"], ["output"])
    rows = compare_results(run(model, x, spec), run(other, x, spec))
    for node in ("l1", "block.0", "block.1", "l3"):
        assert diff.change[node] == pytest.approx(rows.row(f"{node}:output").rel_l2, rel=1e-5, abs=1e-9), node
    assert rows.first_divergent == f"{diff.first_divergent}:output"


def test_dropout_draws_the_same_numbers_in_both_runs(chain):
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5), nn.Linear(4, 2)).train()
    x = torch.randn(3, 4)
    graph = record_graph(model, x)
    diff = compare_models(model, model, x, graph)
    assert diff.first_divergent is None and set(diff.change.values()) == {0.0}


def test_no_watch_and_no_hook_outlives_its_run(chain):
    import gc

    from inspector.core.graph.values import watch as values_watch
    from inspector.core.graph.values.entry import graph_values

    model, x, graph = chain
    for _ in range(3):
        graph_values(model, x, graph, edits=["block:output=scale(3)"])
        compare_edits(model, x, graph, ["l1:output=scale(2)"], memory_bytes=0)
    gc.collect()
    assert not any(type(o) is values_watch.Watch for o in gc.get_objects())
    assert all(not m._forward_hooks and not m._forward_pre_hooks for m in model.modules())
