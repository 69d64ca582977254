"""Issue 41, item 13 (last part): `capture --model inspector.demo.toy:ToyMLP` said "random weights, seed N" though
ToyMLP's constructor fixes its weights. The line says random weights only where the loader drew them (torchvision,
timm, hf with --weights random); a Python factory's weights are what it made under the seed."""

from __future__ import annotations

from cli_here import run_here


def test_a_factory_with_fixed_weights_is_not_said_to_have_random_ones():
    done = run_here("capture", "--model", "inspector.demo.toy:ToyMLP", "--input", "sample:toy_ones", "--layers",
                    "fc1", "--sites", "output", "--target", "output", "--seed", "3")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-2] == "weights as the factory made them, under seed 3 (--seed 3 makes them again)"
    assert lines[-1].startswith("1 captures, target output, ")
    assert "random" not in done.stdout


def test_weights_the_loader_drew_are_said_to_be_random():
    done = run_here("layers", "--model", "squeezenet1_1", "--seed", "4")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "random weights, seed 4 (--seed 4 gives them again)"
