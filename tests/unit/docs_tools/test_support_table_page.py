"""The models page's method-by-family table is the one table (inspector.core.records.support) as the generator
writes it, every method of the method table a row and every family a column; the generator puts it between the
page's marker lines and refuses a page without them."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import markdown as python_markdown
import pytest

from inspector.core.records.methods import METHODS
from inspector.core.records.support import FAMILIES, REFUSED
from inspector.docs import support_table

PAGE = Path(__file__).resolve().parents[3] / "docs" / "reference" / "models-and-inputs.md"


def test_the_page_holds_the_table_as_the_generator_writes_it():
    page = PAGE.read_text(encoding="utf-8")
    assert support_table.between_markers(page) == support_table.markdown()
    assert support_table.written_into(page) == page


def test_a_row_per_method_a_column_per_family_and_each_refusal_said_in_its_cell():
    rendered = python_markdown.markdown(support_table.markdown(), extensions=["tables"])
    header = re.findall(r"<th>(.*?)</th>", rendered)
    assert header == ["Method"] + [f.title for f in FAMILIES]
    rows = [re.findall(r"<td>(.*?)</td>", r) for r in re.findall(r"<tr>(.*?)</tr>", rendered, flags=re.S)[1:]]
    assert [re.match(r"<code>(.+?)</code>", r[0]).group(1) for r in rows] == list(METHODS)
    for row in rows:
        method = re.match(r"<code>(.+?)</code>", row[0]).group(1)
        for f, text in zip(FAMILIES, row[1:], strict=True):
            why = REFUSED.get((f.name, method))
            assert text == ("yes" if why is None else f"no: {why}"), (method, f.name)
    assert sum(r[1:].count("yes") for r in rows) == len(METHODS) * len(FAMILIES) - len(REFUSED)
    assert {m for _, m in REFUSED} <= set(METHODS) and {f for f, _ in REFUSED} <= {f.name for f in FAMILIES}


def test_the_generator_writes_between_the_markers_and_refuses_a_page_without_them(tmp_path, capsys):
    page = tmp_path / "page.md"
    page.write_text(f"# T\n\nbefore\n{support_table.BEGIN}\nold table\n{support_table.END}\nafter\n", encoding="utf-8")
    assert support_table.main([str(page)]) == 0
    assert page.read_text(encoding="utf-8") == (f"# T\n\nbefore\n{support_table.BEGIN}\n{support_table.markdown()}"
                                                f"{support_table.END}\nafter\n")
    with pytest.raises(ValueError, match="two support-table marker lines"):
        support_table.written_into("# T\n\nno markers\n")
    assert support_table.main(["a.md", "b.md"]) == 2
    assert "usage: python -m inspector.docs.support_table [PAGE.md]" in capsys.readouterr().err


def test_the_table_and_its_page_import_no_torch():
    code = "import sys, inspector.docs.support_table; assert 'torch' not in sys.modules, 'torch'"
    subprocess.run([sys.executable, "-c", code], check=True)
