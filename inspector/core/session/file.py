"""Session files (`*.inspector.json`): model, weights and seed, input, device, target, ticks and edits, and
the Attribution tab's last choice (method, class, layer, options, scores) and the map made for it
(`stored`, inspector.core.session.stored).

Readable JSON a person can edit; the app saves and loads them and
`network-inspector capture --session FILE` replays the same run headless.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..common.arguments import checked, need_instance, need_list, need_path
from ..edits import Edit, parse_edit
from ..common.errors import ArgumentValueError, SpecError, UntrustedCodeError, first_line
from ..storage.outputs import inside
from ..storage.paths import check_name, regular_file
from ..records.requests import ModelRequest, RunRequest
from ..runspec import RunSpec
from ..sources.seeds import check_seed
from ..sources.trust import carries_code
from ..storage.writes import write_text
from .concept_folders import concept_folders_resolved
from .schema import _short, check_session_data
from .stored import attribution_of

#: Weights that name no file.
WEIGHT_WORDS = ("random", "pretrained", "default")

FORMAT = "network-inspector-session"
VERSION = 1


@dataclass(frozen=True)
class Session:
    model: str = "demo"
    weights: str | None = None
    input: str = ""
    device: str = "cpu"
    target: str = "auto"
    layers: tuple[str, ...] = ()
    sites: tuple[str, ...] = ("output", "grad_output")
    edits: tuple[Edit, ...] = ()
    input_grad: bool = False
    extra: dict = field(default_factory=dict, compare=False)
    seed: int | None = None  # the seed of random weights (None: not random, or an older file)
    attribution: dict | None = None  # {"method", "target", "layer", "options", "metrics"}, or None

    def points_at_code(self) -> bool:
        """True when loading the model runs code that came with it (inspector.core.sources.carries_code)."""
        return carries_code(self.model)

    def to_dict(self) -> dict:
        return {
            "format": FORMAT,
            "version": VERSION,
            "model": {"source": self.model, "weights": self.weights,
                      **({"seed": self.seed} if self.seed is not None else {})},
            "input": self.input,
            "device": self.device,
            "target": self.target,
            "layers": list(self.layers),
            "sites": list(self.sites),
            "input_grad": self.input_grad,
            "edits": [{"edit": e, "enabled": True} if isinstance(e, str) else
                      {"edit": f"{e.key}={e.op_text()}", "enabled": e.enabled} for e in self.edits],
            **({"attribution": self.attribution} if self.attribution else {}),
            **({"extra": self.extra} if self.extra else {}),
        }

    def run_request(self, trust: bool = False, run_id: int = 0, baseline: bool = False) -> RunRequest:
        spec = RunSpec.make(self.layers, self.sites, self.edits, self.target, self.input_grad)
        return RunRequest(ModelRequest(self.model, self.weights, trust, self.seed), self.input, self.device,
                          spec, baseline, run_id)


def session_from_dict(data, name: str = "The session") -> Session:
    """A Session from the parsed JSON of a session file, checked whole against `SCHEMA` first
    (inspector.core.session.schema): any mistake is a SpecError naming the field."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise SpecError(f"{name} is not a Network Inspector session file (no 'format' entry).")
    version = data.get("version", 0)
    if isinstance(version, int) and not isinstance(version, bool) and version > VERSION:
        raise SpecError(f"Session version {_short(version)} is newer than this app understands ({VERSION}).")
    check_session_data(data, name)
    if data.get("attribution"):
        _check_choice(data["attribution"], name)
    if (data.get("attribution") or {}).get("stored") is not None:
        attribution_of(data["attribution"]["stored"], name)  # a damaged map is said on loading, not later
    edits = []
    for item in data.get("edits", []):
        text, enabled = (item, True) if isinstance(item, str) else (item["edit"], item.get("enabled", True))
        edits.append(replace(parse_edit(text), enabled=enabled))
    model = data.get("model") or {}
    return Session(
        model=model.get("source", "demo"),
        weights=model.get("weights"),
        input=data.get("input", ""),
        device=data.get("device", "cpu"),
        target=str(data.get("target", "auto")),
        layers=tuple(data.get("layers", ())),
        sites=tuple(data.get("sites", ("output", "grad_output"))),
        edits=tuple(edits),
        input_grad=data.get("input_grad", False),
        extra=dict(data.get("extra", {})),
        seed=check_seed(model.get("seed"), "The session's model seed"),
        attribution=dict(data["attribution"]) if data.get("attribution") else None,
    )


