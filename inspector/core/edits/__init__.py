"""Edits: the one op table (`ops`), the presets written as ordinary edits (`presets`) and the guided rule's
reach (`guided`). The face: `Edit`, `parse_edit`, `parse_op`, `OPS`, `OpSpec`, `ops_list`."""

from .ops import OPS, Edit, OpSpec, ops_list, parse_edit, parse_op

__all__ = ["OPS", "Edit", "OpSpec", "ops_list", "parse_edit", "parse_op"]
