"""`text:` targets as written (torch-free): prompts in quotes or bare, several separated by |, read back from
what they print as; malformed ones are one-line SpecErrors."""

from __future__ import annotations

import pytest

from inspector.core.common.errors import SpecError
from inspector.core.target.text import Target, each_prompt_first, parse_target, prompt_first, target_words


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


def test_each_prompt_first_moves_each_prompt_to_the_front_once():
    three = parse_target('text:"a dog"|"a cat"|"a car"')
    assert [str(t) for t in each_prompt_first(three)] == [
        'text:"a dog"|"a cat"|"a car"', 'text:"a cat"|"a dog"|"a car"', 'text:"a car"|"a dog"|"a cat"']
    assert prompt_first(three, 2) == Target("text", prompts=("a car", "a dog", "a cat"))
    twice = parse_target("text:a|b|a")  # a prompt named twice is explained once; the others keep its twin
    assert [t.prompts for t in each_prompt_first(twice)] == [("a", "b", "a"), ("b", "a", "a")]
    assert each_prompt_first(parse_target('text:"a dog"')) == ()  # one prompt: its score, nothing to compare
    assert each_prompt_first(parse_target("top1")) == ()


@pytest.mark.parametrize(("target", "words"), [
    ('text:"a dog"', '"a dog"'),
    ('text:"a dog"|"a cat"|"a car"', '"a dog" among "a cat", "a car"'),
    ("box:2", "box:2"),
    ('text:"unclosed', 'text:"unclosed'),  # not a target: as written
])
def test_a_caption_says_a_text_target_by_its_prompts(target, words):
    assert target_words(target) == words
