"""Issue 54 item 3: one Colour-by table (`inspector.core.graph.values.colour_by.COLOUR_BY`) read by the graph
command's `--values`, the app's Colour by menu and the drawing: the same names in the same order, and a row added to
the table is offered by the command and the menu and drawn, with no other change."""

from __future__ import annotations

import argparse

from inspector.cli.dispatch import build_parser
from inspector.core.graph import Edge, Graph, Node
from inspector.core.graph.draw.overlay import drawn_for
from inspector.core.graph.draw.values import SHOWN, overlay_of
from inspector.core.graph.values.colour_by import CHANGE, COLOUR_BY, Kind
from inspector.core.graph.values.numbers import GraphValues, NodeValues
from inspector.gui.views.graph.overlay_bar import OverlayBar


def _command_choices() -> list[str]:
    """The graph command's --values choices, from a parser built now."""
    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    graph = commands.choices["graph"]
    return list(next(a for a in graph._actions if a.dest == "values").choices)


def _menu(qtbot) -> list[tuple[str, str]]:
    """The app's Colour by menu: (name, menu text) of each item, in its order."""
    bar = OverlayBar()
    qtbot.addWidget(bar)
    return [(bar.kind.itemData(i), bar.kind.itemText(i)) for i in range(bar.kind.count())]


class _Found:
    """One run's values on a view (`GraphValues.for_view`): itself."""

    def __init__(self, values):
        self.values = values

    def for_view(self, _view):
        return self.values


def _values() -> GraphValues:
    graph = Graph((Node("input", "input", "input"), Node("a", "module", "ReLU", "a"),
                   Node("output", "output", "output")),
                  (Edge("input", "a", (1, 4), "float32"), Edge("a", "output", (1, 4), "float32")))
    nodes = {"input": NodeValues(4, 4.0, 4.0, 0, grad_sq=9.0), "a": NodeValues(4, 2.0, 2.0, 2, grad_sq=1.0)}
    return GraphValues(graph, nodes, (3.0, 1.0), None, (), target="7")


def test_the_command_the_menu_and_the_drawing_say_the_table_in_its_order(qtbot):
    assert list(COLOUR_BY) == ["none", "activation", "l2", "zeros", "gradient", "nan", "change", "divergence"]
    assert _menu(qtbot) == [(k.name, k.label) for k in COLOUR_BY.values()]
    one_run = [k.name for k in COLOUR_BY.values() if k.family == "values"]
    assert list(SHOWN) == one_run and all(SHOWN[name] is COLOUR_BY[name] for name in one_run)
    # the command: one run's values, then both comparisons as `change` (with --edit, or --against)
    assert _command_choices() == [*one_run, CHANGE] == [k.name for k in COLOUR_BY.values()
                                                       if k.family in ("values", "edits")]
    for name in one_run:
        assert overlay_of(_values(), name).bar.title == f"Colour: {COLOUR_BY[name].title}"


def test_a_row_added_to_the_table_is_offered_and_drawn_by_all_three(qtbot, monkeypatch):
    row = Kind("squares", "mean x²", "values", "mean of the squares of each node's output",
               lambda v: v.sq_sum / v.count)
    monkeypatch.setitem(COLOUR_BY, "squares", row)
    assert ("squares", "mean x²") in _menu(qtbot)
    assert "squares" in _command_choices() and SHOWN["squares"] is row
    overlay = overlay_of(_values(), "squares")
    assert overlay.bar.title == "Colour: mean of the squares of each node's output"
    assert set(overlay.fills) == {"input", "a"}
    drawn = drawn_for("squares", _Found(_values()), None)
    assert drawn.texts["a"] == "a: mean of the squares of its output = 0.5"
