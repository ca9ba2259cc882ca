"""Every reduction and scan of the Tensor API over a symbolic axis, against numpy and torch.

The rows past the bound value are NaN in each source, so an op that read past the value would
show it. What a symbolic axis cannot take is refused with an error naming the op and the axis
(runtime/variable.py lists both)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rulegrad import Tensor, Variable
from rulegrad.runtime.autograd import GradientError
from rulegrad.runtime.errors import InvalidArgument

VMAX = 12
RNG = np.random.default_rng(7)
BASE = RNG.standard_normal((VMAX, 4)).astype(np.float32)
LABELS = RNG.integers(0, 4, VMAX).astype(np.int32)


def _tt(a: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(a))


# name: (our op on the symbolic tensor t (rows 0..v), the oracle on the numpy rows a)
OPS = {
    "sum": (lambda t: t.sum(0), lambda a: a.sum(0)),
    "prod": (lambda t: t.prod(0), lambda a: a.prod(0)),
    "max": (lambda t: t.max(0), lambda a: a.max(0)),
    "min_all": (lambda t: t.min(), lambda a: a.min()),
    "mean": (lambda t: t.mean(0, keepdim=True), lambda a: a.mean(0, keepdims=True)),
    "any": (lambda t: (t > 1).any(0), lambda a: (a > 1).any(0)),
    "all": (lambda t: (t > -1).all(0), lambda a: (a > -1).all(0)),
    "var": (lambda t: t.var(0), lambda a: a.var(0, ddof=1)),
    "var_all": (lambda t: t.var(), lambda a: a.var(ddof=1)),
    "var_other_axis": (lambda t: t.var(1, correction=0), lambda a: a.var(1)),
    "std": (lambda t: t.std(0), lambda a: a.std(0, ddof=1)),
    "var_mean": (lambda t: t.var_mean(0)[0], lambda a: a.var(0, ddof=1)),
    "std_mean": (lambda t: t.std_mean(0)[1], lambda a: a.mean(0)),
    "logsumexp": (lambda t: t.logsumexp(0), lambda a: torch.logsumexp(_tt(a), 0).numpy()),
    "softmax": (lambda t: t.softmax(0), lambda a: torch.softmax(_tt(a), 0).numpy()),
    "softmax_other_axis": (lambda t: t.softmax(1), lambda a: torch.softmax(_tt(a), 1).numpy()),
    "log_softmax": (lambda t: t.log_softmax(0), lambda a: torch.log_softmax(_tt(a), 0).numpy()),
    "softmin": (lambda t: t.softmin(0), lambda a: torch.nn.functional.softmin(_tt(a), 0).numpy()),
    "layernorm": (lambda t: t.layernorm(0),
                  lambda a: (a - a.mean(0)) / np.sqrt(a.var(0) + 1e-5)),
    "normalize": (lambda t: t.normalize(dim=0), lambda a: a / np.linalg.norm(a, axis=0)),
    "argmax": (lambda t: t.argmax(0), lambda a: a.argmax(0)),
    "argmin": (lambda t: t.argmin(0, keepdim=True), lambda a: a.argmin(0)[None]),
    "argmax_all": (lambda t: t.argmax(), lambda a: a.argmax()),
    "argmax_other_axis": (lambda t: t.argmax(1), lambda a: a.argmax(1)),
    "sort": (lambda t: t.sort(0)[0], lambda a: np.sort(a, 0)),
    "sort_descending": (lambda t: t.sort(0, descending=True)[0],
                        lambda a: torch.sort(_tt(a), 0, descending=True)[0].numpy()),
    "argsort": (lambda t: t.argsort(0), lambda a: np.argsort(a, 0, kind="stable")),
    "sort_other_axis": (lambda t: t.sort(1)[1], lambda a: np.argsort(a, 1, kind="stable")),
    "topk": (lambda t: t.topk(1, 0)[0], lambda a: torch.topk(_tt(a), 1, 0)[0].numpy()),
    "topk_indices": (lambda t: t.topk(1, 0)[1], lambda a: a.argmax(0)[None]),
    "cumsum": (lambda t: t.cumsum(0), lambda a: np.cumsum(a, 0)),
    "cumsum_other_axis": (lambda t: t.cumsum(1), lambda a: np.cumsum(a, 1)),
    "cumprod": (lambda t: t.cumprod(0), lambda a: np.cumprod(a, 0)),
    "cummax": (lambda t: t.cummax(0)[0], lambda a: np.maximum.accumulate(a, 0)),
    "cummax_indices": (lambda t: t.cummax(0)[1], lambda a: torch.cummax(_tt(a), 0)[1].numpy()),
    "cummin_indices": (lambda t: t.cummin(0)[1], lambda a: torch.cummin(_tt(a), 0)[1].numpy()),
    "logcumsumexp": (lambda t: t.logcumsumexp(0),
                     lambda a: torch.logcumsumexp(_tt(a), 0).numpy()),
    "matmul": (lambda t: t.T @ t, lambda a: a.T @ a),
    "einsum": (lambda t: Tensor.einsum("ij,ik->jk", t, t), lambda a: a.T @ a),
    "slice_rows": (lambda t: t[:, 1:3].sum(0), lambda a: a[:, 1:3].sum(0)),
    "tril": (lambda t: t.tril(), lambda a: np.tril(a)),
    "triu": (lambda t: t.triu(1), lambda a: np.triu(a, 1)),
}


def _source(v: int) -> tuple[Tensor, np.ndarray]:
    """The rows 0..v of a buffer whose rows past v are NaN, as a symbolic-size tensor."""
    full = BASE.copy()
    full[v:] = np.nan
    n = Variable("n", 1, VMAX).bind(v)
    return Tensor(full).shrink(((0, n), None)), BASE[:v]


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_over_a_symbolic_axis(name):
    ours, oracle = OPS[name]
    for v in (1, 5, VMAX):
        t, a = _source(v)
        got = ours(t).numpy()
        want = np.asarray(oracle(a))
        assert got.shape == want.shape, (name, v)
        if got.dtype.kind in "iub":
            np.testing.assert_array_equal(got, want.astype(got.dtype), err_msg=f"{name} v={v}")
        else:
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=f"{name} v={v}")


def test_losses_over_a_symbolic_batch():
    for v in (1, 7):
        t, a = _source(v)
        labels = Tensor(LABELS).shrink(((0, Variable("n", 1, VMAX).bind(v)),))
        want = torch.nn.functional.cross_entropy(_tt(a), _tt(LABELS[:v]).long()).numpy()
        np.testing.assert_allclose(t.cross_entropy(labels).numpy(), want, rtol=1e-5)
        np.testing.assert_allclose(t.sparse_categorical_crossentropy(labels).numpy(), want,
                                   rtol=1e-5)
        picked = t.gather(1, labels.unsqueeze(1)).numpy()
        np.testing.assert_array_equal(picked, a[np.arange(v), LABELS[:v]][:, None])


def test_attention_over_a_symbolic_number_of_keys():
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal((1, 2, VMAX, 8)).astype(np.float32) for _ in range(3))
    for n in (1, 6):
        bound = Variable("n", 1, VMAX).bind(n)
        ks, vs = (Tensor(a).shrink((None, None, (0, bound), None)) for a in (k, v))
        for causal in (False, True):
            got = Tensor(q[:, :, :3]).scaled_dot_product_attention(ks, vs, is_causal=causal)
            want = torch.nn.functional.scaled_dot_product_attention(
                _tt(q[:, :, :3]), _tt(k[:, :, :n]), _tt(v[:, :, :n]), is_causal=causal)
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


def test_topk_k_past_the_bound_value_is_refused():
    t, _ = _source(2)
    with pytest.raises(InvalidArgument, match="bound to 2"):
        t.topk(3, 0)


def test_what_a_symbolic_axis_cannot_take_is_refused_by_name():
    t, _ = _source(4)
    with pytest.raises(InvalidArgument, match=r"cat along dim 0, a symbolic-size axis \(shapes "
                                              r"\(n=4, 4\), \(n=4, 4\)\)"):
        t.cat(t, dim=0)
    with pytest.raises(ValueError, match="only add or drop axes of size 1"):
        t.repeat(2, 1)
    with pytest.raises(InvalidArgument, match=r"masked_select over axis 0 of symbolic size, "
                                              r"shape \(n=4, 4\)"):
        t.masked_select(t > 0)
    with pytest.raises(InvalidArgument, match=r"pooling windows .* \(1, n=4, 4\)"):
        t.unsqueeze(0).avg_pool2d((2, 2))


def test_gradient_through_a_symbolic_shrink_is_refused_and_the_leaf_way_works():
    n = Variable("n", 1, VMAX).bind(5)
    x = Tensor(BASE, requires_grad=True)
    with pytest.raises(GradientError, match=r"shrink to a symbolic size \(axis 0 to n=5"):
        (x.shrink(((0, n), None)) ** 2).sum().backward()
    leaf = Tensor(BASE).shrink(((0, n), None)).contiguous().realize()
    leaf.requires_grad = True
    (leaf.softmax(0) * Tensor(BASE).shrink(((0, n), None))).sum().backward()
    xt = _tt(BASE[:5].copy()).requires_grad_()
    (torch.softmax(xt, 0) * _tt(BASE[:5])).sum().backward()
    np.testing.assert_allclose(leaf.grad.numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_one_schedule_and_one_build_serve_every_value(tmp_path, monkeypatch):
    """The new paths hold no value in the graph: sort, a scan, argmax and var over a
    symbolic axis compile once for all values (counted builds, never time)."""
    from rulegrad.backends.c import build, run
    from rulegrad.runtime import schedule_cache

    monkeypatch.setenv("RULEGRAD_BACKEND", "c")
    monkeypatch.setenv("RULEGRAD_CACHE", str(tmp_path / "cache"))
    build.clear_memory_cache()
    run._programs.clear()
    schedule_cache.clear()
    compiles = None
    for v in (3, 9, 5, 12):
        t, a = _source(v)
        outs = (t.sort(0)[0], t.cumsum(0), t.argmax(0), t.var(0))
        Tensor.realize(*outs)
        np.testing.assert_allclose(outs[0].numpy(), np.sort(a, 0))
        np.testing.assert_allclose(outs[1].numpy(), np.cumsum(a, 0), rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(outs[2].numpy(), a.argmax(0))
        with np.errstate(all="ignore"):
            np.testing.assert_allclose(outs[3].numpy(), a.var(0, ddof=1), rtol=1e-5)
        if compiles is None:
            compiles = build.stats["compiles"]
    assert build.stats["compiles"] == compiles  # values after the first built nothing
