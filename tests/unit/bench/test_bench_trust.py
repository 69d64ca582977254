"""Issue 55: `bench --trust` counts each check's passes through the model by hooks; the counts equal what each
check must run, worked out by hand on the demo (64 x 64 input, K = 4 steps), and the peer's ROAD runs beside ours."""

from __future__ import annotations

import copy
import math

import pytest
import torch
from torch import nn


def test_the_counter_counts_batch_items_forward_and_backward_and_follows_a_deep_copy():
    from inspector.bench.trust import batching, counted_passes

    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    with counted_passes(model) as counts:
        with torch.no_grad():
            model(torch.ones(5, 4))  # 5 items, one call, no backward
        model(torch.ones(2, 4)).sum().backward()  # 2 items forward and backward
        twin = copy.deepcopy(model)  # MPRT's copy: its passes count too
        twin(torch.ones(3, 4)).sum().backward()
    assert counts == {"forward_calls": 3, "forwards": 10, "largest_batch": 5, "backward_calls": 2, "backwards": 5}
    assert batching(counts) == "10 images in 3 forwards (up to 5 a batch), 5 backwards"
    model(torch.ones(1, 4))  # the hooks are gone after the block
    assert counts["forwards"] == 10


def test_each_checks_passes_are_what_it_must_run_by_hand():
    pytest.importorskip("pytorch_grad_cam")
    from inspector.bench.trust import bench_model, format_row
    from inspector.core import load_model

    lines = []
    rows = {r["check"]: r for r in bench_model("demo", "saliency", repeats=1, steps=4, log=lines.append)}
    demo = load_model("demo").module
    layers = sum(1 for m in demo.modules() if any(True for _ in m.parameters(recurse=False)))
    assert layers == 11  # the demo's modules that own parameters: MPRT re-initialises each in turn
    probe = 1  # the scores pick their batch from one copy's memory, measured by a forward of it
    by_hand = {  # (forward items, backward items)
        "plain forward": (1, 0),
        "the saliency map": (1, 1),  # one forward, the gradient of the class's logit
        "deletion+insertion inspector K=4": (2 * (4 + 1) + probe, 0),  # two games, K + 1 images each
        "deletion+insertion rise2018": (2 * (math.ceil(64 * 64 / 224) + 1) + probe, 0),  # 224 pixels a step
        "road": (2 * 9 + probe, 0),  # MoRF and LeRF at 10, ..., 90 %
        "mprt cascading": (1 + layers, layers),  # the layers' order, then a map with each more layer random
        "random-logit": (2, 1),  # the number of classes, then the other class's map
    }
    assert {check: (r["forwards"], r["backwards"]) for check, r in rows.items()} == by_hand
    assert rows["road"]["forward_calls"] < rows["road"]["forwards"]  # ours batched
    # grad-cam's ROADCombined: per percentage and curve the input and the imputed image, one at a time
    assert (rows["road"]["peer_forwards"], rows["road"]["peer_backwards"]) == (9 * 2 * 2, 0)
    assert rows["road"]["peer"].startswith("pytorch-grad-cam") and rows["road"]["ratio"] == pytest.approx(
        rows["road"]["seconds"] / rows["road"]["peer_s"])
    assert "not installed" in rows["mprt cascading"]["peer"] and "peer_s" not in rows["mprt cascading"]
    for r in rows.values():  # one run each: its seconds over the plain forward timed right before it
        assert r["x_forward"] == pytest.approx(r["seconds"] / r["forward_s"]) and r["forward_s"] > 0
    assert [line for line in lines if line.startswith("road ")] == [format_row(rows["road"])]


def test_an_unknown_method_is_one_line_before_any_model(capsys):
    from inspector.cli.dispatch import main

    assert main(["bench", "--trust", "--methods", "gradcam", "sharpest"]) == 2
    assert capsys.readouterr().err.strip().startswith("error: Unknown method 'sharpest' for --trust. Methods: "
                                                      "saliency, gradcam,")
