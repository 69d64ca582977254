"""What each "Colour by" choice draws, on hand-made records (no model, no window): a comparison's colours, ticks,
outline and texts by draw.values' rules; nothing changed; NaN."""

from __future__ import annotations

from dataclasses import dataclass

from inspector.core.graph.draw.overlay import drawn_for
from inspector.core.graph.draw.values import Scale, colour_at, value_text
from inspector.core.graph.values.colour_by import COLOUR_BY


@dataclass
class Compared:
    """A GraphComparison's fields the overlay reads; for_view: itself."""

    change: dict
    first_divergent: str | None = None
    threshold: float = 1e-3
    names: tuple = ("baseline", "edited")

    def for_view(self, _view):
        return self


def test_every_choice_has_a_family_and_none_has_none():
    assert COLOUR_BY["none"].family is None
    assert {k.family for k in COLOUR_BY.values()} == {None, "values", "edits", "against"}
    assert list(COLOUR_BY) == ["none", "activation", "l2", "zeros", "gradient", "nan", "change", "divergence"]


def test_a_change_is_coloured_by_the_map_and_its_ticks_say_its_numbers():
    change = {"input": 0.0, "conv1": 0.0, "conv2": 0.5, "fc": 0.25}
    drawn = drawn_for("change", Compared(change, "conv2"), None)
    scale = Scale.of(change.values())
    assert drawn.overlay.fills == {k: colour_at(scale.at(v)) for k, v in change.items()}
    assert [t for _, t in drawn.overlay.bar.ticks] == [value_text(0.0, False), value_text(0.25, False),
                                                        value_text(0.5, False)]
    assert drawn.outline == "conv2" and "edited vs baseline" in drawn.overlay.bar.title
    assert drawn.texts["conv2"] == "conv2: relative L2 change, edited vs baseline = 0.5 (the first above the threshold)"
    assert "Outlined: conv2" in drawn.overlay.legend[0]


def test_nothing_changed_says_so_and_nan_is_said():
    drawn = drawn_for("divergence", Compared({"a": 0.0, "c": 0.0}, None, names=("one", "two")), None)
    assert drawn.outline is None and drawn.overlay.fills == {"a": colour_at(0.5), "c": colour_at(0.5)}  # one value
    assert drawn.overlay.legend == ("No node changes by more than 0.001.",)
    assert drawn.texts["a"] == "a: relative L2 divergence, two vs one = 0"
    drawn = drawn_for("divergence", Compared({"a": 0.0, "b": float("nan")}, "b"), None)  # NaN counts as diverged
    assert drawn.overlay.fills == {"a": colour_at(0.5)} and drawn.outline == "b"
    assert drawn.texts["b"] == "b: relative L2 divergence, edited vs baseline = NaN (the first above the threshold)"
