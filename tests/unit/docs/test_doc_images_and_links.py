"""Every picture and every relative link that a documentation page (docs/**/*.md) or the README names is a file
that is there, and stays inside the site (a page) or the repository (the README), so `uv run pytest` fails on a
missing screenshot or a moved page as the strict site build does; every page is in mkdocs.yml's nav."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[3]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))

_FENCE = re.compile(r"^(`{3,}|~{3,})")
_INLINE_CODE = re.compile(r"(`+).*?\1")
#: [text](target) and ![alt](target), the target up to a space (a title may follow) or the closing bracket.
_MD_TARGET = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HTML_TARGET = re.compile(r"""<(?:img|a)\b[^>]*?\b(?:src|href)=["']([^"']+)["']""", re.IGNORECASE)


def targets(text: str) -> list[tuple[int, str]]:
    """(line, target) of every link and picture outside code: fenced blocks and inline code are skipped."""
    found, fence = [], None
    for number, line in enumerate(text.splitlines(), 1):
        opened = _FENCE.match(line.strip())
        if fence is None and opened:
            fence = opened.group(1)
            continue
        if fence is not None:
            if line.strip().startswith(fence) and not line.strip()[len(fence):].strip():
                fence = None
            continue
        prose = _INLINE_CODE.sub("", line)
        found += [(number, m.group(1)) for m in (*_MD_TARGET.finditer(prose), *_HTML_TARGET.finditer(prose))]
    return found


def local_target(target: str) -> str | None:
    """The file part of a relative target; None for a web address, mail, or an anchor on the same page."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE) or target.startswith(("#", "//")):
        return None
    return unquote(target.split("#", 1)[0].split("?", 1)[0]) or None


def broken(page: Path, root: Path) -> list[str]:
    """What `page` names that is not a file under `root`: 'LINE: TARGET (why)'."""
    said = []
    for number, target in targets(page.read_text(encoding="utf-8")):
        path = local_target(target)
        if path is None:
            continue
        if path.startswith("/"):
            said.append(f"{number}: {target} (an absolute path: name it relative to the page)")
            continue
        resolved = (page.parent / path).resolve()
        if not resolved.is_relative_to(root):
            said.append(f"{number}: {target} (outside {root.name}/)")
        elif not resolved.is_file():
            said.append(f"{number}: {target} (not there)")
    return said


def test_the_checker_finds_a_missing_picture_a_missing_page_and_a_link_that_leaves(tmp_path):
    site = tmp_path / "docs"
    (site / "tasks").mkdir(parents=True)
    (site / "images").mkdir()
    (site / "images" / "there.png").write_bytes(b"\x89PNG")
    (site / "index.md").write_text("# Home\n", encoding="utf-8")
    page = site / "tasks" / "page.md"
    page.write_text(
        "# Page\n"
        "![ok](../images/there.png) and [home](../index.md#top) and [web](https://example.org/x.png)\n"
        "![gone](../images/gone.png)\n"
        "```\n![in code](../images/nope.png)\n```\n"
        "`[inline](../nope.md)` then [page](missing.md) and [out](../../README.md)\n"
        '<img src="../images/also-gone.png"> [here](#page)\n', encoding="utf-8")
    assert broken(page, site) == [
        "3: ../images/gone.png (not there)",
        "7: missing.md (not there)",
        "7: ../../README.md (outside docs/)",
        "8: ../images/also-gone.png (not there)",
    ]


def test_there_are_pages():
    assert DOCS / "index.md" in PAGES and len(PAGES) >= 20


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(DOCS).as_posix())
def test_every_picture_and_link_of_a_page_is_a_file_of_the_site(page):
    assert broken(page, DOCS) == []


def test_every_picture_and_link_of_the_readme_is_a_file_of_the_repository():
    readme = ROOT / "README.md"
    assert broken(readme, ROOT) == []
    assert any(local_target(t) and local_target(t).startswith("docs/") for _, t in targets(readme.read_text()))


def test_every_page_is_in_the_nav():
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    in_nav = set(re.findall(r"^\s+- (?:[^:\n]+: )?([\w/.-]+\.md)\s*$", config, re.MULTILINE))
    assert {p.relative_to(DOCS).as_posix() for p in PAGES} == in_nav
