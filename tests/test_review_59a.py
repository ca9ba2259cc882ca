"""Review of rows_across (opt.rules, rules/across_helpers.py) beyond the four normalizations its
own tests run (tests/test_short_rows_59.py compares them with numpy within a tolerance).

The action claims "the same ops on the same values": with its rows across vector lanes a kernel
must give the bits the optimizer gives it without the action (its reduces unrolled in the
loop's order either way, for rows of at most 8 values: a longer row's reduce is otherwise a
VECTOR reduce, its partial sums in another order; exp inline, log and sqrt through the same
scalar libm calls). Checked
bit for bit, the action switched off by replacing `across` in the generated matcher module, on
programs it now also takes (a max or mean subtracted, an RMS norm, a masked softmax, rows of a
batch, a row of logs, reciprocals over a row sum, softmax's and layernorm's gradients) with
NaN, +-inf, -0.0, 1e38 and a denormal in the rows; and with numpy (float64) in tolerance.
Each case also asserts the action fired (DEBUG=2's ACROSS, or the UPCAST of a one-output
kernel), so a case the action stops taking fails instead of passing on the row form alone."""

from __future__ import annotations

import numpy as np
import pytest
from optimizer_actions import schedule_actions

import rulegrad.rules.generated.opt as generated_opt
from rulegrad import Tensor
from rulegrad.backends.c import run
from rulegrad.rules.across_helpers import across


