"""Two test files of one name in different folders (the tests are not packages) stop the whole suite at
collection ("import file mismatch"), which a run of one folder never shows."""

from collections import Counter
from pathlib import Path


def test_every_test_file_name_is_used_once():
    tests = Path(__file__).resolve().parents[2]
    names = Counter(p.name for p in tests.rglob("test_*.py"))
    assert [name for name, n in names.items() if n > 1] == []
