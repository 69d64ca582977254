"""The site's generated pages (docs/hooks.py): the CLI reference and the Python API reference replace their
pages' placeholder lines, the API page holds one mkdocstrings block per export of inspector.core at the module that
defines (or re-exports) it, and a page that lost its placeholder stops the build in one line."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

import inspector.core as core

ROOT = Path(__file__).resolve().parents[3]


def _hooks():
    spec = importlib.util.spec_from_file_location("docs_site_hooks", ROOT / "docs" / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hooks = _hooks()


def _page(uri: str):
    return SimpleNamespace(file=SimpleNamespace(src_uri=uri))


def test_each_generated_page_holds_its_placeholder_line():
    assert hooks.PLACEHOLDER in (ROOT / "docs" / hooks.CLI_PAGE).read_text(encoding="utf-8").splitlines()
    assert hooks.API_PLACEHOLDER in (ROOT / "docs" / hooks.API_PAGE).read_text(encoding="utf-8").splitlines()


def test_the_api_reference_has_one_block_per_export_at_the_module_that_defines_it():
    blocks = re.findall(r"^::: inspector\.core\.([\w.]+)\.(\w+)$", hooks.api_reference(), re.MULTILINE)
    assert sorted(name for _, name in blocks) == sorted(core.__all__)
    assert [name for _, name in blocks[:4]] == ["load_model", "load_input", "capture", "attribute"]
    for module, name in blocks:
        path = ROOT / "inspector" / "core" / Path(*module.split("."))
        source = (path.with_suffix(".py") if path.with_suffix(".py").is_file() else path / "__init__.py")
        text = source.read_text(encoding="utf-8")
        defined_or_imported = rf"^(def|class) {name}\b|^{name}\b.*=|^from \S+ import .*\b{name}\b"
        assert re.search(defined_or_imported, text, re.MULTILINE), (module, name)


def test_the_placeholders_are_replaced_and_other_pages_left_alone():
    api = hooks.on_page_markdown(f"# API\n\n{hooks.API_PLACEHOLDER}\n", _page(hooks.API_PAGE), None, None)
    assert hooks.API_PLACEHOLDER not in api and "::: inspector.core.api.capture" in api
    cli = hooks.on_page_markdown(f"# CLI\n\n{hooks.PLACEHOLDER}\n", _page(hooks.CLI_PAGE), None, None)
    assert hooks.PLACEHOLDER not in cli and "## network-inspector capture" in cli
    assert cli.count("\n# ") == 0  # the generator's own title gives way to the page's
    other = f"# Other\n\n{hooks.PLACEHOLDER}\n"
    assert hooks.on_page_markdown(other, _page("index.md"), None, None) == other


def test_a_page_that_lost_its_placeholder_stops_the_build():
    with pytest.raises(ValueError) as stopped:
        hooks.on_page_markdown("# API\n", _page(hooks.API_PAGE), None, None)
    assert str(stopped.value) == f"reference/python-api.md lost its placeholder line {hooks.API_PLACEHOLDER!r}"
