# generated from rules/gradient.rules by `rulegrad gen`; do not edit
# source sha256: 4df103f0934d6c48b2294beafa9a4f8763c5860dc777b92c427bb5b766379a1b
'Matchers for the rule sets of rules/gradient.rules: pm_gradient.'

from math import prod  # noqa: F401

from rulegrad.runtime.dtype import DTYPE_CLASSES, dtypes  # noqa: F401
from rulegrad.runtime.matcher import RuleMatcher, compose, helper_from, match_stats  # noqa: F401
from rulegrad.runtime.matcher import as_uop as _as_uop  # noqa: F401
from rulegrad.runtime.ops import GroupOp, Ops  # noqa: F401
from rulegrad.runtime.rewrite import RewriteNotReady, RuleInfo  # noqa: F401
from rulegrad.runtime.uop import UNSET as _UNSET  # noqa: F401
from rulegrad.runtime.uop import UOp  # noqa: F401
from rulegrad.runtime.uop import new_uop as _new  # noqa: F401
from rulegrad.rules.gradient_helpers import argsort
from rulegrad.rules.gradient_helpers import copy_back
from rulegrad.rules.gradient_helpers import first_max_grad
from rulegrad.rules.gradient_helpers import no_gradient
from rulegrad.rules.gradient_helpers import part_grads
from rulegrad.rules.gradient_helpers import reduce_grad
from rulegrad.rules.gradient_helpers import running_max_grad
from rulegrad.rules.gradient_helpers import running_parts
from rulegrad.rules.gradient_helpers import scan_prod_grad
from rulegrad.rules.gradient_helpers import scan_sum_grad
from rulegrad.rules.gradient_helpers import stacked_max_grad
from rulegrad.rules.gradient_helpers import sum_to
from rulegrad.rules.gradient_helpers import unpad
from rulegrad.rules.gradient_helpers import unshrink
from rulegrad.rules.gradient_helpers import window_parts

SOURCE = 'rules/gradient.rules'
SOURCE_SHA256 = '4df103f0934d6c48b2294beafa9a4f8763c5860dc777b92c427bb5b766379a1b'
DEPENDENCIES = ()
_ADD = Ops.ADD
_AND = Ops.AND
_CONTIGUOUS_BACKWARD = Ops.CONTIGUOUS_BACKWARD
_COS = Ops.COS
_LOG = Ops.LOG
_MAX = Ops.MAX
_MUL = Ops.MUL
_OR = Ops.OR
_POW = Ops.POW
_SIN = Ops.SIN
_TRUNC = Ops.TRUNC
_DT0 = DTYPE_CLASSES['floats']