def _check_choice(choice: dict, name: str) -> None:
    """The attribution choice's options as the method takes them (the method table's kinds, via the API's own
    check) and as the app's boxes can show them: finite, within each option's range, text without NUL."""
    from ..attribution.entry import check_options
    from ..records.methods import METHODS

    options = choice.get("options") or {}
    try:
        check_options(choice["method"], options)
    except SpecError as exc:
        said = str(exc) if len(str(exc)) <= 200 else str(exc)[:197] + "..."
        raise SpecError(f"{name} is not a valid session: attribution.options: {said}") from None
    for option in (o for o in METHODS[choice["method"]].options if o.name in options):
        value = options[option.name]
        if isinstance(value, float) and not math.isfinite(value) or isinstance(value, (int, float)) and (
                option.low is not None and value < option.low or option.high is not None and value > option.high):
            raise SpecError(f"{name} is not a valid session: attribution.options.{option.name} must be from "
                            f"{option.low} to {option.high}, not {_short(value)}.")
        if isinstance(value, str) and "\x00" in value:
            raise SpecError(f"{name} is not a valid session: attribution.options.{option.name} must not hold "
                            f"a NUL byte (\\x00).")


@checked
def save_session(session: Session, path: str | Path) -> Path:
    """Write `session` to `path` (whole or not at all). A session that `load_session` would refuse (a field of the
    wrong kind, a site that is none, a NUL in text, a seed out of range, what JSON cannot hold) is refused first,
    one line naming the field, and nothing is written."""
    path = Path(need_path(path, "save_session(): path"))
    data = _checked_dict(session, "save_session(): session")
    try:
        text = json.dumps(data, indent=2, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise ArgumentValueError(f"save_session(): session cannot be written as JSON: {first_line(exc)}.") from None
    return write_text(path, text + "\n")


def _checked_dict(session: Session, what: str) -> dict:
    """`session.to_dict()`, once its fields are of the kinds it reads and it follows the rules `load_session` reads
    a file by (`session_from_dict`: the schema, the edits, the seed, the attribution choice)."""
    for name, kinds, example in (("layers", str, "conv1"), ("sites", str, "output"),
                                 ("edits", (Edit, str), "conv1:output=zero()")):
        for item in need_list(getattr(session, name), f"{what}.{name}", example):
            need_instance(item, kinds, f"{what}.{name}", f"{'Edits or ' if name == 'edits' else ''}text like "
                                                          f"{example!r}")
    need_instance(session.extra, dict, f"{what}.extra", "a dict")
    need_instance(session.attribution, (dict, type(None)), f"{what}.attribution", "a dict or None")
    data = session.to_dict()
    session_from_dict(data, what)
    return data


@checked
def load_session(path: str | Path, trust: bool = False) -> Session:
    """Read a session; one that points at code is refused unless `trust`."""
    path = regular_file(need_path(path, "load_session(): path"), "Session file", SpecError)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SpecError(f"Session file not found: {path}") from None
    except IsADirectoryError:
        raise SpecError(f"{path} is a folder, not a session file.") from None
    except OSError as exc:
        raise SpecError(f"Cannot read session file {path}: {exc.strerror or exc}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SpecError(f"{path.name} is not valid JSON: {exc}") from None
    except ValueError:  # Python's own limit: a number of more than 4300 digits
        raise SpecError(f"{path.name} is not a session file: it holds a number too long to read.") from None
    except RecursionError:
        raise SpecError(f"{path.name} is nested too deeply to be a session file.") from None
    session = _files_beside(session_from_dict(data, path.name), path)
    if session.points_at_code() and trust is not True:
        raise UntrustedCodeError(
            f"{path.name} loads the model from {session.model}, which runs code. "
            f"Confirm you trust it (--trust on the command line)."
        )
    return session


def _files_beside(session: Session, path: Path) -> Session:
    """A relative input or weights file (or a concept edit's dictionary folder) in a session is read from the
    session file's folder, never from outside it (`../` that climbs out, or a link that leads out, is refused);
    an absolute one is the user's own choice and stays as it is. `sample:` inputs and the weights words are not files."""
    folder = path.resolve().parent
    changes = {}
    for field_name, value, words in (("input", session.input, ()), ("weights", session.weights, WEIGHT_WORDS)):
        if not value or value in words or value.startswith("sample:"):
            continue
        check_name(value, f"{path.name}: its {field_name}", SpecError)
        if Path(value).is_absolute():
            continue
        inner = inside(folder, value)
        if inner is None:
            raise SpecError(f"{path.name}: its {field_name} {value!r} is outside the session's folder ({folder}); "
                            f"a relative path in a session must stay in that folder.")
        changes[field_name] = str(inner)
    edits = concept_folders_resolved(session.edits, path)  # a concept edit's dictionary folder: the same rule
    if edits != session.edits:
        changes["edits"] = edits
    return replace(session, **changes) if changes else session
