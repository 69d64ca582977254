"""MkDocs hooks of the documentation site (mkdocs.yml `hooks:`).

Two pages are made from the code at build time, so they cannot drift from it:
- docs/reference/cli.md: its placeholder line becomes the page `inspector.docs.cli_reference.markdown()` makes
  from the command's own argparse parser (what `network-inspector --help` says);
- docs/reference/python-api.md: its placeholder line becomes one mkdocstrings block per name in
  `inspector.core.__all__`, at the module that defines it (`inspector.core` resolves its names on first use,
  PEP 562, which a static reader such as griffe cannot follow).
"""

from __future__ import annotations

import argparse

#: The line in docs/reference/cli.md that the generated reference replaces.
PLACEHOLDER = "<!-- cli-reference: generated from the parser by docs/hooks.py -->"
CLI_PAGE = "reference/cli.md"
#: The line in docs/reference/python-api.md that the blocks of inspector.core's exports replace.
API_PLACEHOLDER = "<!-- api-reference: generated from inspector.core's exports by docs/hooks.py -->"
API_PAGE = "reference/python-api.md"
#: The exports a reader looks for first, in the order they are used; the rest follow in `__all__`'s order.
API_FIRST = ("load_model", "load_input", "capture", "attribute", "each_box", "diff_models", "load_pair", "record_graph",
             "GraphLayout", "graph_values", "compare_edits", "compare_models", "RunResult", "Capture", "LoadedModel")


def on_page_markdown(markdown: str, page, config, files) -> str:
    generated = {CLI_PAGE: (PLACEHOLDER, cli_reference), API_PAGE: (API_PLACEHOLDER, api_reference)}
    if page.file.src_uri not in generated:
        return markdown
    placeholder, make = generated[page.file.src_uri]
    if placeholder not in markdown:
        raise ValueError(f"{page.file.src_uri} lost its placeholder line {placeholder!r}")
    return markdown.replace(placeholder, make())


def api_reference() -> str:
    """One mkdocstrings block per export of inspector.core, under Functions, Classes and Errors."""
    import inspector.core as core

    groups: dict[str, list[str]] = {"Functions": [], "Classes": [], "Errors": []}
    for name in sorted(core.__all__, key=lambda n: API_FIRST.index(n) if n in API_FIRST else len(API_FIRST)):
        where = f"inspector.core.{core._WHERE[name]}.{name}"
        group = "Errors" if core._WHERE[name] == "errors" else "Classes" if name[0].isupper() else "Functions"
        groups[group].append(f"::: {where}\n    options:\n      show_root_heading: true\n"
                             f"      show_root_full_path: false\n      heading_level: 4\n")
    parts = []
    for title, blocks in groups.items():
        parts += [f"### {title}", "", *blocks]
    return "\n".join(parts)


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
