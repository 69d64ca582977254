"""Issue 52 item 6: `concepts --max-memory` is a size in MB a machine can have: 1e308 MB was an OverflowError
traceback after the folder was read (float infinity bytes made into a batch size)."""

from __future__ import annotations

import math

import pytest

from inspector.core.concepts.job import Settings
from inspector.core.common.errors import SpecError


@pytest.mark.parametrize("memory", [1e308, 2.0**43, math.inf, math.nan, 0, -1, True])
def test_a_memory_no_machine_has_is_refused_in_one_line(memory):
    with pytest.raises(SpecError) as error:
        Settings(max_memory_mb=memory).check()
    assert str(error.value) == ("--max-memory is a number of MB above 0 and below 2**63 bytes (8,796,093,022,208 MB), "
                                f"not {memory!r}.")


@pytest.mark.parametrize("memory", [0.5, 1024, 2.0**43 - 1])
def test_a_size_a_machine_can_have_is_taken(memory):
    Settings(max_memory_mb=memory).check()
