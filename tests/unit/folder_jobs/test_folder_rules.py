"""A job folder's life by one set of rules (folder_jobs.folder), on real files: the job file written first, the
same job found again, another job refused with the kind's words, a finished result read, a restart that removes
the job, its state, results and scratch folder, and nothing else."""

from __future__ import annotations

import json

import pytest

from inspector.core.folder_jobs import FolderKind, check_out_dir, forget_job, open_job


class Refused(Exception):
    pass


KIND = FolderKind("concepts", Refused, "restart it", "the concepts need a folder", "holds results not of this job.",
                  lambda out, args, finished: f"{out} is {'done' if finished else 'busy'} with {args['layer']}",
                  lambda out: {"read": (out / "concepts.json").read_text()}, scratch="concepts.cache")


def test_a_new_folder_gets_its_job_file_and_the_same_job_finds_it_again(tmp_path):
    out = tmp_path / "out"
    assert open_job(out, KIND, "k1", {"layer": "a"}, restart=False) == (None, True)
    assert json.loads((out / "concepts.job.json").read_text()) == {"key": "k1", "arguments": {"layer": "a"}}
    assert open_job(out, KIND, "k1", {"layer": "a"}, restart=False) == (None, False)


def test_another_job_is_refused_in_the_kinds_words_and_nothing_changes(tmp_path):
    out = tmp_path / "out"
    open_job(out, KIND, "k1", {"layer": "a"}, restart=False)
    before = (out / "concepts.job.json").read_bytes()
    with pytest.raises(Refused, match=r"out is busy with a$"):
        check_out_dir(out, KIND, "k2", {"layer": "b"})
    (out / "concepts.json").write_text("whole")
    with pytest.raises(Refused, match=r"out is done with a$"):
        check_out_dir(out, KIND, "k2", {"layer": "b"})
    assert (out / "concepts.job.json").read_bytes() == before


def test_a_finished_job_is_read_and_a_result_without_its_job_is_refused(tmp_path):
    out = tmp_path / "out"
    open_job(out, KIND, "k1", {"layer": "a"}, restart=False)
    (out / "concepts.json").write_text("whole")
    assert check_out_dir(out, KIND, "k1", {"layer": "a"}) == {"read": "whole"}
    (out / "concepts.partial.json").write_text("{}")  # a state beside it: the job goes on
    assert check_out_dir(out, KIND, "k1", {"layer": "a"}) is None
    other = tmp_path / "other"
    other.mkdir()
    (other / "dictionary.safetensors").write_bytes(b"x")
    with pytest.raises(Refused, match="holds results not of this job"):
        check_out_dir(other, KIND, "k1", {"layer": "a"})
    assert sorted(p.name for p in other.iterdir()) == ["dictionary.safetensors"]


def test_a_restart_removes_the_job_its_state_results_and_scratch_and_nothing_else(tmp_path):
    out = tmp_path / "out"
    open_job(out, KIND, "k1", {"layer": "a"}, restart=False)
    for name in ("concepts.json", "dictionary.safetensors", "concepts.partial.npz", "concepts.partial.json",
                 "mine.txt"):
        (out / name).write_text("x")
    (out / "concepts.cache").mkdir()
    (out / "concepts.cache" / "train.f32").write_bytes(b"1234")
    forget_job(out, KIND)  # a failed start: the job file and state only
    assert sorted(p.name for p in out.iterdir()) == ["concepts.json", "dictionary.safetensors", "mine.txt"]
    assert open_job(out, KIND, "k2", {"layer": "b"}, restart=True) == (None, True)
    assert sorted(p.name for p in out.iterdir()) == ["concepts.job.json", "mine.txt"]


def test_a_file_or_another_kinds_folder_is_refused(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(Refused, match="is a file; the concepts need a folder"):
        open_job(tmp_path / "file", KIND, "k1", {"layer": "a"}, restart=True)
    atlas = tmp_path / "atlas"
    atlas.mkdir()
    (atlas / "atlas.json").write_text("{}")
    with pytest.raises(Refused, match=r"holds an atlas \(atlas.json\), not concepts"):
        open_job(atlas, KIND, "k1", {"layer": "a"}, restart=True)
    assert sorted(p.name for p in atlas.iterdir()) == ["atlas.json"]
