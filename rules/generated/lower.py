# generated from rules/lower.rules by `rulegrad gen`; do not edit
# source sha256: b2d2a8a91b6ed3946ed521097bd5dbb38dc79abed3cf188695fa4b7e4a20e38a
'Matchers for the rule sets of rules/lower.rules: lower_const, lower_half, lower_alu, lower_valid, lower_load, lower_reduce, lower.'

from math import prod  # noqa: F401

from rulegrad.runtime.dtype import DTYPE_CLASSES, dtypes  # noqa: F401
from rulegrad.runtime.matcher import RuleMatcher, compose, helper_from, match_stats  # noqa: F401
from rulegrad.runtime.matcher import as_uop as _as_uop  # noqa: F401
from rulegrad.runtime.ops import GroupOp, Ops  # noqa: F401
from rulegrad.runtime.rewrite import RewriteNotReady, RuleInfo  # noqa: F401
from rulegrad.runtime.uop import UNSET as _UNSET  # noqa: F401
from rulegrad.runtime.uop import UOp  # noqa: F401
from rulegrad.runtime.uop import new_uop as _new  # noqa: F401
from rulegrad.rules.lower_helpers import constant_reduce
from rulegrad.rules.lower_helpers import gated_load
from rulegrad.rules.lower_helpers import in_float32
from rulegrad.rules.lower_helpers import is_loop
from rulegrad.rules.lower_helpers import is_pow2
from rulegrad.rules.lower_helpers import log2_int
from rulegrad.rules.lower_helpers import reduce_loop

SOURCE = 'rules/lower.rules'
SOURCE_SHA256 = 'b2d2a8a91b6ed3946ed521097bd5dbb38dc79abed3cf188695fa4b7e4a20e38a'
DEPENDENCIES = ()
_ADD = Ops.ADD
_AND = Ops.AND
_CAST = Ops.CAST
_CONST = Ops.CONST
_INDEX = Ops.INDEX
_MAX = Ops.MAX
_MIN = Ops.MIN
_SHR = Ops.SHR
_dt_float16 = dtypes.float16
_dt_float32 = dtypes.float32
_dt_index = dtypes.index


# ======================================================================== lower_const
_lower_const_rules = (
    RuleInfo('reduce_const', 'rules/lower.rules', 17, 'reduce_const: REDUCE as r if v is not None -> v where v = constant_reduce(r)'),
)
_lower_const_st = match_stats('lower_const', _lower_const_rules)  # None unless counting

def _lower_const_REDUCE(n, ctx):
    # rule reduce_const at rules/lower.rules:17
    #   reduce_const: REDUCE as r if v is not None -> v where v = constant_reduce(r)
    #+ if _lower_const_st: _lower_const_st.attempts[0] += 1
    # r = n
    v = constant_reduce(n)
    if v is not None:
        _r = v
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _lower_const_rules[0]
    return None


_lower_const_part = RuleMatcher('lower_const', _lower_const_rules, {
    Ops.REDUCE: _lower_const_REDUCE,
}, home=(globals(), '_lower_const_st'))


# ======================================================================== lower_half
_lower_half_rules = (
    RuleInfo('half_unary', 'rules/lower.rules', 26, 'half_unary: Unary(x:float16) as e -> in_float32(e)'),
    RuleInfo('half_binary', 'rules/lower.rules', 27, 'half_binary: {ADD, SUB, MUL, FDIV, MAX, MIN, POW, MOD, IDIV}(_:float16, _) as e -> in_float32(e)'),
    RuleInfo('half_sum', 'rules/lower.rules', 30, 'half_sum: REDUCE(_:float16, ...) as r if r.arg in (Ops.ADD, Ops.MAX, Ops.MIN) -> in_float32(r)'),
    RuleInfo('half_roundtrip', 'rules/lower.rules', 33, 'half_roundtrip: CAST(CAST(x:float16, dtype=dtypes.float32), dtype=dtypes.float16) -> x'),
)
_lower_half_st = match_stats('lower_half', _lower_half_rules)  # None unless counting

