# generated from rules/multi.rules by `rulegrad gen`; do not edit
# source sha256: 3f9494432854826c1e1dbcc3b671043a9c42837fe7ba18970dcbf4db65afcf64
'Matchers for the rule sets of rules/multi.rules: multi_pm, pm_mselect.'

from math import prod  # noqa: F401

from rulegrad.runtime.dtype import DTYPE_CLASSES, dtypes  # noqa: F401
from rulegrad.runtime.matcher import RuleMatcher, compose, helper_from, match_stats  # noqa: F401
from rulegrad.runtime.matcher import as_uop as _as_uop  # noqa: F401
from rulegrad.runtime.ops import GroupOp, Ops  # noqa: F401
from rulegrad.runtime.rewrite import RewriteNotReady, RuleInfo  # noqa: F401
from rulegrad.runtime.uop import UNSET as _UNSET  # noqa: F401
from rulegrad.runtime.uop import UOp  # noqa: F401
from rulegrad.runtime.uop import new_uop as _new  # noqa: F401
from rulegrad.rules.multi_helpers import alu_multi
from rulegrad.rules.multi_helpers import assign_multi
from rulegrad.rules.multi_helpers import gather
from rulegrad.rules.multi_helpers import has_multi
from rulegrad.rules.multi_helpers import mop_multi
from rulegrad.rules.multi_helpers import multi_like
from rulegrad.rules.multi_helpers import push_mselect
from rulegrad.rules.multi_helpers import reduce_multi
from rulegrad.rules.multi_helpers import select_part

SOURCE = 'rules/multi.rules'
SOURCE_SHA256 = '3f9494432854826c1e1dbcc3b671043a9c42837fe7ba18970dcbf4db65afcf64'
DEPENDENCIES = ()
_MSTACK = Ops.MSTACK
_MULTI = Ops.MULTI


# ======================================================================== multi_pm
_multi_pm_rules = (
    RuleInfo('alu_multi', 'rules/multi.rules', 15, 'alu_multi: Elementwise as x if has_multi(x) -> alu_multi(x)'),
    RuleInfo('reduce_multi', 'rules/multi.rules', 18, 'reduce_multi: REDUCE_AXIS(MULTI as m) as r -> reduce_multi(r, m)'),
    RuleInfo('mop_multi', 'rules/multi.rules', 21, 'mop_multi: Movement(MULTI as m) as x -> mop_multi(x, m)'),
    RuleInfo('marker_multi', 'rules/multi.rules', 23, 'marker_multi: {CONTIGUOUS, DETACH, CONTIGUOUS_BACKWARD, FUSE}(MULTI as m) as x -> multi_like(x, m)'),
    RuleInfo('copy_multi', 'rules/multi.rules', 25, 'copy_multi: COPY(MULTI as m, d) -> gather(m, d)'),
    RuleInfo('assign_multi', 'rules/multi.rules', 29, 'assign_multi: ASSIGN(MULTI as t, v) as a -> assign_multi(a, t, v)'),
)
_multi_pm_st = match_stats('multi_pm', _multi_pm_rules)  # None unless counting

def _multi_pm_r2(n, ctx, m, x):
    # rule mop_multi at rules/multi.rules:21
    #   mop_multi: Movement(MULTI as m) as x -> mop_multi(x, m)
    return _as_uop(n, mop_multi(x, m))

def _multi_pm_any0(n, ctx):
    # rule alu_multi at rules/multi.rules:15
    #   alu_multi: Elementwise as x if has_multi(x) -> alu_multi(x)
    #+ if _multi_pm_st: _multi_pm_st.attempts[0] += 1
    # x = n
    if has_multi(n):
        _r = alu_multi(n)
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _multi_pm_rules[0]
    return None