# ======================================================================== pm_gradient
_pm_gradient_rules = (
    RuleInfo('grad_int_alu', 'rules/gradient.rules', 19, 'grad_int_alu: Elementwise as r if not r.dtype.is_float -> no_gradient(r)'),
    RuleInfo('grad_int_view', 'rules/gradient.rules', 20, 'grad_int_view: {REDUCE_AXIS, RESHAPE, PERMUTE, EXPAND, PAD, SHRINK, FLIP}(x) as r if not r.dtype.is_float -> (None,)'),
    RuleInfo('grad_bitcast', 'rules/gradient.rules', 23, 'grad_bitcast: BITCAST(x) -> (None,)'),
    RuleInfo('grad_idiv', 'rules/gradient.rules', 25, 'grad_idiv: IDIV(x, y) -> (None, None)'),
    RuleInfo('grad_neg', 'rules/gradient.rules', 28, 'grad_neg: NEG(x):floats -> (-ctx,)'),
    RuleInfo('grad_exp', 'rules/gradient.rules', 29, 'grad_exp: EXP(x):floats as r -> (ctx * r,)'),
    RuleInfo('grad_log', 'rules/gradient.rules', 30, 'grad_log: LOG(x):floats -> (ctx / x,)'),
    RuleInfo('grad_exp2', 'rules/gradient.rules', 31, 'grad_exp2: EXP2(x):floats as r -> (ctx * r * 0.6931471805599453,)'),
    RuleInfo('grad_log2', 'rules/gradient.rules', 32, 'grad_log2: LOG2(x):floats -> (ctx / (x * 0.6931471805599453),)'),
    RuleInfo('grad_sin', 'rules/gradient.rules', 33, 'grad_sin: SIN(x):floats -> (ctx * COS(x),)'),
    RuleInfo('grad_cos', 'rules/gradient.rules', 34, 'grad_cos: COS(x):floats -> (-ctx * SIN(x),)'),
    RuleInfo('grad_sqrt', 'rules/gradient.rules', 35, 'grad_sqrt: SQRT(x):floats as r -> (ctx / (r * 2),)'),
    RuleInfo('grad_recip', 'rules/gradient.rules', 36, 'grad_recip: RECIPROCAL(x):floats as r -> (-ctx * (r * r),)'),
    RuleInfo('grad_trunc', 'rules/gradient.rules', 37, 'grad_trunc: TRUNC(x):floats -> (ctx.const_like(0),)'),
    RuleInfo('grad_cast', 'rules/gradient.rules', 39, 'grad_cast: CAST(x):floats -> (ctx.cast(x.dtype) if x.dtype.is_float else None,)'),
    RuleInfo('grad_add', 'rules/gradient.rules', 42, 'grad_add: ADD(x, y):floats -> (ctx, ctx)'),
    RuleInfo('grad_sub', 'rules/gradient.rules', 43, 'grad_sub: SUB(x, y):floats -> (ctx, -ctx)'),
    RuleInfo('grad_mul', 'rules/gradient.rules', 44, 'grad_mul: MUL(x, y):floats -> (ctx * y, ctx * x)'),
    RuleInfo('grad_fdiv', 'rules/gradient.rules', 45, 'grad_fdiv: FDIV(x, y):floats as r -> (ctx / y, -ctx * (r / y))'),
    RuleInfo('grad_mod', 'rules/gradient.rules', 47, 'grad_mod: MOD(x, y):floats -> (ctx, -ctx * TRUNC(x / y))'),
    RuleInfo('grad_pow', 'rules/gradient.rules', 51, 'grad_pow: POW(x, y):floats as r -> (y.eq(0).where(ctx.const_like(0), ctx * (y * POW(x, y - 1))), ctx * AND(x.eq(0), OR(y.eq(0), y.const_like(0).lt(y))).where(ctx.const_like(0), r * LOG(x)))'),
    RuleInfo('grad_max', 'rules/gradient.rules', 55, 'grad_max: MAX(x, y):floats -> (x.lt(y).where(ctx.const_like(0), x.eq(y).where(ctx * 0.5, ctx)), y.lt(x).where(ctx.const_like(0), x.eq(y).where(ctx * 0.5, ctx)))'),
    RuleInfo('grad_min', 'rules/gradient.rules', 57, 'grad_min: MIN(x, y):floats -> (y.lt(x).where(ctx.const_like(0), x.eq(y).where(ctx * 0.5, ctx)), x.lt(y).where(ctx.const_like(0), x.eq(y).where(ctx * 0.5, ctx)))'),
    RuleInfo('grad_where', 'rules/gradient.rules', 59, 'grad_where: WHERE(c, a, b):floats -> (None, c.where(ctx, ctx.const_like(0)), c.where(ctx.const_like(0), ctx))'),
    RuleInfo('grad_mulacc', 'rules/gradient.rules', 60, 'grad_mulacc: MULACC(a, b, c):floats -> (ctx * b, ctx * a, ctx)'),
    RuleInfo('grad_pool_max', 'rules/gradient.rules', 67, 'grad_pool_max: REDUCE_AXIS(CONTIGUOUS_BACKWARD(x)):floats as r if r.arg[0] is Ops.MAX and parts is None -> (first_max_grad(ctx, r),) where parts = window_parts(r)'),
    RuleInfo('grad_pool_stack', 'rules/gradient.rules', 72, 'grad_pool_stack: REDUCE_AXIS(CONTIGUOUS_BACKWARD(x)):floats as r if r.arg[0] is Ops.MAX and parts is not None -> (stacked_max_grad(ctx, r, parts),) where parts = window_parts(r)'),
    RuleInfo('grad_scan_sum', 'rules/gradient.rules', 76, 'grad_scan_sum: REDUCE_AXIS(CONTIGUOUS_BACKWARD(x)):floats as r if r.arg[0] is Ops.ADD -> scan_sum_grad(ctx, r)'),
    RuleInfo('grad_scan_prod', 'rules/gradient.rules', 80, 'grad_scan_prod: REDUCE_AXIS(CONTIGUOUS_BACKWARD(x)):floats as r if r.arg[0] is Ops.MUL -> scan_prod_grad(ctx, r)'),
    RuleInfo('grad_reduce', 'rules/gradient.rules', 82, 'grad_reduce: REDUCE_AXIS(x):floats as r if not (r.arg[0] in (Ops.MAX, Ops.ADD, Ops.MUL) and x.op is Ops.CONTIGUOUS_BACKWARD) -> (reduce_grad(ctx, r),)'),
    RuleInfo('grad_reshape', 'rules/gradient.rules', 86, 'grad_reshape: RESHAPE(x):floats -> (ctx.reshape(x.shape),)'),
    RuleInfo('grad_permute', 'rules/gradient.rules', 87, 'grad_permute: PERMUTE(x):floats as p -> (ctx.permute(argsort(p.arg)),)'),
    RuleInfo('grad_expand', 'rules/gradient.rules', 88, 'grad_expand: EXPAND(x):floats -> (sum_to(ctx, x.shape),)'),
    RuleInfo('grad_pad', 'rules/gradient.rules', 89, 'grad_pad: PAD(x):floats as p -> (ctx.shrink(unpad(p)),)'),
    RuleInfo('grad_shrink', 'rules/gradient.rules', 90, 'grad_shrink: SHRINK(x):floats as s -> (ctx.pad(unshrink(s)),)'),
    RuleInfo('grad_flip', 'rules/gradient.rules', 91, 'grad_flip: FLIP(x):floats as f -> (ctx.flip(f.arg),)'),
    RuleInfo('grad_contig', 'rules/gradient.rules', 94, 'grad_contig: {CONTIGUOUS, FUSE}(x):floats -> (ctx,)'),
    RuleInfo('grad_marked', 'rules/gradient.rules', 95, 'grad_marked: CONTIGUOUS_BACKWARD(x):floats as r if running_parts(r) is None -> (ctx,)'),
    RuleInfo('grad_scan_max', 'rules/gradient.rules', 99, 'grad_scan_max: CONTIGUOUS_BACKWARD(x):floats as r if parts is not None -> running_max_grad(ctx, *parts) where parts = running_parts(r)'),
    RuleInfo('grad_copy', 'rules/gradient.rules', 101, 'grad_copy: COPY(x, d):floats -> (copy_back(ctx, x), None)'),
    RuleInfo('grad_multi', 'rules/gradient.rules', 104, 'grad_multi: MULTI(s):floats as m -> (part_grads(ctx, m),)'),
    RuleInfo('grad_detach', 'rules/gradient.rules', 105, 'grad_detach: DETACH(x) -> (None,)'),
    RuleInfo('grad_assign', 'rules/gradient.rules', 106, 'grad_assign: ASSIGN(t, v) -> (None, None)'),
)
_pm_gradient_st = match_stats('pm_gradient', _pm_gradient_rules)  # None unless counting

