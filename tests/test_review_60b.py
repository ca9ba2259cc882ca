"""rev60b: review of twice60 (read_twice's bitsets; max/min/argmax/argmin refusing an empty
axis) and bw60 (split reductions of few long rows).

Causal attention with no keys: twice60 made `max` over an empty axis raise, and
scaled_dot_product_attention(is_causal=True) took a max over the keys to find its dead rows,
so a query over 0 keys raised InvalidArgument, where torch gives zeros (as the masked and
unmasked forms here still do). torch is the oracle.
"""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("kw", [{"is_causal": True}, {}, {"attn_mask": "mask"}],
                         ids=["causal", "plain", "mask"])
def test_attention_over_no_keys_is_torchs(kw):
    q = np.random.default_rng(0).standard_normal((2, 3, 8)).astype(np.float32)
    kv = np.zeros((2, 0, 8), np.float32)
    if kw.get("attn_mask") == "mask":
        kw = {"attn_mask": np.ones((3, 0), bool)}
    ours = Tensor(q).scaled_dot_product_attention(
        Tensor(kv), Tensor(kv), **{k: Tensor(v) if isinstance(v, np.ndarray) else v
                                   for k, v in kw.items()})
    theirs = torch.nn.functional.scaled_dot_product_attention(
        torch.tensor(q), torch.tensor(kv), torch.tensor(kv),
        **{k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()})
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
