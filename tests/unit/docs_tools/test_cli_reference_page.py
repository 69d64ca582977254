"""The CLI reference page against `network-inspector --help` itself: a section per command, in the order the help
lists them; every option each command's help names, in that command's section; the usage as --help prints it;
help text that Markdown (MkDocs' Python-Markdown with tables) prints as it is."""

from __future__ import annotations

import argparse
import contextlib
import html
import io
import re

import markdown as python_markdown
import pytest

from inspector.cli.dispatch import main
from inspector.docs import cli_reference
from inspector.docs.cli_reference import markdown


def help_of(*args: str) -> str:
    """What `network-inspector ARGS --help` prints."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as stopped:
        main([*args, "--help"])
    assert stopped.value.code == 0
    return out.getvalue()


def listed_commands() -> list[str]:
    """The commands in the `{a,b,...}` of the top-level help's usage."""
    return re.search(r"\{([a-z,-]+)\}", help_of()).group(1).split(",")


@pytest.fixture(scope="module")
def page() -> str:
    return markdown()


def sections(page: str) -> dict[str, str]:
    """The page's `## title` sections by title."""
    parts = re.split(r"^## (.+)$", page, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def test_a_section_per_command_in_the_helps_order(page):
    commands = listed_commands()
    assert len(commands) >= 10 and "capture" in commands and "atlas" in commands
    titles = re.findall(r"^## (.+)$", page, flags=re.M)
    assert titles == ["network-inspector"] + [f"network-inspector {c}" for c in commands]


def test_every_option_in_each_commands_help_is_in_its_section(page):
    by_title = sections(page)
    for command in [None, *listed_commands()]:
        text = help_of(*([command] if command else []))
        section = by_title["network-inspector" + (f" {command}" if command else "")]
        options = set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", text))
        assert "-h" in options and "--help" in options
        missing = [o for o in options if o not in section]
        assert not missing, (command, missing)
        # each option line of the help (its first column) is one row of the table, written as the help writes it
        invocations = re.findall(r"^  (-[^ ].*?)(?:  |$)", text, flags=re.M)
        for invocation in invocations:
            row = "| " + cli_reference.code(invocation) + " |"
            assert section.count(row) == 1, (command, invocation)
        assert section.count("\n| <code>") == len(invocations), command  # and no other row


def test_usage_is_the_helps_at_its_width(page, monkeypatch):
    monkeypatch.setenv("COLUMNS", str(cli_reference.USAGE_WIDTH + 2))  # argparse wraps at the columns less 2
    by_title = sections(page)
    for command in listed_commands():
        printed = help_of(command).split("\n\n")[0]
        block = re.search(r"```text\n(.*?)\n```", by_title[f"network-inspector {command}"], flags=re.S).group(1)
        assert block == printed


def test_the_whole_page_renders_as_tables_of_three_cells(page):
    rendered = python_markdown.markdown(page, extensions=["tables", "fenced_code"])
    rows = re.findall(r"<tr>(.*?)</tr>", rendered, flags=re.S)
    body = [r for r in rows if "<td" in r]
    assert len(body) > 50
    assert all(r.count("<td") == 3 for r in body)
    assert rendered.count("<h2") == len(listed_commands()) + 1


def toy_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tool", description="top")
    sub = parser.add_subparsers(dest="command")
    go = sub.add_parser("go", help="go | <somewhere>")
    go.add_argument("--x", default="1|2", help="keep <a> & *b* | c_d [e](f) `g`")
    go.add_argument("--n", type=int, default=3, help="a count, %(default)s by default")
    go.add_argument("--on", action="store_true", help="a flag")
    go.add_argument("--many", action="append", default=[], help="repeatable")
    go.add_argument("--hidden", help=argparse.SUPPRESS)
    return parser


def test_help_text_escaped_by_hand():
    page = markdown(toy_parser())
    go = sections(page)["tool go"]
    assert go.startswith("\n\ngo \\| &lt;somewhere&gt;\n")
    rows = [line for line in go.splitlines() if line.startswith("| <code>")]
    assert rows == [
        "| <code>-h, --help</code> | show this help message and exit |  |",
        "| <code>--x X</code> | keep &lt;a&gt; &amp; \\*b\\* \\| c\\_d \\[e\\](f) \\`g\\` | <code>1&#124;2</code> |",
        "| <code>--n N</code> | a count, 3 by default | <code>3</code> |",
        "| <code>--on</code> | a flag |  |",
        "| <code>--many MANY</code> | repeatable |  |",
    ]
    assert "hidden" not in page


def test_escaped_help_renders_as_written():
    rendered = python_markdown.markdown(markdown(toy_parser()), extensions=["tables", "fenced_code"])
    cells = [html.unescape(re.sub(r"<[^>]+>", "", c))
             for c in re.findall(r"<td>(.*?)</td>", rendered, flags=re.S)]  # tool: -h; tool go: -h, --x
    assert cells[6:9] == ["--x X", "keep <a> & *b* | c_d [e](f) `g`", "1|2"]
    assert "<p>go | &lt;somewhere&gt;</p>" in rendered


def test_main_refuses_options_and_writes_the_page(tmp_path, capsys):
    assert cli_reference.main(["--help"]) == 2
    assert cli_reference.main(["a.md", "b.md"]) == 2
    assert capsys.readouterr().err.count("usage: python -m inspector.docs.cli_reference [OUT.md]") == 2
    out = tmp_path / "cli.md"
    assert cli_reference.main([str(out)]) == 0
    assert out.read_text(encoding="utf-8") == markdown()
