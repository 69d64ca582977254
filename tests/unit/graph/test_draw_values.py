"""Issue 42 item 5: a run's values drawn on the graph (`overlay_of`), on values written by hand (no torch): colours
from the lowest value to the highest, the colour bar's ticks in the value's units, edge widths by the gradient,
the first NaN and its path, what the legend says."""

from __future__ import annotations

import pytest

from inspector.core.graph import Edge, Graph, Node
from inspector.core.graph.draw.values import ANCHORS, EDGE_WIDTHS, SHOWN, Scale, colour_at, overlay_of, value_text
from inspector.core.graph.values.numbers import GraphValues, NodeValues


def _values(first: str | None = None, path: tuple[str, ...] = ()) -> GraphValues:
    """input -> a -> b -> output; a's output has 2 of its 4 values zero, b's none; output has no values."""
    graph = Graph((Node("input", "input", "input"), Node("a", "module", "ReLU", "a"), Node("b()", "function", "mul"),
                   Node("output", "output", "output")),
                  (Edge("input", "a", (1, 4), "float32"), Edge("a", "b()", (1, 4), "float32"),
                   Edge("b()", "output", (1, 4), "float32")))
    nodes = {"input": NodeValues(4, 4.0, 4.0, 0, grad_sq=9.0), "a": NodeValues(4, 2.0, 2.0, 2, grad_sq=1.0),
             "b()": NodeValues(4, 8.0, 16.0, 0, nan=1 if first else 0, grad_sq=4.0)}
    return GraphValues(graph, nodes, (3.0, 1.0, None), first, path, target="7")


def test_nodes_run_from_the_lowest_colour_to_the_highest():
    overlay = overlay_of(_values(), "activation")  # mean |x|: input 1, a 0.5, b 2
    assert overlay.fills == {"a": ANCHORS[0], "input": colour_at(1 / 3), "b()": ANCHORS[-1]}
    assert overlay.bar.title == "Colour: mean |x| of each node's output"
    assert overlay.bar.ticks == ((0.0, "0.5"), (0.5, "1.25"), (1.0, "2"))
    assert overlay.bar.colours[0] == ANCHORS[0] and overlay.bar.colours[-1] == ANCHORS[-1]
    assert overlay.edge_widths == {} and overlay.alarm is None
    assert overlay.legend == ("1 node in their plain colour: no mean |x| of each node's output recorded.",)


def test_fractions_are_percentages():
    overlay = overlay_of(_values(), "zeros")
    assert overlay.bar.ticks == ((0.0, "0%"), (0.5, "25%"), (1.0, "50%"))
    assert overlay.fills["a"] == ANCHORS[-1]
    assert (value_text(0.125, True), value_text(0.000123, False), value_text(4567.0, False)) == \
        ("12.5%", "0.000123", "4.57e+03")


def test_gradient_widens_edges_by_their_gradient():
    overlay = overlay_of(_values(), "gradient")
    assert overlay.edge_widths == {("input", "a", None): EDGE_WIDTHS[1], ("a", "b()", None): EDGE_WIDTHS[0]}
    assert overlay.fills == {"input": ANCHORS[-1], "a": ANCHORS[0], "b()": colour_at(0.5)}
    assert "Edge width: the L2 of the gradient of the tensor it carries, 1 (1) to 5 (3)." in overlay.legend
    assert "The backward starts from the target: class 7." in overlay.legend


def test_the_first_nan_is_the_alarm_and_its_path_outlined():
    overlay = overlay_of(_values("b()", ("input", "a", "b()")), "nan")
    assert overlay.alarm == "b()" and overlay.path == ("input", "a", "b()")
    assert overlay.fills["b()"] == ANCHORS[-1]
    assert overlay.legend[-1] == ("Red: b(), the first node whose output holds NaN or Inf; outlined in red: a path "
                                  "from the input to it.")
    assert overlay_of(_values(), "nan").legend[-1] == "No node's output holds NaN or Inf in this run."


@pytest.mark.parametrize("t, colour", [(0.0, ANCHORS[0]), (0.5, ANCHORS[2]), (1.0, ANCHORS[4]), (-1, ANCHORS[0]),
                                       (2, ANCHORS[4]), (0.125, (64, 42, 112))])
def test_the_colour_map(t, colour):
    assert colour_at(t) == colour


def test_every_value_has_a_reading():
    v = NodeValues(4, 2.0, 2.0, 1, nan=1, grad_sq=4.0)  # mean |x| over the 3 finite values
    assert {name: s.read(v) for name, s in SHOWN.items()} == {
        "activation": pytest.approx(2 / 3), "l2": pytest.approx(2 ** 0.5), "zeros": 0.25, "gradient": 2.0, "nan": 0.25}


def test_values_spanning_more_than_a_hundredfold_are_on_a_log_scale():
    values = _values()
    spread = GraphValues(values.graph, {"input": NodeValues(1, 1e-5, grad_sq=0.0), "a": NodeValues(1, 1e-3, grad_sq=1e-6),
                                        "b()": NodeValues(1, 0.1, grad_sq=1.0)}, (1e-4, 1.0, None), target="top1")
    overlay = overlay_of(spread, "activation")  # 0.001 and 0.1 are 0 and 1 of the log scale
    assert overlay.bar.title == "Colour: mean |x| of each node's output (log scale)"
    assert overlay.bar.ticks == ((0.0, "1e-05"), (0.5, "0.001"), (1.0, "0.1"))
    assert overlay.fills == {"input": ANCHORS[0], "a": ANCHORS[2], "b()": ANCHORS[4]}
    gradient = overlay_of(spread, "gradient")  # input's gradient is 0: at the bottom of a log scale of a and b
    assert gradient.bar.title == ("Colour: gradient L2 at each node's output (log scale, 0 and below at the "
                                  "bottom)")
    assert gradient.edge_widths == {("input", "a", None): EDGE_WIDTHS[0], ("a", "b()", None): EDGE_WIDTHS[1]}
    assert "Edge width: the L2 of the gradient of the tensor it carries, 1 (0.0001) to 5 (1), log scale." in \
        gradient.legend
    assert (Scale.of([0.5, 1, 40]).log, Scale.of([0.001, 0.5], fraction=True).log, Scale.of([2, 2]).at(2)) == \
        (False, False, 0.5)
