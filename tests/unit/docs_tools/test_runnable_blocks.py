"""The runnable-examples extractor on hand-written pages (tests/data/docs_pages/): which blocks, which commands at
which lines, their arguments as a shell splits them; each malformed page refused in one line naming the line."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.docs.runnable import Block, Command, PageError, blocks, page_blocks

PAGES = Path(__file__).parents[2] / "data" / "docs_pages"


def test_the_example_page_by_hand():
    found = page_blocks(PAGES / "runnable_example.md")
    assert found == [
        Block(10, (Command(12, "network-inspector samples"),
                   Command(13, "uv run network-inspector layers --model demo --json"))),
        Block(19, (Command(20, "network-inspector capture --model demo --input sample:star "
                               "--layers \"conv1, fc\" --out 'star capture.npz'"),)),
    ]
    assert found[0].commands[0].argv == ["samples"]
    assert found[0].commands[1].argv == ["layers", "--model", "demo", "--json"]
    assert found[1].commands[0].argv == ["capture", "--model", "demo", "--input", "sample:star",
                                         "--layers", "conv1, fc", "--out", "star capture.npz"]


def test_a_marker_without_a_fence_is_refused():
    with pytest.raises(PageError) as refused:
        page_blocks(PAGES / "marker_without_fence.md")
    assert str(refused.value) == (f"{PAGES / 'marker_without_fence.md'}:3: <!-- runnable --> is not followed by a "
                                  "code block's opening fence")


@pytest.mark.parametrize(("text", "said"), [
    ("<!-- runnable -->", "p.md:1: <!-- runnable --> is not followed by a code block's opening fence"),
    ("<!-- runnable -->\n```\nnetwork-inspector samples\n", "p.md:2: a runnable block that is never closed"),
    ("<!-- runnable -->\n```\nls\n```", "p.md:2: a runnable block without a network-inspector command"),
    ("<!-- runnable -->\n```\nnetwork-inspector samples \\\n```",
     "p.md:3: the command's last line ends in a backslash"),
    ("<!-- runnable -->\n````\nnetwork-inspector samples\n```\n", "p.md:2: a runnable block that is never closed"),
])
def test_malformed_blocks(text, said):
    with pytest.raises(PageError) as refused:
        blocks(text, "p.md")
    assert str(refused.value) == said


def test_a_longer_fence_holds_a_shorter_one_and_unmarked_blocks_are_not_read():
    text = "```\nnetwork-inspector x\n```\n<!-- runnable -->\n````md\n```\nnetwork-inspector samples\n```\n````\n"
    assert blocks(text) == [Block(5, (Command(7, "network-inspector samples"),))]
