"""Issue 52 item 6: a concept edit's dict= name over 255 bytes or with a NUL byte is one line, a SpecError before the
run, naming the edit and what is wrong with the name as paths says it of every path (an OSError "File name too long"
or a ValueError "embedded null byte" before; the app said "Unexpected OSError")."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

from inspector.core import SpecError, capture
from inspector.core.sources.loaded import LoadedModel

sys.path.insert(0, str(Path(__file__).parent))
from test_concept_edits import Mixed  # noqa: E402

LONG = "d" * 300


@pytest.mark.parametrize("name, words", [
    (LONG, f"The dictionary folder name too long: {'d' * 40}...{'d' * 30} (a name in it is 300 bytes long, and "
           "names here take at most 255)"),
    (f"{LONG}/x", f"The dictionary folder name too long: {'d' * 40}...{'d' * 28}/x (a name in it is 300 bytes "
                  "long, and names here take at most 255)"),
    ("a\\x00b", "The dictionary folder holds a NUL byte (\\x00), which no path can: 'a\\x00b'"),
])
def test_a_dictionary_name_no_path_can_have_is_one_line(name, words):
    model = LoadedModel(Mixed().eval(), "mixed", input_shape=(1, 3, 5, 6))
    edit = f"mix:output=ablate_concept(0, '{name}')"
    with pytest.raises(SpecError) as error:
        capture(model, torch.rand(1, 3, 5, 6), layers="mix", sites="output", edits=[edit], target="sum")
    message = str(error.value)
    assert "\n" not in message and message.startswith("Edit ") and message.endswith(f": {words}")