def _lower_half_r0(n, ctx, e, x):
    # rule half_unary at rules/lower.rules:26
    #   half_unary: Unary(x:float16) as e -> in_float32(e)
    return _as_uop(n, in_float32(e))

def _lower_half_r1(n, ctx, e):
    # rule half_binary at rules/lower.rules:27
    #   half_binary: {ADD, SUB, MUL, FDIV, MAX, MIN, POW, MOD, IDIV}(_:float16, _) as e -> in_float32(e)
    return _as_uop(n, in_float32(e))

def _lower_half_REDUCE(n, ctx):
    if len(n.src) >= 1:
        n0 = n.src[0]
        if n0.dtype is _dt_float16:
            # rule half_sum at rules/lower.rules:30
            #   half_sum: REDUCE(_:float16, ...) as r if r.arg in (Ops.ADD, Ops.MAX, Ops.MIN) -> in_float32(r)
            #+ if _lower_half_st: _lower_half_st.attempts[2] += 1
            # r = n
            if n.arg in (_ADD, _MAX, _MIN):
                _r = in_float32(n)
                if _r is not None:
                    if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                    if _r is not n: return _r, _lower_half_rules[2]
    return None

def _lower_half_CAST(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is _CAST and n.dtype is _dt_float16 and len(n0.src) == 1:
            n0_0 = n0.src[0]
            if n0.dtype is _dt_float32 and n0_0.dtype is _dt_float16:
                # rule half_roundtrip at rules/lower.rules:33
                #   half_roundtrip: CAST(CAST(x:float16, dtype=dtypes.float32), dtype=dtypes.float16) -> x
                #+ if _lower_half_st: _lower_half_st.attempts[3] += 1
                # x = n0_0
                return n0_0, _lower_half_rules[3]
    return None

def _lower_half_NEG(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.dtype is _dt_float16:
            # rule half_unary at rules/lower.rules:26
            #   half_unary: Unary(x:float16) as e -> in_float32(e)
            #+ if _lower_half_st: _lower_half_st.attempts[0] += 1
            _r = _lower_half_r0(n, ctx, n, n0)
            if _r is not None and _r is not n: return _r, _lower_half_rules[0]
    return None

def _lower_half_EXP(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.dtype is _dt_float16:
            # rule half_unary at rules/lower.rules:26
            #   half_unary: Unary(x:float16) as e -> in_float32(e)
            #+ if _lower_half_st: _lower_half_st.attempts[0] += 1
            _r = _lower_half_r0(n, ctx, n, n0)
            if _r is not None and _r is not n: return _r, _lower_half_rules[0]
    return None

def _lower_half_LOG(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.dtype is _dt_float16:
            # rule half_unary at rules/lower.rules:26
            #   half_unary: Unary(x:float16) as e -> in_float32(e)
            #+ if _lower_half_st: _lower_half_st.attempts[0] += 1
            _r = _lower_half_r0(n, ctx, n, n0)
            if _r is not None and _r is not n: return _r, _lower_half_rules[0]
    return None

def _lower_half_EXP2(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.dtype is _dt_float16:
            # rule half_unary at rules/lower.rules:26
            #   half_unary: Unary(x:float16) as e -> in_float32(e)
            #+ if _lower_half_st: _lower_half_st.attempts[0] += 1
            _r = _lower_half_r0(n, ctx, n, n0)
            if _r is not None and _r is not n: return _r, _lower_half_rules[0]
    return None

def _lower_half_LOG2(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.dtype is _dt_float16:
            # rule half_unary at rules/lower.rules:26
            #   half_unary: Unary(x:float16) as e -> in_float32(e)
            #+ if _lower_half_st: _lower_half_st.attempts[0] += 1
            _r = _lower_half_r0(n, ctx, n, n0)
            if _r is not None and _r is not n: return _r, _lower_half_rules[0]
    return None

def _lower_half_SIN(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.dtype is _dt_float16:
            # rule half_unary at rules/lower.rules:26
            #   half_unary: Unary(x:float16) as e -> in_float32(e)
            #+ if _lower_half_st: _lower_half_st.attempts[0] += 1
            _r = _lower_half_r0(n, ctx, n, n0)
            if _r is not None and _r is not n: return _r, _lower_half_rules[0]
    return None

def _lower_half_SQRT(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.dtype is _dt_float16:
            # rule half_unary at rules/lower.rules:26
            #   half_unary: Unary(x:float16) as e -> in_float32(e)
            #+ if _lower_half_st: _lower_half_st.attempts[0] += 1
            _r = _lower_half_r0(n, ctx, n, n0)
            if _r is not None and _r is not n: return _r, _lower_half_rules[0]
    return None

def _lower_half_RECIPROCAL(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.dtype is _dt_float16:
            # rule half_unary at rules/lower.rules:26
            #   half_unary: Unary(x:float16) as e -> in_float32(e)
            #+ if _lower_half_st: _lower_half_st.attempts[0] += 1
            _r = _lower_half_r0(n, ctx, n, n0)
            if _r is not None and _r is not n: return _r, _lower_half_rules[0]
    return None

def _lower_half_TRUNC(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.dtype is _dt_float16:
            # rule half_unary at rules/lower.rules:26
            #   half_unary: Unary(x:float16) as e -> in_float32(e)
            #+ if _lower_half_st: _lower_half_st.attempts[0] += 1
            _r = _lower_half_r0(n, ctx, n, n0)
            if _r is not None and _r is not n: return _r, _lower_half_rules[0]
    return None

def _lower_half_ADD(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        if n0.dtype is _dt_float16:
            # rule half_binary at rules/lower.rules:27
            #   half_binary: {ADD, SUB, MUL, FDIV, MAX, MIN, POW, MOD, IDIV}(_:float16, _) as e -> in_float32(e)
            #+ if _lower_half_st: _lower_half_st.attempts[1] += 1
            _r = _lower_half_r1(n, ctx, n)
            if _r is not None and _r is not n: return _r, _lower_half_rules[1]
    return None

def _lower_half_SUB(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        if n0.dtype is _dt_float16:
            # rule half_binary at rules/lower.rules:27
            #   half_binary: {ADD, SUB, MUL, FDIV, MAX, MIN, POW, MOD, IDIV}(_:float16, _) as e -> in_float32(e)
            #+ if _lower_half_st: _lower_half_st.attempts[1] += 1
            _r = _lower_half_r1(n, ctx, n)
            if _r is not None and _r is not n: return _r, _lower_half_rules[1]
    return None

def _lower_half_MUL(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        if n0.dtype is _dt_float16:
            # rule half_binary at rules/lower.rules:27
            #   half_binary: {ADD, SUB, MUL, FDIV, MAX, MIN, POW, MOD, IDIV}(_:float16, _) as e -> in_float32(e)
            #+ if _lower_half_st: _lower_half_st.attempts[1] += 1
            _r = _lower_half_r1(n, ctx, n)
            if _r is not None and _r is not n: return _r, _lower_half_rules[1]
    return None

def _lower_half_FDIV(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        if n0.dtype is _dt_float16:
            # rule half_binary at rules/lower.rules:27
            #   half_binary: {ADD, SUB, MUL, FDIV, MAX, MIN, POW, MOD, IDIV}(_:float16, _) as e -> in_float32(e)
            #+ if _lower_half_st: _lower_half_st.attempts[1] += 1
            _r = _lower_half_r1(n, ctx, n)
            if _r is not None and _r is not n: return _r, _lower_half_rules[1]
    return None

def _lower_half_IDIV(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        if n0.dtype is _dt_float16:
            # rule half_binary at rules/lower.rules:27
            #   half_binary: {ADD, SUB, MUL, FDIV, MAX, MIN, POW, MOD, IDIV}(_:float16, _) as e -> in_float32(e)
            #+ if _lower_half_st: _lower_half_st.attempts[1] += 1
            _r = _lower_half_r1(n, ctx, n)
            if _r is not None and _r is not n: return _r, _lower_half_rules[1]
    return None

def _lower_half_MOD(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        if n0.dtype is _dt_float16:
            # rule half_binary at rules/lower.rules:27
            #   half_binary: {ADD, SUB, MUL, FDIV, MAX, MIN, POW, MOD, IDIV}(_:float16, _) as e -> in_float32(e)
            #+ if _lower_half_st: _lower_half_st.attempts[1] += 1
            _r = _lower_half_r1(n, ctx, n)
            if _r is not None and _r is not n: return _r, _lower_half_rules[1]
    return None

def _lower_half_MAX(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        if n0.dtype is _dt_float16:
            # rule half_binary at rules/lower.rules:27
            #   half_binary: {ADD, SUB, MUL, FDIV, MAX, MIN, POW, MOD, IDIV}(_:float16, _) as e -> in_float32(e)
            #+ if _lower_half_st: _lower_half_st.attempts[1] += 1
            _r = _lower_half_r1(n, ctx, n)
            if _r is not None and _r is not n: return _r, _lower_half_rules[1]
    return None

def _lower_half_MIN(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        if n0.dtype is _dt_float16:
            # rule half_binary at rules/lower.rules:27
            #   half_binary: {ADD, SUB, MUL, FDIV, MAX, MIN, POW, MOD, IDIV}(_:float16, _) as e -> in_float32(e)
            #+ if _lower_half_st: _lower_half_st.attempts[1] += 1
            _r = _lower_half_r1(n, ctx, n)
            if _r is not None and _r is not n: return _r, _lower_half_rules[1]
    return None

def _lower_half_POW(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        if n0.dtype is _dt_float16:
            # rule half_binary at rules/lower.rules:27
            #   half_binary: {ADD, SUB, MUL, FDIV, MAX, MIN, POW, MOD, IDIV}(_:float16, _) as e -> in_float32(e)
            #+ if _lower_half_st: _lower_half_st.attempts[1] += 1
            _r = _lower_half_r1(n, ctx, n)
            if _r is not None and _r is not n: return _r, _lower_half_rules[1]
    return None

def _lower_half_COS(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.dtype is _dt_float16:
            # rule half_unary at rules/lower.rules:26
            #   half_unary: Unary(x:float16) as e -> in_float32(e)
            #+ if _lower_half_st: _lower_half_st.attempts[0] += 1
            _r = _lower_half_r0(n, ctx, n, n0)
            if _r is not None and _r is not n: return _r, _lower_half_rules[0]
    return None


_lower_half_part = RuleMatcher('lower_half', _lower_half_rules, {
    Ops.REDUCE: _lower_half_REDUCE,
    Ops.CAST: _lower_half_CAST,
    Ops.NEG: _lower_half_NEG,
    Ops.EXP: _lower_half_EXP,
    Ops.LOG: _lower_half_LOG,
    Ops.EXP2: _lower_half_EXP2,
    Ops.LOG2: _lower_half_LOG2,
    Ops.SIN: _lower_half_SIN,
    Ops.SQRT: _lower_half_SQRT,
    Ops.RECIPROCAL: _lower_half_RECIPROCAL,
    Ops.TRUNC: _lower_half_TRUNC,
    Ops.ADD: _lower_half_ADD,
    Ops.SUB: _lower_half_SUB,
    Ops.MUL: _lower_half_MUL,
    Ops.FDIV: _lower_half_FDIV,
    Ops.IDIV: _lower_half_IDIV,
    Ops.MOD: _lower_half_MOD,
    Ops.MAX: _lower_half_MAX,
    Ops.MIN: _lower_half_MIN,
    Ops.POW: _lower_half_POW,
    Ops.COS: _lower_half_COS,
}, home=(globals(), '_lower_half_st'))


# ======================================================================== lower_alu
_lower_alu_rules = (
    RuleInfo('mulacc', 'rules/lower.rules', 38, 'mulacc: MULACC(a, b, c) -> a * b + c'),
    RuleInfo('idiv_pow2', 'rules/lower.rules', 42, 'idiv_pow2: IDIV(x:index, c:CONST) if x.vmin >= 0 and is_pow2(c.arg) -> SHR(x, log2_int(x, c.arg))'),
    RuleInfo('mod_pow2', 'rules/lower.rules', 43, 'mod_pow2: MOD(x:index, c:CONST) if x.vmin >= 0 and is_pow2(c.arg) -> AND(x, x.const_like(c.arg - 1))'),
)
_lower_alu_st = match_stats('lower_alu', _lower_alu_rules)  # None unless counting

def _lower_alu_IDIV(n, ctx):
    try:
        n0, n1 = n.src
    except ValueError:
        return None
    if n1.op is _CONST and n0.dtype is _dt_index:
        # rule idiv_pow2 at rules/lower.rules:42
        #   idiv_pow2: IDIV(x:index, c:CONST) if x.vmin >= 0 and is_pow2(c.arg) -> SHR(x, log2_int(x, c.arg))
        #+ if _lower_alu_st: _lower_alu_st.attempts[1] += 1
        # c = n1, x = n0
        if (n0._bounds if n0._bounds is not _UNSET else n0._bounds_())[0] >= 0 and is_pow2(n1.arg):
            _r = _new(UOp, _SHR, n0.dtype, (n0, log2_int(n0, n1.arg)))
            if _r is not n: return _r, _lower_alu_rules[1]
    return None

def _lower_alu_MOD(n, ctx):
    try:
        n0, n1 = n.src
    except ValueError:
        return None
    if n1.op is _CONST and n0.dtype is _dt_index:
        # rule mod_pow2 at rules/lower.rules:43
        #   mod_pow2: MOD(x:index, c:CONST) if x.vmin >= 0 and is_pow2(c.arg) -> AND(x, x.const_like(c.arg - 1))
        #+ if _lower_alu_st: _lower_alu_st.attempts[2] += 1
        # c = n1, x = n0
        if (n0._bounds if n0._bounds is not _UNSET else n0._bounds_())[0] >= 0 and is_pow2(n1.arg):
            _r = _new(UOp, _AND, n0.dtype, (n0, n0.const_like(n1.arg - 1)))
            if _r is not n: return _r, _lower_alu_rules[2]
    return None

def _lower_alu_MULACC(n, ctx):
    try:
        n0, n1, n2 = n.src
    except ValueError:
        return None
    # rule mulacc at rules/lower.rules:38
    #   mulacc: MULACC(a, b, c) -> a * b + c
    #+ if _lower_alu_st: _lower_alu_st.attempts[0] += 1
    # a = n0, b = n1, c = n2
    _r = n0 * n1 + n2
    if _r is not None:
        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
        if _r is not n: return _r, _lower_alu_rules[0]
    return None


_lower_alu_part = RuleMatcher('lower_alu', _lower_alu_rules, {
    Ops.IDIV: _lower_alu_IDIV,
    Ops.MOD: _lower_alu_MOD,
    Ops.MULACC: _lower_alu_MULACC,
}, home=(globals(), '_lower_alu_st'))


# ======================================================================== lower_valid
_lower_valid_rules = (
    RuleInfo('valid_true', 'rules/lower.rules', 50, 'valid_true: INDEX(b, off, True) -> INDEX(b, off, dtype=b.dtype)'),
    RuleInfo('valid_false', 'rules/lower.rules', 51, 'valid_false: LOAD(INDEX(_, _, False)) -> 0'),
)
_lower_valid_st = match_stats('lower_valid', _lower_valid_rules)  # None unless counting

def _lower_valid_INDEX(n, ctx):
    try:
        n0, n1, n2 = n.src
    except ValueError:
        return None
    if n2.op is _CONST and n2.arg == True:
        # rule valid_true at rules/lower.rules:50
        #   valid_true: INDEX(b, off, True) -> INDEX(b, off, dtype=b.dtype)
        #+ if _lower_valid_st: _lower_valid_st.attempts[0] += 1
        # b = n0, off = n1
        _r = _new(UOp, _INDEX, n0.dtype, (n0, n1))
        if _r is not n: return _r, _lower_valid_rules[0]
    return None

def _lower_valid_LOAD(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is _INDEX and len(n0.src) == 3:
            n0_2 = n0.src[2]
            if n0_2.op is _CONST and n0_2.arg == False:
                # rule valid_false at rules/lower.rules:51
                #   valid_false: LOAD(INDEX(_, _, False)) -> 0
                #+ if _lower_valid_st: _lower_valid_st.attempts[1] += 1
                _r = n.const_like(0)
                if _r is not n: return _r, _lower_valid_rules[1]
    return None


_lower_valid_part = RuleMatcher('lower_valid', _lower_valid_rules, {
    Ops.INDEX: _lower_valid_INDEX,
    Ops.LOAD: _lower_valid_LOAD,
}, home=(globals(), '_lower_valid_st'))


# ======================================================================== lower_load
_lower_load_rules = (
    RuleInfo('guarded_load', 'rules/lower.rules', 59, 'guarded_load: LOAD(INDEX(_, _, valid) as idx) as ld if valid.op is not Ops.CONST -> gated_load(ld, idx)'),
)
_lower_load_st = match_stats('lower_load', _lower_load_rules)  # None unless counting

def _lower_load_LOAD(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is _INDEX and len(n0.src) == 3:
            n0_2 = n0.src[2]
            # rule guarded_load at rules/lower.rules:59
            #   guarded_load: LOAD(INDEX(_, _, valid) as idx) as ld if valid.op is not Ops.CONST -> gated_load(ld, idx)
            #+ if _lower_load_st: _lower_load_st.attempts[0] += 1
            # idx = n0, ld = n, valid = n0_2
            if n0_2.op is not _CONST:
                _r = gated_load(n, n0)
                if _r is not None:
                    if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                    if _r is not n: return _r, _lower_load_rules[0]
    return None


_lower_load_part = RuleMatcher('lower_load', _lower_load_rules, {
    Ops.LOAD: _lower_load_LOAD,
}, home=(globals(), '_lower_load_st'))


# ======================================================================== lower_reduce
_lower_reduce_rules = (
    RuleInfo('reduce_to_loop', 'rules/lower.rules', 68, 'reduce_to_loop: REDUCE as r if not is_loop(r) -> reduce_loop(r)'),
)
_lower_reduce_st = match_stats('lower_reduce', _lower_reduce_rules)  # None unless counting

def _lower_reduce_REDUCE(n, ctx):
    # rule reduce_to_loop at rules/lower.rules:68
    #   reduce_to_loop: REDUCE as r if not is_loop(r) -> reduce_loop(r)
    #+ if _lower_reduce_st: _lower_reduce_st.attempts[0] += 1
    # r = n
    if not is_loop(n):
        _r = reduce_loop(n)
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _lower_reduce_rules[0]
    return None


_lower_reduce_part = RuleMatcher('lower_reduce', _lower_reduce_rules, {
    Ops.REDUCE: _lower_reduce_REDUCE,
}, home=(globals(), '_lower_reduce_st'))


# ======================================================================== the rule sets
_S_lower_const = compose('lower_const', _lower_const_part)
lower_const = _S_lower_const
_S_lower_half = compose('lower_half', _lower_half_part)
lower_half = _S_lower_half
_S_lower_alu = compose('lower_alu', _lower_alu_part)
lower_alu = _S_lower_alu
_S_lower_valid = compose('lower_valid', _lower_valid_part)
lower_valid = _S_lower_valid
_S_lower_load = compose('lower_load', _lower_load_part)
lower_load = _S_lower_load
_S_lower_reduce = compose('lower_reduce', _lower_reduce_part)
lower_reduce = _S_lower_reduce
_S_lower = compose('lower', _S_lower_const, _S_lower_half, _S_lower_alu, _S_lower_valid, _S_lower_load, _S_lower_reduce)
lower = _S_lower

MATCHERS = {
    'lower_const': _S_lower_const,
    'lower_half': _S_lower_half,
    'lower_alu': _S_lower_alu,
    'lower_valid': _S_lower_valid,
    'lower_load': _S_lower_load,
    'lower_reduce': _S_lower_reduce,
    'lower': _S_lower,
}

PIPELINES = {}
