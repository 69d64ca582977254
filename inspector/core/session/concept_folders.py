"""A concept edit's dictionary folder in a session file: written relative to the session's folder when it is that
folder or under it (the two move together), and read back from there; a relative one that climbs out is refused,
as a session's relative input and weights are (`file._files_beside`)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..edits import CONCEPT_OPS
from ..common.errors import SpecError
from ..storage.outputs import inside


def _with_folder(edit, folder: str):
    return replace(edit, args=tuple((name, folder if name == "dict" else value) for name, value in edit.args))


def _folder(edit) -> str | None:
    folder = dict(edit.args).get("dict") if edit.op in CONCEPT_OPS else None
    return folder if isinstance(folder, str) and folder else None


def concept_folders_relative(edits, session_path) -> tuple:
    """`edits` with each concept edit's dictionary folder that is the session file's folder or under it written
    relative to that folder (POSIX separators); others as they are."""
    base = Path(session_path).resolve().parent
    out = []
    for edit in edits:
        if (folder := _folder(edit)) is not None:
            where = Path(folder).resolve()
            if where == base or where.is_relative_to(base):
                edit = _with_folder(edit, where.relative_to(base).as_posix() or ".")
        out.append(edit)
    return tuple(out)


def concept_folders_resolved(edits, session_path) -> tuple:
    """`edits` with each concept edit's relative dictionary folder read from the session file's folder; a
    SpecError (one line) when one climbs out of it (a session's relative paths stay in its folder)."""
    path = Path(session_path)
    out = []
    for edit in edits:
        if (folder := _folder(edit)) is not None and not Path(folder).is_absolute():
            found = inside(path.resolve().parent, folder)
            if found is None:
                raise SpecError(f"{path.name}: the concept edit {edit} names dict={folder!r}, outside the session's "
                                f"folder; a relative path in a session must stay in that folder.")
            edit = _with_folder(edit, str(found))
        out.append(edit)
    return tuple(out)