def _np_softmax(a: np.ndarray) -> np.ndarray:
    e = np.exp(a - a.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


PROGRAMS = {
    "max_subtracted": (lambda t: t - t.max(-1, keepdim=True),
                       lambda a: a - a.max(-1, keepdims=True)),
    "min_subtracted": (lambda t: t - t.min(-1, keepdim=True),
                       lambda a: a - a.min(-1, keepdims=True)),
    "mean_subtracted": (lambda t: t - t.mean(-1, keepdim=True),
                        lambda a: a - a.mean(-1, keepdims=True)),
    "rms_norm": (lambda t: t / ((t * t).mean(-1, keepdim=True) + 1e-6).sqrt(),
                 lambda a: a / np.sqrt((a * a).mean(-1, keepdims=True) + 1e-6)),
    "masked_softmax": (lambda t: (t > 0).where(t, -np.inf).softmax(-1),
                       lambda a: _np_softmax(np.where(a > 0, a, -np.inf))),
    "log_of_shares": (lambda t: (t.abs() / t.abs().sum(-1, keepdim=True)).log(),
                      lambda a: np.log(np.abs(a) / np.abs(a).sum(-1, keepdims=True))),
    "reciprocal_over_sum": (lambda t: t.reciprocal() / t.sum(-1, keepdim=True),
                            lambda a: (1 / a) / a.sum(-1, keepdims=True)),
    "softmax_twice": (lambda t: t.softmax(-1) * t.softmax(-1).sum(-1, keepdim=True),
                      lambda a: _np_softmax(a) * _np_softmax(a).sum(-1, keepdims=True)),
}
# rows of 5 (tall), of 6 with a prime count, of 3 (upcast_across's rows with a local row), one
# vector of rows exactly, a row count one past a vector
SHAPES = [(4099, 5), (1031, 6), (9, 5), (8, 7), (257, 3)]


def _rows(shape: tuple[int, int], seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32) * 3
    x[0] = -0.0
    x[1, 0] = np.nan
    x[2, -1] = np.inf
    x[3, :] = -np.inf
    x[4, :2] = [np.inf, -np.inf]
    x[5, 0] = 1e38
    x[6, -1] = 1e-45
    return x


def _without_rows_across(monkeypatch, program_run):
    """run() with the rows_across rule declining every kernel. (The table of programs is
    keyed by the kernels' ASTs before the optimizer, the same either way: emptied before and
    after, as tests/test_c_gemm.py does, or the second run reuses the first's C.)"""
    run._programs.clear()
    try:
        with monkeypatch.context() as m:
            m.setattr(generated_opt, "across", lambda sink: None)
            return program_run()
    finally:
        run._programs.clear()


def _fired(t: Tensor) -> bool:
    return any(a.startswith("ACROSS") for a in schedule_actions(t))


# programs whose rows the count of a core's work keeps in the row form (a row minus its mean:
# its values moved into lanes and out again cost more than its scalar loads, adds and stores,
# bench/across_ab.py), taken across here all the same: the form's bits are still the action's
# claim (across(sink, always=True))
FORCED = {"mean_subtracted"}


def _forced(monkeypatch, name: str, program_run):
    """program_run() with the rows_across rule taking every kernel it applies to, for the
    programs of FORCED (others: as the optimizer chooses)."""
    if name not in FORCED:
        return program_run()
    run._programs.clear()
    try:
        with monkeypatch.context() as m:
            m.setattr(generated_opt, "across", lambda sink: across(sink, always=True))
            return program_run()
    finally:
        run._programs.clear()


def _same_bits(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    same = (np.isnan(got) & np.isnan(want)) | \
        ((got == want) & (np.signbit(got) == np.signbit(want)))
    bad = np.argwhere(~same)
    assert not len(bad), f"{len(bad)} differ, first at {bad[0]}: {got[tuple(bad[0])]!r} " \
                         f"against {want[tuple(bad[0])]!r}"


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_rows_across_keeps_the_row_forms_bits(monkeypatch, name, shape):
    program, oracle = PROGRAMS[name]
    x = _rows(shape, seed=sum(shape))
    fired = _forced(monkeypatch, name, lambda: _fired(program(Tensor(x))))
    got = _forced(monkeypatch, name, lambda: program(Tensor(x)).numpy())
    want = _without_rows_across(monkeypatch, lambda: program(Tensor(x)).numpy())
    _same_bits(got, want)
    # numpy's values on the rows of normal values (those with specials: their bits above; a
    # square of 1e38 is inf in float32, not in numpy's float64)
    # (a value over a row sum near 0 keeps no relative accuracy in any order)
    with np.errstate(all="ignore"):
        ref = oracle(x[7:].astype(np.float64))
    close = np.isclose(got[7:], ref, rtol=2e-5, atol=2e-6, equal_nan=True)
    assert close.mean() > 0.99, name
    # (rows of 3 with no kernel-local row are upcast_across's, gcc's rows: no ACROSS there)
    if shape[1] > 4 or name in ("masked_softmax", "softmax_twice"):
        assert fired, schedule_actions(program(Tensor(x)))


@pytest.mark.parametrize("shape", [(4099, 5), (33, 7), (17, 8), (100, 3)],
                         ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("name", ["softmax", "layernorm", "log_softmax"])
def test_gradients_over_short_rows_keep_their_bits(monkeypatch, name, shape):
    """Softmax's, layernorm's and log_softmax's gradients (kernels over short rows too): the
    same bits with and without rows_across, and torch's values. (Rows of at most 8: longer
    rows' reduces are VECTOR reduces without the action, partial sums in another order.)"""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(shape) * 3).astype(np.float32)
    w = rng.standard_normal(shape).astype(np.float32)

    def grad() -> np.ndarray:
        t = Tensor(x)
        t.requires_grad = True
        out = {"softmax": t.softmax(-1), "layernorm": t.layernorm(),
               "log_softmax": t.log_softmax(-1)}[name]
        (out * Tensor(w)).sum().backward()
        return t.grad.numpy()

    got = grad()
    _same_bits(got, _without_rows_across(monkeypatch, grad))
    tt = torch.tensor(x.astype(np.float64), requires_grad=True)
    out = {"softmax": lambda: tt.softmax(-1), "log_softmax": lambda: tt.log_softmax(-1),
           "layernorm": lambda: torch.nn.functional.layer_norm(tt, shape[-1:], eps=1e-5)}[name]()
    (out * torch.tensor(w.astype(np.float64))).sum().backward()
    np.testing.assert_allclose(got, tt.grad.numpy(), rtol=1e-4, atol=1e-5)


# a row's sum with only arithmetic around it, rows of 12 to 14: across lanes each value is
# moved into its lane and out again (an insert and an extract, one shuffle port), where the row
# form's scalar loads and adds issue several at once and its output row is gcc's vectors; the
# rows-across form ran 1.9x (x - mean, 16384x12), 1.9x (x - sum) and 2.2x (x / sum) slower,
# reciprocals over the sum 1.9x (DEBUG=2's kernel times, 16384 rows, CPU time, the tree at
# this review). `_cost` counted each scalar op of those as a whole vector op
ROW_SUMS = {"mean_subtracted_4096x12": (lambda t: t - t.mean(-1, keepdim=True), (4096, 12)),
            "sum_subtracted_8192x14": (lambda t: t - t.sum(-1, keepdim=True), (8192, 14)),
            "over_sum_16384x12": (lambda t: t / t.sum(-1, keepdim=True), (16384, 12)),
            "reciprocal_over_sum_1031x13": (lambda t: t.reciprocal() / t.sum(-1, keepdim=True),
                                            (1031, 13))}


@pytest.mark.parametrize("name", list(ROW_SUMS))
def test_a_row_sum_with_arithmetic_around_it_keeps_its_row_form(name):
    program, shape = ROW_SUMS[name]
    x = np.random.default_rng(11).standard_normal(shape).astype(np.float32)
    acts = schedule_actions(program(Tensor(x)))
    vectors = f"UPCAST r0 ({shape[0]} iterations, {-(-shape[0] // 8)} vectors of 8"
    assert not any(a.startswith(("ACROSS", vectors)) for a in acts), acts
