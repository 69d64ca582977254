"""Issue 41, item 18 for `diff` and `atlas`: what needs no model is said before torch is imported (a threshold
of -1 waited 25 s for both models to load and run), and a device, torch's to check, before the model's code is
imported. The commands run one after another in one new interpreter (cli_here.answers_in_one_interpreter), the
two devices last: what each had imported when it answered is in sys.modules."""

from __future__ import annotations

import pytest
from cli_here import answers_in_one_interpreter, refused_early

SAMPLES = ("checkerboard, circle, cross, detect_four_shapes, detect_shapes_and_textures, detect_three_shapes, ring, "
           "scene_four_shapes, scene_ring_square_star, scene_star_and_stripes, square, star, stripes, toy_mixed, "
           "toy_ones, triangle")
HOW = "write HOST:PORT of the cluster's head (e.g. 10.0.0.5:6379, as `ray start --head` prints it) or auto"
DEVICE = "error: Unknown device 'gpu'. Use auto, cpu, cuda, cuda:N or mps."

DIFF = {  # the arguments after diff --model resnet18 --input sample:star, and what diff says
    "no second model": ((), "error: diff needs a second model: --against WEIGHTS, or --against-model SOURCE."),
    "two second models": (("--against", "w.safetensors", "--against-model", "resnet18"),
                          "error: Give the second model either as --against WEIGHTS (same source) or as "
                          "--against-model SOURCE [--against-weights W2], not both."),
    "threshold": (("--against-model", "resnet18", "--threshold", "-1"),
                  "error: The threshold must be a number >= 0, got -1.0."),
    "sites": (("--against-model", "resnet18", "--sites", "output,nope"),
              "error: Unknown site(s) nope. Valid sites: input, output, grad_output, grad_input, attention, params."),
    "edit": (("--against-model", "resnet18", "--edit", "bad"),
             "error: Cannot read edit 'bad'. Write KEY=OP(ARGS), e.g. relu1:grad_input=clamp(min=0)."),
    "target": (("--against-model", "resnet18", "--target", "seg:x"),
               "error: Target 'seg:x': seg:CLASS takes a class index (seg:15 is VOC's person), optionally "
               "@X0,Y0,X1,Y1 for a box in input pixels."),
    "against seed": (("--against-model", "resnet18", "--against-seed", "abc"),
                     "error: --against-seed must be a whole number from 0 to 4294967295, not 'abc'."),
    "score threshold": (("--against-model", "resnet18", "--score-threshold", "2"),
                        "error: The score threshold is between 0 and 1, got 2.0."),
    "input": (("--against-model", "resnet18", "--input", "sample:nope"),
              f"error: No sample named 'nope'. Samples: {SAMPLES}."),
}
ATLAS = {  # the arguments after atlas --model resnet18 --data resources/samples --layers layer1 ({tmp}: a folder)
    "top": (("--top", "0"), "error: --top and --batch must be at least 1 (got top 0, batch 16)."),
    "batch": (("--batch", "0"), "error: --top and --batch must be at least 1 (got top 9, batch 0)."),
    "seed": (("--seed", "-1"), "error: --seed must be a whole number from 0 to 4294967295, not '-1'."),
    "no data": (("--data", "{tmp}/none"), "error: Not a folder or a glob pattern: {tmp}/none"),
    "no images": (("--data", "{tmp}/empty"), "error: No images in {tmp}/empty (looked for .png, .jpg, .jpeg, "
                                             ".bmp, .tif, .tiff, .webp, .gif, in nested folders too)."),
    "ray client": (("--ray", "ray://x"), f"error: ray://x: Ray Client addresses (ray://) are not supported (they "
                                         f"need ray[client], which this install lacks); {HOW}."),
    "ray address": (("--ray", "nohost..x"), f"error: Cannot read the Ray address 'nohost..x': {HOW}."),
}


@pytest.fixture(scope="module")
def answers(tmp_path_factory):
    """What each command said, by "diff CASE" and "atlas CASE", and the two devices."""
    tmp = tmp_path_factory.mktemp("early")
    (tmp / "empty").mkdir()
    diff = ["diff", "--model", "resnet18", "--input", "sample:star"]
    atlas = ["atlas", "--model", "resnet18", "--data", "resources/samples", "--layers", "layer1"]
    commands = {f"diff {case}": [*diff, *argv, "--out", str(tmp / "d.npz")] for case, (argv, _) in DIFF.items()}
    commands.update({f"atlas {case}": [*atlas, *(a.format(tmp=tmp) for a in argv), "--out", str(tmp / "atlas")]
                     for case, (argv, _) in ATLAS.items()})
    commands["diff device"] = [*diff, "--against-model", "resnet18", "--device", "gpu", "--out", str(tmp / "d.npz")]
    commands["atlas device"] = [*atlas, "--device", "gpu", "--out", str(tmp / "atlas")]
    return tmp, dict(zip(commands, answers_in_one_interpreter(commands.values())))


@pytest.mark.parametrize("case", list(DIFF))
def test_diff_refuses_model_free_arguments_before_torch_loads(answers, case):
    refused_early(answers[1][f"diff {case}"], DIFF[case][1])


@pytest.mark.parametrize("case", list(ATLAS))
def test_atlas_refuses_model_free_arguments_before_torch_loads(answers, case):
    tmp, said = answers
    refused_early(said[f"atlas {case}"], ATLAS[case][1].format(tmp=tmp))


@pytest.mark.parametrize("command", ["diff", "atlas"])
def test_an_unknown_device_is_refused_before_the_model_loads(answers, command):
    refused_early(answers[1][f"{command} device"], DEVICE, torch_imported=True)
