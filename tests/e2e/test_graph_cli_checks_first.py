"""Issue 42 item 5: what `graph` can check without the model is said in one line, exit 2, before torch is imported
and the model loads. The commands run one after another in one new interpreter (cli_here.answers_in_one_interpreter):
what each had imported when it answered is in sys.modules."""

from __future__ import annotations

import pytest
from cli_here import answers_in_one_interpreter, refused_early

CASES = {  # the arguments after graph --model resnet18 --input sample:star, and what graph says
    "suffix": (("--out", "{tmp}/g.txt"), "error: --out {tmp}/g.txt: cannot write .txt; use .svg, .png, .json."),
    "negative depth": (("--groups", "-1"),
                       "error: --groups takes closed, open or a depth 0 or more (1 opens the top-level groups), "
                       "not '-1'."),
    "word depth": (("--groups", "deep"),
                   "error: --groups takes closed, open or a depth 0 or more (1 opens the top-level groups), "
                   "not 'deep'."),
    "both": (("--groups", "1", "--open", "layer1"),
             "error: --groups and --open both choose the groups drawn open: give one of them."),
    "open nothing": (("--open", " , "),
                     "error: --open names no group: give module paths, comma-separated (layer1,layer3.0)."),
    "scale 0": (("--scale", "0"), "error: --scale is a number of pixels per layout unit above 0, not 0."),
    "scale nan": (("--scale", "nan"), "error: --scale is a number of pixels per layout unit above 0, not nan."),
    "scale json": (("--scale", "2", "--out", "{tmp}/g.json"),
                   "error: --scale sizes a figure (.svg, .png); g.json is node-link data."),
    "target alone": (("--target", "3"), "error: --target chooses what the gradient of --values starts from: "
                                        "add --values."),
    "bad target": (("--values", "gradient", "--target", "seg:x"),
                   "error: Target 'seg:x': seg:CLASS takes a class index (seg:15 is VOC's person), optionally "
                   "@X0,Y0,X1,Y1 for a box in input pixels."),
    "edit alone": (("--edit", "conv1:output=zero()"),
                   "error: --edit changes the run whose values are drawn: add --values (change: edited vs baseline)."),
    "against alone": (("--against", "{tmp}/w.safetensors"),
                      "error: --against draws each node's divergence from a second model: add --values change."),
    "against not change": (("--values", "l2", "--against", "{tmp}/w.safetensors"),
                           "error: --against draws each node's divergence from a second model: add --values change."),
    "change alone": (("--values", "change"),
                     "error: --values change compares two runs: add --edit KEY=OP(ARGS) (edited vs baseline) or "
                     "--against WEIGHTS (a second checkpoint of the model)."),
    "threshold alone": (("--threshold", "0.1", "--values", "l2"),
                        "error: --threshold says which change is a divergence: add --values change."),
    "negative threshold": (("--threshold", "-1", "--values", "change", "--edit", "conv1:output=zero()"),
                           "error: The threshold must be a number >= 0, got -1.0."),
    "bad edit": (("--values", "change", "--edit", "conv1:output"),
                 "error: Cannot read edit 'conv1:output'. Write KEY=OP(ARGS), e.g. relu1:grad_input=clamp(min=0)."),
    "no against file": (("--values", "change", "--against", "{tmp}/none.safetensors"),
                        "error: --against weights file not found: {tmp}/none.safetensors"),
    "layers nothing": (("--layers", " , "),
                       "error: --layers names no module: give paths or globs, comma-separated (layer1,layer2.*), "
                       "type:NAME, or all."),
    "seed": (("--seed", "-4"), "error: --seed must be a whole number from 0 to 4294967295, not '-4'."),
}


@pytest.fixture(scope="module")
def answers(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("early")
    commands = {}
    for case, (argv, _) in CASES.items():
        argv = [a.format(tmp=tmp) for a in argv]
        out = [] if "--out" in argv else ["--out", str(tmp / "g.svg")]
        commands[case] = ["graph", "--model", "resnet18", "--input", "sample:star", *argv, *out]
    return tmp, dict(zip(commands, answers_in_one_interpreter(commands.values())))


@pytest.mark.parametrize("case", list(CASES))
def test_model_free_arguments_are_refused_before_torch_loads(answers, case):
    tmp, said = answers
    refused_early(said[case], CASES[case][1].format(tmp=tmp))
