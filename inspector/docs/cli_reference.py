"""The CLI reference page, written from `network-inspector`'s own parser so it cannot drift from `--help`:
`python -m inspector.docs.cli_reference [OUT.md]` (stdout without OUT).

One section per command in the parser's order: its help line, its usage (as `--help` prints it, at a fixed
width so the page does not depend on the terminal) and a table of every option with its help and default.
Help text is escaped for Markdown (MkDocs' Python-Markdown with tables): `|`, `*`, `_`, backticks and
brackets by a backslash, `<`, `>` and `&` as HTML entities (Python-Markdown keeps the backslash of `\\<`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

#: Usage lines are wrapped at this width, whatever the terminal that made the page.
USAGE_WIDTH = 100

_MARKDOWN_SPECIALS = "\\`*_[]|#"
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def markdown(parser: argparse.ArgumentParser | None = None) -> str:
    """The whole reference page for `parser` (default: `inspector.cli.dispatch.build_parser()`)."""
    if parser is None:
        from inspector.cli.dispatch import build_parser

        parser = build_parser()
    lines = [
        "# CLI reference",
        "",
        f"Every command of `{parser.prog}` and every option, as `{parser.prog} COMMAND --help` gives them. "
        "This page is generated from the parser (`python -m inspector.docs.cli_reference`), "
        "so it says what the installed program accepts.",
        "",
        *_section(parser, parser.prog, parser.description, parser.epilog),
    ]
    for name, help_line, sub in commands(parser):
        lines += _section(sub, f"{parser.prog} {name}", help_line, sub.epilog)
    return "\n".join(lines).rstrip("\n") + "\n"


def commands(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    """(name, help line, parser) of each subcommand of `parser`, in the order `--help` lists them."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            found += [(name, helps.get(name, ""), sub) for name, sub in action.choices.items()]
    return found


def escape(text: str) -> str:
    """`text` as Markdown that prints it as it is (one line: newlines become spaces)."""
    text = " ".join(text.split())
    out = []
    for char in text:
        if char in _ENTITIES:
            out.append(_ENTITIES[char])
        elif char in _MARKDOWN_SPECIALS:
            out.append("\\" + char)
        else:
            out.append(char)
    return "".join(out)


def code(text: str) -> str:
    """`text` as inline code that survives a table row: HTML, so `|` and backticks need no Markdown escape."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "&#124;")
    return f"<code>{text}</code>"


def _section(parser: argparse.ArgumentParser, title: str, about: str | None, epilog: str | None) -> list[str]:
    lines = [f"## {title}", ""]
    if about:
        lines += [escape(about), ""]
    if parser.description and parser.description != about:
        lines += [escape(parser.description), ""]
    lines += ["```text", usage(parser), "```", ""]
    rows = [_row(parser, action) for action in parser._actions
            if action.help != argparse.SUPPRESS and not isinstance(action, argparse._SubParsersAction)]
    if rows:
        lines += ["| Option | What it does | Default |", "| --- | --- | --- |", *rows, ""]
    if epilog:
        lines += [escape(epilog), ""]
    return lines


def usage(parser: argparse.ArgumentParser) -> str:
    """`parser`'s usage as `--help` prints it, wrapped at USAGE_WIDTH."""
    formatter = parser.formatter_class(prog=parser.prog, width=USAGE_WIDTH)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
    return formatter.format_help().strip("\n")


def _row(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    formatter = parser.formatter_class(prog=parser.prog)
    invocation = formatter._format_action_invocation(action)
    help_text = formatter._expand_help(action) if action.help else ""
    return f"| {code(invocation)} | {escape(help_text)} | {_default(action)} |"


def _default(action: argparse.Action) -> str:
    """The default as a cell: empty where there is none to say (None, a flag that is off, an empty list)."""
    value = action.default
    if value is None or value == argparse.SUPPRESS or action.nargs == 0 or value in ([], ()):
        return ""
    return code(str(value))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) > 1 or (args and args[0].startswith("-")):
        print("usage: python -m inspector.docs.cli_reference [OUT.md]", file=sys.stderr)
        return 2
    page = markdown()
    if args:
        Path(args[0]).write_text(page, encoding="utf-8")
        print(f"wrote {args[0]}")
    else:
        sys.stdout.write(page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
