"""Review of round 51's kernel and optimizer changes (rev51b): what the review found wrong,
each against an independent oracle."""

from __future__ import annotations

import pytest

from rulegrad.backends.c import blocks


@pytest.mark.parametrize("name", ["rg_block_vf32_99", "rg_block_zf64_5x_stream", "rg_pack_vf32_group",
                                  "rg_reduce_sum_f32"])
def test_a_name_of_the_block_librarys_pattern_that_it_does_not_define_is_refused(name):
    """load_for refuses a function the block library does not define, by name, before it
    builds anything: a name that only looks like one (a block of 99 rows, the panel copy's
    old `_group` name, a `sum` reduction) built the whole 16-block library, or an empty one,
    and the kernel calling it then failed to load on an undefined symbol."""
    built = []
    with pytest.raises(ValueError, match=f"'{name}' is no function of the block library"):
        blocks.load_for([name], lambda kernels, mode: built.append(kernels))
    assert built == []
