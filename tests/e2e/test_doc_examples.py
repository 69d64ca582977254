"""The worked examples of the documentation run: every code block of README.md and docs/**/*.md marked
`<!-- runnable -->` (the line right before its opening fence) has each of its `network-inspector ...` lines run
in this process (`inspector.cli.dispatch.main`, so torch is imported once), in order, in one fresh folder per page,
and each must exit 0. A failure names the page, the line, the command and what it printed.

Each page's folder starts with `shapes/`: 16 of the demo's generated shapes (64x64 PNGs, four per class, one
subfolder per class), for the examples over a folder (atlas, concepts, capture --folder).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from cli_here import run_here
from PIL import Image

from inspector.cli.dispatch import COMMANDS
from inspector.demo.shapes import CLASSES, make_batch
from inspector.docs.runnable import MARKER, page_blocks

ROOT = Path(__file__).parents[2]


def pages() -> list[Path]:
    """README.md and every page under docs/, relative to the repository."""
    found = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return [p.relative_to(ROOT) for p in found if p.is_file()]


def marked_pages() -> list[Path]:
    return [p for p in pages() if MARKER in (ROOT / p).read_text(encoding="utf-8")]


def write_shapes(folder: Path, count: int = 16) -> None:
    images, labels = make_batch(count, seed=0)
    for i, (image, label) in enumerate(zip(images, labels)):
        sub = folder / CLASSES[int(label)]
        sub.mkdir(parents=True, exist_ok=True)
        Image.fromarray(image).save(sub / f"{i:02d}.png")


def opens_no_window(argv: list[str]) -> bool:
    """`network-inspector ARGV` is a command, --self-test or --help, not the desktop app."""
    return any(a in COMMANDS or a in ("--self-test", "-h", "--help") for a in argv)


def run_page(path: Path, name: str, folder: Path, monkeypatch) -> None:
    """Run the runnable examples of the page at `path` in `folder`; a failure says `name`, the line and output."""
    found = page_blocks(path)  # a marker without a fence fails here, naming the page and its line
    monkeypatch.chdir(folder)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    write_shapes(folder / "shapes")
    for block in found:
        for command in block.commands:
            where = f"{name}:{command.line}: {command.text}"
            if not opens_no_window(command.argv):
                pytest.fail(f"{where}\nwould open the app, not run a command", pytrace=False)
            done = run_here(*command.argv)
            if done.returncode != 0:
                pytest.fail(f"{where}\nexit code {done.returncode}\n--- stdout\n{done.stdout[-3000:]}"
                            f"\n--- stderr\n{done.stderr[-3000:]}", pytrace=False)


@pytest.mark.parametrize("page", marked_pages(), ids=str)
def test_the_pages_examples_run(page, tmp_path, monkeypatch):
    run_page(ROOT / page, str(page), tmp_path, monkeypatch)


def test_the_pages_have_runnable_examples():
    """Not passing vacuously: once docs/ has pages, some block is marked runnable, and every marked page parses."""
    if not any(p.parts[0] == "docs" for p in pages()):
        pytest.skip("no docs/ pages yet")
    counted = sum(len(page_blocks(ROOT / p)) for p in marked_pages())
    assert counted >= 1


def test_the_shapes_folder(tmp_path):
    write_shapes(tmp_path)
    written = sorted(tmp_path.rglob("*.png"))
    assert len(written) == 16
    assert {p.parent.name for p in written} <= set(CLASSES)
    assert np.asarray(Image.open(written[0])).shape == (64, 64, 3)


def test_the_runner_on_a_hand_written_page(tmp_path, monkeypatch):
    run_page(ROOT / "tests/data/docs_pages/runnable_example.md", "example", tmp_path, monkeypatch)
    with np.load(tmp_path / "star capture.npz") as saved:  # the continued line's quoted arguments, as one each
        assert {"conv1:output", "fc:output"} <= set(saved.files)


def test_a_failing_example_names_its_page_and_line(tmp_path, monkeypatch):
    page = tmp_path / "page.md"
    page.write_text("# t\n\n<!-- runnable -->\n```\nnetwork-inspector samples\n"
                    "network-inspector layers --model no-such-model\n```\n")
    with pytest.raises(pytest.fail.Exception) as failed:
        run_page(page, "docs/t.md", tmp_path, monkeypatch)
    said = str(failed.value)
    assert said.startswith("docs/t.md:6: network-inspector layers --model no-such-model\nexit code 2\n")
    assert "error: " in said and "no-such-model" in said
    page.write_text("<!-- runnable -->\n```\nnetwork-inspector --debug\n```\n")
    with pytest.raises(pytest.fail.Exception, match="docs/t.md:3: network-inspector --debug\nwould open the app"):
        run_page(page, "docs/t.md", tmp_path, monkeypatch)
