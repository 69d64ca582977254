"""A benchmark's printed table as one list of columns: each a title, a width and how a row's value is written, so
the header and every row line up by construction (the engine's and the diff's tables read it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


def seconds(value: float) -> str:
    return f"{value:.3f}"


def ratio(value: float | None) -> str:
    """A ratio as `1.23x`; "-" where there is none (a variant the model has no layer for)."""
    return "-" if value is None else f"{value:.2f}x"


def percent(value: float) -> str:
    """A fraction as a percentage: 0.125 -> `12.5%`."""
    return f"{value * 100:.1f}%"


def megabytes(value: float) -> str:
    return f"{value:.1f}"


@dataclass(frozen=True)
class Column:
    """`title` over `width` characters, right-aligned; a row's value is `row[key]` (a tuple: one key after
    another, ("median_s", "plain")) written by `write`."""

    title: str
    width: int
    key: str | tuple[str, ...]
    write: Callable[[object], str] = str

    def value(self, row: dict) -> object:
        for key in (self.key,) if isinstance(self.key, str) else self.key:
            row = row[key]
        return row


def median(variant: str, title: str, width: int) -> Column:
    """A variant's median seconds (`row["median_s"][variant]`)."""
    return Column(title, width, ("median_s", variant), seconds)


def header(first: str, first_width: int, columns: list[Column]) -> str:
    """The titles: `first` (the row's name) left-aligned in `first_width`, then each column's."""
    return f"{first:<{first_width}}" + "".join(f"{c.title:>{c.width}}" for c in columns)


def line(name: str, first_width: int, columns: list[Column], row: dict) -> str:
    """One row under `header`: its `name` left-aligned, then each column's value."""
    return f"{name:<{first_width}}" + "".join(f"{c.write(c.value(row)):>{c.width}}" for c in columns)
