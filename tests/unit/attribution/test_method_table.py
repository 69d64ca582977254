"""The method table (inspector.core.records.methods): one row per method, and what the surfaces read from it."""

from __future__ import annotations

import pytest

from inspector.core.records import methods as table
from inspector.core.records.signs import default_sign


def test_the_table_says_what_each_surface_used_to_hold_in_its_own_list():
    # the lists the table replaced (records/requests.py, core/attribution.py, the views), as they were written
    assert table.method_names() == ("saliency", "gradcam", "guided", "guided-gradcam", "rollout", "legrad", "chefer",
                                    "ig", "smoothgrad", "occlusion", "eigencam", "drise")
    assert table.layer_methods() == ("gradcam", "guided-gradcam", "eigencam")
    assert table.class_agnostic() == ("rollout", "eigencam")
    assert table.compared(False) == ("saliency", "gradcam", "guided", "ig", "smoothgrad", "occlusion")
    assert table.compared(True) == ("saliency", "gradcam", "guided", "ig", "smoothgrad", "occlusion", "eigencam",
                                    "drise")
    offered = {name: table.app_options(name) for name in table.method_names() if table.app_options(name)}
    assert offered == {"ig": ("steps", "quadrature", "baseline"), "smoothgrad": ("of", "kind", "samples", "noise", "seed"),
                       "occlusion": ("window", "stride", "baseline"), "drise": ("masks", "cell", "probability", "seed"),
                       "legrad": ("blocks",)}
    assert [m.name for m in table.METHODS.values() if not m.detectors] == ["rollout", "legrad"]  # chefer: DETR's boxes
    assert [m.name for m in table.METHODS.values() if m.vits_only] == ["rollout", "legrad", "chefer"]
    assert [m.name for m in table.METHODS.values() if m.baseline] == ["ig", "occlusion"]


def test_smoothgrad_of_ig_offers_igs_options():
    assert table.app_options("smoothgrad", {"of": "ig"}) == ("of", "kind", "samples", "noise", "seed", "steps",
                                                              "quadrature", "baseline")
    assert table.app_options("smoothgrad", {"of": "guided"}) == ("of", "kind", "samples", "noise", "seed")


def test_options_name_their_flags_and_the_two_seeds_differ():
    smooth, drise = table.METHODS["smoothgrad"], table.METHODS["drise"]
    assert smooth.option("seed").cli_flag == "--noise-seed" and drise.option("seed").cli_flag == "--mask-seed"
    assert smooth.option("kind").cli_flag == "--smooth" and table.METHODS["ig"].option("max_memory").cli_flag == \
        "--max-memory"


def test_a_method_is_registered_once_and_its_sign_is_the_default():
    row = table.Method("toy-signed", "toy", "a toy", "tests:toy", sign="signed")
    table.register(row)
    try:
        assert default_sign("toy-signed") == "signed" and "toy-signed" in table.method_names()
        with pytest.raises(ValueError, match="already registered"):
            table.register(row)
    finally:
        table.unregister("toy-signed")
    assert "toy-signed" not in table.method_names()
    with pytest.raises(ValueError, match="explains one of class, nothing"):
        table.register(table.Method("toy-odd", "toy", "a toy", "tests:toy", explains="everything"))
