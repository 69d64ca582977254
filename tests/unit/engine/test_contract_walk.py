"""Issue 40, item 9: the API contract walk (inspector.bench.contract) in the suite: every argument of every
exported function, RunSpec.make, load_session, save_session, a Session's fields, per_box.tiled, the atlas API and
the concepts API, each given the 28 wrong values a tester uses, raises only InspectorErrors, and the walk leaves nothing behind.
Issue 52 item 6 added compare_edits, compare_models, graph_values and record_graph, a Session's fields (saved), and
a number as a 0-d array and tensor (np.array(3), torch.tensor(3)). On the code before it 232 of the 4,256 calls
broke: 24 of the earlier calls iterated a 0-d value (TypeError), compare_edits' and compare_models' threshold and
edits 56 (TypeError, ValueError, RuntimeError), graph_values' edits 12, record_graph's leaves 2, a Session's fields
138 (to_dict's TypeError, AttributeError, JSON's TypeError). Issue 52 item 6 added the concepts API too
(learn_concepts, load_dictionary, read_record, page_path, nnls, Dictionary.coefficients and .reconstruct,
read_concepts, concept_relevance_map: 1,204 calls), of which 290 broke before (AttributeError, TypeError,
ValueError: each took its arguments' kinds on trust)."""

from __future__ import annotations

import os
import tempfile

import numpy as np
import pytest
import torch

from inspector.bench.contract import WRONG_VALUES, run_contract
from inspector.core import InspectorError
from inspector.core.common.errors import ArgumentTypeError

#: Calls the walk makes (docs/reference/python-api.md states it): 28 wrong values for each of 203 arguments.
CALLS = 5684


def test_the_contract_walk_holds_no_wrong_kind_and_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "temp"))
    (tmp_path / "temp").mkdir()
    tried, count, broken = run_contract()
    assert len(WRONG_VALUES) == 28
    assert tried == CALLS and count == len(broken)
    assert broken == [] and count == 0  # 0 wrong kinds (the long names, the atlas's NUL out_dir: item 7)
    assert sorted(os.listdir(tmp_path)) == ["temp"]  # nothing in the current folder (out_dir='x' went to temp)
    left = [name for name in os.listdir(tmp_path / "temp") if not name.startswith("torchinductor_")]  # torch's cache
    assert left == []  # the walk's own temporary folder is removed


@pytest.mark.parametrize("call, words", [
    (lambda run, spec, x, m: run(m, x, spec, labels=5), "run(): labels must be a list of class names"),
    (lambda run, spec, x, m: run(m, x, spec, labels=torch.zeros(2, 3)), "run(): labels must be a list of class"),
    (lambda run, spec, x, m: run(m, x, spec, sharing="x"), "run(): sharing must be a Sharing or None, not 'x'."),
    (lambda run, spec, x, m: run(m, x, spec, phase=5), "run(): phase must be a function or None, not 5."),
    (lambda run, spec, x, m: run(m, x, spec, cancel=True), "run(): cancel must be a threading.Event or None"),
])
def test_runs_other_arguments_of_the_wrong_kind_are_argument_type_errors(call, words):
    from inspector.core import RunSpec, load_input, load_model, run

    toy = load_model("inspector.demo.toy:ToyMLP")
    with pytest.raises(ArgumentTypeError) as error:
        call(run, RunSpec.make(["fc1"]), load_input("sample:toy_ones"), toy.module)
    assert str(error.value).startswith(words), str(error.value)


@pytest.mark.parametrize("value", [5, 2.5, object(), True])
def test_stats_now_of_the_wrong_kind_is_an_argument_type_error(value):
    from inspector.core import RunSpec

    with pytest.raises(ArgumentTypeError, match="stats_now must be"):
        RunSpec.make(["fc1"], stats_now=value)


@pytest.mark.parametrize("value", [None, 0, [], b"b", torch.zeros(1)])
def test_session_paths_and_sessions_of_the_wrong_kind_are_argument_type_errors(tmp_path, value):
    from inspector.core.session.file import Session, load_session, save_session

    with pytest.raises(ArgumentTypeError, match=r"^load_session\(\): path must be str or Path"):
        load_session(value)
    with pytest.raises(ArgumentTypeError, match=r"^save_session\(\): path must be str or Path"):
        save_session(Session(), value)
    with pytest.raises(ArgumentTypeError, match=r"^save_session\(\): session must be Session"):
        save_session(value, tmp_path / "s.inspector.json")


@pytest.mark.parametrize("shape", [(1,), (2, 3), (3, 7, 7), (1, 1, 3, 7, 7)])
def test_each_box_takes_images_n_c_h_w_and_says_so(shape):
    """A detector's boxes are explained on images (N, C, H, W): another shape is one line naming it, before the
    detector runs (it was the detector's own AssertionError, wrapped)."""
    from inspector.core import each_box, load_model
    from inspector.core.common.errors import ArgumentValueError

    with pytest.raises(ArgumentValueError) as error:
        each_box(load_model("demo-detector"), torch.zeros(shape), "saliency")
    assert str(error.value) == f"each_box(): inputs must be images (N, C, H, W), not shape {shape}."


def test_a_nul_in_a_session_path_is_one_line(tmp_path):
    from inspector.core.session.file import Session, save_session

    with pytest.raises(InspectorError, match="must not hold a NUL byte"):
        save_session(Session(), str(tmp_path / "a\x00b.json"))


@pytest.mark.parametrize("picture, maps, columns, words", [
    (None, "good", None, "tiled(): picture must be an H x W x 3 uint8 array"),
    (np.zeros(2), "good", None, "tiled(): picture must be an H x W x 3 uint8 array"),
    ("good", 5, None, "tiled(): maps must be a list"),
    ("good", "x", None, "tiled(): maps must be a list"),
    ("good", [5], None, "tiled(): maps must be a list of Attributions (each_box's), not 5."),
    ("good", "good", 0, "tiled(): columns must be a whole number of at least 1 or None, not 0."),
    ("good", "good", 2.5, "tiled(): columns must be a whole number of at least 1 or None, not 2.5."),
    ("good", "good", True, "tiled(): columns must be a whole number of at least 1 or None, not True."),
])
def test_tiled_arguments_of_the_wrong_kind_are_one_line(picture, maps, columns, words):
    from inspector.core.attribution.per_box import tiled
    from inspector.core.attribution.record import Attribution

    good = [Attribution("saliency", np.zeros((8, 8), np.float32), "", None)]
    picture = np.zeros((8, 8, 3), np.uint8) if isinstance(picture, str) and picture == "good" else picture
    maps = good if isinstance(maps, str) and maps == "good" else maps
    with pytest.raises(InspectorError) as error:
        tiled(picture, maps, columns)
    assert str(error.value).startswith(words), str(error.value)


def test_tiled_with_more_columns_than_maps_is_one_row():
    from inspector.core.attribution.per_box import tiled
    from inspector.core.attribution.record import Attribution

    maps = [Attribution("saliency", np.zeros((8, 8), np.float32), "", None)] * 2
    assert tiled(np.zeros((8, 8, 3), np.uint8), maps, 10**20).shape == (8 + 16, 8 * 2 + 4, 3)  # one row: a 16-pixel caption over each
