# generated from rules/symbolic.rules by `rulegrad gen`; do not edit
# source sha256: 3a79ef5199b66a4f8ac8b5e4b60bfde0bf127f7610db78415da268b63a7b0a70
"""Matchers for the rule sets of rules/symbolic.rules: symbolic_simple, sym."""

from math import prod  # noqa: F401

from rulegrad.runtime.dtype import DTYPE_CLASSES, dtypes  # noqa: F401
from rulegrad.runtime.matcher import RuleMatcher, helper_from  # noqa: F401
from rulegrad.runtime.matcher import as_uop as _as_uop  # noqa: F401
from rulegrad.runtime.ops import GroupOp, Ops  # noqa: F401
from rulegrad.runtime.rewrite import RewriteNotReady, RuleInfo  # noqa: F401
from rulegrad.runtime.uop import UOp  # noqa: F401
from rulegrad.rules.symbolic_helpers import cast_value
from rulegrad.rules.symbolic_helpers import fold_alu

SOURCE = 'rules/symbolic.rules'
SOURCE_SHA256 = '3a79ef5199b66a4f8ac8b5e4b60bfde0bf127f7610db78415da268b63a7b0a70'
DEPENDENCIES = ()
_DT0 = DTYPE_CLASSES['ints']


# ======================================================================== rule set symbolic_simple

def _symbolic_simple_r13(n, ctx, a, b, e):
    # rule fold_binary at rules/symbolic.rules:35
    #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
    return _as_uop(n, fold_alu(e.op, a.dtype, a.arg, b.arg))

