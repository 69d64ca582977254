"""`text:` targets as written (torch-free): prompts in quotes or bare, several separated by |, read back from
what they print as; malformed ones are one-line SpecErrors."""

from __future__ import annotations

import pytest

from inspector.core.common.errors import SpecError
from inspector.core.target.text import Target, parse_target


@pytest.mark.parametrize(("text", "prompts"), [
    ('text:"a photo of a dog"', ("a photo of a dog",)),
    ("text:a photo of a dog", ("a photo of a dog",)),  # the shell ate the quotes
    ('text:"a dog"|"a cat"|"a car"', ("a dog", "a cat", "a car")),
    ('text: "a dog" | "a cat" ', ("a dog", "a cat")),
    ("text:a dog|a cat", ("a dog", "a cat")),
    ('TEXT:"A Dog"', ("A Dog",)),  # the prompt keeps its case; the word does not matter
    ('text:"a \\"quoted\\" word"|"back\\\\slash"', ('a "quoted" word', "back\\slash")),
    ('text:"a | b"', ("a | b",)),  # a | inside quotes is the prompt's
])
def test_prompts_are_read_and_printed_back_as_they_read(text, prompts):
    target = parse_target(text)
    assert target == Target("text", prompts=prompts)
    assert parse_target(str(target)) == target


def test_a_text_target_prints_every_prompt_in_quotes():
    assert str(parse_target("text:a dog|a cat")) == 'text:"a dog"|"a cat"'


@pytest.mark.parametrize(("text", "said"), [
    ("text:", "a prompt is empty"),
    ('text:""', "a prompt is empty"),
    ('text:"   "', "a prompt is empty"),
    ('text:"a dog"|""', "a prompt is empty"),
    ("text:a dog||a cat", "a prompt is empty"),
    ('text:"a dog"|', "a prompt is empty after the last |"),
    ('text:"a dog', "closing quote is missing"),
    ('text:"a dog" "a cat"', "prompts are separated by |"),
    ('text:"a dog"|a cat', "expected a prompt in quotes"),
    ('text:a "dog"', "quote every prompt or none"),
])
def test_malformed_text_targets_are_one_line_errors(text, said):
    with pytest.raises(SpecError, match=said) as caught:
        parse_target(text)
    assert "\n" not in str(caught.value)
