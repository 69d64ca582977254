"""Issue 25, item 13: what looks broken is explained — a zero-initialised head (every gradient before it
is 0), a model's own error with its traceback as details, a file's classes listed without running it,
and messages that end as sentences."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from inspector.core.common.errors import RunError
from inspector.core.records.failure import failure, sentence
from inspector.core.engine.runner import RunSpec, run
from inspector.core.engine.zero_head import zero_head
from inspector.core.sources.python_names import names_in


class ZeroHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 6)
        self.head = nn.Linear(6, 3)
        nn.init.zeros_(self.head.weight)  # as torchvision's ViT starts its heads.head

    def forward(self, x):
        return self.head(torch.relu(self.body(x)))


def test_a_zero_head_is_named_when_every_gradient_before_it_is_zero():
    model = ZeroHead()
    spec = RunSpec.make(["body"], "output,grad_output", (), "1")
    result = run(model, torch.randn(2, 4), spec)
    assert np.all(result["body:grad_output"] == 0)  # what the warning explains
    assert any(w.startswith("Every gradient before head is exactly 0: its weights are all zero") for w in result.warnings)
    nn.init.normal_(model.head.weight)
    assert zero_head(model) is None
    result = run(model, torch.randn(2, 4), spec)
    assert not any("exactly 0" in w for w in result.warnings)


def test_a_models_own_error_keeps_its_traceback_as_details():
    def raising():
        raise ValueError("boom in forward")

    try:
        try:
            raising()
        except ValueError as exc:
            raise RunError(f"The model raised ValueError: {exc}") from exc
    except RunError as exc:
        got = failure(exc, "run")
    assert got.message == "The model raised ValueError: boom in forward"
    assert "Traceback" in got.details and "in raising" in got.details and "ValueError: boom in forward" in got.details
    assert failure(RunError("no cause"), "run").details == ""


def test_a_files_classes_and_factories_are_listed_without_running_it(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("raise SystemExit('ran!')\nclass Net:\n    pass\ndef make():\n    pass\ndef _private():\n    pass\n")
    assert names_in(path) == ["Net", "make"]
    assert names_in(tmp_path / "missing.py") == [] and names_in(tmp_path) == []


def test_messages_end_as_sentences():
    assert sentence("Cannot import broken model") == "Cannot import broken model."
    assert sentence("Done.") == "Done." and sentence("") == ""
