# generated from rules/opt.rules by `rulegrad gen`; do not edit
# source sha256: 21661db58fe49f530b16944cd530e31a7bdc105da19f9e4ac603164a0c6657b3
# imports rules/symbolic.rules sha256: 3a79ef5199b66a4f8ac8b5e4b60bfde0bf127f7610db78415da268b63a7b0a70
'Matchers for the rule sets of rules/opt.rules: opt_actions, opt_index, opt.'

from math import prod  # noqa: F401

from rulegrad.runtime.dtype import DTYPE_CLASSES, dtypes  # noqa: F401
from rulegrad.runtime.matcher import RuleMatcher, compose, helper_from, match_stats  # noqa: F401
from rulegrad.runtime.matcher import as_uop as _as_uop  # noqa: F401
from rulegrad.runtime.ops import GroupOp, Ops  # noqa: F401
from rulegrad.runtime.rewrite import RewriteNotReady, RuleInfo  # noqa: F401
from rulegrad.runtime.uop import UNSET as _UNSET  # noqa: F401
from rulegrad.runtime.uop import UOp  # noqa: F401
from rulegrad.runtime.uop import new_uop as _new  # noqa: F401
from rulegrad.rules.flash_helpers import flashable
from rulegrad.rules.flash_helpers import flashed
from rulegrad.rules.interchange_helpers import interchangeable
from rulegrad.rules.interchange_helpers import interchanged
from rulegrad.rules.lower_helpers import is_pow2
from rulegrad.rules.pack_helpers import packable
from rulegrad.rules.pack_helpers import packed
from rulegrad.rules.opt_helpers import small_reduce
from rulegrad.rules.thread_helpers import threadable
from rulegrad.rules.thread_helpers import threaded
from rulegrad.rules.opt_helpers import unrolled
from rulegrad.rules.opt_helpers import upcast
from rulegrad.rules.opt_helpers import upcastable
from rulegrad.rules.generated import symbolic as _generated_symbolic

SOURCE = 'rules/opt.rules'
SOURCE_SHA256 = '21661db58fe49f530b16944cd530e31a7bdc105da19f9e4ac603164a0c6657b3'
DEPENDENCIES = (('rules/symbolic.rules', '3a79ef5199b66a4f8ac8b5e4b60bfde0bf127f7610db78415da268b63a7b0a70'), )
_ADD = Ops.ADD
_CONST = Ops.CONST
_MUL = Ops.MUL
_dt_index = dtypes.index


# ======================================================================== opt_actions
_opt_actions_rules = (
    RuleInfo('unroll_reduce', 'rules/opt.rules', 22, 'unroll_reduce: REDUCE as r if small_reduce(r) -> unrolled(r)'),
    RuleInfo('thread_reduce', 'rules/opt.rules', 28, 'thread_reduce: REDUCE as r if threadable(r) -> threaded(r)'),
    RuleInfo('upcast_store', 'rules/opt.rules', 33, 'upcast_store: STORE as st if upcastable(st) -> upcast(st)'),
    RuleInfo('flash_store', 'rules/opt.rules', 39, 'flash_store: STORE as st if flashable(st) -> flashed(st)'),
    RuleInfo('pack_store', 'rules/opt.rules', 45, 'pack_store: STORE as st if packable(st) -> packed(st)'),
    RuleInfo('interchange_store', 'rules/opt.rules', 51, 'interchange_store: STORE as st if interchangeable(st) -> interchanged(st)'),
)
_opt_actions_st = match_stats('opt_actions', _opt_actions_rules)  # None unless counting

def _opt_actions_STORE(n, ctx):
    # rule upcast_store at rules/opt.rules:33
    #   upcast_store: STORE as st if upcastable(st) -> upcast(st)
    if _opt_actions_st: _opt_actions_st.attempts[2] += 1
    st = n
    if upcastable(st):
        _r = _as_uop(n, upcast(st))
        if _r is not None and _r is not n: return _r, _opt_actions_rules[2]
    # rule flash_store at rules/opt.rules:39
    #   flash_store: STORE as st if flashable(st) -> flashed(st)
    if _opt_actions_st: _opt_actions_st.attempts[3] += 1
    st = n
    if flashable(st):
        _r = _as_uop(n, flashed(st))
        if _r is not None and _r is not n: return _r, _opt_actions_rules[3]
    # rule pack_store at rules/opt.rules:45
    #   pack_store: STORE as st if packable(st) -> packed(st)
    if _opt_actions_st: _opt_actions_st.attempts[4] += 1
    st = n
    if packable(st):
        _r = _as_uop(n, packed(st))
        if _r is not None and _r is not n: return _r, _opt_actions_rules[4]
    # rule interchange_store at rules/opt.rules:51
    #   interchange_store: STORE as st if interchangeable(st) -> interchanged(st)
    if _opt_actions_st: _opt_actions_st.attempts[5] += 1
    st = n
    if interchangeable(st):
        _r = _as_uop(n, interchanged(st))
        if _r is not None and _r is not n: return _r, _opt_actions_rules[5]
    return None

