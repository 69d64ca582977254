"""Issue 54 item 2: the app builds a concept edit as a record (`make_edit`), not as text for the core to parse back;
the record is the one the text (the command line's, a session's) reads into, and is refused as that text is."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from inspector.core.edits import parse_edit
from inspector.core.common.errors import SpecError
from inspector.gui.state.concepts import ConceptsState
from inspector.gui.worker.concepts import OpenedConcepts


def picked(folder: str, layer: str = "relu3", concept: int | None = 2) -> SimpleNamespace:
    """What `ConceptsState.concept_edit` reads of the state: the dictionary opened and the concept picked."""
    return SimpleNamespace(opened=OpenedConcepts(folder, layer, "nmf", 4, "demo", {}), selected=concept)


@pytest.mark.parametrize("folder", ["concepts/relu3", "/runs/it's here", "C:\\runs\\c"])
def test_the_apps_concept_edit_is_the_record_its_text_reads_into(folder):
    state = picked(folder)
    ablate = ConceptsState.concept_edit(state, "ablate")
    assert ablate == parse_edit(f"relu3:output=ablate_concept(id=2, dict={folder!r})")
    scale = ConceptsState.concept_edit(state, "scale", 3)
    assert scale == parse_edit(f"relu3:output=scale_concept(id=2, k=3.0, dict={folder!r})")
    assert parse_edit(str(scale)) == scale  # and its text (a session's) reads back into it
    assert dict(scale.args)["k"] == 3.0 and isinstance(dict(scale.args)["k"], float)


def test_no_concept_picked_is_no_edit_and_a_bad_one_is_refused_as_its_text_is():
    assert ConceptsState.concept_edit(picked("c", concept=None), "ablate") is None
    with pytest.raises(SpecError) as built:
        ConceptsState.concept_edit(picked(" "), "ablate")
    with pytest.raises(SpecError) as read:
        parse_edit("relu3:output=ablate_concept(id=2, dict=' ')")
    assert str(built.value) == str(read.value) == "ablate_concept: dict must be a concepts folder in quotes, e.g. " \
                                                  "dict='concepts/'."
    with pytest.raises(SpecError, match=r"scale_concept: k must be a finite number, not inf\.$"):
        ConceptsState.concept_edit(picked("c"), "scale", float("inf"))
