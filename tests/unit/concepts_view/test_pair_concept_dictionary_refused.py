"""A concept edit whose dictionary was learned on another model is refused by the two-model comparisons too, as
`capture` refuses it: `diff_models` (the first model's edits, and the second's) and the app's Against run
(`run_against`, the second model's own edits), in one line naming both models, before any model runs (they ran on
with the other model's directions before)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

from inspector.core import SpecError, diff_models
from inspector.core.compare import pair
from inspector.core.compare.pair import run_against
from inspector.core.edits import parse_edit
from inspector.core.records.requests import AgainstRequest, ModelRequest, RunRequest
from inspector.core.engine.runner import run as engine_run
from inspector.core.runspec import RunSpec
from inspector.core.sources.loaded import LoadedModel

sys.path.insert(0, str(Path(__file__).parents[1] / "concepts"))
from test_concept_edits import Mixed, write_dictionary  # noqa: E402


@pytest.fixture
def runs(monkeypatch) -> list:
    """The models the comparison runs (the engine's `run` as pair.py calls it), in order."""
    ran = []

    def recording(module, *args, **kwargs):
        ran.append(module.source_name)
        return engine_run(module, *args, **kwargs)

    monkeypatch.setattr(pair, "run", recording)
    return ran


def model(source: str) -> LoadedModel:
    module = Mixed().eval()
    module.source_name = source
    return LoadedModel(module, source, input_shape=(1, 3, 5, 6))


def test_diff_models_refuses_another_model_s_dictionary_before_either_run(tmp_path, runs):
    folder = write_dictionary(tmp_path / "c", model="mixed")
    edit = f"mix:output=ablate_concept(0, dict={folder!r})"
    first, second = model("mixed"), model("other")
    x = torch.rand(1, 3, 5, 6)
    with pytest.raises(SpecError) as info:  # the same edits on the second: its dictionary is the first model's
        diff_models(first, second, x, layers="mix", edits=[edit], target="sum")
    assert "learned on model mixed, not other" in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(SpecError, match="learned on model mixed, not other"):
        diff_models(second, first, x, layers="mix", edits=[edit], second_edits=[], target="sum")
    assert runs == []
    diff = diff_models(first, second, x, layers="mix", edits=[edit], second_edits=[], target="sum")  # its own: runs
    assert runs == ["mixed", "other"] and diff is not None


class OneModelBench:
    """What run_against asks of the app's second Workbench: load the asked model, move it to a device."""

    def __init__(self, loaded: LoadedModel) -> None:
        self.loaded, self.sharing = loaded, None

    def load(self, request, progress=None):
        return self.loaded, None

    def move_to(self, device):
        return torch.device("cpu")


def test_the_app_s_against_run_refuses_another_model_s_dictionary_before_the_second_runs(tmp_path, runs):
    folder = write_dictionary(tmp_path / "c", model="mixed")
    first, second = model("mixed"), model("other")
    against = AgainstRequest(ModelRequest("other"), edits=(parse_edit(f"mix:output=ablate_concept(0, {folder!r})"),))
    request = RunRequest(spec=RunSpec.make(("mix",), ("output",), (), "sum"), against=against)
    with pytest.raises(SpecError, match="learned on model mixed, not other"):
        run_against(OneModelBench(second), first, torch.rand(1, 3, 5, 6), request, result=None)
    assert runs == []