def _pm_gradient_r1(n, ctx, r, x):
    # rule grad_int_view at rules/gradient.rules:20
    #   grad_int_view: {REDUCE_AXIS, RESHAPE, PERMUTE, EXPAND, PAD, SHRINK, FLIP}(x) as r if not r.dtype.is_float -> (None,)
    if not (not r.dtype.is_float): return None
    return _as_uop(n, (None,))

def _pm_gradient_any0(n, ctx):
    # rule grad_int_alu at rules/gradient.rules:19
    #   grad_int_alu: Elementwise as r if not r.dtype.is_float -> no_gradient(r)
    #+ if _pm_gradient_st: _pm_gradient_st.attempts[0] += 1
    # r = n
    if not n.dtype.is_float:
        _r = no_gradient(n)
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _pm_gradient_rules[0]
    return None

def _pm_gradient_RESHAPE(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule grad_int_view at rules/gradient.rules:20
        #   grad_int_view: {REDUCE_AXIS, RESHAPE, PERMUTE, EXPAND, PAD, SHRINK, FLIP}(x) as r if not r.dtype.is_float -> (None,)
        #+ if _pm_gradient_st: _pm_gradient_st.attempts[1] += 1
        _r = _pm_gradient_r1(n, ctx, n, n0)
        if _r is not None and _r is not n: return _r, _pm_gradient_rules[1]
        if n.dtype in _DT0:
            # rule grad_reshape at rules/gradient.rules:86
            #   grad_reshape: RESHAPE(x):floats -> (ctx.reshape(x.shape),)
            #+ if _pm_gradient_st: _pm_gradient_st.attempts[30] += 1
            # x = n0
            _r = (ctx.reshape(n0.shape),)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _pm_gradient_rules[30]
    return None

def _pm_gradient_PERMUTE(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule grad_int_view at rules/gradient.rules:20
        #   grad_int_view: {REDUCE_AXIS, RESHAPE, PERMUTE, EXPAND, PAD, SHRINK, FLIP}(x) as r if not r.dtype.is_float -> (None,)
        #+ if _pm_gradient_st: _pm_gradient_st.attempts[1] += 1
        _r = _pm_gradient_r1(n, ctx, n, n0)
        if _r is not None and _r is not n: return _r, _pm_gradient_rules[1]
        if n.dtype in _DT0:
            # rule grad_permute at rules/gradient.rules:87
            #   grad_permute: PERMUTE(x):floats as p -> (ctx.permute(argsort(p.arg)),)
            #+ if _pm_gradient_st: _pm_gradient_st.attempts[31] += 1
            # p = n, x = n0
            _r = (ctx.permute(argsort(n.arg)),)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _pm_gradient_rules[31]
    return None

def _pm_gradient_EXPAND(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule grad_int_view at rules/gradient.rules:20
        #   grad_int_view: {REDUCE_AXIS, RESHAPE, PERMUTE, EXPAND, PAD, SHRINK, FLIP}(x) as r if not r.dtype.is_float -> (None,)
        #+ if _pm_gradient_st: _pm_gradient_st.attempts[1] += 1
        _r = _pm_gradient_r1(n, ctx, n, n0)
        if _r is not None and _r is not n: return _r, _pm_gradient_rules[1]
        if n.dtype in _DT0:
            # rule grad_expand at rules/gradient.rules:88
            #   grad_expand: EXPAND(x):floats -> (sum_to(ctx, x.shape),)
            #+ if _pm_gradient_st: _pm_gradient_st.attempts[32] += 1
            # x = n0
            _r = (sum_to(ctx, n0.shape),)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _pm_gradient_rules[32]
    return None

def _pm_gradient_PAD(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule grad_int_view at rules/gradient.rules:20
        #   grad_int_view: {REDUCE_AXIS, RESHAPE, PERMUTE, EXPAND, PAD, SHRINK, FLIP}(x) as r if not r.dtype.is_float -> (None,)
        #+ if _pm_gradient_st: _pm_gradient_st.attempts[1] += 1
        _r = _pm_gradient_r1(n, ctx, n, n0)
        if _r is not None and _r is not n: return _r, _pm_gradient_rules[1]
        if n.dtype in _DT0:
            # rule grad_pad at rules/gradient.rules:89
            #   grad_pad: PAD(x):floats as p -> (ctx.shrink(unpad(p)),)
            #+ if _pm_gradient_st: _pm_gradient_st.attempts[33] += 1
            # p = n, x = n0
            _r = (ctx.shrink(unpad(n)),)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _pm_gradient_rules[33]
    return None

def _pm_gradient_SHRINK(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule grad_int_view at rules/gradient.rules:20
        #   grad_int_view: {REDUCE_AXIS, RESHAPE, PERMUTE, EXPAND, PAD, SHRINK, FLIP}(x) as r if not r.dtype.is_float -> (None,)
        #+ if _pm_gradient_st: _pm_gradient_st.attempts[1] += 1
        _r = _pm_gradient_r1(n, ctx, n, n0)
        if _r is not None and _r is not n: return _r, _pm_gradient_rules[1]
        if n.dtype in _DT0:
            # rule grad_shrink at rules/gradient.rules:90
            #   grad_shrink: SHRINK(x):floats as s -> (ctx.pad(unshrink(s)),)
            #+ if _pm_gradient_st: _pm_gradient_st.attempts[34] += 1
            # s = n, x = n0
            _r = (ctx.pad(unshrink(n)),)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _pm_gradient_rules[34]
    return None

def _pm_gradient_FLIP(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule grad_int_view at rules/gradient.rules:20
        #   grad_int_view: {REDUCE_AXIS, RESHAPE, PERMUTE, EXPAND, PAD, SHRINK, FLIP}(x) as r if not r.dtype.is_float -> (None,)
        #+ if _pm_gradient_st: _pm_gradient_st.attempts[1] += 1
        _r = _pm_gradient_r1(n, ctx, n, n0)
        if _r is not None and _r is not n: return _r, _pm_gradient_rules[1]
        if n.dtype in _DT0:
            # rule grad_flip at rules/gradient.rules:91
            #   grad_flip: FLIP(x):floats as f -> (ctx.flip(f.arg),)
            #+ if _pm_gradient_st: _pm_gradient_st.attempts[35] += 1
            # f = n, x = n0
            _r = (ctx.flip(n.arg),)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _pm_gradient_rules[35]
    return None

def _pm_gradient_CONTIGUOUS(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n.dtype in _DT0:
            # rule grad_contig at rules/gradient.rules:94
            #   grad_contig: {CONTIGUOUS, FUSE}(x):floats -> (ctx,)
            #+ if _pm_gradient_st: _pm_gradient_st.attempts[36] += 1
            # x = n0
            _r = (ctx,)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _pm_gradient_rules[36]
    return None

def _pm_gradient_CONTIGUOUS_BACKWARD(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n.dtype in _DT0:
            # rule grad_marked at rules/gradient.rules:95
            #   grad_marked: CONTIGUOUS_BACKWARD(x):floats as r if running_parts(r) is None -> (ctx,)
            #+ if _pm_gradient_st: _pm_gradient_st.attempts[37] += 1
            # r = n, x = n0
            if running_parts(n) is None:
                _r = (ctx,)
                if _r is not None:
                    if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                    if _r is not n: return _r, _pm_gradient_rules[37]
            # rule grad_scan_max at rules/gradient.rules:99
            #   grad_scan_max: CONTIGUOUS_BACKWARD(x):floats as r if parts is not None -> running_max_grad(ctx, *parts) where parts = running_parts(r)
            #+ if _pm_gradient_st: _pm_gradient_st.attempts[38] += 1
            # r = n, x = n0
            parts = running_parts(n)
            if parts is not None:
                _r = running_max_grad(ctx, *parts)
                if _r is not None:
                    if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                    if _r is not n: return _r, _pm_gradient_rules[38]
    return None

def _pm_gradient_DETACH(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule grad_detach at rules/gradient.rules:105
        #   grad_detach: DETACH(x) -> (None,)
        #+ if _pm_gradient_st: _pm_gradient_st.attempts[41] += 1
        # x = n0
        _r = (None,)
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _pm_gradient_rules[41]
    return None

def _pm_gradient_FUSE(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n.dtype in _DT0:
            # rule grad_contig at rules/gradient.rules:94
            #   grad_contig: {CONTIGUOUS, FUSE}(x):floats -> (ctx,)
            #+ if _pm_gradient_st: _pm_gradient_st.attempts[36] += 1
            # x = n0
            _r = (ctx,)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _pm_gradient_rules[36]
    return None

def _pm_gradient_COPY(n, ctx):
    try:
        n0, n1 = n.src
    except ValueError:
        return None
    if n.dtype in _DT0:
        # rule grad_copy at rules/gradient.rules:101
        #   grad_copy: COPY(x, d):floats -> (copy_back(ctx, x), None)
        #+ if _pm_gradient_st: _pm_gradient_st.attempts[39] += 1
        # d = n1, x = n0
        _r = (copy_back(ctx, n0), None)
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _pm_gradient_rules[39]
    return None

def _pm_gradient_ASSIGN(n, ctx):
    try:
        n0, n1 = n.src
    except ValueError:
        return None
    # rule grad_assign at rules/gradient.rules:106
    #   grad_assign: ASSIGN(t, v) -> (None, None)
    #+ if _pm_gradient_st: _pm_gradient_st.attempts[42] += 1
    # t = n0, v = n1
    _r = (None, None)
    if _r is not None:
        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
        if _r is not n: return _r, _pm_gradient_rules[42]
    return None

def _pm_gradient_MULTI(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n.dtype in _DT0:
            # rule grad_multi at rules/gradient.rules:104
            #   grad_multi: MULTI(s):floats as m -> (part_grads(ctx, m),)
            #+ if _pm_gradient_st: _pm_gradient_st.attempts[40] += 1
            # m = n, s = n0
            _r = (part_grads(ctx, n),)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _pm_gradient_rules[40]
    return None

def _pm_gradient_REDUCE_AXIS(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is _CONTIGUOUS_BACKWARD:
            # rule grad_int_view at rules/gradient.rules:20
            #   grad_int_view: {REDUCE_AXIS, RESHAPE, PERMUTE, EXPAND, PAD, SHRINK, FLIP}(x) as r if not r.dtype.is_float -> (None,)
            #+ if _pm_gradient_st: _pm_gradient_st.attempts[1] += 1
            _r = _pm_gradient_r1(n, ctx, n, n0)
            if _r is not None and _r is not n: return _r, _pm_gradient_rules[1]
            if n.dtype in _DT0:
                if len(n0.src) == 1:
                    n0_0 = n0.src[0]
                    # rule grad_pool_max at rules/gradient.rules:67
                    #   grad_pool_max: REDUCE_AXIS(CONTIGUOUS_BACKWARD(x)):floats as r if r.arg[0] is Ops.MAX and parts is None -> (first_max_grad(ctx, r),) where parts = window_parts(r)
                    #+ if _pm_gradient_st: _pm_gradient_st.attempts[25] += 1
                    # r = n, x = n0_0
                    if n.arg[0] is _MAX:
                        parts = window_parts(n)
                        if parts is None:
                            _r = (first_max_grad(ctx, n),)
                            if _r is not None:
                                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                                if _r is not n: return _r, _pm_gradient_rules[25]
                    # rule grad_pool_stack at rules/gradient.rules:72
                    #   grad_pool_stack: REDUCE_AXIS(CONTIGUOUS_BACKWARD(x)):floats as r if r.arg[0] is Ops.MAX and parts is not None -> (stacked_max_grad(ctx, r, parts),) where parts = window_parts(r)
                    #+ if _pm_gradient_st: _pm_gradient_st.attempts[26] += 1
                    # r = n, x = n0_0
                    if n.arg[0] is _MAX:
                        parts = window_parts(n)
                        if parts is not None:
                            _r = (stacked_max_grad(ctx, n, parts),)
                            if _r is not None:
                                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                                if _r is not n: return _r, _pm_gradient_rules[26]
                    # rule grad_scan_sum at rules/gradient.rules:76
                    #   grad_scan_sum: REDUCE_AXIS(CONTIGUOUS_BACKWARD(x)):floats as r if r.arg[0] is Ops.ADD -> scan_sum_grad(ctx, r)
                    #+ if _pm_gradient_st: _pm_gradient_st.attempts[27] += 1
                    # r = n, x = n0_0
                    if n.arg[0] is _ADD:
                        _r = scan_sum_grad(ctx, n)
                        if _r is not None:
                            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                            if _r is not n: return _r, _pm_gradient_rules[27]
                    # rule grad_scan_prod at rules/gradient.rules:80
                    #   grad_scan_prod: REDUCE_AXIS(CONTIGUOUS_BACKWARD(x)):floats as r if r.arg[0] is Ops.MUL -> scan_prod_grad(ctx, r)
                    #+ if _pm_gradient_st: _pm_gradient_st.attempts[28] += 1
                    # r = n, x = n0_0
                    if n.arg[0] is _MUL:
                        _r = scan_prod_grad(ctx, n)
                        if _r is not None:
                            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                            if _r is not n: return _r, _pm_gradient_rules[28]
                # rule grad_reduce at rules/gradient.rules:82
                #   grad_reduce: REDUCE_AXIS(x):floats as r if not (r.arg[0] in (Ops.MAX, Ops.ADD, Ops.MUL) and x.op is Ops.CONTIGUOUS_BACKWARD) -> (reduce_grad(ctx, r),)
                #+ if _pm_gradient_st: _pm_gradient_st.attempts[29] += 1
                # r = n, x = n0
                if not (n.arg[0] in (_MAX, _ADD, _MUL) and n0.op is _CONTIGUOUS_BACKWARD):
                    _r = (reduce_grad(ctx, n),)
                    if _r is not None:
                        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                        if _r is not n: return _r, _pm_gradient_rules[29]
        else:
            # rule grad_int_view at rules/gradient.rules:20
            #   grad_int_view: {REDUCE_AXIS, RESHAPE, PERMUTE, EXPAND, PAD, SHRINK, FLIP}(x) as r if not r.dtype.is_float -> (None,)
            #+ if _pm_gradient_st: _pm_gradient_st.attempts[1] += 1
            _r = _pm_gradient_r1(n, ctx, n, n0)
            if _r is not None and _r is not n: return _r, _pm_gradient_rules[1]
            if n.dtype in _DT0:
                # rule grad_reduce at rules/gradient.rules:82
                #   grad_reduce: REDUCE_AXIS(x):floats as r if not (r.arg[0] in (Ops.MAX, Ops.ADD, Ops.MUL) and x.op is Ops.CONTIGUOUS_BACKWARD) -> (reduce_grad(ctx, r),)
                #+ if _pm_gradient_st: _pm_gradient_st.attempts[29] += 1
                # r = n, x = n0
                if not (n.arg[0] in (_MAX, _ADD, _MUL) and n0.op is _CONTIGUOUS_BACKWARD):
                    _r = (reduce_grad(ctx, n),)
                    if _r is not None:
                        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                        if _r is not n: return _r, _pm_gradient_rules[29]
    return None

def _pm_gradient_CAST(n, ctx):
    _h = _pm_gradient_any0(n, ctx)
    if _h is not None: return _h
    if len(n.src) == 1:
        n0 = n.src[0]
        if n.dtype in _DT0:
            # rule grad_cast at rules/gradient.rules:39
            #   grad_cast: CAST(x):floats -> (ctx.cast(x.dtype) if x.dtype.is_float else None,)
            #+ if _pm_gradient_st: _pm_gradient_st.attempts[14] += 1
            # x = n0
            _r = (ctx.cast(n0.dtype) if n0.dtype.is_float else None,)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _pm_gradient_rules[14]
    return None

def _pm_gradient_BITCAST(n, ctx):
    _h = _pm_gradient_any0(n, ctx)
    if _h is not None: return _h
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule grad_bitcast at rules/gradient.rules:23
        #   grad_bitcast: BITCAST(x) -> (None,)
        #+ if _pm_gradient_st: _pm_gradient_st.attempts[2] += 1
        # x = n0
        _r = (None,)
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _pm_gradient_rules[2]
    return None

def _pm_gradient_NEG(n, ctx):
    _h = _pm_gradient_any0(n, ctx)
    if _h is not None: return _h
    if len(n.src) == 1:
        n0 = n.src[0]
        if n.dtype in _DT0:
            # rule grad_neg at rules/gradient.rules:28
            #   grad_neg: NEG(x):floats -> (-ctx,)
            #+ if _pm_gradient_st: _pm_gradient_st.attempts[4] += 1
            # x = n0
            _r = (-ctx,)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _pm_gradient_rules[4]
    return None

def _pm_gradient_EXP(n, ctx):
    _h = _pm_gradient_any0(n, ctx)
    if _h is not None: return _h
    if len(n.src) == 1:
        n0 = n.src[0]
        if n.dtype in _DT0:
            # rule grad_exp at rules/gradient.rules:29
            #   grad_exp: EXP(x):floats as r -> (ctx * r,)
            #+ if _pm_gradient_st: _pm_gradient_st.attempts[5] += 1
            # r = n, x = n0
            _r = (ctx * n,)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _pm_gradient_rules[5]
    return None

def _pm_gradient_LOG(n, ctx):
    _h = _pm_gradient_any0(n, ctx)
    if _h is not None: return _h
    if len(n.src) == 1:
        n0 = n.src[0]
        if n.dtype in _DT0:
            # rule grad_log at rules/gradient.rules:30
            #   grad_log: LOG(x):floats -> (ctx / x,)
            #+ if _pm_gradient_st: _pm_gradient_st.attempts[6] += 1
            # x = n0
            _r = (ctx / n0,)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _pm_gradient_rules[6]
    return None

def _pm_gradient_EXP2(n, ctx):
    _h = _pm_gradient_any0(n, ctx)
    if _h is not None: return _h
    if len(n.src) == 1:
        n0 = n.src[0]
        if n.dtype in _DT0:
            # rule grad_exp2 at rules/gradient.rules:31
            #   grad_exp2: EXP2(x):floats as r -> (ctx * r * 0.6931471805599453,)
            #+ if _pm_gradient_st: _pm_gradient_st.attempts[7] += 1
            # r = n, x = n0
            _r = (ctx * n * 0.6931471805599453,)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _pm_gradient_rules[7]
    return None

def _pm_gradient_LOG2(n, ctx):
    _h = _pm_gradient_any0(n, ctx)
    if _h is not None: return _h
    if len(n.src) == 1:
        n0 = n.src[0]
        if n.dtype in _DT0:
            # rule grad_log2 at rules/gradient.rules:32
            #   grad_log2: LOG2(x):floats -> (ctx / (x * 0.6931471805599453),)
            #+ if _pm_gradient_st: _pm_gradient_st.attempts[8] += 1
            # x = n0
            _r = (ctx / (n0 * 0.6931471805599453),)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _pm_gradient_rules[8]
    return None

def _pm_gradient_SIN(n, ctx):
    _h = _pm_gradient_any0(n, ctx)
    if _h is not None: return _h
    if len(n.src) == 1:
        n0 = n.src[0]
        if n.dtype in _DT0:
            # rule grad_sin at rules/gradient.rules:33
            #   grad_sin: SIN(x):floats -> (ctx * COS(x),)
            #+ if _pm_gradient_st: _pm_gradient_st.attempts[9] += 1
            # x = n0
            _r = (ctx * _new(UOp, _COS, n0.dtype, (n0,)),)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _pm_gradient_rules[9]
    return None

def _pm_gradient_SQRT(n, ctx):
    _h = _pm_gradient_any0(n, ctx)
    if _h is not None: return _h
    if len(n.src) == 1:
        n0 = n.src[0]
        if n.dtype in _DT0:
            # rule grad_sqrt at rules/gradient.rules:35
            #   grad_sqrt: SQRT(x):floats as r -> (ctx / (r * 2),)
            #+ if _pm_gradient_st: _pm_gradient_st.attempts[11] += 1
            # r = n, x = n0
            _r = (ctx / (n * 2),)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _pm_gradient_rules[11]
    return None

def _pm_gradient_RECIPROCAL(n, ctx):
    _h = _pm_gradient_any0(n, ctx)
    if _h is not None: return _h
    if len(n.src) == 1:
        n0 = n.src[0]
        if n.dtype in _DT0:
            # rule grad_recip at rules/gradient.rules:36
            #   grad_recip: RECIPROCAL(x):floats as r -> (-ctx * (r * r),)
            #+ if _pm_gradient_st: _pm_gradient_st.attempts[12] += 1
            # r = n, x = n0
            _r = (-ctx * (n * n),)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _pm_gradient_rules[12]
    return None

def _pm_gradient_TRUNC(n, ctx):
    _h = _pm_gradient_any0(n, ctx)
    if _h is not None: return _h
    if len(n.src) == 1:
        n0 = n.src[0]
        if n.dtype in _DT0:
            # rule grad_trunc at rules/gradient.rules:37
            #   grad_trunc: TRUNC(x):floats -> (ctx.const_like(0),)
            #+ if _pm_gradient_st: _pm_gradient_st.attempts[13] += 1
            # x = n0
            _r = (ctx.const_like(0),)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _pm_gradient_rules[13]
    return None

def _pm_gradient_ADD(n, ctx):
    _h = _pm_gradient_any0(n, ctx)
    if _h is not None: return _h
    if len(n.src) == 2:
        n0, n1 = n.src
        if n.dtype in _DT0:
            # rule grad_add at rules/gradient.rules:42
            #   grad_add: ADD(x, y):floats -> (ctx, ctx)
            #+ if _pm_gradient_st: _pm_gradient_st.attempts[15] += 1
            # x = n0, y = n1
            _r = (ctx, ctx)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _pm_gradient_rules[15]
    return None

def _pm_gradient_SUB(n, ctx):
    _h = _pm_gradient_any0(n, ctx)
    if _h is not None: return _h
    if len(n.src) == 2:
        n0, n1 = n.src
        if n.dtype in _DT0:
            # rule grad_sub at rules/gradient.rules:43
            #   grad_sub: SUB(x, y):floats -> (ctx, -ctx)
            #+ if _pm_gradient_st: _pm_gradient_st.attempts[16] += 1
            # x = n0, y = n1
            _r = (ctx, -ctx)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _pm_gradient_rules[16]
    return None

def _pm_gradient_MUL(n, ctx):
    _h = _pm_gradient_any0(n, ctx)
    if _h is not None: return _h
    if len(n.src) == 2:
        n0, n1 = n.src
        if n.dtype in _DT0:
            # rule grad_mul at rules/gradient.rules:44
            #   grad_mul: MUL(x, y):floats -> (ctx * y, ctx * x)
            #+ if _pm_gradient_st: _pm_gradient_st.attempts[17] += 1
            # x = n0, y = n1
            _r = (ctx * n1, ctx * n0)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _pm_gradient_rules[17]
    return None

def _pm_gradient_FDIV(n, ctx):
    _h = _pm_gradient_any0(n, ctx)
    if _h is not None: return _h
    if len(n.src) == 2:
        n0, n1 = n.src
        if n.dtype in _DT0:
            # rule grad_fdiv at rules/gradient.rules:45
            #   grad_fdiv: FDIV(x, y):floats as r -> (ctx / y, -ctx * (r / y))
            #+ if _pm_gradient_st: _pm_gradient_st.attempts[18] += 1
            # r = n, x = n0, y = n1
            _r = (ctx / n1, -ctx * (n / n1))
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _pm_gradient_rules[18]
    return None

def _pm_gradient_IDIV(n, ctx):
    _h = _pm_gradient_any0(n, ctx)
    if _h is not None: return _h
    if len(n.src) == 2:
        n0, n1 = n.src
        # rule grad_idiv at rules/gradient.rules:25
        #   grad_idiv: IDIV(x, y) -> (None, None)
        #+ if _pm_gradient_st: _pm_gradient_st.attempts[3] += 1
        # x = n0, y = n1
        _r = (None, None)
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _pm_gradient_rules[3]
    return None

def _pm_gradient_MOD(n, ctx):
    _h = _pm_gradient_any0(n, ctx)
    if _h is not None: return _h
    if len(n.src) == 2:
        n0, n1 = n.src
        if n.dtype in _DT0:
            # rule grad_mod at rules/gradient.rules:47
            #   grad_mod: MOD(x, y):floats -> (ctx, -ctx * TRUNC(x / y))
            #+ if _pm_gradient_st: _pm_gradient_st.attempts[19] += 1
            # x = n0, y = n1
            _r = (ctx, -ctx * _new(UOp, _TRUNC, (_t2 := n0 / n1).dtype, (_t2,)))
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _pm_gradient_rules[19]
    return None

def _pm_gradient_MAX(n, ctx):
    _h = _pm_gradient_any0(n, ctx)
    if _h is not None: return _h
    if len(n.src) == 2:
        n0, n1 = n.src
        if n.dtype in _DT0:
            # rule grad_max at rules/gradient.rules:55
            #   grad_max: MAX(x, y):floats -> (x.lt(y).where(ctx.const_like(0), x.eq(y).where(ctx * 0.5, ctx)), y.lt(x).where(ctx.const_like(0), x.eq(y).where(ctx * 0.5, ctx)))
            #+ if _pm_gradient_st: _pm_gradient_st.attempts[21] += 1
            # x = n0, y = n1
            _r = (n0.lt(n1).where(ctx.const_like(0), n0.eq(n1).where(ctx * 0.5, ctx)), n1.lt(n0).where(ctx.const_like(0), n0.eq(n1).where(ctx * 0.5, ctx)))
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _pm_gradient_rules[21]
    return None

def _pm_gradient_MIN(n, ctx):
    _h = _pm_gradient_any0(n, ctx)
    if _h is not None: return _h
    if len(n.src) == 2:
        n0, n1 = n.src
        if n.dtype in _DT0:
            # rule grad_min at rules/gradient.rules:57
            #   grad_min: MIN(x, y):floats -> (y.lt(x).where(ctx.const_like(0), x.eq(y).where(ctx * 0.5, ctx)), x.lt(y).where(ctx.const_like(0), x.eq(y).where(ctx * 0.5, ctx)))
            #+ if _pm_gradient_st: _pm_gradient_st.attempts[22] += 1
            # x = n0, y = n1
            _r = (n1.lt(n0).where(ctx.const_like(0), n0.eq(n1).where(ctx * 0.5, ctx)), n0.lt(n1).where(ctx.const_like(0), n0.eq(n1).where(ctx * 0.5, ctx)))
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _pm_gradient_rules[22]
    return None

def _pm_gradient_POW(n, ctx):
    _h = _pm_gradient_any0(n, ctx)
    if _h is not None: return _h
    if len(n.src) == 2:
        n0, n1 = n.src
        if n.dtype in _DT0:
            # rule grad_pow at rules/gradient.rules:51
            #   grad_pow: POW(x, y):floats as r -> (y.eq(0).where(ctx.const_like(0), ctx * (y * POW(x, y - 1))), ctx * AND(x.eq(0), OR(y.eq(0), y.const_like(0).lt(y))).where(ctx.const_like(0), r * LOG(x)))
            #+ if _pm_gradient_st: _pm_gradient_st.attempts[20] += 1
            # r = n, x = n0, y = n1
            _r = (n1.eq(0).where(ctx.const_like(0), ctx * (n1 * _new(UOp, _POW, n0.dtype, (n0, n1 - 1)))), ctx * _new(UOp, _AND, (_t6 := n0.eq(0)).dtype, (_t6, _new(UOp, _OR, (_t5 := n1.eq(0)).dtype, (_t5, n1.const_like(0).lt(n1))))).where(ctx.const_like(0), n * _new(UOp, _LOG, n0.dtype, (n0,))))
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _pm_gradient_rules[20]
    return None

def _pm_gradient_WHERE(n, ctx):
    _h = _pm_gradient_any0(n, ctx)
    if _h is not None: return _h
    if len(n.src) == 3:
        n0, n1, n2 = n.src
        if n.dtype in _DT0:
            # rule grad_where at rules/gradient.rules:59
            #   grad_where: WHERE(c, a, b):floats -> (None, c.where(ctx, ctx.const_like(0)), c.where(ctx.const_like(0), ctx))
            #+ if _pm_gradient_st: _pm_gradient_st.attempts[23] += 1
            # a = n1, b = n2, c = n0
            _r = (None, n0.where(ctx, ctx.const_like(0)), n0.where(ctx.const_like(0), ctx))
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _pm_gradient_rules[23]
    return None

def _pm_gradient_MULACC(n, ctx):
    _h = _pm_gradient_any0(n, ctx)
    if _h is not None: return _h
    if len(n.src) == 3:
        n0, n1, n2 = n.src
        if n.dtype in _DT0:
            # rule grad_mulacc at rules/gradient.rules:60
            #   grad_mulacc: MULACC(a, b, c):floats -> (ctx * b, ctx * a, ctx)
            #+ if _pm_gradient_st: _pm_gradient_st.attempts[24] += 1
            # a = n0, b = n1, c = n2
            _r = (ctx * n1, ctx * n0, ctx)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _pm_gradient_rules[24]
    return None

def _pm_gradient_COS(n, ctx):
    _h = _pm_gradient_any0(n, ctx)
    if _h is not None: return _h
    if len(n.src) == 1:
        n0 = n.src[0]
        if n.dtype in _DT0:
            # rule grad_cos at rules/gradient.rules:34
            #   grad_cos: COS(x):floats -> (-ctx * SIN(x),)
            #+ if _pm_gradient_st: _pm_gradient_st.attempts[10] += 1
            # x = n0
            _r = (-ctx * _new(UOp, _SIN, n0.dtype, (n0,)),)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _pm_gradient_rules[10]
    return None


_pm_gradient_part = RuleMatcher('pm_gradient', _pm_gradient_rules, {
    Ops.RESHAPE: _pm_gradient_RESHAPE,
    Ops.PERMUTE: _pm_gradient_PERMUTE,
    Ops.EXPAND: _pm_gradient_EXPAND,
    Ops.PAD: _pm_gradient_PAD,
    Ops.SHRINK: _pm_gradient_SHRINK,
    Ops.FLIP: _pm_gradient_FLIP,
    Ops.CONTIGUOUS: _pm_gradient_CONTIGUOUS,
    Ops.CONTIGUOUS_BACKWARD: _pm_gradient_CONTIGUOUS_BACKWARD,
    Ops.DETACH: _pm_gradient_DETACH,
    Ops.FUSE: _pm_gradient_FUSE,
    Ops.COPY: _pm_gradient_COPY,
    Ops.ASSIGN: _pm_gradient_ASSIGN,
    Ops.MULTI: _pm_gradient_MULTI,
    Ops.REDUCE_AXIS: _pm_gradient_REDUCE_AXIS,
    Ops.CAST: _pm_gradient_CAST,
    Ops.BITCAST: _pm_gradient_BITCAST,
    Ops.NEG: _pm_gradient_NEG,
    Ops.EXP: _pm_gradient_EXP,
    Ops.LOG: _pm_gradient_LOG,
    Ops.EXP2: _pm_gradient_EXP2,
    Ops.LOG2: _pm_gradient_LOG2,
    Ops.SIN: _pm_gradient_SIN,
    Ops.SQRT: _pm_gradient_SQRT,
    Ops.RECIPROCAL: _pm_gradient_RECIPROCAL,
    Ops.TRUNC: _pm_gradient_TRUNC,
    Ops.ADD: _pm_gradient_ADD,
    Ops.SUB: _pm_gradient_SUB,
    Ops.MUL: _pm_gradient_MUL,
    Ops.FDIV: _pm_gradient_FDIV,
    Ops.IDIV: _pm_gradient_IDIV,
    Ops.MOD: _pm_gradient_MOD,
    Ops.MAX: _pm_gradient_MAX,
    Ops.MIN: _pm_gradient_MIN,
    Ops.POW: _pm_gradient_POW,
    Ops.CMPLT: _pm_gradient_any0,
    Ops.CMPNE: _pm_gradient_any0,
    Ops.CMPEQ: _pm_gradient_any0,
    Ops.AND: _pm_gradient_any0,
    Ops.OR: _pm_gradient_any0,
    Ops.XOR: _pm_gradient_any0,
    Ops.SHL: _pm_gradient_any0,
    Ops.SHR: _pm_gradient_any0,
    Ops.WHERE: _pm_gradient_WHERE,
    Ops.MULACC: _pm_gradient_MULACC,
    Ops.COS: _pm_gradient_COS,
}, home=(globals(), '_pm_gradient_st'))


# ======================================================================== the rule sets
_S_pm_gradient = compose('pm_gradient', _pm_gradient_part)
pm_gradient = _S_pm_gradient

MATCHERS = {
    'pm_gradient': _S_pm_gradient,
}

PIPELINES = {}
