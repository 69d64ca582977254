"""`diff --edit` with a concept edit whose dictionary was learned on another model is refused as `capture`
refuses it: one line naming both models, exit 2, before the two runs (it ran on before, the dictionary's
directions applied to a model they do not describe)."""

from __future__ import annotations

import torch

from inspector.cli import main
from inspector.core.concepts import Dictionary
from inspector.core.concepts.dictionary import save_dictionary


def write(folder, model):
    save_dictionary(folder, Dictionary("nmf", torch.rand(4, 64, generator=torch.Generator().manual_seed(0)),
                                       "relu3", "NCHW", model))
    return str(folder)


def test_diff_refuses_another_models_dictionary_before_running(tmp_path, capsys, monkeypatch):
    import inspector.core.compare.pair as pair

    def never(*_a, **_k):
        raise AssertionError("the models ran")

    monkeypatch.setattr(pair, "diff_models", never)
    folder = write(tmp_path / "d", "resnet18")
    edit = f"relu3:output=ablate_concept(id=1, dict='{folder}')"
    code = main(["diff", "--model", "demo", "--against-model", "demo", "--input", "sample:star", "--layers", "relu3",
                 "--edit", edit])
    err = capsys.readouterr().err
    assert code == 2
    assert err == (f"error: Edit relu3:output=ablate_concept(id=1, dict={folder!r}): The dictionary was learned on "
                   f"model resnet18, not demo.\n")


def test_diff_with_the_models_own_dictionary_runs(tmp_path, capsys):
    folder = write(tmp_path / "d", "demo")
    edit = f"relu3:output=ablate_concept(id=1, dict='{folder}')"
    assert main(["diff", "--model", "demo", "--against-model", "demo", "--input", "sample:star", "--layers", "relu3",
                 "--edit", edit]) == 0
    assert "relu3" in capsys.readouterr().out
