"""Open evaluation… on a remote engine: the server reads a finished evaluation's summary.json in its data root (the
`summary` request, answered at once in the info lane), against a real `network-inspector serve` on 127.0.0.1. The
summary is the file's content as read here (json.load); a folder that holds none (an unfinished job's says how to
finish it), a damaged summary and a folder outside the root are each one line; a body of another shape too."""

from __future__ import annotations

import json
import shutil

import pytest

from inspector.protocol.errors import ProtocolError
from inspector.remote.errors import EngineError


@pytest.fixture(scope="module")
def served(remote, tmp_path_factory, shapes):
    from inspector.core import load_model
    from inspector.core.evaluate import run_evaluation

    top = tmp_path_factory.mktemp("summary")
    data = shapes(top / "data", 2, seed=4)
    made = top / "made"
    run_evaluation(load_model("demo"), data, ["saliency"], ["deletion"], made, steps=2)
    (top / "outside").mkdir()
    shutil.copytree(made, top / "outside" / "eval")
    with remote.engine_server(top / "server") as server:
        root = server.root
        shutil.copytree(made, root / "eval")
        (root / "unfinished").mkdir()
        (root / "unfinished" / "evaluation.job.json").write_text("{}")  # the job's state: started, not finished
        (root / "empty").mkdir()
        (root / "damaged").mkdir()
        (root / "damaged" / "summary.json").write_text('{"rows": "not the summary"}')
        server.outside = top / "outside" / "eval"
        yield server


def test_the_summary_is_summary_json_as_it_is_on_the_server(served):
    root = served.root
    with served.client() as engine:
        assert "summary" in engine.hello["serves"]
        relative = engine.call("summary", {"path": "eval"})
        absolute = engine.call("summary", {"path": str(root / "eval")})
    on_disk = json.loads((root / "eval" / "summary.json").read_text())
    assert relative == on_disk and absolute == on_disk
    assert [(r["method"], r["metric"]) for r in on_disk["summary"]][:1] == [("saliency", "deletion")]


@pytest.mark.parametrize("path, said", [
    ("empty", "{root}/empty holds no finished evaluation (no summary.json)."),
    ("unfinished", "{root}/unfinished holds no finished evaluation (no summary.json): it is unfinished; evaluate "
                   "again with the same choices to finish it."),
    ("damaged", "Not opened: {root}/damaged/summary.json is not an evaluation's summary (it lacks its rows); run "
                "again with --restart (restart=True) to start over, or delete that folder."),
    ("{outside}", "The evaluation folder {outside} is outside this server's data root ({root}): refused."),
], ids=["empty", "unfinished", "damaged", "outside"])
def test_a_folder_without_a_finished_evaluation_is_one_line(served, path, said):
    with served.client() as engine:
        with pytest.raises(EngineError) as refused:
            engine.call("summary", {"path": path.format(outside=served.outside)})
        assert engine.call("devices")  # the connection serves on
    message = str(refused.value)
    assert message == said.format(outside=served.outside, root=served.root) and "\n" not in message


def test_a_summary_request_of_another_shape_is_one_error_line():
    from inspector.protocol.schemas import check_body

    for body in (None, {}, {"path": 3}, {"path": "x", "show": "all"}, "x"):
        with pytest.raises(ProtocolError, match=r'^A summary request\'s body is \{"path": an evaluation\'s folder\}'):
            check_body("summary", body)
    check_body("summary", {"path": "eval"})
