"""The folder jobs' face: every name it gives is its module's own object, loaded when first asked for, so that a
command checks a job's arguments before torch is imported."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import inspector.core.folder_jobs as face


def test_every_name_of_the_face_is_its_modules_object():
    assert len(face.__all__) == 66 and len(set(face.__all__)) == 66
    for name in face.__all__:
        module, own = face._WHERE[name]
        assert getattr(face, name) is getattr(importlib.import_module(f"inspector.core.folder_jobs.{module}"), own)
    assert face.TOP_FIELDS == ("score", "image", "pos", "count", "mean", "m2", "positive")
    assert {"LayerTop", "job_of", "JobLock", "replica_rows"} <= set(dir(face))


def test_a_name_the_face_does_not_give_is_an_attribute_error():
    with pytest.raises(AttributeError, match="has no attribute 'AtlasJob'"):
        face.AtlasJob  # noqa: B018 - the old name is gone


def test_checking_a_jobs_arguments_imports_no_torch():
    code = ("import sys\nfrom inspector.core.folder_jobs import check_address, check_counts, check_top\n"
            "check_counts(9, 16); check_top(9)\nprint(sorted(m for m in sys.modules if m.split('.')[0] == 'torch'))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