def _opt_actions_REDUCE(n, ctx):
    # rule unroll_reduce at rules/opt.rules:22
    #   unroll_reduce: REDUCE as r if small_reduce(r) -> unrolled(r)
    if _opt_actions_st: _opt_actions_st.attempts[0] += 1
    r = n
    if small_reduce(r):
        _r = _as_uop(n, unrolled(r))
        if _r is not None and _r is not n: return _r, _opt_actions_rules[0]
    # rule thread_reduce at rules/opt.rules:28
    #   thread_reduce: REDUCE as r if threadable(r) -> threaded(r)
    if _opt_actions_st: _opt_actions_st.attempts[1] += 1
    r = n
    if threadable(r):
        _r = _as_uop(n, threaded(r))
        if _r is not None and _r is not n: return _r, _opt_actions_rules[1]
    return None


_opt_actions_part = RuleMatcher('opt_actions', _opt_actions_rules, {
    Ops.STORE: _opt_actions_STORE,
    Ops.REDUCE: _opt_actions_REDUCE,
}, home=(globals(), '_opt_actions_st'))


# ======================================================================== opt_index
_opt_index_rules = (
    RuleInfo('and_in_range', 'rules/opt.rules', 59, 'and_in_range: AND(x:index, c:CONST) if is_pow2(c.arg + 1) and 0 <= x.vmin and x.vmax <= c.arg -> x'),
    RuleInfo('and_offset', 'rules/opt.rules', 62, 'and_offset: AND(ADD[x:index, c:CONST], m:CONST) if is_pow2(m.arg + 1) and 0 <= x.vmin + (c.arg % (m.arg + 1)) and x.vmax + (c.arg % (m.arg + 1)) <= m.arg -> x + (c.arg % (m.arg + 1))'),
    RuleInfo('and_scaled', 'rules/opt.rules', 65, 'and_scaled: AND(ADD[MUL[x:index, c:CONST], y:index], m:CONST) if is_pow2(m.arg + 1) and 0 <= x.vmin and 0 <= y.vmin and x.vmax * (c.arg % (m.arg + 1)) + y.vmax <= m.arg -> x * (c.arg % (m.arg + 1)) + y'),
    RuleInfo('mod_offset', 'rules/opt.rules', 70, 'mod_offset: MOD(ADD[x:index, c:CONST], m:CONST) if m.arg > 0 and 0 <= x.vmin + c.arg and 0 <= x.vmin + (c.arg % m.arg) and x.vmax + (c.arg % m.arg) < m.arg -> x + (c.arg % m.arg)'),
)
_opt_index_st = match_stats('opt_index', _opt_index_rules)  # None unless counting

def _opt_index_MOD(n, ctx):
    try:
        n0, n1 = n.src
    except ValueError:
        return None
    if n0.op is _ADD and len(n0.src) == 2:
        n0_0, n0_1 = n0.src
        if n1.op is _CONST:
            if n0_0.dtype is _dt_index and n0_1.op is _CONST:
                # rule mod_offset at rules/opt.rules:70
                #   mod_offset: MOD(ADD[x:index, c:CONST], m:CONST) if m.arg > 0 and 0 <= x.vmin + c.arg and 0 <= x.vmin + (c.arg % m.arg) and x.vmax + (c.arg % m.arg) < m.arg -> x + (c.arg % m.arg)
                if _opt_index_st: _opt_index_st.attempts[3] += 1
                c = n0_1
                m = n1
                x = n0_0
                if m.arg > 0 and 0 <= (x._bounds if x._bounds is not _UNSET else x._bounds_())[0] + c.arg and 0 <= (x._bounds if x._bounds is not _UNSET else x._bounds_())[0] + c.arg % m.arg and (x._bounds if x._bounds is not _UNSET else x._bounds_())[1] + c.arg % m.arg < m.arg:
                    _r = _as_uop(n, x + c.arg % m.arg)
                    if _r is not None and _r is not n: return _r, _opt_index_rules[3]
            if n0_0.op is _CONST and n0_1.dtype is _dt_index:
                # rule mod_offset at rules/opt.rules:70
                #   mod_offset: MOD(ADD[x:index, c:CONST], m:CONST) if m.arg > 0 and 0 <= x.vmin + c.arg and 0 <= x.vmin + (c.arg % m.arg) and x.vmax + (c.arg % m.arg) < m.arg -> x + (c.arg % m.arg)
                if _opt_index_st: _opt_index_st.attempts[3] += 1
                c = n0_0
                m = n1
                x = n0_1
                if m.arg > 0 and 0 <= (x._bounds if x._bounds is not _UNSET else x._bounds_())[0] + c.arg and 0 <= (x._bounds if x._bounds is not _UNSET else x._bounds_())[0] + c.arg % m.arg and (x._bounds if x._bounds is not _UNSET else x._bounds_())[1] + c.arg % m.arg < m.arg:
                    _r = _as_uop(n, x + c.arg % m.arg)
                    if _r is not None and _r is not n: return _r, _opt_index_rules[3]
    return None

