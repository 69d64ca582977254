"""Edits: the one op table (`table`: every op's row, the ops of other packages registered into it), the ops on a
tensor alone, `Edit` and its text (`ops`), the presets written as ordinary edits (`presets`) and the guided
rule's reach (`guided`). The face: `Edit`, `parse_edit`, `make_edit` (an edit built from its values, checked
as its text is), `parse_op`, `check_edits`, `OPS`, `OpSpec`, `register_op`, `ops_list`, `CONCEPT_OPS`."""

from .ops import Edit, check_edits, make_edit, ops_list, parse_edit, parse_op
from .table import CONCEPT_OPS, OPS, PLUGINS, OpSpec, register_op

__all__ = ["CONCEPT_OPS", "OPS", "PLUGINS", "Edit", "OpSpec", "check_edits", "make_edit", "ops_list", "parse_edit",
           "parse_op", "register_op"]
