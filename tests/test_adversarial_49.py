"""adv49's hunt (issue 31): what it found in last round's code and its bad inputs.

Random creation functions drew float32 and scaled or rounded it to the dtype asked for:
`Tensor.rand(n, dtype=float16)` came out 1.0 once in ~4000 draws (outside [0, 1): every float32
draw past 1 - 2^-12 rounds up), `uniform(low=-1, high=1, dtype=float16)` gave `high`, a float64
uniform held 24 random bits, and `randint(low=10**8, high=10**8 + 10)` only ever gave two of
its ten values (a float32 sum spaced 8 apart). The oracle is the range itself and the count of
distinct values numpy's own generator gives.

`rulegrad check --hang-timeout 0.001` ended in a bare `_Hung` traceback after the rules: the hang
limit's signal handler raised wherever its timer fired, also inside Python's `signal.signal`
wrapper that the limit's `__exit__` calls (so the wall-clock timer stayed armed and fired in
the next step) and inside `__enter__` (so `__exit__` never ran). A rule past the limit is an
`error` in the report, and the run ends with exit 3, never a traceback.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.runtime.errors import InvalidArgument


def test_float16_rand_and_uniform_stay_below_their_upper_end():
    Tensor.manual_seed(1)
    r = Tensor.rand(200_000, dtype="float16").numpy()
    assert r.dtype == np.float16 and r.min() >= 0 and r.max() < 1
    u = Tensor.uniform(200_000, low=-1.0, high=1.0, dtype="float16").numpy()
    assert u.min() >= -1 and u.max() < 1
    # float16 has 2^11 values k / 2^11 in [0, 1): 200,000 draws reach nearly all of them
    assert len(np.unique(r)) > 2000


def test_float64_uniform_has_float64_digits():
    Tensor.manual_seed(2)
    u = Tensor.uniform(50_000, low=0.0, high=1.0, dtype="float64").numpy()
    assert u.dtype == np.float64 and 0 <= u.min() and u.max() < 1
    # 24-bit draws put their values on multiples of 2^-24
    assert np.any(u * 2.0 ** 24 != np.floor(u * 2.0 ** 24))


@pytest.mark.parametrize("low, high, dtype", [(10**8, 10**8 + 10, "int32"),
                                              (-2**40, -2**40 + 3, "int64"),
                                              (0, 7, "uint8"), (-5, 5, "int8")])
def test_randint_draws_every_integer_of_its_range(low, high, dtype):
    Tensor.manual_seed(3)
    r = Tensor.randint(20_000, low=low, high=high, dtype=dtype).numpy()
    assert r.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(np.unique(r), np.arange(low, high, dtype=np.int64))


def test_randint_and_uniform_refuse_what_they_cannot_draw():
    with pytest.raises(InvalidArgument, match="does not fit int8"):
        Tensor.randint(3, low=0, high=1000, dtype="int8")
    with pytest.raises(InvalidArgument, match="uniform needs a float dtype"):
        Tensor.uniform(3, dtype="int32")


def _rulegrad(*args, cwd):
    return subprocess.run([sys.executable, "-m", "rulegrad", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


@pytest.mark.parametrize("limit", ["1e-300", "0.001", "0.01"])
def test_check_with_a_tiny_hang_limit_reports_the_rule_not_a_traceback(tmp_path, limit):
    rules = tmp_path / "one.rules"
    rules.write_text("rules one = {\n  MUL(x, 1) -> x\n}\n")
    r = _rulegrad("check", "--hang-timeout", limit, str(rules), cwd=tmp_path)
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == 3, r.stdout + r.stderr
    assert "did not finish" in r.stdout