def _multi_pm_RESHAPE(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is _MULTI:
            # rule mop_multi at rules/multi.rules:21
            #   mop_multi: Movement(MULTI as m) as x -> mop_multi(x, m)
            #+ if _multi_pm_st: _multi_pm_st.attempts[2] += 1
            _r = _multi_pm_r2(n, ctx, n0, n)
            if _r is not None and _r is not n: return _r, _multi_pm_rules[2]
    return None

def _multi_pm_PERMUTE(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is _MULTI:
            # rule mop_multi at rules/multi.rules:21
            #   mop_multi: Movement(MULTI as m) as x -> mop_multi(x, m)
            #+ if _multi_pm_st: _multi_pm_st.attempts[2] += 1
            _r = _multi_pm_r2(n, ctx, n0, n)
            if _r is not None and _r is not n: return _r, _multi_pm_rules[2]
    return None

def _multi_pm_EXPAND(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is _MULTI:
            # rule mop_multi at rules/multi.rules:21
            #   mop_multi: Movement(MULTI as m) as x -> mop_multi(x, m)
            #+ if _multi_pm_st: _multi_pm_st.attempts[2] += 1
            _r = _multi_pm_r2(n, ctx, n0, n)
            if _r is not None and _r is not n: return _r, _multi_pm_rules[2]
    return None

def _multi_pm_PAD(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is _MULTI:
            # rule mop_multi at rules/multi.rules:21
            #   mop_multi: Movement(MULTI as m) as x -> mop_multi(x, m)
            #+ if _multi_pm_st: _multi_pm_st.attempts[2] += 1
            _r = _multi_pm_r2(n, ctx, n0, n)
            if _r is not None and _r is not n: return _r, _multi_pm_rules[2]
    return None

def _multi_pm_SHRINK(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is _MULTI:
            # rule mop_multi at rules/multi.rules:21
            #   mop_multi: Movement(MULTI as m) as x -> mop_multi(x, m)
            #+ if _multi_pm_st: _multi_pm_st.attempts[2] += 1
            _r = _multi_pm_r2(n, ctx, n0, n)
            if _r is not None and _r is not n: return _r, _multi_pm_rules[2]
    return None

def _multi_pm_FLIP(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is _MULTI:
            # rule mop_multi at rules/multi.rules:21
            #   mop_multi: Movement(MULTI as m) as x -> mop_multi(x, m)
            #+ if _multi_pm_st: _multi_pm_st.attempts[2] += 1
            _r = _multi_pm_r2(n, ctx, n0, n)
            if _r is not None and _r is not n: return _r, _multi_pm_rules[2]
    return None

def _multi_pm_CONTIGUOUS(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is _MULTI:
            # rule marker_multi at rules/multi.rules:23
            #   marker_multi: {CONTIGUOUS, DETACH, CONTIGUOUS_BACKWARD, FUSE}(MULTI as m) as x -> multi_like(x, m)
            #+ if _multi_pm_st: _multi_pm_st.attempts[3] += 1
            # m = n0, x = n
            _r = multi_like(n, n0)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _multi_pm_rules[3]
    return None

def _multi_pm_CONTIGUOUS_BACKWARD(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is _MULTI:
            # rule marker_multi at rules/multi.rules:23
            #   marker_multi: {CONTIGUOUS, DETACH, CONTIGUOUS_BACKWARD, FUSE}(MULTI as m) as x -> multi_like(x, m)
            #+ if _multi_pm_st: _multi_pm_st.attempts[3] += 1
            # m = n0, x = n
            _r = multi_like(n, n0)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _multi_pm_rules[3]
    return None

def _multi_pm_DETACH(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is _MULTI:
            # rule marker_multi at rules/multi.rules:23
            #   marker_multi: {CONTIGUOUS, DETACH, CONTIGUOUS_BACKWARD, FUSE}(MULTI as m) as x -> multi_like(x, m)
            #+ if _multi_pm_st: _multi_pm_st.attempts[3] += 1
            # m = n0, x = n
            _r = multi_like(n, n0)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _multi_pm_rules[3]
    return None

def _multi_pm_FUSE(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is _MULTI:
            # rule marker_multi at rules/multi.rules:23
            #   marker_multi: {CONTIGUOUS, DETACH, CONTIGUOUS_BACKWARD, FUSE}(MULTI as m) as x -> multi_like(x, m)
            #+ if _multi_pm_st: _multi_pm_st.attempts[3] += 1
            # m = n0, x = n
            _r = multi_like(n, n0)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _multi_pm_rules[3]
    return None

def _multi_pm_COPY(n, ctx):
    try:
        n0, n1 = n.src
    except ValueError:
        return None
    if n0.op is _MULTI:
        # rule copy_multi at rules/multi.rules:25
        #   copy_multi: COPY(MULTI as m, d) -> gather(m, d)
        #+ if _multi_pm_st: _multi_pm_st.attempts[4] += 1
        # d = n1, m = n0
        _r = gather(n0, n1)
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _multi_pm_rules[4]
    return None

def _multi_pm_ASSIGN(n, ctx):
    try:
        n0, n1 = n.src
    except ValueError:
        return None
    if n0.op is _MULTI:
        # rule assign_multi at rules/multi.rules:29
        #   assign_multi: ASSIGN(MULTI as t, v) as a -> assign_multi(a, t, v)
        #+ if _multi_pm_st: _multi_pm_st.attempts[5] += 1
        # a = n, t = n0, v = n1
        _r = assign_multi(n, n0, n1)
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _multi_pm_rules[5]
    return None

def _multi_pm_REDUCE_AXIS(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is _MULTI:
            # rule reduce_multi at rules/multi.rules:18
            #   reduce_multi: REDUCE_AXIS(MULTI as m) as r -> reduce_multi(r, m)
            #+ if _multi_pm_st: _multi_pm_st.attempts[1] += 1
            # m = n0, r = n
            _r = reduce_multi(n, n0)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _multi_pm_rules[1]
    return None


_multi_pm_part = RuleMatcher('multi_pm', _multi_pm_rules, {
    Ops.RESHAPE: _multi_pm_RESHAPE,
    Ops.PERMUTE: _multi_pm_PERMUTE,
    Ops.EXPAND: _multi_pm_EXPAND,
    Ops.PAD: _multi_pm_PAD,
    Ops.SHRINK: _multi_pm_SHRINK,
    Ops.FLIP: _multi_pm_FLIP,
    Ops.CONTIGUOUS: _multi_pm_CONTIGUOUS,
    Ops.CONTIGUOUS_BACKWARD: _multi_pm_CONTIGUOUS_BACKWARD,
    Ops.DETACH: _multi_pm_DETACH,
    Ops.FUSE: _multi_pm_FUSE,
    Ops.COPY: _multi_pm_COPY,
    Ops.ASSIGN: _multi_pm_ASSIGN,
    Ops.REDUCE_AXIS: _multi_pm_REDUCE_AXIS,
    Ops.CAST: _multi_pm_any0,
    Ops.BITCAST: _multi_pm_any0,
    Ops.NEG: _multi_pm_any0,
    Ops.EXP: _multi_pm_any0,
    Ops.LOG: _multi_pm_any0,
    Ops.EXP2: _multi_pm_any0,
    Ops.LOG2: _multi_pm_any0,
    Ops.SIN: _multi_pm_any0,
    Ops.SQRT: _multi_pm_any0,
    Ops.RECIPROCAL: _multi_pm_any0,
    Ops.TRUNC: _multi_pm_any0,
    Ops.ADD: _multi_pm_any0,
    Ops.SUB: _multi_pm_any0,
    Ops.MUL: _multi_pm_any0,
    Ops.FDIV: _multi_pm_any0,
    Ops.IDIV: _multi_pm_any0,
    Ops.MOD: _multi_pm_any0,
    Ops.MAX: _multi_pm_any0,
    Ops.MIN: _multi_pm_any0,
    Ops.POW: _multi_pm_any0,
    Ops.CMPLT: _multi_pm_any0,
    Ops.CMPNE: _multi_pm_any0,
    Ops.CMPEQ: _multi_pm_any0,
    Ops.AND: _multi_pm_any0,
    Ops.OR: _multi_pm_any0,
    Ops.XOR: _multi_pm_any0,
    Ops.SHL: _multi_pm_any0,
    Ops.SHR: _multi_pm_any0,
    Ops.WHERE: _multi_pm_any0,
    Ops.MULACC: _multi_pm_any0,
    Ops.COS: _multi_pm_any0,
}, home=(globals(), '_multi_pm_st'))


# ======================================================================== pm_mselect
_pm_mselect_rules = (
    RuleInfo('mselect_mstack', 'rules/multi.rules', 35, 'mselect_mstack: MSELECT(MSTACK as s) as m -> select_part(s, m.arg)'),
    RuleInfo('mselect_push', 'rules/multi.rules', 38, 'mselect_push: MSELECT(x) as m if x.op is not Ops.MSTACK -> push_mselect(x, m.arg)'),
)
_pm_mselect_st = match_stats('pm_mselect', _pm_mselect_rules)  # None unless counting

def _pm_mselect_MSELECT(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is _MSTACK:
            # rule mselect_mstack at rules/multi.rules:35
            #   mselect_mstack: MSELECT(MSTACK as s) as m -> select_part(s, m.arg)
            #+ if _pm_mselect_st: _pm_mselect_st.attempts[0] += 1
            # m = n, s = n0
            _r = select_part(n0, n.arg)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _pm_mselect_rules[0]
        # rule mselect_push at rules/multi.rules:38
        #   mselect_push: MSELECT(x) as m if x.op is not Ops.MSTACK -> push_mselect(x, m.arg)
        #+ if _pm_mselect_st: _pm_mselect_st.attempts[1] += 1
        # m = n, x = n0
        if n0.op is not _MSTACK:
            _r = push_mselect(n0, n.arg)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _pm_mselect_rules[1]
    return None


_pm_mselect_part = RuleMatcher('pm_mselect', _pm_mselect_rules, {
    Ops.MSELECT: _pm_mselect_MSELECT,
}, home=(globals(), '_pm_mselect_st'))


# ======================================================================== the rule sets
_S_multi_pm = compose('multi_pm', _multi_pm_part)
multi_pm = _S_multi_pm
_S_pm_mselect = compose('pm_mselect', _pm_mselect_part)
pm_mselect = _S_pm_mselect

MATCHERS = {
    'multi_pm': _S_multi_pm,
    'pm_mselect': _S_pm_mselect,
}

PIPELINES = {}
