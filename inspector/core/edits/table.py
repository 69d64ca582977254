"""The one op table: every op an edit can name, a row each (`OpSpec`), whoever defines it.

The ops on a tensor alone are this package's (`ops`). A package whose ops need more than the tensor registers
them here with `register_op` from its own module: the concept ops (`inspector.core.concepts.edit_ops`), which
read a dictionary. Such a module is named in `PLUGINS` with the ops it registers, so the table lists them (the
Edits form's choice of op) without importing that package (and torch), and reading one of their rows
(`OPS[name]`: a text that names it parsed, an edit of it applied or checked) imports the module once, where
the row is registered. The edits package imports no plugin by name: it stands below them.

Torch-free: a row's function is called where an edit is applied.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

#: The modules that register ops of their own, with the names of the ops each registers (in the table's order).
PLUGINS: dict[str, tuple[str, ...]] = {
    "inspector.core.concepts.edit_ops": ("ablate_concept", "scale_concept"),
}
#: The edits of a concept of a dictionary (their `dict` names its folder): what sessions and the remote engine's
#: admission look for without importing the concepts package.
CONCEPT_OPS: tuple[str, ...] = PLUGINS["inspector.core.concepts.edit_ops"]


@dataclass(frozen=True)
class OpSpec:
    """One op. `fn(tensor, **args)` returns a new tensor; with `takes_layer`, also `layer=` the edit's layer.

    `params` in order (the first `required` must be given), `help` its usage ("name(args): what it does"),
    `sites` the sites it applies at (() at any). `texts`: the params that are text in quotes, not numbers, which
    `check_args` checks; `hint` is added to a text that cannot be read ("..., and a ...'s folder in quotes").
    `check_args(name, values)` raises SpecError for arguments the op refuses (after the numbers and lists are
    checked); `before_run(edit, model)` raises SpecError before a run of `model` for an edit that cannot apply to
    it (a dictionary of another layer or model).
    """

    fn: Callable[..., torch.Tensor]
    params: tuple[str, ...]
    required: int
    help: str
    sites: tuple[str, ...] = ()
    takes_layer: bool = False
    texts: tuple[str, ...] = ()
    hint: str = ""
    check_args: Callable[[str, dict[str, Any]], None] | None = None
    before_run: Callable[[Any, Any], None] | None = None  # (an Edit, the model)


class OpTable(Mapping[str, OpSpec]):
    """Op name -> OpSpec, in a fixed order: the ops registered by no module of `PLUGINS` (this package's first)
    as registered, then `PLUGINS`' ops as named there, registered or not yet."""

    def __init__(self, plugins: Mapping[str, tuple[str, ...]]) -> None:
        self._rows: dict[str, OpSpec] = {}
        self._plugins = dict(plugins)
        self._declared = tuple(name for names in self._plugins.values() for name in names)

    def register(self, name: str, spec: OpSpec) -> None:
        """Add the op `name`; a name is registered once."""
        if not name.isidentifier():
            raise ValueError(f"An op's name is a Python name, not {name!r}.")
        if name in self._rows:
            raise ValueError(f"The op {name!r} is registered already.")
        self._rows[name] = spec

    def registered(self) -> tuple[str, ...]:
        """The ops whose rows are here now (a plugin's only once its module was imported)."""
        return tuple(self._rows)

    def __getitem__(self, name: str) -> OpSpec:
        spec = self._rows.get(name)
        if spec is not None:
            return spec
        for module, names in self._plugins.items():
            if name in names:
                import_module(module)  # registers its rows
                if name not in self._rows:
                    raise RuntimeError(f"{module} does not register the op {name!r} it is named for.")
                return self._rows[name]
        raise KeyError(name)

    def __contains__(self, name: object) -> bool:
        return name in self._rows or name in self._declared

    def __iter__(self) -> Iterator[str]:
        rows = tuple(self._rows)  # a plugin may register from another thread meanwhile
        return iter([*(name for name in rows if name not in self._declared), *self._declared])

    def __len__(self) -> int:
        return sum(1 for _ in self)


#: The one op table.
OPS = OpTable(PLUGINS)


def register_op(name: str, spec: OpSpec) -> None:
    """Add the op `name` to the one table (a plugin's module does this when it is imported)."""
    OPS.register(name, spec)
