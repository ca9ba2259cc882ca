"""rev59c: parameters that are strided views of one storage, views of them read between
steps, and the bound on the views a step points at (`optim._pointed`), against torch.

A strided slice whose span is not a whole number of steps (`s[::2]` of 5 rows) holds a PAD
that its SHRINK drops again: a view of s, as torch's is, so s sees its steps (it was a copy
until adv60: runtime/realize.py's `view_ops`; tests/test_adversarial_60.py sweeps the class)."""

from __future__ import annotations

import numpy as np
import pytest

from rulegrad import Tensor
from rulegrad.nn import optim

torch = pytest.importorskip("torch")


@pytest.fixture(params=["rangeify", "kernelize"])
def scheduler(request, monkeypatch):
    monkeypatch.setenv("RULEGRAD_SCHEDULER", request.param)
    return request.param


def _data(shape):
    return np.random.default_rng(59).standard_normal(shape).astype(np.float32)


STRIDED = {"s[::2]": lambda s: s[::2], "s[1::2]": lambda s: s[1::2],
           "s.T[::2]": lambda s: s.T[::2], "s[::2, 1:]": lambda s: s[::2, 1:]}


@pytest.mark.parametrize("shape", [(6, 4), (4, 4), (2, 6)], ids=str)
@pytest.mark.parametrize("param", STRIDED)
@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
def test_a_strided_view_of_storage_trains_as_torchs(scheduler, shape, param, opt_name):
    a = _data(shape)
    s, ts = Tensor(a.copy()), torch.tensor(a.copy())
    p, tp = STRIDED[param](s), STRIDED[param](ts)
    p.requires_grad_()
    tp.requires_grad_()
    v, tv = s[:, :1], ts[:, :1]  # another view of the storage, taken before the steps
    kw = {"lr": 0.1, "momentum": 0.9} if opt_name == "SGD" else {"lr": 0.1}
    opt, topt = getattr(optim, opt_name)([p], **kw), getattr(torch.optim, opt_name)([tp], **kw)
    for _ in range(2):
        opt.zero_grad()
        topt.zero_grad()
        (p * p * p).sum().backward()
        (tp * tp * tp).sum().backward()
        with torch.no_grad():
            topt.step()
        opt.step()
        np.testing.assert_allclose(p.numpy(), tp.detach().numpy(), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(s.numpy(), ts.numpy(), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(v.numpy(), tv.numpy(), rtol=1e-5, atol=1e-5)


def test_a_padded_strided_parameter_writes_its_storage():
    a = _data((5, 3))
    s, ts = Tensor(a.copy()), torch.tensor(a.copy())
    p, tp = s[::2], ts[::2]
    p.requires_grad_()
    tp.requires_grad_()
    opt, topt = optim.SGD([p], lr=0.1), torch.optim.SGD([tp], lr=0.1)
    (p * p).sum().backward()
    (tp * tp).sum().backward()
    with torch.no_grad():
        topt.step()
    opt.step()
    np.testing.assert_allclose(p.numpy(), tp.detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(s.numpy(), ts.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("how", ["step", "schedule_step beside a view"])
def test_the_pointed_views_do_not_grow_over_200_steps(how):
    a = _data((6, 4))
    s, ts = Tensor(a.copy()), torch.tensor(a.copy())
    p, tp = s.T[1:], ts.T[1:]
    p.requires_grad_()
    tp.requires_grad_()
    v, tv = s[:, 1:], ts[:, 1:]  # a view of the storage each step points at its write
    opt = optim.SGD([p], lr=0.01, momentum=0.9)
    topt = torch.optim.SGD([tp], lr=0.01, momentum=0.9)
    sizes = []
    for _ in range(200):
        opt.zero_grad()
        topt.zero_grad()
        (p * p).sum().backward()
        (tp * tp).sum().backward()
        with torch.no_grad():
            topt.step()
        if how == "step":
            opt.step()
        else:
            Tensor.realize(*opt.schedule_step(), v * 2)
        sizes.append((len(optim._pointed), len(v.uop.toposort())))
    assert sizes[-1] == sizes[10] and sizes[-1][0] <= 1, sizes[::20]
    np.testing.assert_allclose(v.numpy(), tv.numpy(), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(s.numpy(), ts.numpy(), rtol=1e-4, atol=1e-6)
