"""Issue 41, item 18 (the part that needs the model): what `attribute` can only check against the model's input
size (an occlusion window or a D-RISE cell larger than the input, a picture scale too large for the map) is said
right after the model and input load, before any pass: a forward pre-hook on every module (PyTorch's global
`register_module_forward_pre_hook`) counts the modules called, and it counts none."""

from __future__ import annotations

import pytest
import torch

from inspector.cli import main

CASES = {  # the arguments after --input, and what is said
    "occlusion window": (["--model", "demo", "--method", "occlusion", "--window", "500"],
                         "error: The occlusion window (500 pixels) is larger than the input (64 x 64)."),
    "occlusion stride": (["--model", "demo", "--method", "occlusion", "--window", "8", "--stride", "9"],
                         "error: The occlusion stride (9) is larger than the window (8): some pixels would never be "
                         "occluded."),
    "drise cell": (["--model", "demo-detector", "--method", "drise", "--cell", "500"],
                   "error: The D-RISE cell (500 pixels) is larger than the input (64 x 64)."),
    "picture scale": (["--model", "demo", "--method", "saliency", "--scale", "600"],
                      "error: A scale of 600 makes the 64 x 64 map a picture of 38400 x 38400 pixels; at most "),
}


@pytest.mark.parametrize("case", list(CASES))
def test_input_size_checks_come_before_any_pass(case, tmp_path, capsys):
    argv, said = CASES[case]
    called: list[str] = []
    handle = torch.nn.modules.module.register_module_forward_pre_hook(
        lambda module, _inputs: called.append(type(module).__name__))
    try:
        out = tmp_path / ("map.png" if "--scale" in argv else "map.npy")
        code = main(["attribute", *argv, "--input", "sample:star", "--out", str(out)])
    finally:
        handle.remove()
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith(said) and len(err.splitlines()) == 1, err
    assert called == [], f"{len(called)} modules ran before the error: {called[:5]}"
    assert not out.exists()
