"""Issue 41, item 18: what `attribute` can check without the model is said before torch is imported and the
model loads (`--steps 0` answered after 11.9 s, the model's load); `capture` reads its sites first too. The
commands run one after another in one new interpreter (cli_here.answers_in_one_interpreter): what each had
imported when it answered is in sys.modules."""

from __future__ import annotations

import pytest
from cli_here import answers_in_one_interpreter, refused_early

GAUSS = ("error: Gauss-Legendre takes at most 20,000 steps (its nodes take time that grows as steps squared to find), "
         "not {}: use --quadrature riemann_trapezoid for more.")
SITES = "Valid sites: input, output, grad_output, grad_input, attention, params."
ATTRIBUTE = {  # the arguments after attribute --model resnet18 --input sample:star, and what attribute says
    "steps 0": (("--method", "ig", "--steps", "0"), "error: --steps must be at least 1, not 0."),
    "gauss steps": (("--method", "ig", "--steps", "100000"), GAUSS.format("100,000")),
    "smoothgrad of ig": (("--method", "smoothgrad", "--of", "ig", "--steps", "30000"), GAUSS.format("30,000")),
    "samples 0": (("--method", "occlusion", "--samples", "0"), "error: --samples must be at least 1, not 0."),
    "metrics": (("--method", "ig", "--metrics", "auc"),
                "error: --metrics takes deletion, insertion, road, mprt, random-logit (comma-separated), not 'auc'."),
    "protocol": (("--method", "ig", "--metrics", "deletion", "--protocol", "rise"),
                 "error: Unknown protocol 'rise'. Protocols: inspector, rise2018."),
    "road noise": (("--method", "ig", "--metrics", "road", "--road-noise", "-0.5"),
                   "error: --road-noise is a standard deviation, 0 or more, not -0.5."),
    "road percentages": (("--method", "ig", "--metrics", "road", "--road-percentages", "10,150"),
                         "error: ROAD's percentages are numbers from 0 to 100, not 150."),
}
CAPTURE = {
    "unknown site": (("--sites", "output,nope"), f"error: Unknown site(s) nope. {SITES}"),
    "no site": (("--sites", " , "), f"error: No sites given (the site list is empty). {SITES}"),
}


@pytest.fixture(scope="module")
def answers(tmp_path_factory):
    """What each command said, by "attribute CASE" and "capture CASE"."""
    tmp = tmp_path_factory.mktemp("early")
    commands = {f"{command} {case}": [command, "--model", "resnet18", "--input", "sample:star", *argv, "--out",
                                      str(tmp / ("o.npy" if command == "attribute" else "c.npz"))]
                for command, cases in (("attribute", ATTRIBUTE), ("capture", CAPTURE))
                for case, (argv, _) in cases.items()}
    return dict(zip(commands, answers_in_one_interpreter(commands.values())))


@pytest.mark.parametrize("case", list(ATTRIBUTE))
def test_model_free_arguments_are_refused_before_torch_loads(answers, case):
    refused_early(answers[f"attribute {case}"], ATTRIBUTE[case][1])


@pytest.mark.parametrize("case", list(CAPTURE))
def test_capture_refuses_sites_before_torch_loads(answers, case):
    refused_early(answers[f"capture {case}"], CAPTURE[case][1])
