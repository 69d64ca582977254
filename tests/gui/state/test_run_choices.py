"""The rules the window's state applies to choose what a run captures and what the tabs offer (Qt-free)."""

from __future__ import annotations

from inspector.core.edits import Edit
from inspector.core.common.keys import Key
from inspector.gui.state.run_choices import listed_device, panel_keys_of, sites_of, visible_of


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


def test_what_the_layer_tab_says_when_nothing_is_shown_at_a_key():
    from types import SimpleNamespace

    from inspector.gui.state.run_choices import missing_text

    info = SimpleNamespace(attention=("blocks.0.attn", "blocks.1.attn"),
                           parameters_of=lambda layer: ("weight",) if layer == "fc" else ())
    assert missing_text(info, "bias:grad", "fc", "fc.bias:grad") == "fc has no bias parameter (it has weight)."
    assert missing_text(info, "weight:grad", "relu#1", "relu.weight:grad") == \
        "relu has no weight parameter (it has no parameters of its own)."
    assert missing_text(info, "weight:grad", "fc", "fc.weight:grad") == "Nothing captured at fc.weight:grad."
    assert missing_text(info, "attention", "head", "head:attention") == \
        "No attention at head: tick one of this model's 2 attention modules (the first is blocks.0.attn) and show it."
    none = SimpleNamespace(attention=(), parameters_of=lambda layer: ())
    assert missing_text(none, "attention", "conv1", "conv1:attention").startswith(
        "No attention at conv1: this model has no attention module the app knows (")
    assert missing_text(None, "grad_output", "conv1", "conv1:grad_output") == "Nothing captured at conv1:grad_output."


def test_a_device_is_named_as_the_engine_lists_it():
    devices = [("cpu", "CPU"), ("cuda:0", "GPU 0"), ("cuda:1", "GPU 1")]
    assert [listed_device(n, devices) for n in ("cuda", "CUDA ", "cuda:1", "Cpu", "mps", "cuda:7")] == [
        "cuda:0", "cuda:0", "cuda:1", "cpu", "mps", "cuda:7"]
    assert listed_device("cuda", None) == "cuda"  # before the engine has listed them: kept as said
    assert listed_device("cuda", [("cpu", "CPU")]) == "cuda"  # and refused by the state as missing
