"""Issue 54 item 2: one op table (inspector.core.edits.table). The concept ops are registered into it from the
concepts package; the hook set and the edits package import nothing of concepts; a concept edit's text is read
before anything imported the concepts package; an edit built from its values (`make_edit`, as the app builds a
concept edit) is the record its text reads into, refused as that text is."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from inspector.core.edits import (
    CONCEPT_OPS,
    OPS,
    PLUGINS,
    OpSpec,
    check_edits,
    make_edit,
    parse_edit,
)
from inspector.core.edits.table import OpTable
from inspector.core.common.errors import SpecError
from inspector.core.common.keys import Key

ROOT = Path(__file__).resolve().parents[3]


def fresh(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT,
                         check=False)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_the_table_has_exactly_these_ops_in_this_order():
    assert list(OPS) == ["scale", "clamp", "zero", "noise", "clip_norm", "zero_channels", "keep_channels",
                         "zero_heads", "sign", "abs", "guided", "ablate_concept", "scale_concept"]
    assert len(OPS) == 13


def test_the_concept_ops_are_rows_of_the_one_table_registered_from_concepts():
    from inspector.core.concepts import edit_ops

    assert CONCEPT_OPS == edit_ops.CONCEPT_OPS == ("ablate_concept", "scale_concept")
    assert PLUGINS == {"inspector.core.concepts.edit_ops": CONCEPT_OPS}
    assert OPS["ablate_concept"].fn is edit_ops.ablate_concept
    assert OPS["scale_concept"].fn is edit_ops.scale_concept
    for name in CONCEPT_OPS:
        spec = OPS[name]
        assert spec.takes_layer and spec.sites == ("output",) and spec.texts == ("dict",)
        assert spec.before_run is edit_ops.before_run
    assert set(OPS.registered()) == set(OPS)  # every row is here once read


def test_hookset_and_the_edits_package_import_no_concepts_module():
    said = fresh("import sys, inspector.core.engine.hookset, inspector.core.edits\n"
                 "print(sorted(m for m in sys.modules if m.startswith('inspector.core.concepts')))")
    assert said == "[]"


def test_the_table_is_listed_and_a_plain_edit_read_without_the_concepts_package_or_torch():
    said = fresh("import sys\n"
                 "from inspector.core.edits import OPS, parse_edit\n"
                 "names = list(OPS)\n"
                 "parse_edit('fc1:output=scale(2)'); OPS['clamp']\n"
                 "print(names[-2:], any(m.startswith('inspector.core.concepts') for m in sys.modules), "
                 "'torch' in sys.modules)")
    assert said == "['ablate_concept', 'scale_concept'] False False"


def test_a_concept_edit_is_read_before_anything_imported_the_concepts_package():
    said = fresh("import sys\n"
                 "from inspector.core.edits import parse_edit\n"
                 "before = 'inspector.core.concepts.edit_ops' in sys.modules\n"
                 "edit = parse_edit(\"relu3:output=scale_concept(1, 0.5, dict='c')\")\n"
                 "print(before, edit, 'inspector.core.concepts.edit_ops' in sys.modules)")
    assert said == "False relu3:output=scale_concept(id=1, k=0.5, dict='c') True"


def test_a_name_is_registered_once_and_a_named_plugin_must_register_its_ops():
    table = OpTable({"inspector.core.common.keys": ("missing",)})
    spec = OpSpec(lambda t: t, (), 0, "same(): the tensor")
    table.register("same", spec)
    with pytest.raises(ValueError, match="registered already"):
        table.register("same", spec)
    with pytest.raises(ValueError, match="a Python name"):
        table.register("not a name", spec)
    assert list(table) == ["same", "missing"] and "missing" in table and "other" not in table
    with pytest.raises(RuntimeError, match="does not register the op 'missing'"):
        table["missing"]
    with pytest.raises(KeyError):
        table["other"]


def test_check_edits_asks_each_op_that_checks_before_a_run(tmp_path):
    edits = [parse_edit("fc1:output=scale(2)"), parse_edit(f"relu3:output=ablate_concept(0, dict={str(tmp_path)!r})")]
    check_edits(edits[:1], "demo")  # nothing to check
    with pytest.raises(SpecError, match=r"^Edit relu3:output=ablate_concept\(id=0, dict="):
        check_edits(edits, "demo")  # no dictionary in that folder
    check_edits([edits[0], edits[1].__class__(edits[1].key, edits[1].op, edits[1].args, enabled=False)], "demo")


@pytest.mark.parametrize("key, op, args, text", [
    (Key("relu3", "output"), "ablate_concept", {"id": 2, "dict": "c"}, "relu3:output=ablate_concept(2, 'c')"),
    (Key("relu3", "output"), "scale_concept", {"dict": "c", "k": 0.5, "id": 1},
     "relu3:output=scale_concept(id=1, k=0.5, dict='c')"),
    (Key("fc1", "grad_output", 1, 0), "clamp", {"max": 2}, "fc1:grad_output#1[0]=clamp(max=2)"),
    (Key("conv1", "output"), "zero_channels", {"channels": [0, 3]}, "conv1:output=zero_channels([0, 3])"),
    (Key("relu1", "grad_input"), "guided", {}, "relu1:grad_input=guided()"),
])
def test_an_edit_built_from_its_values_is_the_one_its_text_reads_into(key, op, args, text):
    assert make_edit(key, op, **args) == parse_edit(text)


@pytest.mark.parametrize("key, op, args, message", [
    (Key("relu3", "grad_output"), "ablate_concept", {"id": 0, "dict": "c"},
     ("Edit \"relu3:grad_output=ablate_concept(id=0, dict='c')\": ablate_concept applies at relu3:output only, "
      "not at grad_output.")),
    (Key("relu3", "output"), "ablate_concept", {"id": -1, "dict": "c"},
     "ablate_concept: id must be a whole number >= 0 (a concept of the dictionary), not -1."),
    (Key("relu3", "output"), "ablate_concept", {"id": 0}, ("ablate_concept needs dict. Usage: ablate_concept(id, "
     "dict='DIR'): at LAYER:output, remove concept id of the dictionary in DIR (x - c_id d_id)")),
    (Key("fc1", "output"), "scale", {"factor": 2}, "scale has no argument 'factor'. Usage: scale(k): multiply by k"),
    (Key("fc1", "output"), "clamp", {"min": 2, "max": 1}, "clamp: min (2) is above max (1)."),
    (Key("", "output"), "zero", {}, "Edit 'output=zero()': edits apply to a layer or parameter site, not to output."),
])
def test_an_edit_built_from_its_values_is_refused_as_its_text_is(key, op, args, message):
    with pytest.raises(SpecError) as info:
        make_edit(key, op, **args)
    assert str(info.value) == message
    with pytest.raises(SpecError, match=r"^Unknown op 'foo'; the ops are scale\(k\), "):
        make_edit(key, "foo")
