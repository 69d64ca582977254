"""Issue 41, item 18 for `diff` and `atlas`: what needs no model is said before torch is imported (a threshold
of -1 waited 25 s for both models to load and run), and a device, torch's to check, before the model's code is
imported. Each command runs in a new interpreter with `-X importtime` (cli_here.refused_early)."""

from __future__ import annotations

import pytest
from cli_here import refused_early

SAMPLES = ("checkerboard, circle, cross, detect_four_shapes, detect_shapes_and_textures, detect_three_shapes, ring, "
           "scene_four_shapes, scene_ring_square_star, scene_star_and_stripes, square, star, stripes, toy_mixed, "
           "toy_ones, triangle")
HOW = "write HOST:PORT of the cluster's head (e.g. 10.0.0.5:6379, as `ray start --head` prints it) or auto"


@pytest.mark.parametrize("argv, line", [
    ((), "error: diff needs a second model: --against WEIGHTS, or --against-model SOURCE."),
    (("--against", "w.safetensors", "--against-model", "resnet18"),
     "error: Give the second model either as --against WEIGHTS (same source) or as --against-model SOURCE "
     "[--against-weights W2], not both."),
    (("--against-model", "resnet18", "--threshold", "-1"), "error: The threshold must be a number >= 0, got -1.0."),
    (("--against-model", "resnet18", "--sites", "output,nope"),
     "error: Unknown site(s) nope. Valid sites: input, output, grad_output, grad_input, attention, params."),
    (("--against-model", "resnet18", "--edit", "bad"),
     "error: Cannot read edit 'bad'. Write KEY=OP(ARGS), e.g. relu1:grad_input=clamp(min=0)."),
    (("--against-model", "resnet18", "--target", "seg:x"),
     "error: Target 'seg:x': seg:CLASS takes a class index (seg:15 is VOC's person), optionally @X0,Y0,X1,Y1 for "
     "a box in input pixels."),
    (("--against-model", "resnet18", "--against-seed", "abc"),
     "error: --against-seed must be a whole number from 0 to 4294967295, not 'abc'."),
    (("--against-model", "resnet18", "--score-threshold", "2"), "error: The score threshold is between 0 and 1, got 2.0."),
    (("--against-model", "resnet18", "--input", "sample:nope"), f"error: No sample named 'nope'. Samples: {SAMPLES}."),
], ids=["no second model", "two second models", "threshold", "sites", "edit", "target", "against seed",
        "score threshold", "input"])
def test_diff_refuses_model_free_arguments_before_torch_loads(tmp_path, argv, line):
    refused_early(("diff", "--model", "resnet18", "--input", "sample:star", *argv, "--out", str(tmp_path / "d.npz")),
                  line)


def test_diff_refuses_an_unknown_device_before_the_models_load(tmp_path):
    refused_early(("diff", "--model", "resnet18", "--input", "sample:star", "--against-model", "resnet18",
                   "--device", "gpu", "--out", str(tmp_path / "d.npz")),
                  "error: Unknown device 'gpu'. Use auto, cpu, cuda, cuda:N or mps.", torch_imported=True)


@pytest.mark.parametrize("argv, line", [
    (("--top", "0"), "error: --top and --batch must be at least 1 (got top 0, batch 16)."),
    (("--batch", "0"), "error: --top and --batch must be at least 1 (got top 9, batch 0)."),
    (("--seed", "-1"), "error: --seed must be a whole number from 0 to 4294967295, not '-1'."),
    (("--data", "{tmp}/none"), "error: Not a folder or a glob pattern: {tmp}/none"),
    (("--data", "{tmp}/empty"), "error: No images in {tmp}/empty (looked for .png, .jpg, .jpeg, .bmp, .tif, "
                                ".tiff, .webp, .gif, in nested folders too)."),
    (("--ray", "ray://x"), f"error: ray://x: Ray Client addresses (ray://) are not supported (they need "
                           f"ray[client], which this install lacks); {HOW}."),
    (("--ray", "nohost..x"), f"error: Cannot read the Ray address 'nohost..x': {HOW}."),
], ids=["top", "batch", "seed", "no data", "no images", "ray client", "ray address"])
def test_atlas_refuses_model_free_arguments_before_torch_loads(tmp_path, argv, line):
    (tmp_path / "empty").mkdir()
    argv = [text.format(tmp=tmp_path) for text in argv]
    refused_early(("atlas", "--model", "resnet18", "--data", "resources/samples", "--layers", "layer1", *argv,
                   "--out", str(tmp_path / "atlas")), line.format(tmp=tmp_path))


def test_atlas_refuses_an_unknown_device_before_the_model_loads(tmp_path):
    refused_early(("atlas", "--model", "resnet18", "--data", "resources/samples", "--layers", "layer1",
                   "--device", "gpu", "--out", str(tmp_path / "atlas")),
                  "error: Unknown device 'gpu'. Use auto, cpu, cuda, cuda:N or mps.", torch_imported=True)
