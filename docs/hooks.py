"""MkDocs hooks of the documentation site (mkdocs.yml `hooks:`).

The command-line reference page (docs/reference/cli.md) holds a placeholder that is replaced at build time by
the page `inspector.docs.cli_reference.markdown()` makes from the command's own argparse parser, so the page
cannot drift from `network-inspector --help`.
"""

from __future__ import annotations

import argparse

#: The line in docs/reference/cli.md that the generated reference replaces.
PLACEHOLDER = "<!-- cli-reference: generated from the parser by docs/hooks.py -->"
CLI_PAGE = "reference/cli.md"


def on_page_markdown(markdown: str, page, config, files) -> str:
    if page.file.src_uri != CLI_PAGE:
        return markdown
    if PLACEHOLDER not in markdown:
        raise ValueError(f"{CLI_PAGE} lost its placeholder line {PLACEHOLDER!r}")
    return markdown.replace(PLACEHOLDER, cli_reference())


def cli_reference() -> str:
    """The reference's Markdown: the project's generator where it exists, else each command's --help."""
    try:
        from inspector.docs.cli_reference import markdown
    except ImportError:
        return _help_pages()
    text = markdown()
    # The page's own title is cli.md's; a generated top heading would be a second one.
    lines = text.lstrip().splitlines()
    if lines and lines[0].startswith("# "):
        text = "\n".join(lines[1:])
    return text


def _help_pages() -> str:
    from inspector.cli.dispatch import build_parser

    parser = build_parser()
    parts = ["## network-inspector", "", "```", parser.format_help().rstrip(), "```", ""]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                parts += [f"## {name}", "", "```", sub.format_help().rstrip(), "```", ""]
    return "\n".join(parts)
