"""Issue 53: what a client may name on a server (`inspector.remote.admission`), without a server: names that
are no files pass, every file (links followed) must be inside the data root, and a client's trust counts for
nothing on a server without --trust."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.core.common.errors import UntrustedCodeError
from inspector.core.records.requests import AgainstRequest, AttributionRequest, ModelRequest, RunRequest
from inspector.remote.admission import admit
from inspector.remote.data_root import DataRoot
from inspector.remote.errors import RefusedRequest


@pytest.fixture
def root(tmp_path, monkeypatch):
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "in.png").write_bytes(b"")
    (folder / "org").mkdir()
    (folder / "out").symlink_to(tmp_path)
    monkeypatch.chdir(folder)  # as the server works: in its data root
    return DataRoot(folder)


@pytest.mark.parametrize("source", ["demo", "demo-detector", "resnet18", "timm:resnet18", "hf:org/name",
                                    "hf:org/name#pooler_output"])
def test_names_that_are_no_files_pass(root, source):
    assert admit(ModelRequest(source), root, trusted=False) == ModelRequest(source)


@pytest.mark.parametrize("request_", [
    RunRequest(ModelRequest("demo"), "/etc/hostname"),
    RunRequest(ModelRequest("demo"), "out/x.png"),  # through a link
    RunRequest(ModelRequest("demo"), "~/x.png"),
    RunRequest(ModelRequest("demo"), "*/../../*.png"),
    RunRequest(ModelRequest("demo"), "in\0.png"),
    RunRequest(ModelRequest("demo", weights="../w.safetensors"), "in.png"),
    RunRequest(ModelRequest("hf:../model"), "in.png"),
    RunRequest(ModelRequest("/tmp/m.py:Net"), "in.png"),
    RunRequest(ModelRequest("demo"), "in.png", against=AgainstRequest(ModelRequest("demo", weights="/w.pt"))),
    AttributionRequest(ModelRequest("demo"), "in.png", options=(("baseline", "out/b.npy"),)),
], ids=["absolute", "link", "home", "glob-up", "nul", "weights", "hf-folder", "python-file", "against", "baseline"])
def test_every_file_named_must_be_inside_the_data_root(root, request_):
    with pytest.raises(RefusedRequest, match="outside this server's data root|a pattern with '..'") as refused:
        admit(request_, root, trusted=True)
    assert "\n" not in str(refused.value)


def test_a_concept_edits_folder_must_be_inside_the_data_root(root):
    from inspector.core.runspec import RunSpec

    spec = RunSpec.make(["conv1"], ["output"], ["conv1:output=ablate_concept(id=0, dict='out/concepts')"])
    with pytest.raises(RefusedRequest, match="dictionary folder"):
        admit(RunRequest(ModelRequest("demo"), "in.png", spec=spec), root, trusted=False)


def test_files_inside_pass_and_trust_is_the_servers(root):
    asked = RunRequest(ModelRequest("demo", weights="in.png", trust=True), "in.png")
    assert admit(asked, root, trusted=False).model.trust is False
    assert admit(asked, root, trusted=True).model.trust is True
    Path(root.folder, "net.py").write_text("")
    with pytest.raises(UntrustedCodeError, match="not started with --trust"):
        admit(ModelRequest("net.py:Net", trust=True), root, trusted=False)
    assert admit(ModelRequest("net.py:Net"), root, trusted=True).trust is True
