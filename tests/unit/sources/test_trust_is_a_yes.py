"""Trust is a yes, not a truthy value (issue 40, item 1): every API function that takes `trust` takes only
True or False. A string such as 'false' is refused as a wrong kind before anything is read, and no code
that came with the file runs."""

from __future__ import annotations

import json
import os
import pickle

import pytest
import torch
import transformers

from inspector.core import load_model, load_pair
from inspector.core.common.errors import ArgumentTypeError, UntrustedCodeError
from inspector.core.sources.checkpoints import read_checkpoint, weights_into

NOT_A_YES = ["false", "true", "", "no", 1, 0, 1.0, None, [], [True], object()]


def _hf_folder_with_code(folder):
    """A tiny ViT folder whose config asks for a module of its own that writes a marker when imported."""
    config = transformers.ViTConfig(hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                    intermediate_size=32, image_size=16, patch_size=8, num_labels=2)
    transformers.ViTForImageClassification(config).save_pretrained(folder)
    marker = folder / "ran.txt"
    (folder / "modeling_evil.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    saved = json.loads((folder / "config.json").read_text())
    saved["auto_map"] = {"AutoModelForImageClassification": "modeling_evil.EvilModel"}
    (folder / "config.json").write_text(json.dumps(saved))
    return marker


class _Evil:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"echo pwned > '{self.marker}'",))


def _named(value) -> str:
    """A test id the same in every pytest-xdist worker (an object()'s repr holds its address)."""
    return "object()" if type(value) is object else repr(value)


@pytest.mark.parametrize("trust", NOT_A_YES, ids=_named)
def test_an_hf_folder_with_its_own_code_takes_only_a_yes(tmp_path, trust):
    marker = _hf_folder_with_code(tmp_path)
    with pytest.raises(ArgumentTypeError, match="trust must be True or False"):
        load_model(f"hf:{tmp_path}", trust=trust)
    assert not marker.exists()
    with pytest.raises(UntrustedCodeError):  # False is the no it always was
        load_model(f"hf:{tmp_path}", trust=False)
    assert not marker.exists()


@pytest.mark.parametrize("trust", ["false", 1, None], ids=repr)
def test_torchscript_and_pickles_take_only_a_yes(tmp_path, trust):
    script = tmp_path / "net.pt"
    torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), script)
    with pytest.raises(ArgumentTypeError, match="trust must be True or False"):
        load_model(str(script), trust=trust)
    assert load_model(str(script), trust=True).kind == "torchscript"

    marker = tmp_path / "marker.txt"
    evil = tmp_path / "evil.pt"
    evil.write_bytes(pickle.dumps({"weight": _Evil(marker)}, protocol=pickle.HIGHEST_PROTOCOL))
    with pytest.raises(ArgumentTypeError, match="trust must be True or False"):
        read_checkpoint(evil, trust=trust)
    with pytest.raises(ArgumentTypeError, match="trust must be True or False"):
        weights_into(torch.nn.Linear(2, 2), evil, trust=trust)
    with pytest.raises(ArgumentTypeError, match="trust must be bool"):  # its annotations checked at the boundary
        load_pair("demo", None, against=str(evil), trust=trust)
    assert not marker.exists()


def test_the_message_is_one_line_that_names_what_it_was_given(tmp_path):
    with pytest.raises(ArgumentTypeError) as info:
        load_model("demo", trust="false")
    assert str(info.value) == "trust must be True or False, not 'false'."
    assert isinstance(info.value, TypeError)  # a wrong kind, as Python users expect


@pytest.mark.parametrize("trust", ["false", 1, None], ids=repr)
def test_a_session_that_names_code_takes_only_a_yes(tmp_path, trust):
    from inspector.core.session.file import Session, load_session, save_session

    factory = tmp_path / "net.py"
    marker = tmp_path / "ran.txt"
    factory.write_text(f"open({str(marker)!r}, 'w').write('ran')\nimport torch\nNet = lambda: torch.nn.Linear(2, 2)\n")
    path = save_session(Session(model=f"{factory}:Net", input="sample:star"), tmp_path / "s.json")
    with pytest.raises(ArgumentTypeError, match="trust must be bool"):
        load_session(path, trust=trust)
    with pytest.raises(UntrustedCodeError):
        load_session(path, trust=False)
    assert load_session(path, trust=True).model == f"{factory}:Net"
    assert not marker.exists()  # reading a session runs nothing; loading its model is load_model's
