"""The rules the window's state applies to choose what a run captures and what the tabs offer (Qt-free)."""

from __future__ import annotations

from inspector.core.edits import Edit
from inspector.core.keys import Key
from inspector.gui.state.run_choices import panel_keys_of, sites_of, visible_of


def test_sites_follow_the_gradient_shown_and_the_edits():
    assert sites_of("grad_output", ()) == {"output", "grad_output"}
    assert sites_of("grad_input", ()) == {"output", "grad_output", "grad_input"}
    assert sites_of("attention", ()) == {"output", "grad_output", "attention"}
    assert sites_of("weight:grad", ()) == {"output", "grad_output", "params"}
    assert sites_of("grad_output", (Edit(Key("fc", "grad"), "zero"),)) == {"output", "grad_output", "params"}


def test_panel_keys_and_the_layers_worked_out_first():
    assert panel_keys_of("conv1", "grad_output") == ("conv1:output", "conv1:grad_output")
    assert panel_keys_of("conv1", "weight:grad") == ("conv1:output", "conv1.weight:grad")
    assert visible_of(["a", "b"], "b") == ("b",) and visible_of(["a", "b"], None) == ("a",)
    assert visible_of(["a", "b"], "c") == ("a",) and visible_of([], None) == ()
