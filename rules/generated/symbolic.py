# generated from rules/symbolic.rules by `rulegrad gen`; do not edit
# source sha256: a6a51ae7863a7637798664f439214feebcd542a5b103154001c4472c0219e28c
'Matchers for the rule sets of rules/symbolic.rules: symbolic_simple, sym.'

from math import prod  # noqa: F401

from rulegrad.runtime.dtype import DTYPE_CLASSES, dtypes  # noqa: F401
from rulegrad.runtime.matcher import RuleMatcher, compose, helper_from, match_stats  # noqa: F401
from rulegrad.runtime.matcher import as_uop as _as_uop  # noqa: F401
from rulegrad.runtime.ops import GroupOp, Ops  # noqa: F401
from rulegrad.runtime.rewrite import RewriteNotReady, RuleInfo  # noqa: F401
from rulegrad.runtime.uop import UNSET as _UNSET  # noqa: F401
from rulegrad.runtime.uop import UOp  # noqa: F401
from rulegrad.runtime.uop import new_uop as _new  # noqa: F401
from rulegrad.rules.symbolic_helpers import cast_value
from rulegrad.rules.symbolic_helpers import congruent
from rulegrad.rules.symbolic_helpers import fold_alu
from rulegrad.rules.symbolic_helpers import fold_divmod

SOURCE = 'rules/symbolic.rules'
SOURCE_SHA256 = 'a6a51ae7863a7637798664f439214feebcd542a5b103154001c4472c0219e28c'
DEPENDENCIES = ()
_ADD = Ops.ADD
_CONST = Ops.CONST
_DEFINE_REG = Ops.DEFINE_REG
_IDIV = Ops.IDIV
_MOD = Ops.MOD
_MUL = Ops.MUL
_NEG = Ops.NEG
_dt_index = dtypes.index
_DT0 = DTYPE_CLASSES['ints']
_OPS1 = frozenset({Ops.CONST, Ops.ADD, Ops.MUL, Ops.MOD})


# ======================================================================== symbolic_simple
_symbolic_simple_rules = (
    RuleInfo('add_zero', 'rules/symbolic.rules', 15, 'add_zero: ADD[x:ints, 0] if x.op is not Ops.DEFINE_REG -> x'),
    RuleInfo('sub_zero', 'rules/symbolic.rules', 16, 'sub_zero: SUB(x:ints, 0) -> x'),
    RuleInfo('sub_self', 'rules/symbolic.rules', 17, 'sub_self: SUB(x:ints, x) -> 0'),
    RuleInfo('neg_neg', 'rules/symbolic.rules', 18, 'neg_neg: NEG(NEG(x)) -> x'),
    RuleInfo('mul_one', 'rules/symbolic.rules', 21, 'mul_one: MUL[x, 1] if x.op is not Ops.DEFINE_REG -> x'),
    RuleInfo('mul_zero', 'rules/symbolic.rules', 22, 'mul_zero: MUL[x:ints, 0] if x.op is not Ops.DEFINE_REG -> 0'),
    RuleInfo('idiv_one', 'rules/symbolic.rules', 23, 'idiv_one: IDIV(x:ints, 1) -> x'),
    RuleInfo('mod_one', 'rules/symbolic.rules', 24, 'mod_one: MOD(x:ints, 1) -> 0'),
    RuleInfo('max_self', 'rules/symbolic.rules', 27, 'max_self: MAX(x, x) -> x'),
    RuleInfo('min_self', 'rules/symbolic.rules', 28, 'min_self: MIN(x, x) -> x'),
    RuleInfo('where_true', 'rules/symbolic.rules', 31, 'where_true: WHERE(True, a, b) -> a'),
    RuleInfo('where_false', 'rules/symbolic.rules', 32, 'where_false: WHERE(False, a, b) -> b'),
    RuleInfo('where_same', 'rules/symbolic.rules', 33, 'where_same: WHERE(_, a, a) -> a'),
    RuleInfo('fold_binary', 'rules/symbolic.rules', 38, 'fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)'),
    RuleInfo('fold_unary', 'rules/symbolic.rules', 39, 'fold_unary: NEG(a:CONST) as e -> fold_alu(e.op, a.dtype, a.arg)'),
    RuleInfo('fold_cast', 'rules/symbolic.rules', 40, 'fold_cast: CAST(a:CONST) as e -> cast_value(e.dtype, a.dtype, a.arg)'),
)
_symbolic_simple_st = match_stats('symbolic_simple', _symbolic_simple_rules)  # None unless counting

def _symbolic_simple_r13(n, ctx, a, b, e):
    # rule fold_binary at rules/symbolic.rules:38
    #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
    return _as_uop(n, fold_alu(e.op, a.dtype, a.arg, b.arg))

