"""Issue 54, item 1: what `atlas` and `concepts` share as commands (`cli/folder_job`): the same arguments of a job
over a folder (read the same way by both parsers), the same checks before torch (the same one-line error for the
same wrong value), the bars one a stage, and Ctrl-C's stop after the batch (None back, the reason on stderr)."""

from __future__ import annotations

import pytest
from PIL import Image

from inspector.cli import folder_job
from inspector.cli.dispatch import build_parser
from inspector.core.common.errors import InspectorError, RunCancelled

OWN = {"atlas": ["--layers", "conv1"], "concepts": ["--layer", "relu3", "--k", "4"]}


def parse(command: str, *shared: str):
    return build_parser().parse_args([command, "--model", "demo", *OWN[command], *shared])


@pytest.mark.parametrize("shared, expected", [
    (["--data", "d", "--out", "o"], {"data": "d", "out": "o", "batch": 16, "device": "cpu", "restart": False,
                                     "ray": None}),
    (["--data", "d", "--out", "o", "--batch", "4", "--device", "auto", "--restart", "--ray"],
     {"batch": 4, "device": "auto", "restart": True, "ray": ""}),
    (["--data", "d", "--out", "o", "--ray", "auto"], {"ray": "auto"}),
])
def test_both_commands_read_the_shared_arguments_alike(shared, expected):
    for command in OWN:
        args = vars(parse(command, *shared))
        assert {name: args[name] for name in expected} == expected, command


def test_both_commands_refuse_the_same_wrong_values_in_the_same_words(tmp_path):
    images = tmp_path / "images"
    images.mkdir()
    Image.new("RGB", (8, 8)).save(images / "one.png")
    (tmp_path / "empty").mkdir()
    cases = {"no folder": (["--data", str(tmp_path / "nowhere"), "--out", str(tmp_path / "o")], "Not a folder"),
             "no images": (["--data", str(tmp_path / "empty"), "--out", str(tmp_path / "o")], "No images in"),
             "a bad Ray address": (["--data", str(images), "--out", str(tmp_path / "o"), "--ray", "no port"],
                                   "no port"),
             "a bad device": (["--data", str(images), "--out", str(tmp_path / "o"), "--device", "gpu9"], "gpu9")}
    for case, (shared, words) in cases.items():
        said = []
        for command in OWN:
            with pytest.raises(InspectorError) as raised:
                folder_job.check_first(parse(command, *shared))
            said.append(str(raised.value))
        assert said[0] == said[1] and words in said[0], (case, said)


def test_a_job_stopped_after_its_batch_gives_none_and_closes_its_bars(capsys):
    bars = folder_job.StageBars({"pass": ("activations", "img"), "fit": ("fitting", "step")})

    def job(cancel):
        assert cancel() is False  # no Ctrl-C yet
        bars("pass", 2, 4)
        bars("pass", 4, 4)
        bars("fit", 1, 3)  # a new stage: the pass's bar is closed
        raise RunCancelled("Cancelled after 1 of 3 steps; run the same command again to go on.")

    assert folder_job.run_stoppable(job, bars) is None
    assert "Cancelled after 1 of 3 steps" in capsys.readouterr().err
    assert [bar.n for bar in bars.bars.values()] == [4, 1]
    assert folder_job.run_stoppable(lambda cancel: {"images": 3}, folder_job.StageBars({})) == {"images": 3}
