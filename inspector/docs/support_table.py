"""The models page's table of which method explains which family of models, written from the one table
(`inspector.core.records.support`) and the method table's order: `python -m inspector.docs.support_table [PAGE.md]`
prints it, or puts it in PAGE between its two marker lines (a test checks docs/reference/models-and-inputs.md
holds it as written)."""

from __future__ import annotations

import sys
from pathlib import Path

from inspector.core.records.methods import METHODS
from inspector.core.records.support import FAMILIES, refusal

BEGIN = "<!-- support-table: written by python -m inspector.docs.support_table; do not edit by hand -->"
END = "<!-- support-table: end -->"


def cell(family: str, method: str) -> str:
    why = refusal(family, method)
    return "yes" if why is None else f"no: {why}"


def markdown() -> str:
    """The table (a row per method, in the method table's order; a column per family), then the families."""
    lines = ["| Method | " + " | ".join(f.title for f in FAMILIES) + " |",
             "|---|" + "---|" * len(FAMILIES)]
    for name, method in METHODS.items():
        cells = " | ".join(cell(f.name, name) for f in FAMILIES)
        lines.append(f"| `{name}` ({method.title}) | {cells} |")
    lines += ["", "The families, the target their maps explain, and the models each cell is tested on (random "
              "weights):", ""]
    lines += [f"- **{f.title}**: {f.models}; target {f.target}; tested on {', '.join(f.tested)}." for f in FAMILIES]
    return "\n".join(lines) + "\n"


def between_markers(page: str) -> str:
    """What `page` holds between its marker lines; a ValueError without them."""
    if page.count(BEGIN) != 1 or page.count(END) != 1:
        raise ValueError("The page needs its two support-table marker lines, once each.")
    return page.split(BEGIN + "\n", 1)[1].split(END, 1)[0]


def written_into(page: str) -> str:
    """`page` with the table between its marker lines."""
    between_markers(page)
    head, rest = page.split(BEGIN + "\n", 1)
    return head + BEGIN + "\n" + markdown() + END + rest.split(END, 1)[1]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) > 1 or (args and args[0].startswith("-")):
        print("usage: python -m inspector.docs.support_table [PAGE.md]", file=sys.stderr)
        return 2
    if not args:
        sys.stdout.write(markdown())
        return 0
    path = Path(args[0])
    path.write_text(written_into(path.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"wrote the table into {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
