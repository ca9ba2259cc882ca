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


DEVS = ("CPU", "CPU:1")


@pytest.mark.parametrize("make", ["zeros", "ones", "rand", "randn", "empty", "eye", "arange",
                                  "randint", "uniform", "kaiming_uniform"])
@pytest.mark.parametrize("device", ["CPU:1", DEVS])
def test_creation_functions_put_their_tensor_on_the_device_asked_for(make, device):
    # the `**_` of the creation functions swallowed `device=`: the tensor stayed on CPU
    t = getattr(Tensor, make)(4, device=device)
    assert t.device == device
    x = Tensor(np.arange(4, dtype=np.float32))
    x = x.to(device) if isinstance(device, str) else x.shard(device, axis=0)
    np.testing.assert_allclose((x + t).numpy(), np.arange(4) + t.numpy(), rtol=1e-6)


@pytest.mark.parametrize("like", ["rand_like", "randn_like"])
@pytest.mark.parametrize("where", ["CPU:1", 0, 1, None])
def test_random_like_is_where_its_tensor_is(like, where):
    a = np.arange(8, dtype=np.float32).reshape(4, 2)
    x = Tensor(a).to(where) if isinstance(where, str) else Tensor(a).shard(DEVS, axis=where)
    r = getattr(x, like)()
    assert r.device == x.device
    np.testing.assert_allclose((x + r).numpy(), a + r.numpy(), rtol=1e-6)


def _torch_opt(name, params):
    import torch

    return {"SGDm": lambda: torch.optim.SGD(params, lr=0.1, momentum=0.9),
            "Adam": lambda: torch.optim.Adam(params, lr=0.1)}[name]()


@pytest.mark.parametrize("opt_name", ["SGDm", "Adam"])
@pytest.mark.parametrize("make", ["to", "created"])
def test_optimizers_step_parameters_on_another_device(opt_name, make):
    # the optimizer's state was made on CPU beside a CPU:1 parameter (a DeviceMismatch at the
    # first step), and a parameter made from a constant lost its device to requires_grad
    import torch

    from rulegrad.nn.optim import SGD, Adam

    rng = np.random.default_rng(7)
    w0 = rng.standard_normal((4, 3)).astype(np.float32) if make == "to" else \
        np.ones((4, 3), np.float32)
    if make == "to":
        w = Tensor(w0).to("CPU:1")
        w.requires_grad = True
    else:
        w = Tensor.ones(4, 3, device="CPU:1", requires_grad=True)
    assert w.device == "CPU:1"
    tw = torch.tensor(w0, requires_grad=True)
    opt = {"SGDm": lambda: SGD([w], lr=0.1, momentum=0.9), "Adam": lambda: Adam([w], lr=0.1)}[
        opt_name]()
    topt = _torch_opt(opt_name, [tw])
    for _ in range(3):
        x = rng.standard_normal((5, 4)).astype(np.float32)
        opt.zero_grad()
        topt.zero_grad()
        (Tensor(x).to("CPU:1") @ w).tanh().sum().backward()
        (torch.tensor(x) @ tw).tanh().sum().backward()
        opt.step()
        topt.step()
    assert w.device == "CPU:1"
    np.testing.assert_allclose(w.numpy(), tw.detach().numpy(), rtol=1e-5, atol=1e-5)


def test_random_draws_of_symbolic_or_integer_kinds_are_refused_in_words():
    from rulegrad import Variable

    n = Variable("n", 1, 4).bind(2)
    with pytest.raises(InvalidArgument, match="randint over axis 0 of symbolic size"):
        Tensor.randint(n)
    with pytest.raises(InvalidArgument, match="randn needs a float dtype"):
        Tensor.randn(3, dtype="int32")


@pytest.mark.parametrize("call, words", [
    (lambda: Tensor.arange(float("nan")), "must be finite"),
    (lambda: Tensor.arange(0, float("inf")), "must be finite"),
    (lambda: Tensor.arange(0, 5, float("-inf")), "must be finite"),
    (lambda: Tensor.uniform(3, low=1.0, high=0.0), "low <= high"),
    (lambda: Tensor.uniform(3, low=float("nan")), "low <= high"),
    (lambda: Tensor.normal(3, std=-1.0), "std >= 0"),
])
def test_bad_random_and_range_arguments_are_refused_in_words(call, words):
    # Python's "cannot convert float NaN to integer", or values torch refuses
    with pytest.raises(InvalidArgument, match=words):
        call()


@pytest.mark.parametrize("make", ["scaled_uniform", "kaiming_uniform", "kaiming_normal",
                                  "glorot_uniform"])
@pytest.mark.parametrize("shape", [(0,), (3, 0), (0, 3)])
def test_initializers_of_no_elements_are_empty(make, shape):
    # a fan of 0 was a ZeroDivisionError; torch returns the empty tensor
    t = getattr(Tensor, make)(*shape)
    assert t.numpy().shape == shape


@pytest.mark.parametrize("v", [1, 3, 8])
def test_a_symbolic_constant_leaf_is_its_own_variable(v):
    # `_own_node` left symbolic shapes alone: `Tensor.ones(n, requires_grad=True)` was the very
    # node `Tensor.ones(n)` is, and backward gave it both uses' gradients (8 where torch gives 3)
    import torch

    from rulegrad import Variable

    n = Variable("n", 1, 8).bind(v)
    a = Tensor.ones(n, requires_grad=True)
    (a * 3 + Tensor.ones(n) * 5).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.full(v, 3.0))
    c = Tensor.full((n, 2), 2.0, requires_grad=True)
    ((c * Tensor.full((n, 2), 2.0)).exp() * c).sum().backward()
    tc = torch.full((v, 2), 2.0, dtype=torch.float32, requires_grad=True)
    ((tc * 2.0).exp() * tc).sum().backward()
    np.testing.assert_allclose(c.grad.numpy(), tc.grad.numpy(), rtol=1e-6)


# found by tinygrad's operator tests through the shim, on the merge of this round (lead)
@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.uint8, np.int64])
def test_an_index_computed_by_another_kernel_picks_numpys_rows(dtype):
    """x[:, t, :] with t realized by a kernel of the same schedule: the gather fold's clamp asks
    the index's bounds, and an int load of an earlier kernel's output reads its KERNEL node,
    which has no integer type (a bare ValueError from numpy's iinfo)."""
    x = np.arange(3 * 5 * 4, dtype=np.float32).reshape(3, 5, 4)
    idx = np.array([4, 0, 2], dtype=dtype)
    t = Tensor(idx) + Tensor.zeros(3, dtype=Tensor(idx).dtype)  # computed, not a plain buffer
    got = Tensor(x)[:, t.contiguous(), :].numpy()
    np.testing.assert_array_equal(got, x[:, idx, :])


@pytest.mark.parametrize("make", [Tensor.glorot_uniform, Tensor.uniform, Tensor.kaiming_uniform,
                                  Tensor.scaled_uniform, Tensor.rand])
def test_an_initializer_of_a_negative_size_names_the_size(make):
    """glorot_uniform(-3, 2)'s bound, sqrt(6 / (-3 + 2)), is complex, and uniform compared it
    before it checked the shape: a TypeError about complex numbers, not the shape's error."""
    with pytest.raises(InvalidArgument, match="non-negative"):
        make(-3, 2)