def _symbolic_simple_CAST(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is _CONST:
            # rule fold_cast at rules/symbolic.rules:40
            #   fold_cast: CAST(a:CONST) as e -> cast_value(e.dtype, a.dtype, a.arg)
            #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[15] += 1
            # a = n0, e = n
            _r = cast_value(n.dtype, n0.dtype, n0.arg)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _symbolic_simple_rules[15]
    return None

def _symbolic_simple_NEG(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        o0 = n0.op
        if o0 is _NEG:
            n0_0 = n0.src[0]
            # rule neg_neg at rules/symbolic.rules:18
            #   neg_neg: NEG(NEG(x)) -> x
            #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[3] += 1
            # x = n0_0
            return n0_0, _symbolic_simple_rules[3]
        elif o0 is _CONST:
            # rule fold_unary at rules/symbolic.rules:39
            #   fold_unary: NEG(a:CONST) as e -> fold_alu(e.op, a.dtype, a.arg)
            #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[14] += 1
            # a = n0, e = n
            _r = fold_alu(n.op, n0.dtype, n0.arg)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _symbolic_simple_rules[14]
    return None

def _symbolic_simple_ADD(n, ctx):
    try:
        n0, n1 = n.src
    except ValueError:
        return None
    # no rule here matches unless a source has one of these ops (a quick rejection)
    if n0.op is not _CONST and n1.op is not _CONST: return None
    if n1.op is _CONST:
        if n0.op is _CONST:
            if n1.arg == 0 and n0.dtype in _DT0:
                # rule add_zero at rules/symbolic.rules:15
                #   add_zero: ADD[x:ints, 0] if x.op is not Ops.DEFINE_REG -> x
                #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[0] += 1
                # x = n0
                if n0.op is not _DEFINE_REG:
                    return n0, _symbolic_simple_rules[0]
            if n0.arg == 0 and n1.dtype in _DT0:
                # rule add_zero at rules/symbolic.rules:15
                #   add_zero: ADD[x:ints, 0] if x.op is not Ops.DEFINE_REG -> x
                #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[0] += 1
                # x = n1
                if n1.op is not _DEFINE_REG:
                    return n1, _symbolic_simple_rules[0]
            # rule fold_binary at rules/symbolic.rules:38
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[13] += 1
            _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r, _symbolic_simple_rules[13]
        else:
            if n1.arg == 0 and n0.dtype in _DT0:
                # rule add_zero at rules/symbolic.rules:15
                #   add_zero: ADD[x:ints, 0] if x.op is not Ops.DEFINE_REG -> x
                #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[0] += 1
                # x = n0
                if n0.op is not _DEFINE_REG:
                    return n0, _symbolic_simple_rules[0]
    else:
        if n0.op is _CONST and n0.arg == 0 and n1.dtype in _DT0:
            # rule add_zero at rules/symbolic.rules:15
            #   add_zero: ADD[x:ints, 0] if x.op is not Ops.DEFINE_REG -> x
            #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[0] += 1
            # x = n1
            if n1.op is not _DEFINE_REG:
                return n1, _symbolic_simple_rules[0]
    return None

def _symbolic_simple_SUB(n, ctx):
    try:
        n0, n1 = n.src
    except ValueError:
        return None
    if n1.op is _CONST:
        if n0.dtype in _DT0:
            if n1.arg == 0:
                # rule sub_zero at rules/symbolic.rules:16
                #   sub_zero: SUB(x:ints, 0) -> x
                #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[1] += 1
                # x = n0
                return n0, _symbolic_simple_rules[1]
            if n1 is n0:
                # rule sub_self at rules/symbolic.rules:17
                #   sub_self: SUB(x:ints, x) -> 0
                #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[2] += 1
                # x = n0
                _r = n.const_like(0)
                if _r is not n: return _r, _symbolic_simple_rules[2]
        if n0.op is _CONST:
            # rule fold_binary at rules/symbolic.rules:38
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[13] += 1
            _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r, _symbolic_simple_rules[13]
    else:
        if n1 is n0 and n0.dtype in _DT0:
            # rule sub_self at rules/symbolic.rules:17
            #   sub_self: SUB(x:ints, x) -> 0
            #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[2] += 1
            # x = n0
            _r = n.const_like(0)
            if _r is not n: return _r, _symbolic_simple_rules[2]
    return None

def _symbolic_simple_MUL(n, ctx):
    try:
        n0, n1 = n.src
    except ValueError:
        return None
    # no rule here matches unless a source has one of these ops (a quick rejection)
    if n0.op is not _CONST and n1.op is not _CONST: return None
    if n1.op is _CONST:
        if n0.op is _CONST:
            if n1.arg == 1:
                # rule mul_one at rules/symbolic.rules:21
                #   mul_one: MUL[x, 1] if x.op is not Ops.DEFINE_REG -> x
                #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[4] += 1
                # x = n0
                if n0.op is not _DEFINE_REG:
                    return n0, _symbolic_simple_rules[4]
            if n0.arg == 1:
                # rule mul_one at rules/symbolic.rules:21
                #   mul_one: MUL[x, 1] if x.op is not Ops.DEFINE_REG -> x
                #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[4] += 1
                # x = n1
                if n1.op is not _DEFINE_REG:
                    return n1, _symbolic_simple_rules[4]
            if n1.arg == 0 and n0.dtype in _DT0:
                # rule mul_zero at rules/symbolic.rules:22
                #   mul_zero: MUL[x:ints, 0] if x.op is not Ops.DEFINE_REG -> 0
                #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[5] += 1
                # x = n0
                if n0.op is not _DEFINE_REG:
                    _r = n.const_like(0)
                    if _r is not n: return _r, _symbolic_simple_rules[5]
            if n0.arg == 0 and n1.dtype in _DT0:
                # rule mul_zero at rules/symbolic.rules:22
                #   mul_zero: MUL[x:ints, 0] if x.op is not Ops.DEFINE_REG -> 0
                #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[5] += 1
                # x = n1
                if n1.op is not _DEFINE_REG:
                    _r = n.const_like(0)
                    if _r is not n: return _r, _symbolic_simple_rules[5]
            # rule fold_binary at rules/symbolic.rules:38
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[13] += 1
            _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r, _symbolic_simple_rules[13]
        else:
            if n1.arg == 1:
                # rule mul_one at rules/symbolic.rules:21
                #   mul_one: MUL[x, 1] if x.op is not Ops.DEFINE_REG -> x
                #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[4] += 1
                # x = n0
                if n0.op is not _DEFINE_REG:
                    return n0, _symbolic_simple_rules[4]
            if n1.arg == 0 and n0.dtype in _DT0:
                # rule mul_zero at rules/symbolic.rules:22
                #   mul_zero: MUL[x:ints, 0] if x.op is not Ops.DEFINE_REG -> 0
                #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[5] += 1
                # x = n0
                if n0.op is not _DEFINE_REG:
                    _r = n.const_like(0)
                    if _r is not n: return _r, _symbolic_simple_rules[5]
    else:
        if n0.op is _CONST:
            if n0.arg == 1:
                # rule mul_one at rules/symbolic.rules:21
                #   mul_one: MUL[x, 1] if x.op is not Ops.DEFINE_REG -> x
                #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[4] += 1
                # x = n1
                if n1.op is not _DEFINE_REG:
                    return n1, _symbolic_simple_rules[4]
            if n0.arg == 0 and n1.dtype in _DT0:
                # rule mul_zero at rules/symbolic.rules:22
                #   mul_zero: MUL[x:ints, 0] if x.op is not Ops.DEFINE_REG -> 0
                #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[5] += 1
                # x = n1
                if n1.op is not _DEFINE_REG:
                    _r = n.const_like(0)
                    if _r is not n: return _r, _symbolic_simple_rules[5]
    return None

def _symbolic_simple_FDIV(n, ctx):
    try:
        n0, n1 = n.src
    except ValueError:
        return None
    if n0.op is _CONST and n1.op is _CONST:
        # rule fold_binary at rules/symbolic.rules:38
        #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
        #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[13] += 1
        _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
        if _r is not None and _r is not n: return _r, _symbolic_simple_rules[13]
    return None

def _symbolic_simple_IDIV(n, ctx):
    try:
        n0, n1 = n.src
    except ValueError:
        return None
    # no rule here matches unless a source has one of these ops (a quick rejection)
    if n1.op is not _CONST: return None
    if n1.arg == 1 and n0.dtype in _DT0:
        # rule idiv_one at rules/symbolic.rules:23
        #   idiv_one: IDIV(x:ints, 1) -> x
        #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[6] += 1
        # x = n0
        return n0, _symbolic_simple_rules[6]
    if n0.op is _CONST:
        # rule fold_binary at rules/symbolic.rules:38
        #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
        #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[13] += 1
        _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
        if _r is not None and _r is not n: return _r, _symbolic_simple_rules[13]
    return None

def _symbolic_simple_MOD(n, ctx):
    try:
        n0, n1 = n.src
    except ValueError:
        return None
    # no rule here matches unless a source has one of these ops (a quick rejection)
    if n1.op is not _CONST: return None
    if n1.arg == 1 and n0.dtype in _DT0:
        # rule mod_one at rules/symbolic.rules:24
        #   mod_one: MOD(x:ints, 1) -> 0
        #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[7] += 1
        # x = n0
        _r = n.const_like(0)
        if _r is not n: return _r, _symbolic_simple_rules[7]
    if n0.op is _CONST:
        # rule fold_binary at rules/symbolic.rules:38
        #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
        #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[13] += 1
        _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
        if _r is not None and _r is not n: return _r, _symbolic_simple_rules[13]
    return None

def _symbolic_simple_MAX(n, ctx):
    try:
        n0, n1 = n.src
    except ValueError:
        return None
    if n1 is n0:
        # rule max_self at rules/symbolic.rules:27
        #   max_self: MAX(x, x) -> x
        #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[8] += 1
        # x = n0
        return n0, _symbolic_simple_rules[8]
    if n0.op is _CONST and n1.op is _CONST:
        # rule fold_binary at rules/symbolic.rules:38
        #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
        #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[13] += 1
        _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
        if _r is not None and _r is not n: return _r, _symbolic_simple_rules[13]
    return None

def _symbolic_simple_MIN(n, ctx):
    try:
        n0, n1 = n.src
    except ValueError:
        return None
    if n1 is n0:
        # rule min_self at rules/symbolic.rules:28
        #   min_self: MIN(x, x) -> x
        #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[9] += 1
        # x = n0
        return n0, _symbolic_simple_rules[9]
    if n0.op is _CONST and n1.op is _CONST:
        # rule fold_binary at rules/symbolic.rules:38
        #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
        #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[13] += 1
        _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
        if _r is not None and _r is not n: return _r, _symbolic_simple_rules[13]
    return None

def _symbolic_simple_POW(n, ctx):
    try:
        n0, n1 = n.src
    except ValueError:
        return None
    if n0.op is _CONST and n1.op is _CONST:
        # rule fold_binary at rules/symbolic.rules:38
        #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
        #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[13] += 1
        _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
        if _r is not None and _r is not n: return _r, _symbolic_simple_rules[13]
    return None

def _symbolic_simple_CMPLT(n, ctx):
    try:
        n0, n1 = n.src
    except ValueError:
        return None
    if n0.op is _CONST and n1.op is _CONST:
        # rule fold_binary at rules/symbolic.rules:38
        #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
        #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[13] += 1
        _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
        if _r is not None and _r is not n: return _r, _symbolic_simple_rules[13]
    return None

def _symbolic_simple_CMPNE(n, ctx):
    try:
        n0, n1 = n.src
    except ValueError:
        return None
    if n0.op is _CONST and n1.op is _CONST:
        # rule fold_binary at rules/symbolic.rules:38
        #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
        #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[13] += 1
        _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
        if _r is not None and _r is not n: return _r, _symbolic_simple_rules[13]
    return None

def _symbolic_simple_CMPEQ(n, ctx):
    try:
        n0, n1 = n.src
    except ValueError:
        return None
    if n0.op is _CONST and n1.op is _CONST:
        # rule fold_binary at rules/symbolic.rules:38
        #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
        #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[13] += 1
        _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
        if _r is not None and _r is not n: return _r, _symbolic_simple_rules[13]
    return None

def _symbolic_simple_AND(n, ctx):
    try:
        n0, n1 = n.src
    except ValueError:
        return None
    if n0.op is _CONST and n1.op is _CONST:
        # rule fold_binary at rules/symbolic.rules:38
        #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
        #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[13] += 1
        _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
        if _r is not None and _r is not n: return _r, _symbolic_simple_rules[13]
    return None

def _symbolic_simple_OR(n, ctx):
    try:
        n0, n1 = n.src
    except ValueError:
        return None
    if n0.op is _CONST and n1.op is _CONST:
        # rule fold_binary at rules/symbolic.rules:38
        #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
        #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[13] += 1
        _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
        if _r is not None and _r is not n: return _r, _symbolic_simple_rules[13]
    return None

def _symbolic_simple_XOR(n, ctx):
    try:
        n0, n1 = n.src
    except ValueError:
        return None
    if n0.op is _CONST and n1.op is _CONST:
        # rule fold_binary at rules/symbolic.rules:38
        #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
        #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[13] += 1
        _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
        if _r is not None and _r is not n: return _r, _symbolic_simple_rules[13]
    return None

def _symbolic_simple_SHL(n, ctx):
    try:
        n0, n1 = n.src
    except ValueError:
        return None
    if n0.op is _CONST and n1.op is _CONST:
        # rule fold_binary at rules/symbolic.rules:38
        #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
        #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[13] += 1
        _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
        if _r is not None and _r is not n: return _r, _symbolic_simple_rules[13]
    return None

def _symbolic_simple_SHR(n, ctx):
    try:
        n0, n1 = n.src
    except ValueError:
        return None
    if n0.op is _CONST and n1.op is _CONST:
        # rule fold_binary at rules/symbolic.rules:38
        #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
        #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[13] += 1
        _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
        if _r is not None and _r is not n: return _r, _symbolic_simple_rules[13]
    return None

def _symbolic_simple_WHERE(n, ctx):
    try:
        n0, n1, n2 = n.src
    except ValueError:
        return None
    if n0.op is _CONST:
        if n0.arg == True:
            # rule where_true at rules/symbolic.rules:31
            #   where_true: WHERE(True, a, b) -> a
            #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[10] += 1
            # a = n1, b = n2
            return n1, _symbolic_simple_rules[10]
        if n0.arg == False:
            # rule where_false at rules/symbolic.rules:32
            #   where_false: WHERE(False, a, b) -> b
            #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[11] += 1
            # a = n1, b = n2
            return n2, _symbolic_simple_rules[11]
        if n2 is n1:
            # rule where_same at rules/symbolic.rules:33
            #   where_same: WHERE(_, a, a) -> a
            #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[12] += 1
            # a = n1
            return n1, _symbolic_simple_rules[12]
    else:
        if n2 is n1:
            # rule where_same at rules/symbolic.rules:33
            #   where_same: WHERE(_, a, a) -> a
            #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[12] += 1
            # a = n1
            return n1, _symbolic_simple_rules[12]
    return None


_symbolic_simple_part = RuleMatcher('symbolic_simple', _symbolic_simple_rules, {
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
}, home=(globals(), '_symbolic_simple_st'))


# ======================================================================== sym
_sym_rules = (
    RuleInfo('add_consts', 'rules/symbolic.rules', 46, 'add_consts: ADD[ADD[x, c1:CONST], c2:CONST]:ints -> x + fold_alu(Ops.ADD, x.dtype, c1.arg, c2.arg)'),
    RuleInfo('mul_consts', 'rules/symbolic.rules', 47, 'mul_consts: MUL[MUL[x, c1:CONST], c2:CONST]:ints -> x * fold_alu(Ops.MUL, x.dtype, c1.arg, c2.arg)'),
    RuleInfo('sub_const', 'rules/symbolic.rules', 49, 'sub_const: SUB(x:index, c:CONST) -> x + (-c.arg)'),
    RuleInfo('mul_idiv', 'rules/symbolic.rules', 53, 'mul_idiv: IDIV(MUL[x, c:CONST], c):index if c.arg != 0 -> x'),
    RuleInfo('mul_mod', 'rules/symbolic.rules', 54, 'mul_mod: MOD(MUL[x, c:CONST], c):index if c.arg != 0 -> 0'),
    RuleInfo('divmod_recombine', 'rules/symbolic.rules', 56, 'divmod_recombine: ADD[MUL[IDIV(x:ints, c:CONST), c], MOD(x, c)] if c.arg > 0 -> x'),
    RuleInfo('divmod_recombine_sum', 'rules/symbolic.rules', 59, 'divmod_recombine_sum: ADD[MUL[IDIV(x:index, c:CONST), c], MOD(y, c)] if c.arg > 0 and congruent(x, y, c.arg) -> x'),
    RuleInfo('divmod_scaled', 'rules/symbolic.rules', 64, 'divmod_scaled: ADD[MUL[IDIV(y:index, b:CONST), m:CONST], MUL[MOD(y, b), k:CONST]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k'),
    RuleInfo('divmod_scaled_in', 'rules/symbolic.rules', 65, 'divmod_scaled_in: ADD[MUL[IDIV(y:index, b:CONST), m:CONST], ADD[MUL[MOD(y, b), k:CONST], z]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k + z'),
    RuleInfo('divmod_scaled_out', 'rules/symbolic.rules', 66, 'divmod_scaled_out: ADD[MUL[MOD(y:index, b:CONST), k:CONST], ADD[MUL[IDIV(y, b), m:CONST], z]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k + z'),
    RuleInfo('divmod_offset_in', 'rules/symbolic.rules', 67, 'divmod_offset_in: ADD[MUL[IDIV(y:index, b:CONST), b], ADD[MOD(y, b), z]] if b.arg > 0 -> y + z'),
    RuleInfo('divmod_offset_out', 'rules/symbolic.rules', 68, 'divmod_offset_out: ADD[MOD(y:index, b:CONST), ADD[MUL[IDIV(y, b), b], z]] if b.arg > 0 -> y + z'),
    RuleInfo('mod_mod', 'rules/symbolic.rules', 70, 'mod_mod: MOD(MOD(x, c:CONST) as m, c) if c.arg != 0 -> m'),
    RuleInfo('split_idiv', 'rules/symbolic.rules', 74, 'split_idiv: IDIV(ADD[MUL[x, c:CONST], d], c):index if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg -> x'),
    RuleInfo('split_mod', 'rules/symbolic.rules', 75, 'split_mod: MOD(ADD[MUL[x, c:CONST], d], c):index if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg -> d'),
    RuleInfo('mod_coeff', 'rules/symbolic.rules', 81, 'mod_coeff: MOD(ADD[MUL[x, a:CONST], d], c:CONST):index if 0 < c.arg < a.arg and x.vmin >= 0 and d.vmin >= 0 -> (x * (a.arg % c.arg) + d) % c'),
    RuleInfo('divmod_fold', 'rules/symbolic.rules', 86, 'divmod_fold: {IDIV, MOD}(x:index, c:CONST) as e if c.arg > 0 -> fold_divmod(e)'),
    RuleInfo('mod_in_range', 'rules/symbolic.rules', 90, 'mod_in_range: MOD(x:index, c:CONST) if 0 <= x.vmin and x.vmax < c.arg -> x'),
    RuleInfo('idiv_in_range', 'rules/symbolic.rules', 91, 'idiv_in_range: IDIV(x:index, c:CONST) if 0 <= x.vmin and x.vmax < c.arg -> 0'),
    RuleInfo('cmp_bounds', 'rules/symbolic.rules', 93, 'cmp_bounds: Comparison(a:index, b) as e if e.vmin == e.vmax -> e.vmin'),
)
_sym_st = match_stats('sym', _sym_rules)  # None unless counting

def _sym_r8(n, ctx, b, k, m, y, z):
    # rule divmod_scaled_in at rules/symbolic.rules:65
    #   divmod_scaled_in: ADD[MUL[IDIV(y:index, b:CONST), m:CONST], ADD[MUL[MOD(y, b), k:CONST], z]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k + z
    if not (b.arg > 0 and m.arg == b.arg * k.arg): return None
    return _as_uop(n, y * k + z)

def _sym_r10(n, ctx, b, y, z):
    # rule divmod_offset_in at rules/symbolic.rules:67
    #   divmod_offset_in: ADD[MUL[IDIV(y:index, b:CONST), b], ADD[MOD(y, b), z]] if b.arg > 0 -> y + z
    if not (b.arg > 0): return None
    return _as_uop(n, y + z)

def _sym_r9(n, ctx, b, k, m, y, z):
    # rule divmod_scaled_out at rules/symbolic.rules:66
    #   divmod_scaled_out: ADD[MUL[MOD(y:index, b:CONST), k:CONST], ADD[MUL[IDIV(y, b), m:CONST], z]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k + z
    if not (b.arg > 0 and m.arg == b.arg * k.arg): return None
    return _as_uop(n, y * k + z)

def _sym_r7(n, ctx, b, k, m, y):
    # rule divmod_scaled at rules/symbolic.rules:64
    #   divmod_scaled: ADD[MUL[IDIV(y:index, b:CONST), m:CONST], MUL[MOD(y, b), k:CONST]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k
    if not (b.arg > 0 and m.arg == b.arg * k.arg): return None
    return _as_uop(n, y * k)

def _sym_ADD(n, ctx):
    try:
        n0, n1 = n.src
    except ValueError:
        return None
    # no rule here matches unless a source has one of these ops (a quick rejection)
    if n0.op not in _OPS1 and n1.op is not _CONST: return None
    if n1.op is _CONST:
        if n0.op is _CONST:
            if n1.arg == 0 and n0.dtype in _DT0:
                # rule add_zero at rules/symbolic.rules:15
                #   add_zero: ADD[x:ints, 0] if x.op is not Ops.DEFINE_REG -> x
                #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[0] += 1
                # x = n0
                if n0.op is not _DEFINE_REG:
                    return n0, _symbolic_simple_rules[0]
            if n0.arg == 0 and n1.dtype in _DT0:
                # rule add_zero at rules/symbolic.rules:15
                #   add_zero: ADD[x:ints, 0] if x.op is not Ops.DEFINE_REG -> x
                #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[0] += 1
                # x = n1
                if n1.op is not _DEFINE_REG:
                    return n1, _symbolic_simple_rules[0]
            # rule fold_binary at rules/symbolic.rules:38
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[13] += 1
            _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r, _symbolic_simple_rules[13]
        else:
            if n1.arg == 0 and n0.dtype in _DT0:
                # rule add_zero at rules/symbolic.rules:15
                #   add_zero: ADD[x:ints, 0] if x.op is not Ops.DEFINE_REG -> x
                #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[0] += 1
                # x = n0
                if n0.op is not _DEFINE_REG:
                    return n0, _symbolic_simple_rules[0]
    else:
        if n0.op is _CONST and n0.arg == 0 and n1.dtype in _DT0:
            # rule add_zero at rules/symbolic.rules:15
            #   add_zero: ADD[x:ints, 0] if x.op is not Ops.DEFINE_REG -> x
            #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[0] += 1
            # x = n1
            if n1.op is not _DEFINE_REG:
                return n1, _symbolic_simple_rules[0]
    if n0.op is _MUL:
        if n1.op is _ADD:
            n0_0, n0_1 = n0.src
            n1_0, n1_1 = n1.src
            o0_0 = n0_0.op
            if o0_0 is _IDIV:
                n0_0_0, n0_0_1 = n0_0.src
                if n0_1.op is _CONST:
                    if n1_0.op is _MUL:
                        n1_0_0, n1_0_1 = n1_0.src
                        if n0_0_1.op is _CONST and n0_0_0.dtype is _dt_index:
                            o1_0_0 = n1_0_0.op
                            if o1_0_0 is _MOD:
                                n1_0_0_0, n1_0_0_1 = n1_0_0.src
                                if n1_0_0_0 is n0_0_0 and n1_0_0_1 is n0_0_1 and n1_0_1.op is _CONST:
                                    # rule divmod_scaled_in at rules/symbolic.rules:65
                                    #   divmod_scaled_in: ADD[MUL[IDIV(y:index, b:CONST), m:CONST], ADD[MUL[MOD(y, b), k:CONST], z]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k + z
                                    #+ if _sym_st: _sym_st.attempts[8] += 1
                                    _r = _sym_r8(n, ctx, n0_0_1, n1_0_1, n0_1, n0_0_0, n1_1)
                                    if _r is not None and _r is not n: return _r, _sym_rules[8]
                            elif o1_0_0 is _CONST and n1_0_1.op is _MOD:
                                n1_0_1_0, n1_0_1_1 = n1_0_1.src
                                if n1_0_1_0 is n0_0_0 and n1_0_1_1 is n0_0_1:
                                    # rule divmod_scaled_in at rules/symbolic.rules:65
                                    #   divmod_scaled_in: ADD[MUL[IDIV(y:index, b:CONST), m:CONST], ADD[MUL[MOD(y, b), k:CONST], z]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k + z
                                    #+ if _sym_st: _sym_st.attempts[8] += 1
                                    _r = _sym_r8(n, ctx, n0_0_1, n1_0_0, n0_1, n0_0_0, n1_1)
                                    if _r is not None and _r is not n: return _r, _sym_rules[8]
                    if n1_1.op is _MUL:
                        n1_1_0, n1_1_1 = n1_1.src
                        if n0_0_1.op is _CONST and n0_0_0.dtype is _dt_index:
                            o1_1_0 = n1_1_0.op
                            if o1_1_0 is _MOD:
                                n1_1_0_0, n1_1_0_1 = n1_1_0.src
                                if n1_1_0_0 is n0_0_0 and n1_1_0_1 is n0_0_1 and n1_1_1.op is _CONST:
                                    # rule divmod_scaled_in at rules/symbolic.rules:65
                                    #   divmod_scaled_in: ADD[MUL[IDIV(y:index, b:CONST), m:CONST], ADD[MUL[MOD(y, b), k:CONST], z]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k + z
                                    #+ if _sym_st: _sym_st.attempts[8] += 1
                                    _r = _sym_r8(n, ctx, n0_0_1, n1_1_1, n0_1, n0_0_0, n1_0)
                                    if _r is not None and _r is not n: return _r, _sym_rules[8]
                            elif o1_1_0 is _CONST and n1_1_1.op is _MOD:
                                n1_1_1_0, n1_1_1_1 = n1_1_1.src
                                if n1_1_1_0 is n0_0_0 and n1_1_1_1 is n0_0_1:
                                    # rule divmod_scaled_in at rules/symbolic.rules:65
                                    #   divmod_scaled_in: ADD[MUL[IDIV(y:index, b:CONST), m:CONST], ADD[MUL[MOD(y, b), k:CONST], z]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k + z
                                    #+ if _sym_st: _sym_st.attempts[8] += 1
                                    _r = _sym_r8(n, ctx, n0_0_1, n1_1_0, n0_1, n0_0_0, n1_0)
                                    if _r is not None and _r is not n: return _r, _sym_rules[8]
                    if n1_0.op is _MOD:
                        n1_0_0, n1_0_1 = n1_0.src
                        if n0_1 is n0_0_1 and n1_0_0 is n0_0_0 and n1_0_1 is n0_0_1 and n0_0_0.dtype is _dt_index:
                            # rule divmod_offset_in at rules/symbolic.rules:67
                            #   divmod_offset_in: ADD[MUL[IDIV(y:index, b:CONST), b], ADD[MOD(y, b), z]] if b.arg > 0 -> y + z
                            #+ if _sym_st: _sym_st.attempts[10] += 1
                            _r = _sym_r10(n, ctx, n0_0_1, n0_0_0, n1_1)
                            if _r is not None and _r is not n: return _r, _sym_rules[10]
                    if n1_1.op is _MOD:
                        n1_1_0, n1_1_1 = n1_1.src
                        if n0_1 is n0_0_1 and n1_1_0 is n0_0_0 and n1_1_1 is n0_0_1 and n0_0_0.dtype is _dt_index:
                            # rule divmod_offset_in at rules/symbolic.rules:67
                            #   divmod_offset_in: ADD[MUL[IDIV(y:index, b:CONST), b], ADD[MOD(y, b), z]] if b.arg > 0 -> y + z
                            #+ if _sym_st: _sym_st.attempts[10] += 1
                            _r = _sym_r10(n, ctx, n0_0_1, n0_0_0, n1_0)
                            if _r is not None and _r is not n: return _r, _sym_rules[10]
            elif o0_0 is _CONST:
                o0_1 = n0_1.op
                if o0_1 is _IDIV:
                    n0_1_0, n0_1_1 = n0_1.src
                    if n1_0.op is _MUL:
                        n1_0_0, n1_0_1 = n1_0.src
                        if n0_1_1.op is _CONST and n0_1_0.dtype is _dt_index:
                            o1_0_0 = n1_0_0.op
                            if o1_0_0 is _MOD:
                                n1_0_0_0, n1_0_0_1 = n1_0_0.src
                                if n1_0_0_0 is n0_1_0 and n1_0_0_1 is n0_1_1 and n1_0_1.op is _CONST:
                                    # rule divmod_scaled_in at rules/symbolic.rules:65
                                    #   divmod_scaled_in: ADD[MUL[IDIV(y:index, b:CONST), m:CONST], ADD[MUL[MOD(y, b), k:CONST], z]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k + z
                                    #+ if _sym_st: _sym_st.attempts[8] += 1
                                    _r = _sym_r8(n, ctx, n0_1_1, n1_0_1, n0_0, n0_1_0, n1_1)
                                    if _r is not None and _r is not n: return _r, _sym_rules[8]
                            elif o1_0_0 is _CONST and n1_0_1.op is _MOD:
                                n1_0_1_0, n1_0_1_1 = n1_0_1.src
                                if n1_0_1_0 is n0_1_0 and n1_0_1_1 is n0_1_1:
                                    # rule divmod_scaled_in at rules/symbolic.rules:65
                                    #   divmod_scaled_in: ADD[MUL[IDIV(y:index, b:CONST), m:CONST], ADD[MUL[MOD(y, b), k:CONST], z]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k + z
                                    #+ if _sym_st: _sym_st.attempts[8] += 1
                                    _r = _sym_r8(n, ctx, n0_1_1, n1_0_0, n0_0, n0_1_0, n1_1)
                                    if _r is not None and _r is not n: return _r, _sym_rules[8]
                    if n1_1.op is _MUL:
                        n1_1_0, n1_1_1 = n1_1.src
                        if n0_1_1.op is _CONST and n0_1_0.dtype is _dt_index:
                            o1_1_0 = n1_1_0.op
                            if o1_1_0 is _MOD:
                                n1_1_0_0, n1_1_0_1 = n1_1_0.src
                                if n1_1_0_0 is n0_1_0 and n1_1_0_1 is n0_1_1 and n1_1_1.op is _CONST:
                                    # rule divmod_scaled_in at rules/symbolic.rules:65
                                    #   divmod_scaled_in: ADD[MUL[IDIV(y:index, b:CONST), m:CONST], ADD[MUL[MOD(y, b), k:CONST], z]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k + z
                                    #+ if _sym_st: _sym_st.attempts[8] += 1
                                    _r = _sym_r8(n, ctx, n0_1_1, n1_1_1, n0_0, n0_1_0, n1_0)
                                    if _r is not None and _r is not n: return _r, _sym_rules[8]
                            elif o1_1_0 is _CONST and n1_1_1.op is _MOD:
                                n1_1_1_0, n1_1_1_1 = n1_1_1.src
                                if n1_1_1_0 is n0_1_0 and n1_1_1_1 is n0_1_1:
                                    # rule divmod_scaled_in at rules/symbolic.rules:65
                                    #   divmod_scaled_in: ADD[MUL[IDIV(y:index, b:CONST), m:CONST], ADD[MUL[MOD(y, b), k:CONST], z]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k + z
                                    #+ if _sym_st: _sym_st.attempts[8] += 1
                                    _r = _sym_r8(n, ctx, n0_1_1, n1_1_0, n0_0, n0_1_0, n1_0)
                                    if _r is not None and _r is not n: return _r, _sym_rules[8]
                    if n1_0.op is _MOD:
                        n1_0_0, n1_0_1 = n1_0.src
                        if n0_0 is n0_1_1 and n1_0_0 is n0_1_0 and n1_0_1 is n0_1_1 and n0_1_0.dtype is _dt_index:
                            # rule divmod_offset_in at rules/symbolic.rules:67
                            #   divmod_offset_in: ADD[MUL[IDIV(y:index, b:CONST), b], ADD[MOD(y, b), z]] if b.arg > 0 -> y + z
                            #+ if _sym_st: _sym_st.attempts[10] += 1
                            _r = _sym_r10(n, ctx, n0_1_1, n0_1_0, n1_1)
                            if _r is not None and _r is not n: return _r, _sym_rules[10]
                    if n1_1.op is _MOD:
                        n1_1_0, n1_1_1 = n1_1.src
                        if n0_0 is n0_1_1 and n1_1_0 is n0_1_0 and n1_1_1 is n0_1_1 and n0_1_0.dtype is _dt_index:
                            # rule divmod_offset_in at rules/symbolic.rules:67
                            #   divmod_offset_in: ADD[MUL[IDIV(y:index, b:CONST), b], ADD[MOD(y, b), z]] if b.arg > 0 -> y + z
                            #+ if _sym_st: _sym_st.attempts[10] += 1
                            _r = _sym_r10(n, ctx, n0_1_1, n0_1_0, n1_0)
                            if _r is not None and _r is not n: return _r, _sym_rules[10]
                elif o0_1 is _MOD:
                    n0_1_0, n0_1_1 = n0_1.src
                    if n1_0.op is _MUL:
                        n1_0_0, n1_0_1 = n1_0.src
                        if n0_1_1.op is _CONST and n0_1_0.dtype is _dt_index:
                            o1_0_0 = n1_0_0.op
                            if o1_0_0 is _IDIV:
                                n1_0_0_0, n1_0_0_1 = n1_0_0.src
                                if n1_0_0_0 is n0_1_0 and n1_0_0_1 is n0_1_1 and n1_0_1.op is _CONST:
                                    # rule divmod_scaled_out at rules/symbolic.rules:66
                                    #   divmod_scaled_out: ADD[MUL[MOD(y:index, b:CONST), k:CONST], ADD[MUL[IDIV(y, b), m:CONST], z]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k + z
                                    #+ if _sym_st: _sym_st.attempts[9] += 1
                                    _r = _sym_r9(n, ctx, n0_1_1, n0_0, n1_0_1, n0_1_0, n1_1)
                                    if _r is not None and _r is not n: return _r, _sym_rules[9]
                            elif o1_0_0 is _CONST and n1_0_1.op is _IDIV:
                                n1_0_1_0, n1_0_1_1 = n1_0_1.src
                                if n1_0_1_0 is n0_1_0 and n1_0_1_1 is n0_1_1:
                                    # rule divmod_scaled_out at rules/symbolic.rules:66
                                    #   divmod_scaled_out: ADD[MUL[MOD(y:index, b:CONST), k:CONST], ADD[MUL[IDIV(y, b), m:CONST], z]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k + z
                                    #+ if _sym_st: _sym_st.attempts[9] += 1
                                    _r = _sym_r9(n, ctx, n0_1_1, n0_0, n1_0_0, n0_1_0, n1_1)
                                    if _r is not None and _r is not n: return _r, _sym_rules[9]
                    if n1_1.op is _MUL:
                        n1_1_0, n1_1_1 = n1_1.src
                        if n0_1_1.op is _CONST and n0_1_0.dtype is _dt_index:
                            o1_1_0 = n1_1_0.op
                            if o1_1_0 is _IDIV:
                                n1_1_0_0, n1_1_0_1 = n1_1_0.src
                                if n1_1_0_0 is n0_1_0 and n1_1_0_1 is n0_1_1 and n1_1_1.op is _CONST:
                                    # rule divmod_scaled_out at rules/symbolic.rules:66
                                    #   divmod_scaled_out: ADD[MUL[MOD(y:index, b:CONST), k:CONST], ADD[MUL[IDIV(y, b), m:CONST], z]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k + z
                                    #+ if _sym_st: _sym_st.attempts[9] += 1
                                    _r = _sym_r9(n, ctx, n0_1_1, n0_0, n1_1_1, n0_1_0, n1_0)
                                    if _r is not None and _r is not n: return _r, _sym_rules[9]
                            elif o1_1_0 is _CONST and n1_1_1.op is _IDIV:
                                n1_1_1_0, n1_1_1_1 = n1_1_1.src
                                if n1_1_1_0 is n0_1_0 and n1_1_1_1 is n0_1_1:
                                    # rule divmod_scaled_out at rules/symbolic.rules:66
                                    #   divmod_scaled_out: ADD[MUL[MOD(y:index, b:CONST), k:CONST], ADD[MUL[IDIV(y, b), m:CONST], z]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k + z
                                    #+ if _sym_st: _sym_st.attempts[9] += 1
                                    _r = _sym_r9(n, ctx, n0_1_1, n0_0, n1_1_0, n0_1_0, n1_0)
                                    if _r is not None and _r is not n: return _r, _sym_rules[9]
            elif o0_0 is _MOD:
                n0_0_0, n0_0_1 = n0_0.src
                if n0_1.op is _CONST:
                    if n1_0.op is _MUL:
                        n1_0_0, n1_0_1 = n1_0.src
                        if n0_0_1.op is _CONST and n0_0_0.dtype is _dt_index:
                            o1_0_0 = n1_0_0.op
                            if o1_0_0 is _IDIV:
                                n1_0_0_0, n1_0_0_1 = n1_0_0.src
                                if n1_0_0_0 is n0_0_0 and n1_0_0_1 is n0_0_1 and n1_0_1.op is _CONST:
                                    # rule divmod_scaled_out at rules/symbolic.rules:66
                                    #   divmod_scaled_out: ADD[MUL[MOD(y:index, b:CONST), k:CONST], ADD[MUL[IDIV(y, b), m:CONST], z]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k + z
                                    #+ if _sym_st: _sym_st.attempts[9] += 1
                                    _r = _sym_r9(n, ctx, n0_0_1, n0_1, n1_0_1, n0_0_0, n1_1)
                                    if _r is not None and _r is not n: return _r, _sym_rules[9]
                            elif o1_0_0 is _CONST and n1_0_1.op is _IDIV:
                                n1_0_1_0, n1_0_1_1 = n1_0_1.src
                                if n1_0_1_0 is n0_0_0 and n1_0_1_1 is n0_0_1:
                                    # rule divmod_scaled_out at rules/symbolic.rules:66
                                    #   divmod_scaled_out: ADD[MUL[MOD(y:index, b:CONST), k:CONST], ADD[MUL[IDIV(y, b), m:CONST], z]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k + z
                                    #+ if _sym_st: _sym_st.attempts[9] += 1
                                    _r = _sym_r9(n, ctx, n0_0_1, n0_1, n1_0_0, n0_0_0, n1_1)
                                    if _r is not None and _r is not n: return _r, _sym_rules[9]
                    if n1_1.op is _MUL:
                        n1_1_0, n1_1_1 = n1_1.src
                        if n0_0_1.op is _CONST and n0_0_0.dtype is _dt_index:
                            o1_1_0 = n1_1_0.op
                            if o1_1_0 is _IDIV:
                                n1_1_0_0, n1_1_0_1 = n1_1_0.src
                                if n1_1_0_0 is n0_0_0 and n1_1_0_1 is n0_0_1 and n1_1_1.op is _CONST:
                                    # rule divmod_scaled_out at rules/symbolic.rules:66
                                    #   divmod_scaled_out: ADD[MUL[MOD(y:index, b:CONST), k:CONST], ADD[MUL[IDIV(y, b), m:CONST], z]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k + z
                                    #+ if _sym_st: _sym_st.attempts[9] += 1
                                    _r = _sym_r9(n, ctx, n0_0_1, n0_1, n1_1_1, n0_0_0, n1_0)
                                    if _r is not None and _r is not n: return _r, _sym_rules[9]
                            elif o1_1_0 is _CONST and n1_1_1.op is _IDIV:
                                n1_1_1_0, n1_1_1_1 = n1_1_1.src
                                if n1_1_1_0 is n0_0_0 and n1_1_1_1 is n0_0_1:
                                    # rule divmod_scaled_out at rules/symbolic.rules:66
                                    #   divmod_scaled_out: ADD[MUL[MOD(y:index, b:CONST), k:CONST], ADD[MUL[IDIV(y, b), m:CONST], z]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k + z
                                    #+ if _sym_st: _sym_st.attempts[9] += 1
                                    _r = _sym_r9(n, ctx, n0_0_1, n0_1, n1_1_0, n0_0_0, n1_0)
                                    if _r is not None and _r is not n: return _r, _sym_rules[9]
        else:
            n0_0, n0_1 = n0.src
            o1 = n1.op
            if o1 is _MOD:
                n1_0, n1_1 = n1.src
                o0_0 = n0_0.op
                if o0_0 is _IDIV:
                    n0_0_0, n0_0_1 = n0_0.src
                    if n0_1.op is _CONST:
                        if n1_0 is n0_0_0 and n0_1 is n0_0_1 and n1_1 is n0_0_1 and n1_0.dtype in _DT0:
                            # rule divmod_recombine at rules/symbolic.rules:56
                            #   divmod_recombine: ADD[MUL[IDIV(x:ints, c:CONST), c], MOD(x, c)] if c.arg > 0 -> x
                            #+ if _sym_st: _sym_st.attempts[5] += 1
                            # c = n0_0_1, x = n0_0_0
                            if n0_0_1.arg > 0:
                                return n0_0_0, _sym_rules[5]
                        if n0_1 is n0_0_1 and n1_1 is n0_0_1 and n0_0_0.dtype is _dt_index:
                            # rule divmod_recombine_sum at rules/symbolic.rules:59
                            #   divmod_recombine_sum: ADD[MUL[IDIV(x:index, c:CONST), c], MOD(y, c)] if c.arg > 0 and congruent(x, y, c.arg) -> x
                            #+ if _sym_st: _sym_st.attempts[6] += 1
                            # c = n0_0_1, x = n0_0_0, y = n1_0
                            if n0_0_1.arg > 0 and congruent(n0_0_0, n1_0, n0_0_1.arg):
                                return n0_0_0, _sym_rules[6]
                elif o0_0 is _CONST and n0_1.op is _IDIV:
                    n0_1_0, n0_1_1 = n0_1.src
                    if n1_0 is n0_1_0 and n0_0 is n0_1_1 and n1_1 is n0_1_1 and n1_0.dtype in _DT0:
                        # rule divmod_recombine at rules/symbolic.rules:56
                        #   divmod_recombine: ADD[MUL[IDIV(x:ints, c:CONST), c], MOD(x, c)] if c.arg > 0 -> x
                        #+ if _sym_st: _sym_st.attempts[5] += 1
                        # c = n0_1_1, x = n0_1_0
                        if n0_1_1.arg > 0:
                            return n0_1_0, _sym_rules[5]
                    if n0_0 is n0_1_1 and n1_1 is n0_1_1 and n0_1_0.dtype is _dt_index:
                        # rule divmod_recombine_sum at rules/symbolic.rules:59
                        #   divmod_recombine_sum: ADD[MUL[IDIV(x:index, c:CONST), c], MOD(y, c)] if c.arg > 0 and congruent(x, y, c.arg) -> x
                        #+ if _sym_st: _sym_st.attempts[6] += 1
                        # c = n0_1_1, x = n0_1_0, y = n1_0
                        if n0_1_1.arg > 0 and congruent(n0_1_0, n1_0, n0_1_1.arg):
                            return n0_1_0, _sym_rules[6]
            elif o1 is _MUL:
                n1_0, n1_1 = n1.src
                o0_0 = n0_0.op
                if o0_0 is _IDIV:
                    n0_0_0, n0_0_1 = n0_0.src
                    if n0_1.op is _CONST:
                        o1_0 = n1_0.op
                        if o1_0 is _MOD:
                            n1_0_0, n1_0_1 = n1_0.src
                            if n1_0_0 is n0_0_0 and n1_0_1 is n0_0_1 and n1_1.op is _CONST and n0_0_1.op is _CONST and n0_0_0.dtype is _dt_index:
                                # rule divmod_scaled at rules/symbolic.rules:64
                                #   divmod_scaled: ADD[MUL[IDIV(y:index, b:CONST), m:CONST], MUL[MOD(y, b), k:CONST]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k
                                #+ if _sym_st: _sym_st.attempts[7] += 1
                                _r = _sym_r7(n, ctx, n0_0_1, n1_1, n0_1, n0_0_0)
                                if _r is not None and _r is not n: return _r, _sym_rules[7]
                        elif o1_0 is _CONST and n1_1.op is _MOD:
                            n1_1_0, n1_1_1 = n1_1.src
                            if n1_1_0 is n0_0_0 and n1_1_1 is n0_0_1 and n0_0_1.op is _CONST and n0_0_0.dtype is _dt_index:
                                # rule divmod_scaled at rules/symbolic.rules:64
                                #   divmod_scaled: ADD[MUL[IDIV(y:index, b:CONST), m:CONST], MUL[MOD(y, b), k:CONST]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k
                                #+ if _sym_st: _sym_st.attempts[7] += 1
                                _r = _sym_r7(n, ctx, n0_0_1, n1_0, n0_1, n0_0_0)
                                if _r is not None and _r is not n: return _r, _sym_rules[7]
                elif o0_0 is _CONST:
                    o0_1 = n0_1.op
                    if o0_1 is _IDIV:
                        n0_1_0, n0_1_1 = n0_1.src
                        o1_0 = n1_0.op
                        if o1_0 is _MOD:
                            n1_0_0, n1_0_1 = n1_0.src
                            if n1_0_0 is n0_1_0 and n1_0_1 is n0_1_1 and n1_1.op is _CONST and n0_1_1.op is _CONST and n0_1_0.dtype is _dt_index:
                                # rule divmod_scaled at rules/symbolic.rules:64
                                #   divmod_scaled: ADD[MUL[IDIV(y:index, b:CONST), m:CONST], MUL[MOD(y, b), k:CONST]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k
                                #+ if _sym_st: _sym_st.attempts[7] += 1
                                _r = _sym_r7(n, ctx, n0_1_1, n1_1, n0_0, n0_1_0)
                                if _r is not None and _r is not n: return _r, _sym_rules[7]
                        elif o1_0 is _CONST and n1_1.op is _MOD:
                            n1_1_0, n1_1_1 = n1_1.src
                            if n1_1_0 is n0_1_0 and n1_1_1 is n0_1_1 and n0_1_1.op is _CONST and n0_1_0.dtype is _dt_index:
                                # rule divmod_scaled at rules/symbolic.rules:64
                                #   divmod_scaled: ADD[MUL[IDIV(y:index, b:CONST), m:CONST], MUL[MOD(y, b), k:CONST]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k
                                #+ if _sym_st: _sym_st.attempts[7] += 1
                                _r = _sym_r7(n, ctx, n0_1_1, n1_0, n0_0, n0_1_0)
                                if _r is not None and _r is not n: return _r, _sym_rules[7]
                    elif o0_1 is _MOD:
                        n0_1_0, n0_1_1 = n0_1.src
                        o1_0 = n1_0.op
                        if o1_0 is _IDIV:
                            n1_0_0, n1_0_1 = n1_0.src
                            if n0_1_0 is n1_0_0 and n0_1_1 is n1_0_1 and n1_1.op is _CONST and n0_1_1.op is _CONST and n0_1_0.dtype is _dt_index:
                                # rule divmod_scaled at rules/symbolic.rules:64
                                #   divmod_scaled: ADD[MUL[IDIV(y:index, b:CONST), m:CONST], MUL[MOD(y, b), k:CONST]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k
                                #+ if _sym_st: _sym_st.attempts[7] += 1
                                _r = _sym_r7(n, ctx, n1_0_1, n0_0, n1_1, n1_0_0)
                                if _r is not None and _r is not n: return _r, _sym_rules[7]
                        elif o1_0 is _CONST and n1_1.op is _IDIV:
                            n1_1_0, n1_1_1 = n1_1.src
                            if n0_1_0 is n1_1_0 and n0_1_1 is n1_1_1 and n0_1_1.op is _CONST and n0_1_0.dtype is _dt_index:
                                # rule divmod_scaled at rules/symbolic.rules:64
                                #   divmod_scaled: ADD[MUL[IDIV(y:index, b:CONST), m:CONST], MUL[MOD(y, b), k:CONST]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k
                                #+ if _sym_st: _sym_st.attempts[7] += 1
                                _r = _sym_r7(n, ctx, n1_1_1, n0_0, n1_0, n1_1_0)
                                if _r is not None and _r is not n: return _r, _sym_rules[7]
                elif o0_0 is _MOD:
                    n0_0_0, n0_0_1 = n0_0.src
                    if n0_1.op is _CONST:
                        o1_0 = n1_0.op
                        if o1_0 is _IDIV:
                            n1_0_0, n1_0_1 = n1_0.src
                            if n0_0_0 is n1_0_0 and n0_0_1 is n1_0_1 and n1_1.op is _CONST and n0_0_1.op is _CONST and n0_0_0.dtype is _dt_index:
                                # rule divmod_scaled at rules/symbolic.rules:64
                                #   divmod_scaled: ADD[MUL[IDIV(y:index, b:CONST), m:CONST], MUL[MOD(y, b), k:CONST]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k
                                #+ if _sym_st: _sym_st.attempts[7] += 1
                                _r = _sym_r7(n, ctx, n1_0_1, n0_1, n1_1, n1_0_0)
                                if _r is not None and _r is not n: return _r, _sym_rules[7]
                        elif o1_0 is _CONST and n1_1.op is _IDIV:
                            n1_1_0, n1_1_1 = n1_1.src
                            if n0_0_0 is n1_1_0 and n0_0_1 is n1_1_1 and n0_0_1.op is _CONST and n0_0_0.dtype is _dt_index:
                                # rule divmod_scaled at rules/symbolic.rules:64
                                #   divmod_scaled: ADD[MUL[IDIV(y:index, b:CONST), m:CONST], MUL[MOD(y, b), k:CONST]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k
                                #+ if _sym_st: _sym_st.attempts[7] += 1
                                _r = _sym_r7(n, ctx, n1_1_1, n0_1, n1_0, n1_1_0)
                                if _r is not None and _r is not n: return _r, _sym_rules[7]
    else:
        if n0.op is _ADD:
            if n.dtype in _DT0:
                n0_0, n0_1 = n0.src
                if n1.op is _CONST:
                    if n0_1.op is _CONST:
                        # rule add_consts at rules/symbolic.rules:46
                        #   add_consts: ADD[ADD[x, c1:CONST], c2:CONST]:ints -> x + fold_alu(Ops.ADD, x.dtype, c1.arg, c2.arg)
                        #+ if _sym_st: _sym_st.attempts[0] += 1
                        # c1 = n0_1, c2 = n1, x = n0_0
                        _r = n0_0 + fold_alu(_ADD, n0_0.dtype, n0_1.arg, n1.arg)
                        if _r is not None:
                            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                            if _r is not n: return _r, _sym_rules[0]
                    if n0_0.op is _CONST:
                        # rule add_consts at rules/symbolic.rules:46
                        #   add_consts: ADD[ADD[x, c1:CONST], c2:CONST]:ints -> x + fold_alu(Ops.ADD, x.dtype, c1.arg, c2.arg)
                        #+ if _sym_st: _sym_st.attempts[0] += 1
                        # c1 = n0_0, c2 = n1, x = n0_1
                        _r = n0_1 + fold_alu(_ADD, n0_1.dtype, n0_0.arg, n1.arg)
                        if _r is not None:
                            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                            if _r is not n: return _r, _sym_rules[0]
            n0_0, n0_1 = n0.src
            o1 = n1.op
            if o1 is _MUL:
                n1_0, n1_1 = n1.src
                if n0_0.op is _MUL:
                    n0_0_0, n0_0_1 = n0_0.src
                    o1_0 = n1_0.op
                    if o1_0 is _IDIV:
                        n1_0_0, n1_0_1 = n1_0.src
                        if n1_1.op is _CONST:
                            o0_0_0 = n0_0_0.op
                            if o0_0_0 is _MOD:
                                n0_0_0_0, n0_0_0_1 = n0_0_0.src
                                if n0_0_0_0 is n1_0_0 and n0_0_0_1 is n1_0_1 and n0_0_1.op is _CONST and n1_0_1.op is _CONST and n1_0_0.dtype is _dt_index:
                                    # rule divmod_scaled_in at rules/symbolic.rules:65
                                    #   divmod_scaled_in: ADD[MUL[IDIV(y:index, b:CONST), m:CONST], ADD[MUL[MOD(y, b), k:CONST], z]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k + z
                                    #+ if _sym_st: _sym_st.attempts[8] += 1
                                    _r = _sym_r8(n, ctx, n1_0_1, n0_0_1, n1_1, n1_0_0, n0_1)
                                    if _r is not None and _r is not n: return _r, _sym_rules[8]
                            elif o0_0_0 is _CONST and n0_0_1.op is _MOD:
                                n0_0_1_0, n0_0_1_1 = n0_0_1.src
                                if n0_0_1_0 is n1_0_0 and n0_0_1_1 is n1_0_1 and n1_0_1.op is _CONST and n1_0_0.dtype is _dt_index:
                                    # rule divmod_scaled_in at rules/symbolic.rules:65
                                    #   divmod_scaled_in: ADD[MUL[IDIV(y:index, b:CONST), m:CONST], ADD[MUL[MOD(y, b), k:CONST], z]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k + z
                                    #+ if _sym_st: _sym_st.attempts[8] += 1
                                    _r = _sym_r8(n, ctx, n1_0_1, n0_0_0, n1_1, n1_0_0, n0_1)
                                    if _r is not None and _r is not n: return _r, _sym_rules[8]
                    elif o1_0 is _CONST:
                        o1_1 = n1_1.op
                        if o1_1 is _IDIV:
                            n1_1_0, n1_1_1 = n1_1.src
                            o0_0_0 = n0_0_0.op
                            if o0_0_0 is _MOD:
                                n0_0_0_0, n0_0_0_1 = n0_0_0.src
                                if n0_0_0_0 is n1_1_0 and n0_0_0_1 is n1_1_1 and n0_0_1.op is _CONST and n1_1_1.op is _CONST and n1_1_0.dtype is _dt_index:
                                    # rule divmod_scaled_in at rules/symbolic.rules:65
                                    #   divmod_scaled_in: ADD[MUL[IDIV(y:index, b:CONST), m:CONST], ADD[MUL[MOD(y, b), k:CONST], z]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k + z
                                    #+ if _sym_st: _sym_st.attempts[8] += 1
                                    _r = _sym_r8(n, ctx, n1_1_1, n0_0_1, n1_0, n1_1_0, n0_1)
                                    if _r is not None and _r is not n: return _r, _sym_rules[8]
                            elif o0_0_0 is _CONST and n0_0_1.op is _MOD:
                                n0_0_1_0, n0_0_1_1 = n0_0_1.src
                                if n0_0_1_0 is n1_1_0 and n0_0_1_1 is n1_1_1 and n1_1_1.op is _CONST and n1_1_0.dtype is _dt_index:
                                    # rule divmod_scaled_in at rules/symbolic.rules:65
                                    #   divmod_scaled_in: ADD[MUL[IDIV(y:index, b:CONST), m:CONST], ADD[MUL[MOD(y, b), k:CONST], z]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k + z
                                    #+ if _sym_st: _sym_st.attempts[8] += 1
                                    _r = _sym_r8(n, ctx, n1_1_1, n0_0_0, n1_0, n1_1_0, n0_1)
                                    if _r is not None and _r is not n: return _r, _sym_rules[8]
                        elif o1_1 is _MOD:
                            n1_1_0, n1_1_1 = n1_1.src
                            o0_0_0 = n0_0_0.op
                            if o0_0_0 is _IDIV:
                                n0_0_0_0, n0_0_0_1 = n0_0_0.src
                                if n0_0_0_0 is n1_1_0 and n0_0_0_1 is n1_1_1 and n0_0_1.op is _CONST and n1_1_1.op is _CONST and n1_1_0.dtype is _dt_index:
                                    # rule divmod_scaled_out at rules/symbolic.rules:66
                                    #   divmod_scaled_out: ADD[MUL[MOD(y:index, b:CONST), k:CONST], ADD[MUL[IDIV(y, b), m:CONST], z]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k + z
                                    #+ if _sym_st: _sym_st.attempts[9] += 1
                                    _r = _sym_r9(n, ctx, n1_1_1, n1_0, n0_0_1, n1_1_0, n0_1)
                                    if _r is not None and _r is not n: return _r, _sym_rules[9]
                            elif o0_0_0 is _CONST and n0_0_1.op is _IDIV:
                                n0_0_1_0, n0_0_1_1 = n0_0_1.src
                                if n0_0_1_0 is n1_1_0 and n0_0_1_1 is n1_1_1 and n1_1_1.op is _CONST and n1_1_0.dtype is _dt_index:
                                    # rule divmod_scaled_out at rules/symbolic.rules:66
                                    #   divmod_scaled_out: ADD[MUL[MOD(y:index, b:CONST), k:CONST], ADD[MUL[IDIV(y, b), m:CONST], z]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k + z
                                    #+ if _sym_st: _sym_st.attempts[9] += 1
                                    _r = _sym_r9(n, ctx, n1_1_1, n1_0, n0_0_0, n1_1_0, n0_1)
                                    if _r is not None and _r is not n: return _r, _sym_rules[9]
                    elif o1_0 is _MOD:
                        n1_0_0, n1_0_1 = n1_0.src
                        if n1_1.op is _CONST:
                            o0_0_0 = n0_0_0.op
                            if o0_0_0 is _IDIV:
                                n0_0_0_0, n0_0_0_1 = n0_0_0.src
                                if n0_0_0_0 is n1_0_0 and n0_0_0_1 is n1_0_1 and n0_0_1.op is _CONST and n1_0_1.op is _CONST and n1_0_0.dtype is _dt_index:
                                    # rule divmod_scaled_out at rules/symbolic.rules:66
                                    #   divmod_scaled_out: ADD[MUL[MOD(y:index, b:CONST), k:CONST], ADD[MUL[IDIV(y, b), m:CONST], z]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k + z
                                    #+ if _sym_st: _sym_st.attempts[9] += 1
                                    _r = _sym_r9(n, ctx, n1_0_1, n1_1, n0_0_1, n1_0_0, n0_1)
                                    if _r is not None and _r is not n: return _r, _sym_rules[9]
                            elif o0_0_0 is _CONST and n0_0_1.op is _IDIV:
                                n0_0_1_0, n0_0_1_1 = n0_0_1.src
                                if n0_0_1_0 is n1_0_0 and n0_0_1_1 is n1_0_1 and n1_0_1.op is _CONST and n1_0_0.dtype is _dt_index:
                                    # rule divmod_scaled_out at rules/symbolic.rules:66
                                    #   divmod_scaled_out: ADD[MUL[MOD(y:index, b:CONST), k:CONST], ADD[MUL[IDIV(y, b), m:CONST], z]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k + z
                                    #+ if _sym_st: _sym_st.attempts[9] += 1
                                    _r = _sym_r9(n, ctx, n1_0_1, n1_1, n0_0_0, n1_0_0, n0_1)
                                    if _r is not None and _r is not n: return _r, _sym_rules[9]
                if n0_1.op is _MUL:
                    n0_1_0, n0_1_1 = n0_1.src
                    o1_0 = n1_0.op
                    if o1_0 is _IDIV:
                        n1_0_0, n1_0_1 = n1_0.src
                        if n1_1.op is _CONST:
                            o0_1_0 = n0_1_0.op
                            if o0_1_0 is _MOD:
                                n0_1_0_0, n0_1_0_1 = n0_1_0.src
                                if n0_1_0_0 is n1_0_0 and n0_1_0_1 is n1_0_1 and n0_1_1.op is _CONST and n1_0_1.op is _CONST and n1_0_0.dtype is _dt_index:
                                    # rule divmod_scaled_in at rules/symbolic.rules:65
                                    #   divmod_scaled_in: ADD[MUL[IDIV(y:index, b:CONST), m:CONST], ADD[MUL[MOD(y, b), k:CONST], z]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k + z
                                    #+ if _sym_st: _sym_st.attempts[8] += 1
                                    _r = _sym_r8(n, ctx, n1_0_1, n0_1_1, n1_1, n1_0_0, n0_0)
                                    if _r is not None and _r is not n: return _r, _sym_rules[8]
                            elif o0_1_0 is _CONST and n0_1_1.op is _MOD:
                                n0_1_1_0, n0_1_1_1 = n0_1_1.src
                                if n0_1_1_0 is n1_0_0 and n0_1_1_1 is n1_0_1 and n1_0_1.op is _CONST and n1_0_0.dtype is _dt_index:
                                    # rule divmod_scaled_in at rules/symbolic.rules:65
                                    #   divmod_scaled_in: ADD[MUL[IDIV(y:index, b:CONST), m:CONST], ADD[MUL[MOD(y, b), k:CONST], z]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k + z
                                    #+ if _sym_st: _sym_st.attempts[8] += 1
                                    _r = _sym_r8(n, ctx, n1_0_1, n0_1_0, n1_1, n1_0_0, n0_0)
                                    if _r is not None and _r is not n: return _r, _sym_rules[8]
                    elif o1_0 is _CONST:
                        o1_1 = n1_1.op
                        if o1_1 is _IDIV:
                            n1_1_0, n1_1_1 = n1_1.src
                            o0_1_0 = n0_1_0.op
                            if o0_1_0 is _MOD:
                                n0_1_0_0, n0_1_0_1 = n0_1_0.src
                                if n0_1_0_0 is n1_1_0 and n0_1_0_1 is n1_1_1 and n0_1_1.op is _CONST and n1_1_1.op is _CONST and n1_1_0.dtype is _dt_index:
                                    # rule divmod_scaled_in at rules/symbolic.rules:65
                                    #   divmod_scaled_in: ADD[MUL[IDIV(y:index, b:CONST), m:CONST], ADD[MUL[MOD(y, b), k:CONST], z]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k + z
                                    #+ if _sym_st: _sym_st.attempts[8] += 1
                                    _r = _sym_r8(n, ctx, n1_1_1, n0_1_1, n1_0, n1_1_0, n0_0)
                                    if _r is not None and _r is not n: return _r, _sym_rules[8]
                            elif o0_1_0 is _CONST and n0_1_1.op is _MOD:
                                n0_1_1_0, n0_1_1_1 = n0_1_1.src
                                if n0_1_1_0 is n1_1_0 and n0_1_1_1 is n1_1_1 and n1_1_1.op is _CONST and n1_1_0.dtype is _dt_index:
                                    # rule divmod_scaled_in at rules/symbolic.rules:65
                                    #   divmod_scaled_in: ADD[MUL[IDIV(y:index, b:CONST), m:CONST], ADD[MUL[MOD(y, b), k:CONST], z]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k + z
                                    #+ if _sym_st: _sym_st.attempts[8] += 1
                                    _r = _sym_r8(n, ctx, n1_1_1, n0_1_0, n1_0, n1_1_0, n0_0)
                                    if _r is not None and _r is not n: return _r, _sym_rules[8]
                        elif o1_1 is _MOD:
                            n1_1_0, n1_1_1 = n1_1.src
                            o0_1_0 = n0_1_0.op
                            if o0_1_0 is _IDIV:
                                n0_1_0_0, n0_1_0_1 = n0_1_0.src
                                if n0_1_0_0 is n1_1_0 and n0_1_0_1 is n1_1_1 and n0_1_1.op is _CONST and n1_1_1.op is _CONST and n1_1_0.dtype is _dt_index:
                                    # rule divmod_scaled_out at rules/symbolic.rules:66
                                    #   divmod_scaled_out: ADD[MUL[MOD(y:index, b:CONST), k:CONST], ADD[MUL[IDIV(y, b), m:CONST], z]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k + z
                                    #+ if _sym_st: _sym_st.attempts[9] += 1
                                    _r = _sym_r9(n, ctx, n1_1_1, n1_0, n0_1_1, n1_1_0, n0_0)
                                    if _r is not None and _r is not n: return _r, _sym_rules[9]
                            elif o0_1_0 is _CONST and n0_1_1.op is _IDIV:
                                n0_1_1_0, n0_1_1_1 = n0_1_1.src
                                if n0_1_1_0 is n1_1_0 and n0_1_1_1 is n1_1_1 and n1_1_1.op is _CONST and n1_1_0.dtype is _dt_index:
                                    # rule divmod_scaled_out at rules/symbolic.rules:66
                                    #   divmod_scaled_out: ADD[MUL[MOD(y:index, b:CONST), k:CONST], ADD[MUL[IDIV(y, b), m:CONST], z]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k + z
                                    #+ if _sym_st: _sym_st.attempts[9] += 1
                                    _r = _sym_r9(n, ctx, n1_1_1, n1_0, n0_1_0, n1_1_0, n0_0)
                                    if _r is not None and _r is not n: return _r, _sym_rules[9]
                    elif o1_0 is _MOD:
                        n1_0_0, n1_0_1 = n1_0.src
                        if n1_1.op is _CONST:
                            o0_1_0 = n0_1_0.op
                            if o0_1_0 is _IDIV:
                                n0_1_0_0, n0_1_0_1 = n0_1_0.src
                                if n0_1_0_0 is n1_0_0 and n0_1_0_1 is n1_0_1 and n0_1_1.op is _CONST and n1_0_1.op is _CONST and n1_0_0.dtype is _dt_index:
                                    # rule divmod_scaled_out at rules/symbolic.rules:66
                                    #   divmod_scaled_out: ADD[MUL[MOD(y:index, b:CONST), k:CONST], ADD[MUL[IDIV(y, b), m:CONST], z]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k + z
                                    #+ if _sym_st: _sym_st.attempts[9] += 1
                                    _r = _sym_r9(n, ctx, n1_0_1, n1_1, n0_1_1, n1_0_0, n0_0)
                                    if _r is not None and _r is not n: return _r, _sym_rules[9]
                            elif o0_1_0 is _CONST and n0_1_1.op is _IDIV:
                                n0_1_1_0, n0_1_1_1 = n0_1_1.src
                                if n0_1_1_0 is n1_0_0 and n0_1_1_1 is n1_0_1 and n1_0_1.op is _CONST and n1_0_0.dtype is _dt_index:
                                    # rule divmod_scaled_out at rules/symbolic.rules:66
                                    #   divmod_scaled_out: ADD[MUL[MOD(y:index, b:CONST), k:CONST], ADD[MUL[IDIV(y, b), m:CONST], z]] if b.arg > 0 and m.arg == b.arg * k.arg -> y * k + z
                                    #+ if _sym_st: _sym_st.attempts[9] += 1
                                    _r = _sym_r9(n, ctx, n1_0_1, n1_1, n0_1_0, n1_0_0, n0_0)
                                    if _r is not None and _r is not n: return _r, _sym_rules[9]
                if n0_0.op is _MOD:
                    n0_0_0, n0_0_1 = n0_0.src
                    o1_0 = n1_0.op
                    if o1_0 is _IDIV:
                        n1_0_0, n1_0_1 = n1_0.src
                        if n0_0_0 is n1_0_0 and n1_1 is n1_0_1 and n0_0_1 is n1_0_1 and n1_1.op is _CONST and n0_0_0.dtype is _dt_index:
                            # rule divmod_offset_in at rules/symbolic.rules:67
                            #   divmod_offset_in: ADD[MUL[IDIV(y:index, b:CONST), b], ADD[MOD(y, b), z]] if b.arg > 0 -> y + z
                            #+ if _sym_st: _sym_st.attempts[10] += 1
                            _r = _sym_r10(n, ctx, n1_0_1, n1_0_0, n0_1)
                            if _r is not None and _r is not n: return _r, _sym_rules[10]
                    elif o1_0 is _CONST and n1_1.op is _IDIV:
                        n1_1_0, n1_1_1 = n1_1.src
                        if n0_0_0 is n1_1_0 and n1_0 is n1_1_1 and n0_0_1 is n1_1_1 and n0_0_0.dtype is _dt_index:
                            # rule divmod_offset_in at rules/symbolic.rules:67
                            #   divmod_offset_in: ADD[MUL[IDIV(y:index, b:CONST), b], ADD[MOD(y, b), z]] if b.arg > 0 -> y + z
                            #+ if _sym_st: _sym_st.attempts[10] += 1
                            _r = _sym_r10(n, ctx, n1_1_1, n1_1_0, n0_1)
                            if _r is not None and _r is not n: return _r, _sym_rules[10]
                if n0_1.op is _MOD:
                    n0_1_0, n0_1_1 = n0_1.src
                    o1_0 = n1_0.op
                    if o1_0 is _IDIV:
                        n1_0_0, n1_0_1 = n1_0.src
                        if n0_1_0 is n1_0_0 and n1_1 is n1_0_1 and n0_1_1 is n1_0_1 and n1_1.op is _CONST and n0_1_0.dtype is _dt_index:
                            # rule divmod_offset_in at rules/symbolic.rules:67
                            #   divmod_offset_in: ADD[MUL[IDIV(y:index, b:CONST), b], ADD[MOD(y, b), z]] if b.arg > 0 -> y + z
                            #+ if _sym_st: _sym_st.attempts[10] += 1
                            _r = _sym_r10(n, ctx, n1_0_1, n1_0_0, n0_0)
                            if _r is not None and _r is not n: return _r, _sym_rules[10]
                    elif o1_0 is _CONST and n1_1.op is _IDIV:
                        n1_1_0, n1_1_1 = n1_1.src
                        if n0_1_0 is n1_1_0 and n1_0 is n1_1_1 and n0_1_1 is n1_1_1 and n0_1_0.dtype is _dt_index:
                            # rule divmod_offset_in at rules/symbolic.rules:67
                            #   divmod_offset_in: ADD[MUL[IDIV(y:index, b:CONST), b], ADD[MOD(y, b), z]] if b.arg > 0 -> y + z
                            #+ if _sym_st: _sym_st.attempts[10] += 1
                            _r = _sym_r10(n, ctx, n1_1_1, n1_1_0, n0_0)
                            if _r is not None and _r is not n: return _r, _sym_rules[10]
            elif o1 is _MOD:
                n1_0, n1_1 = n1.src
                if n0_0.op is _MUL:
                    n0_0_0, n0_0_1 = n0_0.src
                    if n1_1.op is _CONST and n1_0.dtype is _dt_index:
                        o0_0_0 = n0_0_0.op
                        if o0_0_0 is _IDIV:
                            n0_0_0_0, n0_0_0_1 = n0_0_0.src
                            if n0_0_1 is n1_1 and n0_0_0_0 is n1_0 and n0_0_0_1 is n1_1:
                                # rule divmod_offset_out at rules/symbolic.rules:68
                                #   divmod_offset_out: ADD[MOD(y:index, b:CONST), ADD[MUL[IDIV(y, b), b], z]] if b.arg > 0 -> y + z
                                #+ if _sym_st: _sym_st.attempts[11] += 1
                                # b = n1_1, y = n1_0, z = n0_1
                                if n1_1.arg > 0:
                                    _r = n1_0 + n0_1
                                    if _r is not None:
                                        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                                        if _r is not n: return _r, _sym_rules[11]
                        elif o0_0_0 is _CONST and n0_0_0 is n1_1 and n0_0_1.op is _IDIV:
                            n0_0_1_0, n0_0_1_1 = n0_0_1.src
                            if n0_0_1_0 is n1_0 and n0_0_1_1 is n1_1:
                                # rule divmod_offset_out at rules/symbolic.rules:68
                                #   divmod_offset_out: ADD[MOD(y:index, b:CONST), ADD[MUL[IDIV(y, b), b], z]] if b.arg > 0 -> y + z
                                #+ if _sym_st: _sym_st.attempts[11] += 1
                                # b = n1_1, y = n1_0, z = n0_1
                                if n1_1.arg > 0:
                                    _r = n1_0 + n0_1
                                    if _r is not None:
                                        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                                        if _r is not n: return _r, _sym_rules[11]
                if n0_1.op is _MUL:
                    n0_1_0, n0_1_1 = n0_1.src
                    if n1_1.op is _CONST and n1_0.dtype is _dt_index:
                        o0_1_0 = n0_1_0.op
                        if o0_1_0 is _IDIV:
                            n0_1_0_0, n0_1_0_1 = n0_1_0.src
                            if n0_1_1 is n1_1 and n0_1_0_0 is n1_0 and n0_1_0_1 is n1_1:
                                # rule divmod_offset_out at rules/symbolic.rules:68
                                #   divmod_offset_out: ADD[MOD(y:index, b:CONST), ADD[MUL[IDIV(y, b), b], z]] if b.arg > 0 -> y + z
                                #+ if _sym_st: _sym_st.attempts[11] += 1
                                # b = n1_1, y = n1_0, z = n0_0
                                if n1_1.arg > 0:
                                    _r = n1_0 + n0_0
                                    if _r is not None:
                                        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                                        if _r is not n: return _r, _sym_rules[11]
                        elif o0_1_0 is _CONST and n0_1_0 is n1_1 and n0_1_1.op is _IDIV:
                            n0_1_1_0, n0_1_1_1 = n0_1_1.src
                            if n0_1_1_0 is n1_0 and n0_1_1_1 is n1_1:
                                # rule divmod_offset_out at rules/symbolic.rules:68
                                #   divmod_offset_out: ADD[MOD(y:index, b:CONST), ADD[MUL[IDIV(y, b), b], z]] if b.arg > 0 -> y + z
                                #+ if _sym_st: _sym_st.attempts[11] += 1
                                # b = n1_1, y = n1_0, z = n0_0
                                if n1_1.arg > 0:
                                    _r = n1_0 + n0_0
                                    if _r is not None:
                                        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                                        if _r is not n: return _r, _sym_rules[11]
        else:
            if n0.op is _CONST and n1.op is _ADD and n.dtype in _DT0:
                n1_0, n1_1 = n1.src
                if n1_1.op is _CONST:
                    # rule add_consts at rules/symbolic.rules:46
                    #   add_consts: ADD[ADD[x, c1:CONST], c2:CONST]:ints -> x + fold_alu(Ops.ADD, x.dtype, c1.arg, c2.arg)
                    #+ if _sym_st: _sym_st.attempts[0] += 1
                    # c1 = n1_1, c2 = n0, x = n1_0
                    _r = n1_0 + fold_alu(_ADD, n1_0.dtype, n1_1.arg, n0.arg)
                    if _r is not None:
                        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                        if _r is not n: return _r, _sym_rules[0]
                if n1_0.op is _CONST:
                    # rule add_consts at rules/symbolic.rules:46
                    #   add_consts: ADD[ADD[x, c1:CONST], c2:CONST]:ints -> x + fold_alu(Ops.ADD, x.dtype, c1.arg, c2.arg)
                    #+ if _sym_st: _sym_st.attempts[0] += 1
                    # c1 = n1_0, c2 = n0, x = n1_1
                    _r = n1_1 + fold_alu(_ADD, n1_1.dtype, n1_0.arg, n0.arg)
                    if _r is not None:
                        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                        if _r is not n: return _r, _sym_rules[0]
            if n0.op is _MOD:
                n0_0, n0_1 = n0.src
                o1 = n1.op
                if o1 is _MUL:
                    n1_0, n1_1 = n1.src
                    if n0_1.op is _CONST and n0_0.dtype in _DT0:
                        o1_0 = n1_0.op
                        if o1_0 is _IDIV:
                            n1_0_0, n1_0_1 = n1_0.src
                            if n0_0 is n1_0_0 and n1_1 is n1_0_1 and n0_1 is n1_0_1:
                                # rule divmod_recombine at rules/symbolic.rules:56
                                #   divmod_recombine: ADD[MUL[IDIV(x:ints, c:CONST), c], MOD(x, c)] if c.arg > 0 -> x
                                #+ if _sym_st: _sym_st.attempts[5] += 1
                                # c = n1_0_1, x = n1_0_0
                                if n1_0_1.arg > 0:
                                    return n1_0_0, _sym_rules[5]
                        elif o1_0 is _CONST and n1_1.op is _IDIV:
                            n1_1_0, n1_1_1 = n1_1.src
                            if n0_0 is n1_1_0 and n1_0 is n1_1_1 and n0_1 is n1_1_1:
                                # rule divmod_recombine at rules/symbolic.rules:56
                                #   divmod_recombine: ADD[MUL[IDIV(x:ints, c:CONST), c], MOD(x, c)] if c.arg > 0 -> x
                                #+ if _sym_st: _sym_st.attempts[5] += 1
                                # c = n1_1_1, x = n1_1_0
                                if n1_1_1.arg > 0:
                                    return n1_1_0, _sym_rules[5]
                    if n0_1.op is _CONST:
                        o1_0 = n1_0.op
                        if o1_0 is _IDIV:
                            n1_0_0, n1_0_1 = n1_0.src
                            if n1_1 is n1_0_1 and n0_1 is n1_0_1 and n1_0_0.dtype is _dt_index:
                                # rule divmod_recombine_sum at rules/symbolic.rules:59
                                #   divmod_recombine_sum: ADD[MUL[IDIV(x:index, c:CONST), c], MOD(y, c)] if c.arg > 0 and congruent(x, y, c.arg) -> x
                                #+ if _sym_st: _sym_st.attempts[6] += 1
                                # c = n1_0_1, x = n1_0_0, y = n0_0
                                if n1_0_1.arg > 0 and congruent(n1_0_0, n0_0, n1_0_1.arg):
                                    return n1_0_0, _sym_rules[6]
                        elif o1_0 is _CONST and n1_1.op is _IDIV:
                            n1_1_0, n1_1_1 = n1_1.src
                            if n1_0 is n1_1_1 and n0_1 is n1_1_1 and n1_1_0.dtype is _dt_index:
                                # rule divmod_recombine_sum at rules/symbolic.rules:59
                                #   divmod_recombine_sum: ADD[MUL[IDIV(x:index, c:CONST), c], MOD(y, c)] if c.arg > 0 and congruent(x, y, c.arg) -> x
                                #+ if _sym_st: _sym_st.attempts[6] += 1
                                # c = n1_1_1, x = n1_1_0, y = n0_0
                                if n1_1_1.arg > 0 and congruent(n1_1_0, n0_0, n1_1_1.arg):
                                    return n1_1_0, _sym_rules[6]
                elif o1 is _ADD:
                    n1_0, n1_1 = n1.src
                    if n0_1.op is _CONST and n0_0.dtype is _dt_index:
                        if n1_0.op is _MUL:
                            n1_0_0, n1_0_1 = n1_0.src
                            o1_0_0 = n1_0_0.op
                            if o1_0_0 is _IDIV:
                                n1_0_0_0, n1_0_0_1 = n1_0_0.src
                                if n1_0_1 is n0_1 and n1_0_0_0 is n0_0 and n1_0_0_1 is n0_1:
                                    # rule divmod_offset_out at rules/symbolic.rules:68
                                    #   divmod_offset_out: ADD[MOD(y:index, b:CONST), ADD[MUL[IDIV(y, b), b], z]] if b.arg > 0 -> y + z
                                    #+ if _sym_st: _sym_st.attempts[11] += 1
                                    # b = n0_1, y = n0_0, z = n1_1
                                    if n0_1.arg > 0:
                                        _r = n0_0 + n1_1
                                        if _r is not None:
                                            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                                            if _r is not n: return _r, _sym_rules[11]
                            elif o1_0_0 is _CONST and n1_0_0 is n0_1 and n1_0_1.op is _IDIV:
                                n1_0_1_0, n1_0_1_1 = n1_0_1.src
                                if n1_0_1_0 is n0_0 and n1_0_1_1 is n0_1:
                                    # rule divmod_offset_out at rules/symbolic.rules:68
                                    #   divmod_offset_out: ADD[MOD(y:index, b:CONST), ADD[MUL[IDIV(y, b), b], z]] if b.arg > 0 -> y + z
                                    #+ if _sym_st: _sym_st.attempts[11] += 1
                                    # b = n0_1, y = n0_0, z = n1_1
                                    if n0_1.arg > 0:
                                        _r = n0_0 + n1_1
                                        if _r is not None:
                                            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                                            if _r is not n: return _r, _sym_rules[11]
                        if n1_1.op is _MUL:
                            n1_1_0, n1_1_1 = n1_1.src
                            o1_1_0 = n1_1_0.op
                            if o1_1_0 is _IDIV:
                                n1_1_0_0, n1_1_0_1 = n1_1_0.src
                                if n1_1_1 is n0_1 and n1_1_0_0 is n0_0 and n1_1_0_1 is n0_1:
                                    # rule divmod_offset_out at rules/symbolic.rules:68
                                    #   divmod_offset_out: ADD[MOD(y:index, b:CONST), ADD[MUL[IDIV(y, b), b], z]] if b.arg > 0 -> y + z
                                    #+ if _sym_st: _sym_st.attempts[11] += 1
                                    # b = n0_1, y = n0_0, z = n1_0
                                    if n0_1.arg > 0:
                                        _r = n0_0 + n1_0
                                        if _r is not None:
                                            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                                            if _r is not n: return _r, _sym_rules[11]
                            elif o1_1_0 is _CONST and n1_1_0 is n0_1 and n1_1_1.op is _IDIV:
                                n1_1_1_0, n1_1_1_1 = n1_1_1.src
                                if n1_1_1_0 is n0_0 and n1_1_1_1 is n0_1:
                                    # rule divmod_offset_out at rules/symbolic.rules:68
                                    #   divmod_offset_out: ADD[MOD(y:index, b:CONST), ADD[MUL[IDIV(y, b), b], z]] if b.arg > 0 -> y + z
                                    #+ if _sym_st: _sym_st.attempts[11] += 1
                                    # b = n0_1, y = n0_0, z = n1_0
                                    if n0_1.arg > 0:
                                        _r = n0_0 + n1_0
                                        if _r is not None:
                                            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                                            if _r is not n: return _r, _sym_rules[11]
    return None

def _sym_SUB(n, ctx):
    try:
        n0, n1 = n.src
    except ValueError:
        return None
    if n1.op is _CONST:
        if n0.dtype in _DT0:
            if n1.arg == 0:
                # rule sub_zero at rules/symbolic.rules:16
                #   sub_zero: SUB(x:ints, 0) -> x
                #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[1] += 1
                # x = n0
                return n0, _symbolic_simple_rules[1]
            if n1 is n0:
                # rule sub_self at rules/symbolic.rules:17
                #   sub_self: SUB(x:ints, x) -> 0
                #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[2] += 1
                # x = n0
                _r = n.const_like(0)
                if _r is not n: return _r, _symbolic_simple_rules[2]
        if n0.op is _CONST:
            # rule fold_binary at rules/symbolic.rules:38
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[13] += 1
            _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r, _symbolic_simple_rules[13]
    else:
        if n1 is n0 and n0.dtype in _DT0:
            # rule sub_self at rules/symbolic.rules:17
            #   sub_self: SUB(x:ints, x) -> 0
            #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[2] += 1
            # x = n0
            _r = n.const_like(0)
            if _r is not n: return _r, _symbolic_simple_rules[2]
    if n1.op is _CONST and n0.dtype is _dt_index:
        # rule sub_const at rules/symbolic.rules:49
        #   sub_const: SUB(x:index, c:CONST) -> x + (-c.arg)
        #+ if _sym_st: _sym_st.attempts[2] += 1
        # c = n1, x = n0
        _r = n0 + -n1.arg
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _sym_rules[2]
    return None

def _sym_MUL(n, ctx):
    try:
        n0, n1 = n.src
    except ValueError:
        return None
    # no rule here matches unless a source has one of these ops (a quick rejection)
    if n0.op is not _CONST and n1.op is not _CONST: return None
    if n1.op is _CONST:
        if n0.op is _CONST:
            if n1.arg == 1:
                # rule mul_one at rules/symbolic.rules:21
                #   mul_one: MUL[x, 1] if x.op is not Ops.DEFINE_REG -> x
                #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[4] += 1
                # x = n0
                if n0.op is not _DEFINE_REG:
                    return n0, _symbolic_simple_rules[4]
            if n0.arg == 1:
                # rule mul_one at rules/symbolic.rules:21
                #   mul_one: MUL[x, 1] if x.op is not Ops.DEFINE_REG -> x
                #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[4] += 1
                # x = n1
                if n1.op is not _DEFINE_REG:
                    return n1, _symbolic_simple_rules[4]
            if n1.arg == 0 and n0.dtype in _DT0:
                # rule mul_zero at rules/symbolic.rules:22
                #   mul_zero: MUL[x:ints, 0] if x.op is not Ops.DEFINE_REG -> 0
                #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[5] += 1
                # x = n0
                if n0.op is not _DEFINE_REG:
                    _r = n.const_like(0)
                    if _r is not n: return _r, _symbolic_simple_rules[5]
            if n0.arg == 0 and n1.dtype in _DT0:
                # rule mul_zero at rules/symbolic.rules:22
                #   mul_zero: MUL[x:ints, 0] if x.op is not Ops.DEFINE_REG -> 0
                #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[5] += 1
                # x = n1
                if n1.op is not _DEFINE_REG:
                    _r = n.const_like(0)
                    if _r is not n: return _r, _symbolic_simple_rules[5]
            # rule fold_binary at rules/symbolic.rules:38
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[13] += 1
            _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r, _symbolic_simple_rules[13]
        else:
            if n1.arg == 1:
                # rule mul_one at rules/symbolic.rules:21
                #   mul_one: MUL[x, 1] if x.op is not Ops.DEFINE_REG -> x
                #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[4] += 1
                # x = n0
                if n0.op is not _DEFINE_REG:
                    return n0, _symbolic_simple_rules[4]
            if n1.arg == 0 and n0.dtype in _DT0:
                # rule mul_zero at rules/symbolic.rules:22
                #   mul_zero: MUL[x:ints, 0] if x.op is not Ops.DEFINE_REG -> 0
                #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[5] += 1
                # x = n0
                if n0.op is not _DEFINE_REG:
                    _r = n.const_like(0)
                    if _r is not n: return _r, _symbolic_simple_rules[5]
    else:
        if n0.op is _CONST:
            if n0.arg == 1:
                # rule mul_one at rules/symbolic.rules:21
                #   mul_one: MUL[x, 1] if x.op is not Ops.DEFINE_REG -> x
                #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[4] += 1
                # x = n1
                if n1.op is not _DEFINE_REG:
                    return n1, _symbolic_simple_rules[4]
            if n0.arg == 0 and n1.dtype in _DT0:
                # rule mul_zero at rules/symbolic.rules:22
                #   mul_zero: MUL[x:ints, 0] if x.op is not Ops.DEFINE_REG -> 0
                #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[5] += 1
                # x = n1
                if n1.op is not _DEFINE_REG:
                    _r = n.const_like(0)
                    if _r is not n: return _r, _symbolic_simple_rules[5]
    if n0.op is _MUL:
        if n1.op is _CONST:
            if n.dtype in _DT0:
                n0_0, n0_1 = n0.src
                if n0_1.op is _CONST:
                    # rule mul_consts at rules/symbolic.rules:47
                    #   mul_consts: MUL[MUL[x, c1:CONST], c2:CONST]:ints -> x * fold_alu(Ops.MUL, x.dtype, c1.arg, c2.arg)
                    #+ if _sym_st: _sym_st.attempts[1] += 1
                    # c1 = n0_1, c2 = n1, x = n0_0
                    _r = n0_0 * fold_alu(_MUL, n0_0.dtype, n0_1.arg, n1.arg)
                    if _r is not None:
                        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                        if _r is not n: return _r, _sym_rules[1]
                if n0_0.op is _CONST:
                    # rule mul_consts at rules/symbolic.rules:47
                    #   mul_consts: MUL[MUL[x, c1:CONST], c2:CONST]:ints -> x * fold_alu(Ops.MUL, x.dtype, c1.arg, c2.arg)
                    #+ if _sym_st: _sym_st.attempts[1] += 1
                    # c1 = n0_0, c2 = n1, x = n0_1
                    _r = n0_1 * fold_alu(_MUL, n0_1.dtype, n0_0.arg, n1.arg)
                    if _r is not None:
                        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                        if _r is not n: return _r, _sym_rules[1]
    else:
        if n0.op is _CONST:
            if n1.op is _MUL and n.dtype in _DT0:
                n1_0, n1_1 = n1.src
                if n1_1.op is _CONST:
                    # rule mul_consts at rules/symbolic.rules:47
                    #   mul_consts: MUL[MUL[x, c1:CONST], c2:CONST]:ints -> x * fold_alu(Ops.MUL, x.dtype, c1.arg, c2.arg)
                    #+ if _sym_st: _sym_st.attempts[1] += 1
                    # c1 = n1_1, c2 = n0, x = n1_0
                    _r = n1_0 * fold_alu(_MUL, n1_0.dtype, n1_1.arg, n0.arg)
                    if _r is not None:
                        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                        if _r is not n: return _r, _sym_rules[1]
                if n1_0.op is _CONST:
                    # rule mul_consts at rules/symbolic.rules:47
                    #   mul_consts: MUL[MUL[x, c1:CONST], c2:CONST]:ints -> x * fold_alu(Ops.MUL, x.dtype, c1.arg, c2.arg)
                    #+ if _sym_st: _sym_st.attempts[1] += 1
                    # c1 = n1_0, c2 = n0, x = n1_1
                    _r = n1_1 * fold_alu(_MUL, n1_1.dtype, n1_0.arg, n0.arg)
                    if _r is not None:
                        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                        if _r is not n: return _r, _sym_rules[1]
    return None

def _sym_IDIV(n, ctx):
    try:
        n0, n1 = n.src
    except ValueError:
        return None
    # no rule here matches unless a source has one of these ops (a quick rejection)
    if n1.op is not _CONST: return None
    if n1.arg == 1 and n0.dtype in _DT0:
        # rule idiv_one at rules/symbolic.rules:23
        #   idiv_one: IDIV(x:ints, 1) -> x
        #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[6] += 1
        # x = n0
        return n0, _symbolic_simple_rules[6]
    if n0.op is _CONST:
        # rule fold_binary at rules/symbolic.rules:38
        #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
        #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[13] += 1
        _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
        if _r is not None and _r is not n: return _r, _symbolic_simple_rules[13]
    if n0.op is _ADD:
        if n.dtype is _dt_index:
            n0_0, n0_1 = n0.src
            if n0_0.op is _MUL:
                n0_0_0, n0_0_1 = n0_0.src
                if n1 is n0_0_1:
                    # rule split_idiv at rules/symbolic.rules:74
                    #   split_idiv: IDIV(ADD[MUL[x, c:CONST], d], c):index if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg -> x
                    #+ if _sym_st: _sym_st.attempts[13] += 1
                    # c = n0_0_1, d = n0_1, x = n0_0_0
                    if n0_0_1.arg > 0 and (n0_0_0._bounds if n0_0_0._bounds is not _UNSET else n0_0_0._bounds_())[0] >= 0:
                        _b_n0_1 = n0_1._bounds if n0_1._bounds is not _UNSET else n0_1._bounds_()
                        if 0 <= _b_n0_1[0] and _b_n0_1[1] < n0_0_1.arg:
                            return n0_0_0, _sym_rules[13]
                if n1 is n0_0_0:
                    # rule split_idiv at rules/symbolic.rules:74
                    #   split_idiv: IDIV(ADD[MUL[x, c:CONST], d], c):index if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg -> x
                    #+ if _sym_st: _sym_st.attempts[13] += 1
                    # c = n0_0_0, d = n0_1, x = n0_0_1
                    if n0_0_0.arg > 0 and (n0_0_1._bounds if n0_0_1._bounds is not _UNSET else n0_0_1._bounds_())[0] >= 0:
                        _b_n0_1 = n0_1._bounds if n0_1._bounds is not _UNSET else n0_1._bounds_()
                        if 0 <= _b_n0_1[0] and _b_n0_1[1] < n0_0_0.arg:
                            return n0_0_1, _sym_rules[13]
            if n0_1.op is _MUL:
                n0_1_0, n0_1_1 = n0_1.src
                if n1 is n0_1_1:
                    # rule split_idiv at rules/symbolic.rules:74
                    #   split_idiv: IDIV(ADD[MUL[x, c:CONST], d], c):index if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg -> x
                    #+ if _sym_st: _sym_st.attempts[13] += 1
                    # c = n0_1_1, d = n0_0, x = n0_1_0
                    if n0_1_1.arg > 0 and (n0_1_0._bounds if n0_1_0._bounds is not _UNSET else n0_1_0._bounds_())[0] >= 0:
                        _b_n0_0 = n0_0._bounds if n0_0._bounds is not _UNSET else n0_0._bounds_()
                        if 0 <= _b_n0_0[0] and _b_n0_0[1] < n0_1_1.arg:
                            return n0_1_0, _sym_rules[13]
                if n1 is n0_1_0:
                    # rule split_idiv at rules/symbolic.rules:74
                    #   split_idiv: IDIV(ADD[MUL[x, c:CONST], d], c):index if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg -> x
                    #+ if _sym_st: _sym_st.attempts[13] += 1
                    # c = n0_1_0, d = n0_0, x = n0_1_1
                    if n0_1_0.arg > 0 and (n0_1_1._bounds if n0_1_1._bounds is not _UNSET else n0_1_1._bounds_())[0] >= 0:
                        _b_n0_0 = n0_0._bounds if n0_0._bounds is not _UNSET else n0_0._bounds_()
                        if 0 <= _b_n0_0[0] and _b_n0_0[1] < n0_1_0.arg:
                            return n0_1_1, _sym_rules[13]
        if n0.dtype is _dt_index:
            # rule divmod_fold at rules/symbolic.rules:86
            #   divmod_fold: {IDIV, MOD}(x:index, c:CONST) as e if c.arg > 0 -> fold_divmod(e)
            #+ if _sym_st: _sym_st.attempts[16] += 1
            # c = n1, e = n, x = n0
            if n1.arg > 0:
                _r = fold_divmod(n)
                if _r is not None:
                    if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                    if _r is not n: return _r, _sym_rules[16]
            # rule idiv_in_range at rules/symbolic.rules:91
            #   idiv_in_range: IDIV(x:index, c:CONST) if 0 <= x.vmin and x.vmax < c.arg -> 0
            #+ if _sym_st: _sym_st.attempts[18] += 1
            # c = n1, x = n0
            _b_n0 = n0._bounds if n0._bounds is not _UNSET else n0._bounds_()
            if 0 <= _b_n0[0] and _b_n0[1] < n1.arg:
                _r = n.const_like(0)
                if _r is not n: return _r, _sym_rules[18]
    else:
        if n0.op is _MUL and n.dtype is _dt_index:
            n0_0, n0_1 = n0.src
            if n1 is n0_1:
                # rule mul_idiv at rules/symbolic.rules:53
                #   mul_idiv: IDIV(MUL[x, c:CONST], c):index if c.arg != 0 -> x
                #+ if _sym_st: _sym_st.attempts[3] += 1
                # c = n0_1, x = n0_0
                if n0_1.arg != 0:
                    return n0_0, _sym_rules[3]
            if n1 is n0_0:
                # rule mul_idiv at rules/symbolic.rules:53
                #   mul_idiv: IDIV(MUL[x, c:CONST], c):index if c.arg != 0 -> x
                #+ if _sym_st: _sym_st.attempts[3] += 1
                # c = n0_0, x = n0_1
                if n0_0.arg != 0:
                    return n0_1, _sym_rules[3]
        if n0.dtype is _dt_index:
            # rule divmod_fold at rules/symbolic.rules:86
            #   divmod_fold: {IDIV, MOD}(x:index, c:CONST) as e if c.arg > 0 -> fold_divmod(e)
            #+ if _sym_st: _sym_st.attempts[16] += 1
            # c = n1, e = n, x = n0
            if n1.arg > 0:
                _r = fold_divmod(n)
                if _r is not None:
                    if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                    if _r is not n: return _r, _sym_rules[16]
            # rule idiv_in_range at rules/symbolic.rules:91
            #   idiv_in_range: IDIV(x:index, c:CONST) if 0 <= x.vmin and x.vmax < c.arg -> 0
            #+ if _sym_st: _sym_st.attempts[18] += 1
            # c = n1, x = n0
            _b_n0 = n0._bounds if n0._bounds is not _UNSET else n0._bounds_()
            if 0 <= _b_n0[0] and _b_n0[1] < n1.arg:
                _r = n.const_like(0)
                if _r is not n: return _r, _sym_rules[18]
    return None

def _sym_MOD(n, ctx):
    try:
        n0, n1 = n.src
    except ValueError:
        return None
    # no rule here matches unless a source has one of these ops (a quick rejection)
    if n1.op is not _CONST: return None
    if n1.arg == 1 and n0.dtype in _DT0:
        # rule mod_one at rules/symbolic.rules:24
        #   mod_one: MOD(x:ints, 1) -> 0
        #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[7] += 1
        # x = n0
        _r = n.const_like(0)
        if _r is not n: return _r, _symbolic_simple_rules[7]
    if n0.op is _CONST:
        # rule fold_binary at rules/symbolic.rules:38
        #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
        #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[13] += 1
        _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
        if _r is not None and _r is not n: return _r, _symbolic_simple_rules[13]
    if n0.op is _ADD:
        if n.dtype is _dt_index:
            n0_0, n0_1 = n0.src
            if n0_0.op is _MUL:
                n0_0_0, n0_0_1 = n0_0.src
                if n1 is n0_0_1:
                    # rule split_mod at rules/symbolic.rules:75
                    #   split_mod: MOD(ADD[MUL[x, c:CONST], d], c):index if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg -> d
                    #+ if _sym_st: _sym_st.attempts[14] += 1
                    # c = n0_0_1, d = n0_1, x = n0_0_0
                    if n0_0_1.arg > 0 and (n0_0_0._bounds if n0_0_0._bounds is not _UNSET else n0_0_0._bounds_())[0] >= 0:
                        _b_n0_1 = n0_1._bounds if n0_1._bounds is not _UNSET else n0_1._bounds_()
                        if 0 <= _b_n0_1[0] and _b_n0_1[1] < n0_0_1.arg:
                            return n0_1, _sym_rules[14]
                if n1 is n0_0_0:
                    # rule split_mod at rules/symbolic.rules:75
                    #   split_mod: MOD(ADD[MUL[x, c:CONST], d], c):index if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg -> d
                    #+ if _sym_st: _sym_st.attempts[14] += 1
                    # c = n0_0_0, d = n0_1, x = n0_0_1
                    if n0_0_0.arg > 0 and (n0_0_1._bounds if n0_0_1._bounds is not _UNSET else n0_0_1._bounds_())[0] >= 0:
                        _b_n0_1 = n0_1._bounds if n0_1._bounds is not _UNSET else n0_1._bounds_()
                        if 0 <= _b_n0_1[0] and _b_n0_1[1] < n0_0_0.arg:
                            return n0_1, _sym_rules[14]
            if n0_1.op is _MUL:
                n0_1_0, n0_1_1 = n0_1.src
                if n1 is n0_1_1:
                    # rule split_mod at rules/symbolic.rules:75
                    #   split_mod: MOD(ADD[MUL[x, c:CONST], d], c):index if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg -> d
                    #+ if _sym_st: _sym_st.attempts[14] += 1
                    # c = n0_1_1, d = n0_0, x = n0_1_0
                    if n0_1_1.arg > 0 and (n0_1_0._bounds if n0_1_0._bounds is not _UNSET else n0_1_0._bounds_())[0] >= 0:
                        _b_n0_0 = n0_0._bounds if n0_0._bounds is not _UNSET else n0_0._bounds_()
                        if 0 <= _b_n0_0[0] and _b_n0_0[1] < n0_1_1.arg:
                            return n0_0, _sym_rules[14]
                if n1 is n0_1_0:
                    # rule split_mod at rules/symbolic.rules:75
                    #   split_mod: MOD(ADD[MUL[x, c:CONST], d], c):index if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg -> d
                    #+ if _sym_st: _sym_st.attempts[14] += 1
                    # c = n0_1_0, d = n0_0, x = n0_1_1
                    if n0_1_0.arg > 0 and (n0_1_1._bounds if n0_1_1._bounds is not _UNSET else n0_1_1._bounds_())[0] >= 0:
                        _b_n0_0 = n0_0._bounds if n0_0._bounds is not _UNSET else n0_0._bounds_()
                        if 0 <= _b_n0_0[0] and _b_n0_0[1] < n0_1_0.arg:
                            return n0_0, _sym_rules[14]
            if n0_0.op is _MUL:
                n0_0_0, n0_0_1 = n0_0.src
                if n0_0_1.op is _CONST:
                    # rule mod_coeff at rules/symbolic.rules:81
                    #   mod_coeff: MOD(ADD[MUL[x, a:CONST], d], c:CONST):index if 0 < c.arg < a.arg and x.vmin >= 0 and d.vmin >= 0 -> (x * (a.arg % c.arg) + d) % c
                    #+ if _sym_st: _sym_st.attempts[15] += 1
                    # a = n0_0_1, c = n1, d = n0_1, x = n0_0_0
                    if 0 < n1.arg < n0_0_1.arg and (n0_0_0._bounds if n0_0_0._bounds is not _UNSET else n0_0_0._bounds_())[0] >= 0 and (n0_1._bounds if n0_1._bounds is not _UNSET else n0_1._bounds_())[0] >= 0:
                        _r = (n0_0_0 * (n0_0_1.arg % n1.arg) + n0_1) % n1
                        if _r is not None:
                            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                            if _r is not n: return _r, _sym_rules[15]
                if n0_0_0.op is _CONST:
                    # rule mod_coeff at rules/symbolic.rules:81
                    #   mod_coeff: MOD(ADD[MUL[x, a:CONST], d], c:CONST):index if 0 < c.arg < a.arg and x.vmin >= 0 and d.vmin >= 0 -> (x * (a.arg % c.arg) + d) % c
                    #+ if _sym_st: _sym_st.attempts[15] += 1
                    # a = n0_0_0, c = n1, d = n0_1, x = n0_0_1
                    if 0 < n1.arg < n0_0_0.arg and (n0_0_1._bounds if n0_0_1._bounds is not _UNSET else n0_0_1._bounds_())[0] >= 0 and (n0_1._bounds if n0_1._bounds is not _UNSET else n0_1._bounds_())[0] >= 0:
                        _r = (n0_0_1 * (n0_0_0.arg % n1.arg) + n0_1) % n1
                        if _r is not None:
                            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                            if _r is not n: return _r, _sym_rules[15]
            if n0_1.op is _MUL:
                n0_1_0, n0_1_1 = n0_1.src
                if n0_1_1.op is _CONST:
                    # rule mod_coeff at rules/symbolic.rules:81
                    #   mod_coeff: MOD(ADD[MUL[x, a:CONST], d], c:CONST):index if 0 < c.arg < a.arg and x.vmin >= 0 and d.vmin >= 0 -> (x * (a.arg % c.arg) + d) % c
                    #+ if _sym_st: _sym_st.attempts[15] += 1
                    # a = n0_1_1, c = n1, d = n0_0, x = n0_1_0
                    if 0 < n1.arg < n0_1_1.arg and (n0_1_0._bounds if n0_1_0._bounds is not _UNSET else n0_1_0._bounds_())[0] >= 0 and (n0_0._bounds if n0_0._bounds is not _UNSET else n0_0._bounds_())[0] >= 0:
                        _r = (n0_1_0 * (n0_1_1.arg % n1.arg) + n0_0) % n1
                        if _r is not None:
                            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                            if _r is not n: return _r, _sym_rules[15]
                if n0_1_0.op is _CONST:
                    # rule mod_coeff at rules/symbolic.rules:81
                    #   mod_coeff: MOD(ADD[MUL[x, a:CONST], d], c:CONST):index if 0 < c.arg < a.arg and x.vmin >= 0 and d.vmin >= 0 -> (x * (a.arg % c.arg) + d) % c
                    #+ if _sym_st: _sym_st.attempts[15] += 1
                    # a = n0_1_0, c = n1, d = n0_0, x = n0_1_1
                    if 0 < n1.arg < n0_1_0.arg and (n0_1_1._bounds if n0_1_1._bounds is not _UNSET else n0_1_1._bounds_())[0] >= 0 and (n0_0._bounds if n0_0._bounds is not _UNSET else n0_0._bounds_())[0] >= 0:
                        _r = (n0_1_1 * (n0_1_0.arg % n1.arg) + n0_0) % n1
                        if _r is not None:
                            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                            if _r is not n: return _r, _sym_rules[15]
        if n0.dtype is _dt_index:
            # rule divmod_fold at rules/symbolic.rules:86
            #   divmod_fold: {IDIV, MOD}(x:index, c:CONST) as e if c.arg > 0 -> fold_divmod(e)
            #+ if _sym_st: _sym_st.attempts[16] += 1
            # c = n1, e = n, x = n0
            if n1.arg > 0:
                _r = fold_divmod(n)
                if _r is not None:
                    if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                    if _r is not n: return _r, _sym_rules[16]
            # rule mod_in_range at rules/symbolic.rules:90
            #   mod_in_range: MOD(x:index, c:CONST) if 0 <= x.vmin and x.vmax < c.arg -> x
            #+ if _sym_st: _sym_st.attempts[17] += 1
            # c = n1, x = n0
            _b_n0 = n0._bounds if n0._bounds is not _UNSET else n0._bounds_()
            if 0 <= _b_n0[0] and _b_n0[1] < n1.arg:
                return n0, _sym_rules[17]
    else:
        if n0.op is _MUL and n.dtype is _dt_index:
            n0_0, n0_1 = n0.src
            if n1 is n0_1:
                # rule mul_mod at rules/symbolic.rules:54
                #   mul_mod: MOD(MUL[x, c:CONST], c):index if c.arg != 0 -> 0
                #+ if _sym_st: _sym_st.attempts[4] += 1
                # c = n0_1, x = n0_0
                if n0_1.arg != 0:
                    _r = n.const_like(0)
                    if _r is not n: return _r, _sym_rules[4]
            if n1 is n0_0:
                # rule mul_mod at rules/symbolic.rules:54
                #   mul_mod: MOD(MUL[x, c:CONST], c):index if c.arg != 0 -> 0
                #+ if _sym_st: _sym_st.attempts[4] += 1
                # c = n0_0, x = n0_1
                if n0_0.arg != 0:
                    _r = n.const_like(0)
                    if _r is not n: return _r, _sym_rules[4]
        if n0.op is _MOD:
            n0_0, n0_1 = n0.src
            if n1 is n0_1:
                # rule mod_mod at rules/symbolic.rules:70
                #   mod_mod: MOD(MOD(x, c:CONST) as m, c) if c.arg != 0 -> m
                #+ if _sym_st: _sym_st.attempts[12] += 1
                # c = n0_1, m = n0, x = n0_0
                if n0_1.arg != 0:
                    return n0, _sym_rules[12]
        if n0.dtype is _dt_index:
            # rule divmod_fold at rules/symbolic.rules:86
            #   divmod_fold: {IDIV, MOD}(x:index, c:CONST) as e if c.arg > 0 -> fold_divmod(e)
            #+ if _sym_st: _sym_st.attempts[16] += 1
            # c = n1, e = n, x = n0
            if n1.arg > 0:
                _r = fold_divmod(n)
                if _r is not None:
                    if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                    if _r is not n: return _r, _sym_rules[16]
            # rule mod_in_range at rules/symbolic.rules:90
            #   mod_in_range: MOD(x:index, c:CONST) if 0 <= x.vmin and x.vmax < c.arg -> x
            #+ if _sym_st: _sym_st.attempts[17] += 1
            # c = n1, x = n0
            _b_n0 = n0._bounds if n0._bounds is not _UNSET else n0._bounds_()
            if 0 <= _b_n0[0] and _b_n0[1] < n1.arg:
                return n0, _sym_rules[17]
    return None

def _sym_CMPLT(n, ctx):
    try:
        n0, n1 = n.src
    except ValueError:
        return None
    if n0.op is _CONST and n1.op is _CONST:
        # rule fold_binary at rules/symbolic.rules:38
        #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
        #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[13] += 1
        _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
        if _r is not None and _r is not n: return _r, _symbolic_simple_rules[13]
    if n0.dtype is _dt_index:
        # rule cmp_bounds at rules/symbolic.rules:93
        #   cmp_bounds: Comparison(a:index, b) as e if e.vmin == e.vmax -> e.vmin
        #+ if _sym_st: _sym_st.attempts[19] += 1
        # a = n0, b = n1, e = n
        _b_n = n._bounds if n._bounds is not _UNSET else n._bounds_()
        if _b_n[0] == _b_n[1]:
            _r = _b_n[0]
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _sym_rules[19]
    return None

def _sym_CMPNE(n, ctx):
    try:
        n0, n1 = n.src
    except ValueError:
        return None
    if n0.op is _CONST and n1.op is _CONST:
        # rule fold_binary at rules/symbolic.rules:38
        #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
        #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[13] += 1
        _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
        if _r is not None and _r is not n: return _r, _symbolic_simple_rules[13]
    if n0.dtype is _dt_index:
        # rule cmp_bounds at rules/symbolic.rules:93
        #   cmp_bounds: Comparison(a:index, b) as e if e.vmin == e.vmax -> e.vmin
        #+ if _sym_st: _sym_st.attempts[19] += 1
        # a = n0, b = n1, e = n
        _b_n = n._bounds if n._bounds is not _UNSET else n._bounds_()
        if _b_n[0] == _b_n[1]:
            _r = _b_n[0]
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _sym_rules[19]
    return None

def _sym_CMPEQ(n, ctx):
    try:
        n0, n1 = n.src
    except ValueError:
        return None
    if n0.op is _CONST and n1.op is _CONST:
        # rule fold_binary at rules/symbolic.rules:38
        #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
        #+ if _symbolic_simple_st: _symbolic_simple_st.attempts[13] += 1
        _r = _symbolic_simple_r13(n, ctx, n0, n1, n)
        if _r is not None and _r is not n: return _r, _symbolic_simple_rules[13]
    if n0.dtype is _dt_index:
        # rule cmp_bounds at rules/symbolic.rules:93
        #   cmp_bounds: Comparison(a:index, b) as e if e.vmin == e.vmax -> e.vmin
        #+ if _sym_st: _sym_st.attempts[19] += 1
        # a = n0, b = n1, e = n
        _b_n = n._bounds if n._bounds is not _UNSET else n._bounds_()
        if _b_n[0] == _b_n[1]:
            _r = _b_n[0]
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _sym_rules[19]
    return None


_sym_part = RuleMatcher('sym', _sym_rules, {
    Ops.ADD: _sym_ADD,
    Ops.SUB: _sym_SUB,
    Ops.MUL: _sym_MUL,
    Ops.IDIV: _sym_IDIV,
    Ops.MOD: _sym_MOD,
    Ops.CMPLT: _sym_CMPLT,
    Ops.CMPNE: _sym_CMPNE,
    Ops.CMPEQ: _sym_CMPEQ,
}, home=(globals(), '_sym_st'), over=True)


# ======================================================================== the rule sets
_S_symbolic_simple = compose('symbolic_simple', _symbolic_simple_part)
symbolic_simple = _S_symbolic_simple
_S_sym = compose('sym', _S_symbolic_simple, _sym_part)
sym = _S_sym

MATCHERS = {
    'symbolic_simple': _S_symbolic_simple,
    'sym': _S_sym,
}

PIPELINES = {}