def _symbolic_simple_CAST(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is Ops.CONST:
            # rule fold_cast at rules/symbolic.rules:37
            #   fold_cast: CAST(a:CONST) as e -> cast_value(e.dtype, a.dtype, a.arg)
            a = n0
            e = n
            _r = _as_uop(n, cast_value(e.dtype, a.dtype, a.arg))
            if _r is not None and _r is not n: return _r
    return None

def _symbolic_simple_NEG(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is Ops.NEG and len(n0.src) == 1:
            n0_0 = n0.src[0]
            # rule neg_neg at rules/symbolic.rules:15
            #   neg_neg: NEG(NEG(x)) -> x
            x = n0_0
            return x
        if n0.op is Ops.CONST:
            # rule fold_unary at rules/symbolic.rules:36
            #   fold_unary: NEG(a:CONST) as e -> fold_alu(e.op, a.dtype, a.arg)
            a = n0
            e = n
            _r = _as_uop(n, fold_alu(e.op, a.dtype, a.arg))
            if _r is not None and _r is not n: return _r
    return None

def _symbolic_simple_ADD(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.dtype in _DT0 and n1.op is Ops.CONST and n1.arg == 0:
            # rule add_zero at rules/symbolic.rules:12
            #   add_zero: ADD[x:ints, 0] -> x
            x = n0
            return x
        if n0.op is Ops.CONST:
            if n0.arg == 0 and n1.dtype in _DT0:
                # rule add_zero at rules/symbolic.rules:12
                #   add_zero: ADD[x:ints, 0] -> x
                x = n1
                return x
            if n1.op is Ops.CONST:
                # rule fold_binary at rules/symbolic.rules:35
                #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
                _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
                if _r is not None and _r is not n: return _r
    return None

def _symbolic_simple_SUB(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.dtype in _DT0:
            if n1.op is Ops.CONST and n1.arg == 0:
                # rule sub_zero at rules/symbolic.rules:13
                #   sub_zero: SUB(x:ints, 0) -> x
                x = n0
                return x
            if n1 is n0:
                # rule sub_self at rules/symbolic.rules:14
                #   sub_self: SUB(x:ints, x) -> 0
                x = n0
                _r = n.const_like(0)
                if _r is not n: return _r
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
    return None

def _symbolic_simple_MUL(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n1.op is Ops.CONST and n1.arg == 1:
            # rule mul_one at rules/symbolic.rules:18
            #   mul_one: MUL[x, 1] -> x
            x = n0
            return x
        if n0.op is Ops.CONST and n0.arg == 1:
            # rule mul_one at rules/symbolic.rules:18
            #   mul_one: MUL[x, 1] -> x
            x = n1
            return x
        if n0.dtype in _DT0 and n1.op is Ops.CONST and n1.arg == 0:
            # rule mul_zero at rules/symbolic.rules:19
            #   mul_zero: MUL[x:ints, 0] -> 0
            x = n0
            _r = n.const_like(0)
            if _r is not n: return _r
        if n0.op is Ops.CONST:
            if n0.arg == 0 and n1.dtype in _DT0:
                # rule mul_zero at rules/symbolic.rules:19
                #   mul_zero: MUL[x:ints, 0] -> 0
                x = n1
                _r = n.const_like(0)
                if _r is not n: return _r
            if n1.op is Ops.CONST:
                # rule fold_binary at rules/symbolic.rules:35
                #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
                _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
                if _r is not None and _r is not n: return _r
    return None

def _symbolic_simple_FDIV(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
    return None

def _symbolic_simple_IDIV(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.dtype in _DT0 and n1.op is Ops.CONST and n1.arg == 1:
            # rule idiv_one at rules/symbolic.rules:20
            #   idiv_one: IDIV(x:ints, 1) -> x
            x = n0
            return x
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
    return None

def _symbolic_simple_MOD(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.dtype in _DT0 and n1.op is Ops.CONST and n1.arg == 1:
            # rule mod_one at rules/symbolic.rules:21
            #   mod_one: MOD(x:ints, 1) -> 0
            x = n0
            _r = n.const_like(0)
            if _r is not n: return _r
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
    return None

def _symbolic_simple_MAX(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n1 is n0:
            # rule max_self at rules/symbolic.rules:24
            #   max_self: MAX(x, x) -> x
            x = n0
            return x
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
    return None

def _symbolic_simple_MIN(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n1 is n0:
            # rule min_self at rules/symbolic.rules:25
            #   min_self: MIN(x, x) -> x
            x = n0
            return x
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
    return None

def _symbolic_simple_POW(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
    return None

def _symbolic_simple_CMPLT(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
    return None

def _symbolic_simple_CMPNE(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
    return None

def _symbolic_simple_CMPEQ(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
    return None

def _symbolic_simple_AND(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
    return None

def _symbolic_simple_OR(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
    return None

def _symbolic_simple_XOR(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
    return None

def _symbolic_simple_SHL(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
    return None

def _symbolic_simple_SHR(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
    return None

def _symbolic_simple_WHERE(n, ctx):
    if len(n.src) == 3:
        n0 = n.src[0]
        n1 = n.src[1]
        n2 = n.src[2]
        if n0.op is Ops.CONST:
            if n0.arg == True:
                # rule where_true at rules/symbolic.rules:28
                #   where_true: WHERE(True, a, b) -> a
                a = n1
                b = n2
                return a
            if n0.arg == False:
                # rule where_false at rules/symbolic.rules:29
                #   where_false: WHERE(False, a, b) -> b
                a = n1
                b = n2
                return b
        if n2 is n1:
            # rule where_same at rules/symbolic.rules:30
            #   where_same: WHERE(_, a, a) -> a
            a = n1
            return a
    return None

def _symbolic_simple_CAST_t(n, ctx, _st):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is Ops.CONST:
            # rule fold_cast at rules/symbolic.rules:37
            #   fold_cast: CAST(a:CONST) as e -> cast_value(e.dtype, a.dtype, a.arg)
            a = n0
            e = n
            _t = _st.start(15)
            _r = _as_uop(n, cast_value(e.dtype, a.dtype, a.arg))
            _st.stop(15, _t, _r, n)
            if _r is not None and _r is not n: return _r, 15
    return None

def _symbolic_simple_NEG_t(n, ctx, _st):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is Ops.NEG and len(n0.src) == 1:
            n0_0 = n0.src[0]
            # rule neg_neg at rules/symbolic.rules:15
            #   neg_neg: NEG(NEG(x)) -> x
            x = n0_0
            _t = _st.start(3)
            _r = x
            _st.stop(3, _t, _r, n)
            if _r is not None and _r is not n: return _r, 3
        if n0.op is Ops.CONST:
            # rule fold_unary at rules/symbolic.rules:36
            #   fold_unary: NEG(a:CONST) as e -> fold_alu(e.op, a.dtype, a.arg)
            a = n0
            e = n
            _t = _st.start(14)
            _r = _as_uop(n, fold_alu(e.op, a.dtype, a.arg))
            _st.stop(14, _t, _r, n)
            if _r is not None and _r is not n: return _r, 14
    return None

def _symbolic_simple_ADD_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.dtype in _DT0 and n1.op is Ops.CONST and n1.arg == 0:
            # rule add_zero at rules/symbolic.rules:12
            #   add_zero: ADD[x:ints, 0] -> x
            x = n0
            _t = _st.start(0)
            _r = x
            _st.stop(0, _t, _r, n)
            if _r is not None and _r is not n: return _r, 0
        if n0.op is Ops.CONST:
            if n0.arg == 0 and n1.dtype in _DT0:
                # rule add_zero at rules/symbolic.rules:12
                #   add_zero: ADD[x:ints, 0] -> x
                x = n1
                _t = _st.start(0)
                _r = x
                _st.stop(0, _t, _r, n)
                if _r is not None and _r is not n: return _r, 0
            if n1.op is Ops.CONST:
                # rule fold_binary at rules/symbolic.rules:35
                #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
                _t = _st.start(13)
                _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
                _st.stop(13, _t, _r, n)
                if _r is not None and _r is not n: return _r, 13
    return None

def _symbolic_simple_SUB_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.dtype in _DT0:
            if n1.op is Ops.CONST and n1.arg == 0:
                # rule sub_zero at rules/symbolic.rules:13
                #   sub_zero: SUB(x:ints, 0) -> x
                x = n0
                _t = _st.start(1)
                _r = x
                _st.stop(1, _t, _r, n)
                if _r is not None and _r is not n: return _r, 1
            if n1 is n0:
                # rule sub_self at rules/symbolic.rules:14
                #   sub_self: SUB(x:ints, x) -> 0
                x = n0
                _t = _st.start(2)
                _r = n.const_like(0)
                _st.stop(2, _t, _r, n)
                if _r is not None and _r is not n: return _r, 2
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
    return None

def _symbolic_simple_MUL_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n1.op is Ops.CONST and n1.arg == 1:
            # rule mul_one at rules/symbolic.rules:18
            #   mul_one: MUL[x, 1] -> x
            x = n0
            _t = _st.start(4)
            _r = x
            _st.stop(4, _t, _r, n)
            if _r is not None and _r is not n: return _r, 4
        if n0.op is Ops.CONST and n0.arg == 1:
            # rule mul_one at rules/symbolic.rules:18
            #   mul_one: MUL[x, 1] -> x
            x = n1
            _t = _st.start(4)
            _r = x
            _st.stop(4, _t, _r, n)
            if _r is not None and _r is not n: return _r, 4
        if n0.dtype in _DT0 and n1.op is Ops.CONST and n1.arg == 0:
            # rule mul_zero at rules/symbolic.rules:19
            #   mul_zero: MUL[x:ints, 0] -> 0
            x = n0
            _t = _st.start(5)
            _r = n.const_like(0)
            _st.stop(5, _t, _r, n)
            if _r is not None and _r is not n: return _r, 5
        if n0.op is Ops.CONST:
            if n0.arg == 0 and n1.dtype in _DT0:
                # rule mul_zero at rules/symbolic.rules:19
                #   mul_zero: MUL[x:ints, 0] -> 0
                x = n1
                _t = _st.start(5)
                _r = n.const_like(0)
                _st.stop(5, _t, _r, n)
                if _r is not None and _r is not n: return _r, 5
            if n1.op is Ops.CONST:
                # rule fold_binary at rules/symbolic.rules:35
                #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
                _t = _st.start(13)
                _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
                _st.stop(13, _t, _r, n)
                if _r is not None and _r is not n: return _r, 13
    return None

def _symbolic_simple_FDIV_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
    return None

def _symbolic_simple_IDIV_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.dtype in _DT0 and n1.op is Ops.CONST and n1.arg == 1:
            # rule idiv_one at rules/symbolic.rules:20
            #   idiv_one: IDIV(x:ints, 1) -> x
            x = n0
            _t = _st.start(6)
            _r = x
            _st.stop(6, _t, _r, n)
            if _r is not None and _r is not n: return _r, 6
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
    return None

def _symbolic_simple_MOD_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.dtype in _DT0 and n1.op is Ops.CONST and n1.arg == 1:
            # rule mod_one at rules/symbolic.rules:21
            #   mod_one: MOD(x:ints, 1) -> 0
            x = n0
            _t = _st.start(7)
            _r = n.const_like(0)
            _st.stop(7, _t, _r, n)
            if _r is not None and _r is not n: return _r, 7
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
    return None

def _symbolic_simple_MAX_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n1 is n0:
            # rule max_self at rules/symbolic.rules:24
            #   max_self: MAX(x, x) -> x
            x = n0
            _t = _st.start(8)
            _r = x
            _st.stop(8, _t, _r, n)
            if _r is not None and _r is not n: return _r, 8
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
    return None

def _symbolic_simple_MIN_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n1 is n0:
            # rule min_self at rules/symbolic.rules:25
            #   min_self: MIN(x, x) -> x
            x = n0
            _t = _st.start(9)
            _r = x
            _st.stop(9, _t, _r, n)
            if _r is not None and _r is not n: return _r, 9
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
    return None

def _symbolic_simple_POW_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
    return None

def _symbolic_simple_CMPLT_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
    return None

def _symbolic_simple_CMPNE_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
    return None

def _symbolic_simple_CMPEQ_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
    return None

def _symbolic_simple_AND_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
    return None

def _symbolic_simple_OR_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
    return None

def _symbolic_simple_XOR_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
    return None

def _symbolic_simple_SHL_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
    return None

def _symbolic_simple_SHR_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
    return None

def _symbolic_simple_WHERE_t(n, ctx, _st):
    if len(n.src) == 3:
        n0 = n.src[0]
        n1 = n.src[1]
        n2 = n.src[2]
        if n0.op is Ops.CONST:
            if n0.arg == True:
                # rule where_true at rules/symbolic.rules:28
                #   where_true: WHERE(True, a, b) -> a
                a = n1
                b = n2
                _t = _st.start(10)
                _r = a
                _st.stop(10, _t, _r, n)
                if _r is not None and _r is not n: return _r, 10
            if n0.arg == False:
                # rule where_false at rules/symbolic.rules:29
                #   where_false: WHERE(False, a, b) -> b
                a = n1
                b = n2
                _t = _st.start(11)
                _r = b
                _st.stop(11, _t, _r, n)
                if _r is not None and _r is not n: return _r, 11
        if n2 is n1:
            # rule where_same at rules/symbolic.rules:30
            #   where_same: WHERE(_, a, a) -> a
            a = n1
            _t = _st.start(12)
            _r = a
            _st.stop(12, _t, _r, n)
            if _r is not None and _r is not n: return _r, 12
    return None


_symbolic_simple_rules = (
    RuleInfo('add_zero', 'rules/symbolic.rules', 12, 'add_zero: ADD[x:ints, 0] -> x'),
    RuleInfo('sub_zero', 'rules/symbolic.rules', 13, 'sub_zero: SUB(x:ints, 0) -> x'),
    RuleInfo('sub_self', 'rules/symbolic.rules', 14, 'sub_self: SUB(x:ints, x) -> 0'),
    RuleInfo('neg_neg', 'rules/symbolic.rules', 15, 'neg_neg: NEG(NEG(x)) -> x'),
    RuleInfo('mul_one', 'rules/symbolic.rules', 18, 'mul_one: MUL[x, 1] -> x'),
    RuleInfo('mul_zero', 'rules/symbolic.rules', 19, 'mul_zero: MUL[x:ints, 0] -> 0'),
    RuleInfo('idiv_one', 'rules/symbolic.rules', 20, 'idiv_one: IDIV(x:ints, 1) -> x'),
    RuleInfo('mod_one', 'rules/symbolic.rules', 21, 'mod_one: MOD(x:ints, 1) -> 0'),
    RuleInfo('max_self', 'rules/symbolic.rules', 24, 'max_self: MAX(x, x) -> x'),
    RuleInfo('min_self', 'rules/symbolic.rules', 25, 'min_self: MIN(x, x) -> x'),
    RuleInfo('where_true', 'rules/symbolic.rules', 28, 'where_true: WHERE(True, a, b) -> a'),
    RuleInfo('where_false', 'rules/symbolic.rules', 29, 'where_false: WHERE(False, a, b) -> b'),
    RuleInfo('where_same', 'rules/symbolic.rules', 30, 'where_same: WHERE(_, a, a) -> a'),
    RuleInfo('fold_binary', 'rules/symbolic.rules', 35, 'fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)'),
    RuleInfo('fold_unary', 'rules/symbolic.rules', 36, 'fold_unary: NEG(a:CONST) as e -> fold_alu(e.op, a.dtype, a.arg)'),
    RuleInfo('fold_cast', 'rules/symbolic.rules', 37, 'fold_cast: CAST(a:CONST) as e -> cast_value(e.dtype, a.dtype, a.arg)'),
)
_symbolic_simple_matcher = RuleMatcher(
    'symbolic_simple', _symbolic_simple_rules,
    {
        Ops.CAST: _symbolic_simple_CAST,
        Ops.NEG: _symbolic_simple_NEG,
        Ops.ADD: _symbolic_simple_ADD,
        Ops.SUB: _symbolic_simple_SUB,
        Ops.MUL: _symbolic_simple_MUL,
        Ops.FDIV: _symbolic_simple_FDIV,
        Ops.IDIV: _symbolic_simple_IDIV,
        Ops.MOD: _symbolic_simple_MOD,
        Ops.MAX: _symbolic_simple_MAX,
        Ops.MIN: _symbolic_simple_MIN,
        Ops.POW: _symbolic_simple_POW,
        Ops.CMPLT: _symbolic_simple_CMPLT,
        Ops.CMPNE: _symbolic_simple_CMPNE,
        Ops.CMPEQ: _symbolic_simple_CMPEQ,
        Ops.AND: _symbolic_simple_AND,
        Ops.OR: _symbolic_simple_OR,
        Ops.XOR: _symbolic_simple_XOR,
        Ops.SHL: _symbolic_simple_SHL,
        Ops.SHR: _symbolic_simple_SHR,
        Ops.WHERE: _symbolic_simple_WHERE,
    },
    {
        Ops.CAST: _symbolic_simple_CAST_t,
        Ops.NEG: _symbolic_simple_NEG_t,
        Ops.ADD: _symbolic_simple_ADD_t,
        Ops.SUB: _symbolic_simple_SUB_t,
        Ops.MUL: _symbolic_simple_MUL_t,
        Ops.FDIV: _symbolic_simple_FDIV_t,
        Ops.IDIV: _symbolic_simple_IDIV_t,
        Ops.MOD: _symbolic_simple_MOD_t,
        Ops.MAX: _symbolic_simple_MAX_t,
        Ops.MIN: _symbolic_simple_MIN_t,
        Ops.POW: _symbolic_simple_POW_t,
        Ops.CMPLT: _symbolic_simple_CMPLT_t,
        Ops.CMPNE: _symbolic_simple_CMPNE_t,
        Ops.CMPEQ: _symbolic_simple_CMPEQ_t,
        Ops.AND: _symbolic_simple_AND_t,
        Ops.OR: _symbolic_simple_OR_t,
        Ops.XOR: _symbolic_simple_XOR_t,
        Ops.SHL: _symbolic_simple_SHL_t,
        Ops.SHR: _symbolic_simple_SHR_t,
        Ops.WHERE: _symbolic_simple_WHERE_t,
    },
)
symbolic_simple = _symbolic_simple_matcher


# ======================================================================== rule set sym

def _sym_r13(n, ctx, a, b, e):
    # rule fold_binary at rules/symbolic.rules:35
    #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
    return _as_uop(n, fold_alu(e.op, a.dtype, a.arg, b.arg))

def _sym_CAST(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is Ops.CONST:
            # rule fold_cast at rules/symbolic.rules:37
            #   fold_cast: CAST(a:CONST) as e -> cast_value(e.dtype, a.dtype, a.arg)
            a = n0
            e = n
            _r = _as_uop(n, cast_value(e.dtype, a.dtype, a.arg))
            if _r is not None and _r is not n: return _r
    return None

def _sym_NEG(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is Ops.NEG and len(n0.src) == 1:
            n0_0 = n0.src[0]
            # rule neg_neg at rules/symbolic.rules:15
            #   neg_neg: NEG(NEG(x)) -> x
            x = n0_0
            return x
        if n0.op is Ops.CONST:
            # rule fold_unary at rules/symbolic.rules:36
            #   fold_unary: NEG(a:CONST) as e -> fold_alu(e.op, a.dtype, a.arg)
            a = n0
            e = n
            _r = _as_uop(n, fold_alu(e.op, a.dtype, a.arg))
            if _r is not None and _r is not n: return _r
    return None

def _sym_ADD(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.dtype in _DT0 and n1.op is Ops.CONST and n1.arg == 0:
            # rule add_zero at rules/symbolic.rules:12
            #   add_zero: ADD[x:ints, 0] -> x
            x = n0
            return x
        if n0.op is Ops.CONST:
            if n0.arg == 0 and n1.dtype in _DT0:
                # rule add_zero at rules/symbolic.rules:12
                #   add_zero: ADD[x:ints, 0] -> x
                x = n1
                return x
            if n1.op is Ops.CONST:
                # rule fold_binary at rules/symbolic.rules:35
                #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
                _r = _sym_r13(n, ctx, n0, n1, n)
                if _r is not None and _r is not n: return _r
        if n.dtype in _DT0:
            if n0.op is Ops.ADD and len(n0.src) == 2:
                n0_0 = n0.src[0]
                n0_1 = n0.src[1]
                if n1.op is Ops.CONST:
                    if n0_1.op is Ops.CONST:
                        # rule add_consts at rules/symbolic.rules:43
                        #   add_consts: ADD[ADD[x, c1:CONST], c2:CONST]:ints -> x + fold_alu(Ops.ADD, x.dtype, c1.arg, c2.arg)
                        c1 = n0_1
                        c2 = n1
                        x = n0_0
                        _r = _as_uop(n, x + fold_alu(Ops.ADD, x.dtype, c1.arg, c2.arg))
                        if _r is not None and _r is not n: return _r
                    if n0_0.op is Ops.CONST:
                        # rule add_consts at rules/symbolic.rules:43
                        #   add_consts: ADD[ADD[x, c1:CONST], c2:CONST]:ints -> x + fold_alu(Ops.ADD, x.dtype, c1.arg, c2.arg)
                        c1 = n0_0
                        c2 = n1
                        x = n0_1
                        _r = _as_uop(n, x + fold_alu(Ops.ADD, x.dtype, c1.arg, c2.arg))
                        if _r is not None and _r is not n: return _r
            if n0.op is Ops.CONST and n1.op is Ops.ADD and len(n1.src) == 2:
                n1_0 = n1.src[0]
                n1_1 = n1.src[1]
                if n1_1.op is Ops.CONST:
                    # rule add_consts at rules/symbolic.rules:43
                    #   add_consts: ADD[ADD[x, c1:CONST], c2:CONST]:ints -> x + fold_alu(Ops.ADD, x.dtype, c1.arg, c2.arg)
                    c1 = n1_1
                    c2 = n0
                    x = n1_0
                    _r = _as_uop(n, x + fold_alu(Ops.ADD, x.dtype, c1.arg, c2.arg))
                    if _r is not None and _r is not n: return _r
                if n1_0.op is Ops.CONST:
                    # rule add_consts at rules/symbolic.rules:43
                    #   add_consts: ADD[ADD[x, c1:CONST], c2:CONST]:ints -> x + fold_alu(Ops.ADD, x.dtype, c1.arg, c2.arg)
                    c1 = n1_0
                    c2 = n0
                    x = n1_1
                    _r = _as_uop(n, x + fold_alu(Ops.ADD, x.dtype, c1.arg, c2.arg))
                    if _r is not None and _r is not n: return _r
        if n0.op is Ops.MUL and len(n0.src) == 2:
            n0_0 = n0.src[0]
            n0_1 = n0.src[1]
            if n1.op is Ops.MOD and len(n1.src) == 2:
                n1_0 = n1.src[0]
                n1_1 = n1.src[1]
                if n0_0.op is Ops.IDIV and len(n0_0.src) == 2:
                    n0_0_0 = n0_0.src[0]
                    n0_0_1 = n0_0.src[1]
                    if n0_0_0.dtype in _DT0 and n1_0 is n0_0_0 and n0_0_1.op is Ops.CONST and n0_1 is n0_0_1 and n1_1 is n0_0_1:
                        # rule divmod_recombine at rules/symbolic.rules:53
                        #   divmod_recombine: ADD[MUL[IDIV(x:ints, c:CONST), c], MOD(x, c)] if c.arg > 0 -> x
                        c = n0_0_1
                        x = n0_0_0
                        if c.arg > 0:
                            return x
                if n0_1.op is Ops.IDIV and len(n0_1.src) == 2:
                    n0_1_0 = n0_1.src[0]
                    n0_1_1 = n0_1.src[1]
                    if n0_1_0.dtype in _DT0 and n1_0 is n0_1_0 and n0_1_1.op is Ops.CONST and n0_0 is n0_1_1 and n1_1 is n0_1_1:
                        # rule divmod_recombine at rules/symbolic.rules:53
                        #   divmod_recombine: ADD[MUL[IDIV(x:ints, c:CONST), c], MOD(x, c)] if c.arg > 0 -> x
                        c = n0_1_1
                        x = n0_1_0
                        if c.arg > 0:
                            return x
        if n0.op is Ops.MOD and len(n0.src) == 2:
            n0_0 = n0.src[0]
            n0_1 = n0.src[1]
            if n1.op is Ops.MUL and len(n1.src) == 2:
                n1_0 = n1.src[0]
                n1_1 = n1.src[1]
                if n1_0.op is Ops.IDIV and len(n1_0.src) == 2:
                    n1_0_0 = n1_0.src[0]
                    n1_0_1 = n1_0.src[1]
                    if n1_0_0.dtype in _DT0 and n0_0 is n1_0_0 and n1_0_1.op is Ops.CONST and n1_1 is n1_0_1 and n0_1 is n1_0_1:
                        # rule divmod_recombine at rules/symbolic.rules:53
                        #   divmod_recombine: ADD[MUL[IDIV(x:ints, c:CONST), c], MOD(x, c)] if c.arg > 0 -> x
                        c = n1_0_1
                        x = n1_0_0
                        if c.arg > 0:
                            return x
                if n1_1.op is Ops.IDIV and len(n1_1.src) == 2:
                    n1_1_0 = n1_1.src[0]
                    n1_1_1 = n1_1.src[1]
                    if n1_1_0.dtype in _DT0 and n0_0 is n1_1_0 and n1_1_1.op is Ops.CONST and n1_0 is n1_1_1 and n0_1 is n1_1_1:
                        # rule divmod_recombine at rules/symbolic.rules:53
                        #   divmod_recombine: ADD[MUL[IDIV(x:ints, c:CONST), c], MOD(x, c)] if c.arg > 0 -> x
                        c = n1_1_1
                        x = n1_1_0
                        if c.arg > 0:
                            return x
    return None

def _sym_SUB(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.dtype in _DT0:
            if n1.op is Ops.CONST and n1.arg == 0:
                # rule sub_zero at rules/symbolic.rules:13
                #   sub_zero: SUB(x:ints, 0) -> x
                x = n0
                return x
            if n1 is n0:
                # rule sub_self at rules/symbolic.rules:14
                #   sub_self: SUB(x:ints, x) -> 0
                x = n0
                _r = n.const_like(0)
                if _r is not n: return _r
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _sym_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
        if n0.dtype is dtypes.index and n1.op is Ops.CONST:
            # rule sub_const at rules/symbolic.rules:46
            #   sub_const: SUB(x:index, c:CONST) -> x + (-c.arg)
            c = n1
            x = n0
            _r = _as_uop(n, x + -c.arg)
            if _r is not None and _r is not n: return _r
    return None

def _sym_MUL(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n1.op is Ops.CONST and n1.arg == 1:
            # rule mul_one at rules/symbolic.rules:18
            #   mul_one: MUL[x, 1] -> x
            x = n0
            return x
        if n0.op is Ops.CONST and n0.arg == 1:
            # rule mul_one at rules/symbolic.rules:18
            #   mul_one: MUL[x, 1] -> x
            x = n1
            return x
        if n0.dtype in _DT0 and n1.op is Ops.CONST and n1.arg == 0:
            # rule mul_zero at rules/symbolic.rules:19
            #   mul_zero: MUL[x:ints, 0] -> 0
            x = n0
            _r = n.const_like(0)
            if _r is not n: return _r
        if n0.op is Ops.CONST:
            if n0.arg == 0 and n1.dtype in _DT0:
                # rule mul_zero at rules/symbolic.rules:19
                #   mul_zero: MUL[x:ints, 0] -> 0
                x = n1
                _r = n.const_like(0)
                if _r is not n: return _r
            if n1.op is Ops.CONST:
                # rule fold_binary at rules/symbolic.rules:35
                #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
                _r = _sym_r13(n, ctx, n0, n1, n)
                if _r is not None and _r is not n: return _r
        if n.dtype in _DT0:
            if n0.op is Ops.MUL and len(n0.src) == 2:
                n0_0 = n0.src[0]
                n0_1 = n0.src[1]
                if n1.op is Ops.CONST:
                    if n0_1.op is Ops.CONST:
                        # rule mul_consts at rules/symbolic.rules:44
                        #   mul_consts: MUL[MUL[x, c1:CONST], c2:CONST]:ints -> x * fold_alu(Ops.MUL, x.dtype, c1.arg, c2.arg)
                        c1 = n0_1
                        c2 = n1
                        x = n0_0
                        _r = _as_uop(n, x * fold_alu(Ops.MUL, x.dtype, c1.arg, c2.arg))
                        if _r is not None and _r is not n: return _r
                    if n0_0.op is Ops.CONST:
                        # rule mul_consts at rules/symbolic.rules:44
                        #   mul_consts: MUL[MUL[x, c1:CONST], c2:CONST]:ints -> x * fold_alu(Ops.MUL, x.dtype, c1.arg, c2.arg)
                        c1 = n0_0
                        c2 = n1
                        x = n0_1
                        _r = _as_uop(n, x * fold_alu(Ops.MUL, x.dtype, c1.arg, c2.arg))
                        if _r is not None and _r is not n: return _r
            if n0.op is Ops.CONST and n1.op is Ops.MUL and len(n1.src) == 2:
                n1_0 = n1.src[0]
                n1_1 = n1.src[1]
                if n1_1.op is Ops.CONST:
                    # rule mul_consts at rules/symbolic.rules:44
                    #   mul_consts: MUL[MUL[x, c1:CONST], c2:CONST]:ints -> x * fold_alu(Ops.MUL, x.dtype, c1.arg, c2.arg)
                    c1 = n1_1
                    c2 = n0
                    x = n1_0
                    _r = _as_uop(n, x * fold_alu(Ops.MUL, x.dtype, c1.arg, c2.arg))
                    if _r is not None and _r is not n: return _r
                if n1_0.op is Ops.CONST:
                    # rule mul_consts at rules/symbolic.rules:44
                    #   mul_consts: MUL[MUL[x, c1:CONST], c2:CONST]:ints -> x * fold_alu(Ops.MUL, x.dtype, c1.arg, c2.arg)
                    c1 = n1_0
                    c2 = n0
                    x = n1_1
                    _r = _as_uop(n, x * fold_alu(Ops.MUL, x.dtype, c1.arg, c2.arg))
                    if _r is not None and _r is not n: return _r
    return None

def _sym_FDIV(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _sym_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
    return None

def _sym_IDIV(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.dtype in _DT0 and n1.op is Ops.CONST and n1.arg == 1:
            # rule idiv_one at rules/symbolic.rules:20
            #   idiv_one: IDIV(x:ints, 1) -> x
            x = n0
            return x
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _sym_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
        if n.dtype is dtypes.index:
            if n0.op is Ops.MUL and len(n0.src) == 2:
                n0_0 = n0.src[0]
                n0_1 = n0.src[1]
                if n0_1.op is Ops.CONST and n1 is n0_1:
                    # rule mul_idiv at rules/symbolic.rules:50
                    #   mul_idiv: IDIV(MUL[x, c:CONST], c):index if c.arg != 0 -> x
                    c = n0_1
                    x = n0_0
                    if c.arg != 0:
                        return x
                if n0_0.op is Ops.CONST and n1 is n0_0:
                    # rule mul_idiv at rules/symbolic.rules:50
                    #   mul_idiv: IDIV(MUL[x, c:CONST], c):index if c.arg != 0 -> x
                    c = n0_0
                    x = n0_1
                    if c.arg != 0:
                        return x
            if n0.op is Ops.ADD and len(n0.src) == 2:
                n0_0 = n0.src[0]
                n0_1 = n0.src[1]
                if n0_0.op is Ops.MUL and len(n0_0.src) == 2:
                    n0_0_0 = n0_0.src[0]
                    n0_0_1 = n0_0.src[1]
                    if n0_0_1.op is Ops.CONST and n1 is n0_0_1:
                        # rule split_idiv at rules/symbolic.rules:59
                        #   split_idiv: IDIV(ADD[MUL[x, c:CONST], d], c):index if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg -> x
                        c = n0_0_1
                        d = n0_1
                        x = n0_0_0
                        if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg:
                            return x
                    if n0_0_0.op is Ops.CONST and n1 is n0_0_0:
                        # rule split_idiv at rules/symbolic.rules:59
                        #   split_idiv: IDIV(ADD[MUL[x, c:CONST], d], c):index if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg -> x
                        c = n0_0_0
                        d = n0_1
                        x = n0_0_1
                        if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg:
                            return x
                if n0_1.op is Ops.MUL and len(n0_1.src) == 2:
                    n0_1_0 = n0_1.src[0]
                    n0_1_1 = n0_1.src[1]
                    if n0_1_1.op is Ops.CONST and n1 is n0_1_1:
                        # rule split_idiv at rules/symbolic.rules:59
                        #   split_idiv: IDIV(ADD[MUL[x, c:CONST], d], c):index if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg -> x
                        c = n0_1_1
                        d = n0_0
                        x = n0_1_0
                        if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg:
                            return x
                    if n0_1_0.op is Ops.CONST and n1 is n0_1_0:
                        # rule split_idiv at rules/symbolic.rules:59
                        #   split_idiv: IDIV(ADD[MUL[x, c:CONST], d], c):index if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg -> x
                        c = n0_1_0
                        d = n0_0
                        x = n0_1_1
                        if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg:
                            return x
        if n0.dtype is dtypes.index and n1.op is Ops.CONST:
            # rule idiv_in_range at rules/symbolic.rules:65
            #   idiv_in_range: IDIV(x:index, c:CONST) if 0 <= x.vmin and x.vmax < c.arg -> 0
            c = n1
            x = n0
            if 0 <= x.vmin and x.vmax < c.arg:
                _r = n.const_like(0)
                if _r is not n: return _r
    return None

def _sym_MOD(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.dtype in _DT0 and n1.op is Ops.CONST and n1.arg == 1:
            # rule mod_one at rules/symbolic.rules:21
            #   mod_one: MOD(x:ints, 1) -> 0
            x = n0
            _r = n.const_like(0)
            if _r is not n: return _r
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _sym_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
        if n.dtype is dtypes.index and n0.op is Ops.MUL and len(n0.src) == 2:
            n0_0 = n0.src[0]
            n0_1 = n0.src[1]
            if n0_1.op is Ops.CONST and n1 is n0_1:
                # rule mul_mod at rules/symbolic.rules:51
                #   mul_mod: MOD(MUL[x, c:CONST], c):index if c.arg != 0 -> 0
                c = n0_1
                x = n0_0
                if c.arg != 0:
                    _r = n.const_like(0)
                    if _r is not n: return _r
            if n0_0.op is Ops.CONST and n1 is n0_0:
                # rule mul_mod at rules/symbolic.rules:51
                #   mul_mod: MOD(MUL[x, c:CONST], c):index if c.arg != 0 -> 0
                c = n0_0
                x = n0_1
                if c.arg != 0:
                    _r = n.const_like(0)
                    if _r is not n: return _r
        if n0.op is Ops.MOD and len(n0.src) == 2:
            n0_0 = n0.src[0]
            n0_1 = n0.src[1]
            if n0_1.op is Ops.CONST and n1 is n0_1:
                # rule mod_mod at rules/symbolic.rules:55
                #   mod_mod: MOD(MOD(x, c:CONST) as m, c) if c.arg != 0 -> m
                c = n0_1
                m = n0
                x = n0_0
                if c.arg != 0:
                    return m
        if n.dtype is dtypes.index and n0.op is Ops.ADD and len(n0.src) == 2:
            n0_0 = n0.src[0]
            n0_1 = n0.src[1]
            if n0_0.op is Ops.MUL and len(n0_0.src) == 2:
                n0_0_0 = n0_0.src[0]
                n0_0_1 = n0_0.src[1]
                if n0_0_1.op is Ops.CONST and n1 is n0_0_1:
                    # rule split_mod at rules/symbolic.rules:60
                    #   split_mod: MOD(ADD[MUL[x, c:CONST], d], c):index if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg -> d
                    c = n0_0_1
                    d = n0_1
                    x = n0_0_0
                    if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg:
                        return d
                if n0_0_0.op is Ops.CONST and n1 is n0_0_0:
                    # rule split_mod at rules/symbolic.rules:60
                    #   split_mod: MOD(ADD[MUL[x, c:CONST], d], c):index if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg -> d
                    c = n0_0_0
                    d = n0_1
                    x = n0_0_1
                    if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg:
                        return d
            if n0_1.op is Ops.MUL and len(n0_1.src) == 2:
                n0_1_0 = n0_1.src[0]
                n0_1_1 = n0_1.src[1]
                if n0_1_1.op is Ops.CONST and n1 is n0_1_1:
                    # rule split_mod at rules/symbolic.rules:60
                    #   split_mod: MOD(ADD[MUL[x, c:CONST], d], c):index if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg -> d
                    c = n0_1_1
                    d = n0_0
                    x = n0_1_0
                    if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg:
                        return d
                if n0_1_0.op is Ops.CONST and n1 is n0_1_0:
                    # rule split_mod at rules/symbolic.rules:60
                    #   split_mod: MOD(ADD[MUL[x, c:CONST], d], c):index if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg -> d
                    c = n0_1_0
                    d = n0_0
                    x = n0_1_1
                    if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg:
                        return d
        if n0.dtype is dtypes.index and n1.op is Ops.CONST:
            # rule mod_in_range at rules/symbolic.rules:64
            #   mod_in_range: MOD(x:index, c:CONST) if 0 <= x.vmin and x.vmax < c.arg -> x
            c = n1
            x = n0
            if 0 <= x.vmin and x.vmax < c.arg:
                return x
    return None

def _sym_MAX(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n1 is n0:
            # rule max_self at rules/symbolic.rules:24
            #   max_self: MAX(x, x) -> x
            x = n0
            return x
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _sym_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
    return None

def _sym_MIN(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n1 is n0:
            # rule min_self at rules/symbolic.rules:25
            #   min_self: MIN(x, x) -> x
            x = n0
            return x
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _sym_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
    return None

def _sym_POW(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _sym_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
    return None

def _sym_CMPLT(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _sym_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
        if n0.dtype is dtypes.index:
            # rule cmp_bounds at rules/symbolic.rules:67
            #   cmp_bounds: Comparison(a:index, b) as e if e.vmin == e.vmax -> e.vmin
            a = n0
            b = n1
            e = n
            if e.vmin == e.vmax:
                _r = _as_uop(n, e.vmin)
                if _r is not None and _r is not n: return _r
    return None

def _sym_CMPNE(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _sym_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
        if n0.dtype is dtypes.index:
            # rule cmp_bounds at rules/symbolic.rules:67
            #   cmp_bounds: Comparison(a:index, b) as e if e.vmin == e.vmax -> e.vmin
            a = n0
            b = n1
            e = n
            if e.vmin == e.vmax:
                _r = _as_uop(n, e.vmin)
                if _r is not None and _r is not n: return _r
    return None

def _sym_CMPEQ(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _sym_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
        if n0.dtype is dtypes.index:
            # rule cmp_bounds at rules/symbolic.rules:67
            #   cmp_bounds: Comparison(a:index, b) as e if e.vmin == e.vmax -> e.vmin
            a = n0
            b = n1
            e = n
            if e.vmin == e.vmax:
                _r = _as_uop(n, e.vmin)
                if _r is not None and _r is not n: return _r
    return None

def _sym_AND(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _sym_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
    return None

def _sym_OR(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _sym_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
    return None

def _sym_XOR(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _sym_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
    return None

def _sym_SHL(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _sym_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
    return None

def _sym_SHR(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _sym_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
    return None

def _sym_WHERE(n, ctx):
    if len(n.src) == 3:
        n0 = n.src[0]
        n1 = n.src[1]
        n2 = n.src[2]
        if n0.op is Ops.CONST:
            if n0.arg == True:
                # rule where_true at rules/symbolic.rules:28
                #   where_true: WHERE(True, a, b) -> a
                a = n1
                b = n2
                return a
            if n0.arg == False:
                # rule where_false at rules/symbolic.rules:29
                #   where_false: WHERE(False, a, b) -> b
                a = n1
                b = n2
                return b
        if n2 is n1:
            # rule where_same at rules/symbolic.rules:30
            #   where_same: WHERE(_, a, a) -> a
            a = n1
            return a
    return None

def _sym_CAST_t(n, ctx, _st):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is Ops.CONST:
            # rule fold_cast at rules/symbolic.rules:37
            #   fold_cast: CAST(a:CONST) as e -> cast_value(e.dtype, a.dtype, a.arg)
            a = n0
            e = n
            _t = _st.start(15)
            _r = _as_uop(n, cast_value(e.dtype, a.dtype, a.arg))
            _st.stop(15, _t, _r, n)
            if _r is not None and _r is not n: return _r, 15
    return None

def _sym_NEG_t(n, ctx, _st):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is Ops.NEG and len(n0.src) == 1:
            n0_0 = n0.src[0]
            # rule neg_neg at rules/symbolic.rules:15
            #   neg_neg: NEG(NEG(x)) -> x
            x = n0_0
            _t = _st.start(3)
            _r = x
            _st.stop(3, _t, _r, n)
            if _r is not None and _r is not n: return _r, 3
        if n0.op is Ops.CONST:
            # rule fold_unary at rules/symbolic.rules:36
            #   fold_unary: NEG(a:CONST) as e -> fold_alu(e.op, a.dtype, a.arg)
            a = n0
            e = n
            _t = _st.start(14)
            _r = _as_uop(n, fold_alu(e.op, a.dtype, a.arg))
            _st.stop(14, _t, _r, n)
            if _r is not None and _r is not n: return _r, 14
    return None

def _sym_ADD_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.dtype in _DT0 and n1.op is Ops.CONST and n1.arg == 0:
            # rule add_zero at rules/symbolic.rules:12
            #   add_zero: ADD[x:ints, 0] -> x
            x = n0
            _t = _st.start(0)
            _r = x
            _st.stop(0, _t, _r, n)
            if _r is not None and _r is not n: return _r, 0
        if n0.op is Ops.CONST:
            if n0.arg == 0 and n1.dtype in _DT0:
                # rule add_zero at rules/symbolic.rules:12
                #   add_zero: ADD[x:ints, 0] -> x
                x = n1
                _t = _st.start(0)
                _r = x
                _st.stop(0, _t, _r, n)
                if _r is not None and _r is not n: return _r, 0
            if n1.op is Ops.CONST:
                # rule fold_binary at rules/symbolic.rules:35
                #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
                _t = _st.start(13)
                _r = _sym_r13(n, ctx, n0, n1, n)
                _st.stop(13, _t, _r, n)
                if _r is not None and _r is not n: return _r, 13
        if n.dtype in _DT0:
            if n0.op is Ops.ADD and len(n0.src) == 2:
                n0_0 = n0.src[0]
                n0_1 = n0.src[1]
                if n1.op is Ops.CONST:
                    if n0_1.op is Ops.CONST:
                        # rule add_consts at rules/symbolic.rules:43
                        #   add_consts: ADD[ADD[x, c1:CONST], c2:CONST]:ints -> x + fold_alu(Ops.ADD, x.dtype, c1.arg, c2.arg)
                        c1 = n0_1
                        c2 = n1
                        x = n0_0
                        _t = _st.start(16)
                        _r = _as_uop(n, x + fold_alu(Ops.ADD, x.dtype, c1.arg, c2.arg))
                        _st.stop(16, _t, _r, n)
                        if _r is not None and _r is not n: return _r, 16
                    if n0_0.op is Ops.CONST:
                        # rule add_consts at rules/symbolic.rules:43
                        #   add_consts: ADD[ADD[x, c1:CONST], c2:CONST]:ints -> x + fold_alu(Ops.ADD, x.dtype, c1.arg, c2.arg)
                        c1 = n0_0
                        c2 = n1
                        x = n0_1
                        _t = _st.start(16)
                        _r = _as_uop(n, x + fold_alu(Ops.ADD, x.dtype, c1.arg, c2.arg))
                        _st.stop(16, _t, _r, n)
                        if _r is not None and _r is not n: return _r, 16
            if n0.op is Ops.CONST and n1.op is Ops.ADD and len(n1.src) == 2:
                n1_0 = n1.src[0]
                n1_1 = n1.src[1]
                if n1_1.op is Ops.CONST:
                    # rule add_consts at rules/symbolic.rules:43
                    #   add_consts: ADD[ADD[x, c1:CONST], c2:CONST]:ints -> x + fold_alu(Ops.ADD, x.dtype, c1.arg, c2.arg)
                    c1 = n1_1
                    c2 = n0
                    x = n1_0
                    _t = _st.start(16)
                    _r = _as_uop(n, x + fold_alu(Ops.ADD, x.dtype, c1.arg, c2.arg))
                    _st.stop(16, _t, _r, n)
                    if _r is not None and _r is not n: return _r, 16
                if n1_0.op is Ops.CONST:
                    # rule add_consts at rules/symbolic.rules:43
                    #   add_consts: ADD[ADD[x, c1:CONST], c2:CONST]:ints -> x + fold_alu(Ops.ADD, x.dtype, c1.arg, c2.arg)
                    c1 = n1_0
                    c2 = n0
                    x = n1_1
                    _t = _st.start(16)
                    _r = _as_uop(n, x + fold_alu(Ops.ADD, x.dtype, c1.arg, c2.arg))
                    _st.stop(16, _t, _r, n)
                    if _r is not None and _r is not n: return _r, 16
        if n0.op is Ops.MUL and len(n0.src) == 2:
            n0_0 = n0.src[0]
            n0_1 = n0.src[1]
            if n1.op is Ops.MOD and len(n1.src) == 2:
                n1_0 = n1.src[0]
                n1_1 = n1.src[1]
                if n0_0.op is Ops.IDIV and len(n0_0.src) == 2:
                    n0_0_0 = n0_0.src[0]
                    n0_0_1 = n0_0.src[1]
                    if n0_0_0.dtype in _DT0 and n1_0 is n0_0_0 and n0_0_1.op is Ops.CONST and n0_1 is n0_0_1 and n1_1 is n0_0_1:
                        # rule divmod_recombine at rules/symbolic.rules:53
                        #   divmod_recombine: ADD[MUL[IDIV(x:ints, c:CONST), c], MOD(x, c)] if c.arg > 0 -> x
                        c = n0_0_1
                        x = n0_0_0
                        _t = _st.start(21)
                        _r = x if c.arg > 0 else None
                        _st.stop(21, _t, _r, n)
                        if _r is not None and _r is not n: return _r, 21
                if n0_1.op is Ops.IDIV and len(n0_1.src) == 2:
                    n0_1_0 = n0_1.src[0]
                    n0_1_1 = n0_1.src[1]
                    if n0_1_0.dtype in _DT0 and n1_0 is n0_1_0 and n0_1_1.op is Ops.CONST and n0_0 is n0_1_1 and n1_1 is n0_1_1:
                        # rule divmod_recombine at rules/symbolic.rules:53
                        #   divmod_recombine: ADD[MUL[IDIV(x:ints, c:CONST), c], MOD(x, c)] if c.arg > 0 -> x
                        c = n0_1_1
                        x = n0_1_0
                        _t = _st.start(21)
                        _r = x if c.arg > 0 else None
                        _st.stop(21, _t, _r, n)
                        if _r is not None and _r is not n: return _r, 21
        if n0.op is Ops.MOD and len(n0.src) == 2:
            n0_0 = n0.src[0]
            n0_1 = n0.src[1]
            if n1.op is Ops.MUL and len(n1.src) == 2:
                n1_0 = n1.src[0]
                n1_1 = n1.src[1]
                if n1_0.op is Ops.IDIV and len(n1_0.src) == 2:
                    n1_0_0 = n1_0.src[0]
                    n1_0_1 = n1_0.src[1]
                    if n1_0_0.dtype in _DT0 and n0_0 is n1_0_0 and n1_0_1.op is Ops.CONST and n1_1 is n1_0_1 and n0_1 is n1_0_1:
                        # rule divmod_recombine at rules/symbolic.rules:53
                        #   divmod_recombine: ADD[MUL[IDIV(x:ints, c:CONST), c], MOD(x, c)] if c.arg > 0 -> x
                        c = n1_0_1
                        x = n1_0_0
                        _t = _st.start(21)
                        _r = x if c.arg > 0 else None
                        _st.stop(21, _t, _r, n)
                        if _r is not None and _r is not n: return _r, 21
                if n1_1.op is Ops.IDIV and len(n1_1.src) == 2:
                    n1_1_0 = n1_1.src[0]
                    n1_1_1 = n1_1.src[1]
                    if n1_1_0.dtype in _DT0 and n0_0 is n1_1_0 and n1_1_1.op is Ops.CONST and n1_0 is n1_1_1 and n0_1 is n1_1_1:
                        # rule divmod_recombine at rules/symbolic.rules:53
                        #   divmod_recombine: ADD[MUL[IDIV(x:ints, c:CONST), c], MOD(x, c)] if c.arg > 0 -> x
                        c = n1_1_1
                        x = n1_1_0
                        _t = _st.start(21)
                        _r = x if c.arg > 0 else None
                        _st.stop(21, _t, _r, n)
                        if _r is not None and _r is not n: return _r, 21
    return None

def _sym_SUB_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.dtype in _DT0:
            if n1.op is Ops.CONST and n1.arg == 0:
                # rule sub_zero at rules/symbolic.rules:13
                #   sub_zero: SUB(x:ints, 0) -> x
                x = n0
                _t = _st.start(1)
                _r = x
                _st.stop(1, _t, _r, n)
                if _r is not None and _r is not n: return _r, 1
            if n1 is n0:
                # rule sub_self at rules/symbolic.rules:14
                #   sub_self: SUB(x:ints, x) -> 0
                x = n0
                _t = _st.start(2)
                _r = n.const_like(0)
                _st.stop(2, _t, _r, n)
                if _r is not None and _r is not n: return _r, 2
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _sym_r13(n, ctx, n0, n1, n)
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
        if n0.dtype is dtypes.index and n1.op is Ops.CONST:
            # rule sub_const at rules/symbolic.rules:46
            #   sub_const: SUB(x:index, c:CONST) -> x + (-c.arg)
            c = n1
            x = n0
            _t = _st.start(18)
            _r = _as_uop(n, x + -c.arg)
            _st.stop(18, _t, _r, n)
            if _r is not None and _r is not n: return _r, 18
    return None

def _sym_MUL_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n1.op is Ops.CONST and n1.arg == 1:
            # rule mul_one at rules/symbolic.rules:18
            #   mul_one: MUL[x, 1] -> x
            x = n0
            _t = _st.start(4)
            _r = x
            _st.stop(4, _t, _r, n)
            if _r is not None and _r is not n: return _r, 4
        if n0.op is Ops.CONST and n0.arg == 1:
            # rule mul_one at rules/symbolic.rules:18
            #   mul_one: MUL[x, 1] -> x
            x = n1
            _t = _st.start(4)
            _r = x
            _st.stop(4, _t, _r, n)
            if _r is not None and _r is not n: return _r, 4
        if n0.dtype in _DT0 and n1.op is Ops.CONST and n1.arg == 0:
            # rule mul_zero at rules/symbolic.rules:19
            #   mul_zero: MUL[x:ints, 0] -> 0
            x = n0
            _t = _st.start(5)
            _r = n.const_like(0)
            _st.stop(5, _t, _r, n)
            if _r is not None and _r is not n: return _r, 5
        if n0.op is Ops.CONST:
            if n0.arg == 0 and n1.dtype in _DT0:
                # rule mul_zero at rules/symbolic.rules:19
                #   mul_zero: MUL[x:ints, 0] -> 0
                x = n1
                _t = _st.start(5)
                _r = n.const_like(0)
                _st.stop(5, _t, _r, n)
                if _r is not None and _r is not n: return _r, 5
            if n1.op is Ops.CONST:
                # rule fold_binary at rules/symbolic.rules:35
                #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
                _t = _st.start(13)
                _r = _sym_r13(n, ctx, n0, n1, n)
                _st.stop(13, _t, _r, n)
                if _r is not None and _r is not n: return _r, 13
        if n.dtype in _DT0:
            if n0.op is Ops.MUL and len(n0.src) == 2:
                n0_0 = n0.src[0]
                n0_1 = n0.src[1]
                if n1.op is Ops.CONST:
                    if n0_1.op is Ops.CONST:
                        # rule mul_consts at rules/symbolic.rules:44
                        #   mul_consts: MUL[MUL[x, c1:CONST], c2:CONST]:ints -> x * fold_alu(Ops.MUL, x.dtype, c1.arg, c2.arg)
                        c1 = n0_1
                        c2 = n1
                        x = n0_0
                        _t = _st.start(17)
                        _r = _as_uop(n, x * fold_alu(Ops.MUL, x.dtype, c1.arg, c2.arg))
                        _st.stop(17, _t, _r, n)
                        if _r is not None and _r is not n: return _r, 17
                    if n0_0.op is Ops.CONST:
                        # rule mul_consts at rules/symbolic.rules:44
                        #   mul_consts: MUL[MUL[x, c1:CONST], c2:CONST]:ints -> x * fold_alu(Ops.MUL, x.dtype, c1.arg, c2.arg)
                        c1 = n0_0
                        c2 = n1
                        x = n0_1
                        _t = _st.start(17)
                        _r = _as_uop(n, x * fold_alu(Ops.MUL, x.dtype, c1.arg, c2.arg))
                        _st.stop(17, _t, _r, n)
                        if _r is not None and _r is not n: return _r, 17
            if n0.op is Ops.CONST and n1.op is Ops.MUL and len(n1.src) == 2:
                n1_0 = n1.src[0]
                n1_1 = n1.src[1]
                if n1_1.op is Ops.CONST:
                    # rule mul_consts at rules/symbolic.rules:44
                    #   mul_consts: MUL[MUL[x, c1:CONST], c2:CONST]:ints -> x * fold_alu(Ops.MUL, x.dtype, c1.arg, c2.arg)
                    c1 = n1_1
                    c2 = n0
                    x = n1_0
                    _t = _st.start(17)
                    _r = _as_uop(n, x * fold_alu(Ops.MUL, x.dtype, c1.arg, c2.arg))
                    _st.stop(17, _t, _r, n)
                    if _r is not None and _r is not n: return _r, 17
                if n1_0.op is Ops.CONST:
                    # rule mul_consts at rules/symbolic.rules:44
                    #   mul_consts: MUL[MUL[x, c1:CONST], c2:CONST]:ints -> x * fold_alu(Ops.MUL, x.dtype, c1.arg, c2.arg)
                    c1 = n1_0
                    c2 = n0
                    x = n1_1
                    _t = _st.start(17)
                    _r = _as_uop(n, x * fold_alu(Ops.MUL, x.dtype, c1.arg, c2.arg))
                    _st.stop(17, _t, _r, n)
                    if _r is not None and _r is not n: return _r, 17
    return None

def _sym_FDIV_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _sym_r13(n, ctx, n0, n1, n)
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
    return None

def _sym_IDIV_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.dtype in _DT0 and n1.op is Ops.CONST and n1.arg == 1:
            # rule idiv_one at rules/symbolic.rules:20
            #   idiv_one: IDIV(x:ints, 1) -> x
            x = n0
            _t = _st.start(6)
            _r = x
            _st.stop(6, _t, _r, n)
            if _r is not None and _r is not n: return _r, 6
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _sym_r13(n, ctx, n0, n1, n)
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
        if n.dtype is dtypes.index:
            if n0.op is Ops.MUL and len(n0.src) == 2:
                n0_0 = n0.src[0]
                n0_1 = n0.src[1]
                if n0_1.op is Ops.CONST and n1 is n0_1:
                    # rule mul_idiv at rules/symbolic.rules:50
                    #   mul_idiv: IDIV(MUL[x, c:CONST], c):index if c.arg != 0 -> x
                    c = n0_1
                    x = n0_0
                    _t = _st.start(19)
                    _r = x if c.arg != 0 else None
                    _st.stop(19, _t, _r, n)
                    if _r is not None and _r is not n: return _r, 19
                if n0_0.op is Ops.CONST and n1 is n0_0:
                    # rule mul_idiv at rules/symbolic.rules:50
                    #   mul_idiv: IDIV(MUL[x, c:CONST], c):index if c.arg != 0 -> x
                    c = n0_0
                    x = n0_1
                    _t = _st.start(19)
                    _r = x if c.arg != 0 else None
                    _st.stop(19, _t, _r, n)
                    if _r is not None and _r is not n: return _r, 19
            if n0.op is Ops.ADD and len(n0.src) == 2:
                n0_0 = n0.src[0]
                n0_1 = n0.src[1]
                if n0_0.op is Ops.MUL and len(n0_0.src) == 2:
                    n0_0_0 = n0_0.src[0]
                    n0_0_1 = n0_0.src[1]
                    if n0_0_1.op is Ops.CONST and n1 is n0_0_1:
                        # rule split_idiv at rules/symbolic.rules:59
                        #   split_idiv: IDIV(ADD[MUL[x, c:CONST], d], c):index if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg -> x
                        c = n0_0_1
                        d = n0_1
                        x = n0_0_0
                        _t = _st.start(23)
                        _r = x if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg else None
                        _st.stop(23, _t, _r, n)
                        if _r is not None and _r is not n: return _r, 23
                    if n0_0_0.op is Ops.CONST and n1 is n0_0_0:
                        # rule split_idiv at rules/symbolic.rules:59
                        #   split_idiv: IDIV(ADD[MUL[x, c:CONST], d], c):index if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg -> x
                        c = n0_0_0
                        d = n0_1
                        x = n0_0_1
                        _t = _st.start(23)
                        _r = x if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg else None
                        _st.stop(23, _t, _r, n)
                        if _r is not None and _r is not n: return _r, 23
                if n0_1.op is Ops.MUL and len(n0_1.src) == 2:
                    n0_1_0 = n0_1.src[0]
                    n0_1_1 = n0_1.src[1]
                    if n0_1_1.op is Ops.CONST and n1 is n0_1_1:
                        # rule split_idiv at rules/symbolic.rules:59
                        #   split_idiv: IDIV(ADD[MUL[x, c:CONST], d], c):index if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg -> x
                        c = n0_1_1
                        d = n0_0
                        x = n0_1_0
                        _t = _st.start(23)
                        _r = x if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg else None
                        _st.stop(23, _t, _r, n)
                        if _r is not None and _r is not n: return _r, 23
                    if n0_1_0.op is Ops.CONST and n1 is n0_1_0:
                        # rule split_idiv at rules/symbolic.rules:59
                        #   split_idiv: IDIV(ADD[MUL[x, c:CONST], d], c):index if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg -> x
                        c = n0_1_0
                        d = n0_0
                        x = n0_1_1
                        _t = _st.start(23)
                        _r = x if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg else None
                        _st.stop(23, _t, _r, n)
                        if _r is not None and _r is not n: return _r, 23
        if n0.dtype is dtypes.index and n1.op is Ops.CONST:
            # rule idiv_in_range at rules/symbolic.rules:65
            #   idiv_in_range: IDIV(x:index, c:CONST) if 0 <= x.vmin and x.vmax < c.arg -> 0
            c = n1
            x = n0
            _t = _st.start(26)
            _r = n.const_like(0) if 0 <= x.vmin and x.vmax < c.arg else None
            _st.stop(26, _t, _r, n)
            if _r is not None and _r is not n: return _r, 26
    return None

def _sym_MOD_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.dtype in _DT0 and n1.op is Ops.CONST and n1.arg == 1:
            # rule mod_one at rules/symbolic.rules:21
            #   mod_one: MOD(x:ints, 1) -> 0
            x = n0
            _t = _st.start(7)
            _r = n.const_like(0)
            _st.stop(7, _t, _r, n)
            if _r is not None and _r is not n: return _r, 7
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _sym_r13(n, ctx, n0, n1, n)
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
        if n.dtype is dtypes.index and n0.op is Ops.MUL and len(n0.src) == 2:
            n0_0 = n0.src[0]
            n0_1 = n0.src[1]
            if n0_1.op is Ops.CONST and n1 is n0_1:
                # rule mul_mod at rules/symbolic.rules:51
                #   mul_mod: MOD(MUL[x, c:CONST], c):index if c.arg != 0 -> 0
                c = n0_1
                x = n0_0
                _t = _st.start(20)
                _r = n.const_like(0) if c.arg != 0 else None
                _st.stop(20, _t, _r, n)
                if _r is not None and _r is not n: return _r, 20
            if n0_0.op is Ops.CONST and n1 is n0_0:
                # rule mul_mod at rules/symbolic.rules:51
                #   mul_mod: MOD(MUL[x, c:CONST], c):index if c.arg != 0 -> 0
                c = n0_0
                x = n0_1
                _t = _st.start(20)
                _r = n.const_like(0) if c.arg != 0 else None
                _st.stop(20, _t, _r, n)
                if _r is not None and _r is not n: return _r, 20
        if n0.op is Ops.MOD and len(n0.src) == 2:
            n0_0 = n0.src[0]
            n0_1 = n0.src[1]
            if n0_1.op is Ops.CONST and n1 is n0_1:
                # rule mod_mod at rules/symbolic.rules:55
                #   mod_mod: MOD(MOD(x, c:CONST) as m, c) if c.arg != 0 -> m
                c = n0_1
                m = n0
                x = n0_0
                _t = _st.start(22)
                _r = m if c.arg != 0 else None
                _st.stop(22, _t, _r, n)
                if _r is not None and _r is not n: return _r, 22
        if n.dtype is dtypes.index and n0.op is Ops.ADD and len(n0.src) == 2:
            n0_0 = n0.src[0]
            n0_1 = n0.src[1]
            if n0_0.op is Ops.MUL and len(n0_0.src) == 2:
                n0_0_0 = n0_0.src[0]
                n0_0_1 = n0_0.src[1]
                if n0_0_1.op is Ops.CONST and n1 is n0_0_1:
                    # rule split_mod at rules/symbolic.rules:60
                    #   split_mod: MOD(ADD[MUL[x, c:CONST], d], c):index if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg -> d
                    c = n0_0_1
                    d = n0_1
                    x = n0_0_0
                    _t = _st.start(24)
                    _r = d if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg else None
                    _st.stop(24, _t, _r, n)
                    if _r is not None and _r is not n: return _r, 24
                if n0_0_0.op is Ops.CONST and n1 is n0_0_0:
                    # rule split_mod at rules/symbolic.rules:60
                    #   split_mod: MOD(ADD[MUL[x, c:CONST], d], c):index if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg -> d
                    c = n0_0_0
                    d = n0_1
                    x = n0_0_1
                    _t = _st.start(24)
                    _r = d if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg else None
                    _st.stop(24, _t, _r, n)
                    if _r is not None and _r is not n: return _r, 24
            if n0_1.op is Ops.MUL and len(n0_1.src) == 2:
                n0_1_0 = n0_1.src[0]
                n0_1_1 = n0_1.src[1]
                if n0_1_1.op is Ops.CONST and n1 is n0_1_1:
                    # rule split_mod at rules/symbolic.rules:60
                    #   split_mod: MOD(ADD[MUL[x, c:CONST], d], c):index if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg -> d
                    c = n0_1_1
                    d = n0_0
                    x = n0_1_0
                    _t = _st.start(24)
                    _r = d if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg else None
                    _st.stop(24, _t, _r, n)
                    if _r is not None and _r is not n: return _r, 24
                if n0_1_0.op is Ops.CONST and n1 is n0_1_0:
                    # rule split_mod at rules/symbolic.rules:60
                    #   split_mod: MOD(ADD[MUL[x, c:CONST], d], c):index if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg -> d
                    c = n0_1_0
                    d = n0_0
                    x = n0_1_1
                    _t = _st.start(24)
                    _r = d if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg else None
                    _st.stop(24, _t, _r, n)
                    if _r is not None and _r is not n: return _r, 24
        if n0.dtype is dtypes.index and n1.op is Ops.CONST:
            # rule mod_in_range at rules/symbolic.rules:64
            #   mod_in_range: MOD(x:index, c:CONST) if 0 <= x.vmin and x.vmax < c.arg -> x
            c = n1
            x = n0
            _t = _st.start(25)
            _r = x if 0 <= x.vmin and x.vmax < c.arg else None
            _st.stop(25, _t, _r, n)
            if _r is not None and _r is not n: return _r, 25
    return None

def _sym_MAX_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n1 is n0:
            # rule max_self at rules/symbolic.rules:24
            #   max_self: MAX(x, x) -> x
            x = n0
            _t = _st.start(8)
            _r = x
            _st.stop(8, _t, _r, n)
            if _r is not None and _r is not n: return _r, 8
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _sym_r13(n, ctx, n0, n1, n)
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
    return None

def _sym_MIN_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n1 is n0:
            # rule min_self at rules/symbolic.rules:25
            #   min_self: MIN(x, x) -> x
            x = n0
            _t = _st.start(9)
            _r = x
            _st.stop(9, _t, _r, n)
            if _r is not None and _r is not n: return _r, 9
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _sym_r13(n, ctx, n0, n1, n)
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
    return None

def _sym_POW_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _sym_r13(n, ctx, n0, n1, n)
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
    return None

def _sym_CMPLT_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _sym_r13(n, ctx, n0, n1, n)
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
        if n0.dtype is dtypes.index:
            # rule cmp_bounds at rules/symbolic.rules:67
            #   cmp_bounds: Comparison(a:index, b) as e if e.vmin == e.vmax -> e.vmin
            a = n0
            b = n1
            e = n
            _t = _st.start(27)
            _r = _as_uop(n, e.vmin) if e.vmin == e.vmax else None
            _st.stop(27, _t, _r, n)
            if _r is not None and _r is not n: return _r, 27
    return None

def _sym_CMPNE_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _sym_r13(n, ctx, n0, n1, n)
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
        if n0.dtype is dtypes.index:
            # rule cmp_bounds at rules/symbolic.rules:67
            #   cmp_bounds: Comparison(a:index, b) as e if e.vmin == e.vmax -> e.vmin
            a = n0
            b = n1
            e = n
            _t = _st.start(27)
            _r = _as_uop(n, e.vmin) if e.vmin == e.vmax else None
            _st.stop(27, _t, _r, n)
            if _r is not None and _r is not n: return _r, 27
    return None

def _sym_CMPEQ_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _sym_r13(n, ctx, n0, n1, n)
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
        if n0.dtype is dtypes.index:
            # rule cmp_bounds at rules/symbolic.rules:67
            #   cmp_bounds: Comparison(a:index, b) as e if e.vmin == e.vmax -> e.vmin
            a = n0
            b = n1
            e = n
            _t = _st.start(27)
            _r = _as_uop(n, e.vmin) if e.vmin == e.vmax else None
            _st.stop(27, _t, _r, n)
            if _r is not None and _r is not n: return _r, 27
    return None

def _sym_AND_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _sym_r13(n, ctx, n0, n1, n)
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
    return None

def _sym_OR_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _sym_r13(n, ctx, n0, n1, n)
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
    return None

def _sym_XOR_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _sym_r13(n, ctx, n0, n1, n)
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
    return None

def _sym_SHL_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _sym_r13(n, ctx, n0, n1, n)
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
    return None

def _sym_SHR_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _sym_r13(n, ctx, n0, n1, n)
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
    return None

def _sym_WHERE_t(n, ctx, _st):
    if len(n.src) == 3:
        n0 = n.src[0]
        n1 = n.src[1]
        n2 = n.src[2]
        if n0.op is Ops.CONST:
            if n0.arg == True:
                # rule where_true at rules/symbolic.rules:28
                #   where_true: WHERE(True, a, b) -> a
                a = n1
                b = n2
                _t = _st.start(10)
                _r = a
                _st.stop(10, _t, _r, n)
                if _r is not None and _r is not n: return _r, 10
            if n0.arg == False:
                # rule where_false at rules/symbolic.rules:29
                #   where_false: WHERE(False, a, b) -> b
                a = n1
                b = n2
                _t = _st.start(11)
                _r = b
                _st.stop(11, _t, _r, n)
                if _r is not None and _r is not n: return _r, 11
        if n2 is n1:
            # rule where_same at rules/symbolic.rules:30
            #   where_same: WHERE(_, a, a) -> a
            a = n1
            _t = _st.start(12)
            _r = a
            _st.stop(12, _t, _r, n)
            if _r is not None and _r is not n: return _r, 12
    return None


_sym_rules = (
    RuleInfo('add_zero', 'rules/symbolic.rules', 12, 'add_zero: ADD[x:ints, 0] -> x'),
    RuleInfo('sub_zero', 'rules/symbolic.rules', 13, 'sub_zero: SUB(x:ints, 0) -> x'),
    RuleInfo('sub_self', 'rules/symbolic.rules', 14, 'sub_self: SUB(x:ints, x) -> 0'),
    RuleInfo('neg_neg', 'rules/symbolic.rules', 15, 'neg_neg: NEG(NEG(x)) -> x'),
    RuleInfo('mul_one', 'rules/symbolic.rules', 18, 'mul_one: MUL[x, 1] -> x'),
    RuleInfo('mul_zero', 'rules/symbolic.rules', 19, 'mul_zero: MUL[x:ints, 0] -> 0'),
    RuleInfo('idiv_one', 'rules/symbolic.rules', 20, 'idiv_one: IDIV(x:ints, 1) -> x'),
    RuleInfo('mod_one', 'rules/symbolic.rules', 21, 'mod_one: MOD(x:ints, 1) -> 0'),
    RuleInfo('max_self', 'rules/symbolic.rules', 24, 'max_self: MAX(x, x) -> x'),
    RuleInfo('min_self', 'rules/symbolic.rules', 25, 'min_self: MIN(x, x) -> x'),
    RuleInfo('where_true', 'rules/symbolic.rules', 28, 'where_true: WHERE(True, a, b) -> a'),
    RuleInfo('where_false', 'rules/symbolic.rules', 29, 'where_false: WHERE(False, a, b) -> b'),
    RuleInfo('where_same', 'rules/symbolic.rules', 30, 'where_same: WHERE(_, a, a) -> a'),
    RuleInfo('fold_binary', 'rules/symbolic.rules', 35, 'fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)'),
    RuleInfo('fold_unary', 'rules/symbolic.rules', 36, 'fold_unary: NEG(a:CONST) as e -> fold_alu(e.op, a.dtype, a.arg)'),
    RuleInfo('fold_cast', 'rules/symbolic.rules', 37, 'fold_cast: CAST(a:CONST) as e -> cast_value(e.dtype, a.dtype, a.arg)'),
    RuleInfo('add_consts', 'rules/symbolic.rules', 43, 'add_consts: ADD[ADD[x, c1:CONST], c2:CONST]:ints -> x + fold_alu(Ops.ADD, x.dtype, c1.arg, c2.arg)'),
    RuleInfo('mul_consts', 'rules/symbolic.rules', 44, 'mul_consts: MUL[MUL[x, c1:CONST], c2:CONST]:ints -> x * fold_alu(Ops.MUL, x.dtype, c1.arg, c2.arg)'),
    RuleInfo('sub_const', 'rules/symbolic.rules', 46, 'sub_const: SUB(x:index, c:CONST) -> x + (-c.arg)'),
    RuleInfo('mul_idiv', 'rules/symbolic.rules', 50, 'mul_idiv: IDIV(MUL[x, c:CONST], c):index if c.arg != 0 -> x'),
    RuleInfo('mul_mod', 'rules/symbolic.rules', 51, 'mul_mod: MOD(MUL[x, c:CONST], c):index if c.arg != 0 -> 0'),
    RuleInfo('divmod_recombine', 'rules/symbolic.rules', 53, 'divmod_recombine: ADD[MUL[IDIV(x:ints, c:CONST), c], MOD(x, c)] if c.arg > 0 -> x'),
    RuleInfo('mod_mod', 'rules/symbolic.rules', 55, 'mod_mod: MOD(MOD(x, c:CONST) as m, c) if c.arg != 0 -> m'),
    RuleInfo('split_idiv', 'rules/symbolic.rules', 59, 'split_idiv: IDIV(ADD[MUL[x, c:CONST], d], c):index if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg -> x'),
    RuleInfo('split_mod', 'rules/symbolic.rules', 60, 'split_mod: MOD(ADD[MUL[x, c:CONST], d], c):index if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg -> d'),
    RuleInfo('mod_in_range', 'rules/symbolic.rules', 64, 'mod_in_range: MOD(x:index, c:CONST) if 0 <= x.vmin and x.vmax < c.arg -> x'),
    RuleInfo('idiv_in_range', 'rules/symbolic.rules', 65, 'idiv_in_range: IDIV(x:index, c:CONST) if 0 <= x.vmin and x.vmax < c.arg -> 0'),
    RuleInfo('cmp_bounds', 'rules/symbolic.rules', 67, 'cmp_bounds: Comparison(a:index, b) as e if e.vmin == e.vmax -> e.vmin'),
)
_sym_matcher = RuleMatcher(
    'sym', _sym_rules,
    {
        Ops.CAST: _sym_CAST,
        Ops.NEG: _sym_NEG,
        Ops.ADD: _sym_ADD,
        Ops.SUB: _sym_SUB,
        Ops.MUL: _sym_MUL,
        Ops.FDIV: _sym_FDIV,
        Ops.IDIV: _sym_IDIV,
        Ops.MOD: _sym_MOD,
        Ops.MAX: _sym_MAX,
        Ops.MIN: _sym_MIN,
        Ops.POW: _sym_POW,
        Ops.CMPLT: _sym_CMPLT,
        Ops.CMPNE: _sym_CMPNE,
        Ops.CMPEQ: _sym_CMPEQ,
        Ops.AND: _sym_AND,
        Ops.OR: _sym_OR,
        Ops.XOR: _sym_XOR,
        Ops.SHL: _sym_SHL,
        Ops.SHR: _sym_SHR,
        Ops.WHERE: _sym_WHERE,
    },
    {
        Ops.CAST: _sym_CAST_t,
        Ops.NEG: _sym_NEG_t,
        Ops.ADD: _sym_ADD_t,
        Ops.SUB: _sym_SUB_t,
        Ops.MUL: _sym_MUL_t,
        Ops.FDIV: _sym_FDIV_t,
        Ops.IDIV: _sym_IDIV_t,
        Ops.MOD: _sym_MOD_t,
        Ops.MAX: _sym_MAX_t,
        Ops.MIN: _sym_MIN_t,
        Ops.POW: _sym_POW_t,
        Ops.CMPLT: _sym_CMPLT_t,
        Ops.CMPNE: _sym_CMPNE_t,
        Ops.CMPEQ: _sym_CMPEQ_t,
        Ops.AND: _sym_AND_t,
        Ops.OR: _sym_OR_t,
        Ops.XOR: _sym_XOR_t,
        Ops.SHL: _sym_SHL_t,
        Ops.SHR: _sym_SHR_t,
        Ops.WHERE: _sym_WHERE_t,
    },
)
sym = _sym_matcher

MATCHERS = {
    'symbolic_simple': _symbolic_simple_matcher,
    'sym': _sym_matcher,
}