def _opt_index_AND(n, ctx):
    try:
        n0, n1 = n.src
    except ValueError:
        return None
    if n0.dtype is _dt_index and n1.op is _CONST:
        # rule and_in_range at rules/opt.rules:59
        #   and_in_range: AND(x:index, c:CONST) if is_pow2(c.arg + 1) and 0 <= x.vmin and x.vmax <= c.arg -> x
        if _opt_index_st: _opt_index_st.attempts[0] += 1
        c = n1
        x = n0
        if is_pow2(c.arg + 1) and 0 <= (x._bounds if x._bounds is not _UNSET else x._bounds_())[0] and (x._bounds if x._bounds is not _UNSET else x._bounds_())[1] <= c.arg:
            return x, _opt_index_rules[0]
    if n0.op is _ADD and len(n0.src) == 2:
        n0_0, n0_1 = n0.src
        if n1.op is _CONST:
            if n0_0.dtype is _dt_index and n0_1.op is _CONST:
                # rule and_offset at rules/opt.rules:62
                #   and_offset: AND(ADD[x:index, c:CONST], m:CONST) if is_pow2(m.arg + 1) and 0 <= x.vmin + (c.arg % (m.arg + 1)) and x.vmax + (c.arg % (m.arg + 1)) <= m.arg -> x + (c.arg % (m.arg + 1))
                if _opt_index_st: _opt_index_st.attempts[1] += 1
                c = n0_1
                m = n1
                x = n0_0
                if is_pow2(m.arg + 1) and 0 <= (x._bounds if x._bounds is not _UNSET else x._bounds_())[0] + c.arg % (m.arg + 1) and (x._bounds if x._bounds is not _UNSET else x._bounds_())[1] + c.arg % (m.arg + 1) <= m.arg:
                    _r = _as_uop(n, x + c.arg % (m.arg + 1))
                    if _r is not None and _r is not n: return _r, _opt_index_rules[1]
            o0_0 = n0_0.op
            if o0_0 is _CONST and n0_1.dtype is _dt_index:
                # rule and_offset at rules/opt.rules:62
                #   and_offset: AND(ADD[x:index, c:CONST], m:CONST) if is_pow2(m.arg + 1) and 0 <= x.vmin + (c.arg % (m.arg + 1)) and x.vmax + (c.arg % (m.arg + 1)) <= m.arg -> x + (c.arg % (m.arg + 1))
                if _opt_index_st: _opt_index_st.attempts[1] += 1
                c = n0_0
                m = n1
                x = n0_1
                if is_pow2(m.arg + 1) and 0 <= (x._bounds if x._bounds is not _UNSET else x._bounds_())[0] + c.arg % (m.arg + 1) and (x._bounds if x._bounds is not _UNSET else x._bounds_())[1] + c.arg % (m.arg + 1) <= m.arg:
                    _r = _as_uop(n, x + c.arg % (m.arg + 1))
                    if _r is not None and _r is not n: return _r, _opt_index_rules[1]
            elif o0_0 is _MUL and len(n0_0.src) == 2:
                n0_0_0, n0_0_1 = n0_0.src
                if n0_1.dtype is _dt_index:
                    if n0_0_0.dtype is _dt_index and n0_0_1.op is _CONST:
                        # rule and_scaled at rules/opt.rules:65
                        #   and_scaled: AND(ADD[MUL[x:index, c:CONST], y:index], m:CONST) if is_pow2(m.arg + 1) and 0 <= x.vmin and 0 <= y.vmin and x.vmax * (c.arg % (m.arg + 1)) + y.vmax <= m.arg -> x * (c.arg % (m.arg + 1)) + y
                        if _opt_index_st: _opt_index_st.attempts[2] += 1
                        c = n0_0_1
                        m = n1
                        x = n0_0_0
                        y = n0_1
                        if is_pow2(m.arg + 1) and 0 <= (x._bounds if x._bounds is not _UNSET else x._bounds_())[0] and 0 <= (y._bounds if y._bounds is not _UNSET else y._bounds_())[0] and (x._bounds if x._bounds is not _UNSET else x._bounds_())[1] * (c.arg % (m.arg + 1)) + (y._bounds if y._bounds is not _UNSET else y._bounds_())[1] <= m.arg:
                            _r = _as_uop(n, x * (c.arg % (m.arg + 1)) + y)
                            if _r is not None and _r is not n: return _r, _opt_index_rules[2]
                    if n0_0_0.op is _CONST and n0_0_1.dtype is _dt_index:
                        # rule and_scaled at rules/opt.rules:65
                        #   and_scaled: AND(ADD[MUL[x:index, c:CONST], y:index], m:CONST) if is_pow2(m.arg + 1) and 0 <= x.vmin and 0 <= y.vmin and x.vmax * (c.arg % (m.arg + 1)) + y.vmax <= m.arg -> x * (c.arg % (m.arg + 1)) + y
                        if _opt_index_st: _opt_index_st.attempts[2] += 1
                        c = n0_0_0
                        m = n1
                        x = n0_0_1
                        y = n0_1
                        if is_pow2(m.arg + 1) and 0 <= (x._bounds if x._bounds is not _UNSET else x._bounds_())[0] and 0 <= (y._bounds if y._bounds is not _UNSET else y._bounds_())[0] and (x._bounds if x._bounds is not _UNSET else x._bounds_())[1] * (c.arg % (m.arg + 1)) + (y._bounds if y._bounds is not _UNSET else y._bounds_())[1] <= m.arg:
                            _r = _as_uop(n, x * (c.arg % (m.arg + 1)) + y)
                            if _r is not None and _r is not n: return _r, _opt_index_rules[2]
            if n0_0.dtype is _dt_index and n0_1.op is _MUL and len(n0_1.src) == 2:
                n0_1_0, n0_1_1 = n0_1.src
                if n0_1_0.dtype is _dt_index and n0_1_1.op is _CONST:
                    # rule and_scaled at rules/opt.rules:65
                    #   and_scaled: AND(ADD[MUL[x:index, c:CONST], y:index], m:CONST) if is_pow2(m.arg + 1) and 0 <= x.vmin and 0 <= y.vmin and x.vmax * (c.arg % (m.arg + 1)) + y.vmax <= m.arg -> x * (c.arg % (m.arg + 1)) + y
                    if _opt_index_st: _opt_index_st.attempts[2] += 1
                    c = n0_1_1
                    m = n1
                    x = n0_1_0
                    y = n0_0
                    if is_pow2(m.arg + 1) and 0 <= (x._bounds if x._bounds is not _UNSET else x._bounds_())[0] and 0 <= (y._bounds if y._bounds is not _UNSET else y._bounds_())[0] and (x._bounds if x._bounds is not _UNSET else x._bounds_())[1] * (c.arg % (m.arg + 1)) + (y._bounds if y._bounds is not _UNSET else y._bounds_())[1] <= m.arg:
                        _r = _as_uop(n, x * (c.arg % (m.arg + 1)) + y)
                        if _r is not None and _r is not n: return _r, _opt_index_rules[2]
                if n0_1_0.op is _CONST and n0_1_1.dtype is _dt_index:
                    # rule and_scaled at rules/opt.rules:65
                    #   and_scaled: AND(ADD[MUL[x:index, c:CONST], y:index], m:CONST) if is_pow2(m.arg + 1) and 0 <= x.vmin and 0 <= y.vmin and x.vmax * (c.arg % (m.arg + 1)) + y.vmax <= m.arg -> x * (c.arg % (m.arg + 1)) + y
                    if _opt_index_st: _opt_index_st.attempts[2] += 1
                    c = n0_1_0
                    m = n1
                    x = n0_1_1
                    y = n0_0
                    if is_pow2(m.arg + 1) and 0 <= (x._bounds if x._bounds is not _UNSET else x._bounds_())[0] and 0 <= (y._bounds if y._bounds is not _UNSET else y._bounds_())[0] and (x._bounds if x._bounds is not _UNSET else x._bounds_())[1] * (c.arg % (m.arg + 1)) + (y._bounds if y._bounds is not _UNSET else y._bounds_())[1] <= m.arg:
                        _r = _as_uop(n, x * (c.arg % (m.arg + 1)) + y)
                        if _r is not None and _r is not n: return _r, _opt_index_rules[2]
    return None


_opt_index_part = RuleMatcher('opt_index', _opt_index_rules, {
    Ops.MOD: _opt_index_MOD,
    Ops.AND: _opt_index_AND,
}, home=(globals(), '_opt_index_st'))


# ======================================================================== the rule sets
_S_opt_actions = compose('opt_actions', _opt_actions_part)
opt_actions = _S_opt_actions
_S_opt_index = compose('opt_index', _opt_index_part)
opt_index = _S_opt_index
_S_opt = compose('opt', _S_opt_actions, _S_opt_index, _generated_symbolic.MATCHERS['sym'])
opt = _S_opt

MATCHERS = {
    'opt_actions': _S_opt_actions,
    'opt_index': _S_opt_index,
    'opt': _S_opt,
}

PIPELINES = {}
