# generated from rules/opt.rules by `rulegrad gen`; do not edit
# source sha256: 18cb6e79d0723c231520c0d20d00b6977f4b53853f8bc938486cf12082be0397
# imports rules/symbolic.rules sha256: a6a51ae7863a7637798664f439214feebcd542a5b103154001c4472c0219e28c
'Matchers for the rule sets of rules/opt.rules: opt_actions, mask_actions, select_actions, opt.'

from math import prod  # noqa: F401

from rulegrad.runtime.dtype import DTYPE_CLASSES, dtypes  # noqa: F401
from rulegrad.runtime.matcher import RuleMatcher, compose, helper_from, match_stats  # noqa: F401
from rulegrad.runtime.matcher import as_uop as _as_uop  # noqa: F401
from rulegrad.runtime.ops import GroupOp, Ops  # noqa: F401
from rulegrad.runtime.rewrite import RewriteNotReady, RuleInfo  # noqa: F401
from rulegrad.runtime.uop import UNSET as _UNSET  # noqa: F401
from rulegrad.runtime.uop import UOp  # noqa: F401
from rulegrad.runtime.uop import new_uop as _new  # noqa: F401
from rulegrad.rules.across_helpers import across
from rulegrad.rules.thread_helpers import blocked
from rulegrad.rules.wide_exps import filled
from rulegrad.rules.flash_helpers import flashed
from rulegrad.rules.interchange_helpers import interchanged
from rulegrad.rules.opt_helpers import merged
from rulegrad.rules.opt_helpers import merged_store
from rulegrad.rules.pack_helpers import packed
from rulegrad.rules.parallel_helpers import parallel
from rulegrad.rules.peel_helpers import peeled
from rulegrad.rules.row_block_helpers import row_blocked
from rulegrad.rules.scan_helpers import scanned
from rulegrad.rules.opt_helpers import small_reduce
from rulegrad.rules.stage_helpers import staged
from rulegrad.rules.thread_helpers import threadable
from rulegrad.rules.thread_helpers import threaded
from rulegrad.rules.transpose_helpers import transposed
from rulegrad.rules.lower_helpers import unnested
from rulegrad.rules.opt_helpers import unrolled
from rulegrad.rules.opt_helpers import unscaled
from rulegrad.rules.opt_helpers import upcast
from rulegrad.rules.opt_helpers import vector_reduce
from rulegrad.rules.opt_helpers import vector_reducible
from rulegrad.rules.generated import symbolic as _generated_symbolic

SOURCE = 'rules/opt.rules'
SOURCE_SHA256 = '18cb6e79d0723c231520c0d20d00b6977f4b53853f8bc938486cf12082be0397'
DEPENDENCIES = (('rules/symbolic.rules', 'a6a51ae7863a7637798664f439214feebcd542a5b103154001c4472c0219e28c'), )
_ADD = Ops.ADD
_CAST = Ops.CAST
_CONST = Ops.CONST
_EXP = Ops.EXP
_MUL = Ops.MUL
_SUB = Ops.SUB
_WHERE = Ops.WHERE
_OPS0 = frozenset({Ops.ADD, Ops.MUL})


# ======================================================================== definitions, contexts
_UNSET = object()  # a context's field not given to its constructor


def widens(w, k):
    """`def widens`, declared at rules/opt.rules:162."""
    return w.dtype.is_float and k.dtype.is_float and w.dtype.itemsize > k.dtype.itemsize


def exp_rounded(d, h, f):
    """`def exp_rounded`, declared at rules/opt.rules:164."""
    return _new(UOp, Ops.EXP, (_t1 := d.cast(h.dtype).cast(f.dtype)).dtype, (_t1,))


# ======================================================================== opt_actions
_opt_actions_rules = (
    RuleInfo('unnest_reduce', 'rules/opt.rules', 34, 'unnest_reduce: REDUCE as r if p is not None -> p where p = unnested(r)'),
    RuleInfo('merge_reduce', 'rules/opt.rules', 39, 'merge_reduce: REDUCE as r -> merged(r)'),
    RuleInfo('merge_store', 'rules/opt.rules', 42, 'merge_store: STORE as st -> merged_store(st)'),
    RuleInfo('scan_store', 'rules/opt.rules', 49, 'scan_store: STORE as st if p is not None -> p where p = scanned(st)'),
    RuleInfo('unroll_reduce', 'rules/opt.rules', 53, 'unroll_reduce: REDUCE as r if small_reduce(r) -> unrolled(r)'),
    RuleInfo('split_reduce', 'rules/opt.rules', 60, 'split_reduce: REDUCE as r if p is not None -> p where p = blocked(r)'),
    RuleInfo('thread_reduce', 'rules/opt.rules', 65, 'thread_reduce: REDUCE as r if threadable(r) -> threaded(r)'),
    RuleInfo('max_scale', 'rules/opt.rules', 69, 'max_scale: REDUCE as r -> unscaled(r)'),
    RuleInfo('fill_reduce', 'rules/opt.rules', 77, 'fill_reduce: REDUCE as r if p is not None -> p where p = filled(r)'),
    RuleInfo('vector_reduce', 'rules/opt.rules', 81, 'vector_reduce: REDUCE as r if vector_reducible(r) -> vector_reduce(r)'),
    RuleInfo('upcast_store', 'rules/opt.rules', 86, 'upcast_store: STORE as st if p is not None -> p where p = upcast(st)'),
    RuleInfo('flash_store', 'rules/opt.rules', 95, 'flash_store: STORE as st if p is not None -> p where p = flashed(st)'),
    RuleInfo('pack_store', 'rules/opt.rules', 101, 'pack_store: STORE as st if p is not None -> p where p = packed(st)'),
    RuleInfo('interchange_store', 'rules/opt.rules', 112, 'interchange_store: STORE as st if p is not None -> p where p = interchanged(st)'),
    RuleInfo('transpose_store', 'rules/opt.rules', 119, 'transpose_store: STORE as st if p is not None -> p where p = transposed(st)'),
    RuleInfo('rows_across', 'rules/opt.rules', 127, 'rows_across: SINK as s if p is not None -> p where p = across(s)'),
    RuleInfo('stage_operands', 'rules/opt.rules', 133, 'stage_operands: SINK as s if p is not None -> p where p = staged(s)'),
    RuleInfo('peel_loops', 'rules/opt.rules', 140, 'peel_loops: SINK as s if p is not None -> p where p = peeled(s)'),
    RuleInfo('block_rows', 'rules/opt.rules', 149, 'block_rows: SINK as s if p is not None -> p where p = row_blocked(s)'),
    RuleInfo('parallel_loops', 'rules/opt.rules', 155, 'parallel_loops: SINK as s -> parallel(s)'),
)
_opt_actions_st = match_stats('opt_actions', _opt_actions_rules)  # None unless counting

def _opt_actions_SINK(n, ctx):
    # rule rows_across at rules/opt.rules:127
    #   rows_across: SINK as s if p is not None -> p where p = across(s)
    #+ if _opt_actions_st: _opt_actions_st.attempts[15] += 1
    # s = n
    p = across(n)
    if p is not None:
        _r = p
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _opt_actions_rules[15]
    # rule stage_operands at rules/opt.rules:133
    #   stage_operands: SINK as s if p is not None -> p where p = staged(s)
    #+ if _opt_actions_st: _opt_actions_st.attempts[16] += 1
    # s = n
    p = staged(n)
    if p is not None:
        _r = p
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _opt_actions_rules[16]
    # rule peel_loops at rules/opt.rules:140
    #   peel_loops: SINK as s if p is not None -> p where p = peeled(s)
    #+ if _opt_actions_st: _opt_actions_st.attempts[17] += 1
    # s = n
    p = peeled(n)
    if p is not None:
        _r = p
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _opt_actions_rules[17]
    # rule block_rows at rules/opt.rules:149
    #   block_rows: SINK as s if p is not None -> p where p = row_blocked(s)
    #+ if _opt_actions_st: _opt_actions_st.attempts[18] += 1
    # s = n
    p = row_blocked(n)
    if p is not None:
        _r = p
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _opt_actions_rules[18]
    # rule parallel_loops at rules/opt.rules:155
    #   parallel_loops: SINK as s -> parallel(s)
    #+ if _opt_actions_st: _opt_actions_st.attempts[19] += 1
    # s = n
    _r = parallel(n)
    if _r is not None:
        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
        if _r is not n: return _r, _opt_actions_rules[19]
    return None

def _opt_actions_STORE(n, ctx):
    # rule merge_store at rules/opt.rules:42
    #   merge_store: STORE as st -> merged_store(st)
    #+ if _opt_actions_st: _opt_actions_st.attempts[2] += 1
    # st = n
    _r = merged_store(n)
    if _r is not None:
        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
        if _r is not n: return _r, _opt_actions_rules[2]
    # rule scan_store at rules/opt.rules:49
    #   scan_store: STORE as st if p is not None -> p where p = scanned(st)
    #+ if _opt_actions_st: _opt_actions_st.attempts[3] += 1
    # st = n
    p = scanned(n)
    if p is not None:
        _r = p
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _opt_actions_rules[3]
    # rule upcast_store at rules/opt.rules:86
    #   upcast_store: STORE as st if p is not None -> p where p = upcast(st)
    #+ if _opt_actions_st: _opt_actions_st.attempts[10] += 1
    # st = n
    p = upcast(n)
    if p is not None:
        _r = p
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _opt_actions_rules[10]
    # rule flash_store at rules/opt.rules:95
    #   flash_store: STORE as st if p is not None -> p where p = flashed(st)
    #+ if _opt_actions_st: _opt_actions_st.attempts[11] += 1
    # st = n
    p = flashed(n)
    if p is not None:
        _r = p
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _opt_actions_rules[11]
    # rule pack_store at rules/opt.rules:101
    #   pack_store: STORE as st if p is not None -> p where p = packed(st)
    #+ if _opt_actions_st: _opt_actions_st.attempts[12] += 1
    # st = n
    p = packed(n)
    if p is not None:
        _r = p
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _opt_actions_rules[12]
    # rule interchange_store at rules/opt.rules:112
    #   interchange_store: STORE as st if p is not None -> p where p = interchanged(st)
    #+ if _opt_actions_st: _opt_actions_st.attempts[13] += 1
    # st = n
    p = interchanged(n)
    if p is not None:
        _r = p
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _opt_actions_rules[13]
    # rule transpose_store at rules/opt.rules:119
    #   transpose_store: STORE as st if p is not None -> p where p = transposed(st)
    #+ if _opt_actions_st: _opt_actions_st.attempts[14] += 1
    # st = n
    p = transposed(n)
    if p is not None:
        _r = p
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _opt_actions_rules[14]
    return None

def _opt_actions_REDUCE(n, ctx):
    # rule unnest_reduce at rules/opt.rules:34
    #   unnest_reduce: REDUCE as r if p is not None -> p where p = unnested(r)
    #+ if _opt_actions_st: _opt_actions_st.attempts[0] += 1
    # r = n
    p = unnested(n)
    if p is not None:
        _r = p
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _opt_actions_rules[0]
    # rule merge_reduce at rules/opt.rules:39
    #   merge_reduce: REDUCE as r -> merged(r)
    #+ if _opt_actions_st: _opt_actions_st.attempts[1] += 1
    # r = n
    _r = merged(n)
    if _r is not None:
        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
        if _r is not n: return _r, _opt_actions_rules[1]
    # rule unroll_reduce at rules/opt.rules:53
    #   unroll_reduce: REDUCE as r if small_reduce(r) -> unrolled(r)
    #+ if _opt_actions_st: _opt_actions_st.attempts[4] += 1
    # r = n
    if small_reduce(n):
        _r = unrolled(n)
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _opt_actions_rules[4]
    # rule split_reduce at rules/opt.rules:60
    #   split_reduce: REDUCE as r if p is not None -> p where p = blocked(r)
    #+ if _opt_actions_st: _opt_actions_st.attempts[5] += 1
    # r = n
    p = blocked(n)
    if p is not None:
        _r = p
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _opt_actions_rules[5]
    # rule thread_reduce at rules/opt.rules:65
    #   thread_reduce: REDUCE as r if threadable(r) -> threaded(r)
    #+ if _opt_actions_st: _opt_actions_st.attempts[6] += 1
    # r = n
    if threadable(n):
        _r = threaded(n)
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _opt_actions_rules[6]
    # rule max_scale at rules/opt.rules:69
    #   max_scale: REDUCE as r -> unscaled(r)
    #+ if _opt_actions_st: _opt_actions_st.attempts[7] += 1
    # r = n
    _r = unscaled(n)
    if _r is not None:
        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
        if _r is not n: return _r, _opt_actions_rules[7]
    # rule fill_reduce at rules/opt.rules:77
    #   fill_reduce: REDUCE as r if p is not None -> p where p = filled(r)
    #+ if _opt_actions_st: _opt_actions_st.attempts[8] += 1
    # r = n
    p = filled(n)
    if p is not None:
        _r = p
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _opt_actions_rules[8]
    # rule vector_reduce at rules/opt.rules:81
    #   vector_reduce: REDUCE as r if vector_reducible(r) -> vector_reduce(r)
    #+ if _opt_actions_st: _opt_actions_st.attempts[9] += 1
    # r = n
    if vector_reducible(n):
        _r = vector_reduce(n)
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _opt_actions_rules[9]
    return None


_opt_actions_part = RuleMatcher('opt_actions', _opt_actions_rules, {
    Ops.SINK: _opt_actions_SINK,
    Ops.STORE: _opt_actions_STORE,
    Ops.REDUCE: _opt_actions_REDUCE,
}, home=(globals(), '_opt_actions_st'))


# ======================================================================== mask_actions
_mask_actions_rules = (
    RuleInfo('exp_where_else', 'rules/opt.rules', 172, 'exp_where_else: EXP(SUB(WHERE(c, a, k:CONST), y)) -> c.where(EXP(a - y), EXP(k - y))'),
    RuleInfo('exp_where_then', 'rules/opt.rules', 173, 'exp_where_then: EXP(SUB(WHERE(c, k:CONST, b), y)) -> c.where(EXP(k - y), EXP(b - y))'),
    RuleInfo('exp_where_half_else', 'rules/opt.rules', 177, 'exp_where_half_else: EXP(CAST(CAST(SUB(CAST(WHERE(c, a, k:CONST)) as w, y)) as h) as f) if widens(w, k) -> c.where(exp_rounded(a.cast(w.dtype) - y, h, f), exp_rounded(w.const_like(k.arg) - y, h, f))'),
    RuleInfo('exp_where_half_then', 'rules/opt.rules', 179, 'exp_where_half_then: EXP(CAST(CAST(SUB(CAST(WHERE(c, k:CONST, b)) as w, y)) as h) as f) if widens(w, k) -> c.where(exp_rounded(w.const_like(k.arg) - y, h, f), exp_rounded(b.cast(w.dtype) - y, h, f))'),
)
_mask_actions_st = match_stats('mask_actions', _mask_actions_rules)  # None unless counting

def _mask_actions_EXP(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is _SUB:
            n0_0, n0_1 = n0.src
            if n0_0.op is _WHERE:
                n0_0_0, n0_0_1, n0_0_2 = n0_0.src
                if n0_0_2.op is _CONST:
                    # rule exp_where_else at rules/opt.rules:172
                    #   exp_where_else: EXP(SUB(WHERE(c, a, k:CONST), y)) -> c.where(EXP(a - y), EXP(k - y))
                    #+ if _mask_actions_st: _mask_actions_st.attempts[0] += 1
                    # a = n0_0_1, c = n0_0_0, k = n0_0_2, y = n0_1
                    _r = n0_0_0.where(_new(UOp, _EXP, (_t3 := n0_0_1 - n0_1).dtype, (_t3,)), _new(UOp, _EXP, (_t4 := n0_0_2 - n0_1).dtype, (_t4,)))
                    if _r is not None:
                        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                        if _r is not n: return _r, _mask_actions_rules[0]
                if n0_0_1.op is _CONST:
                    # rule exp_where_then at rules/opt.rules:173
                    #   exp_where_then: EXP(SUB(WHERE(c, k:CONST, b), y)) -> c.where(EXP(k - y), EXP(b - y))
                    #+ if _mask_actions_st: _mask_actions_st.attempts[1] += 1
                    # b = n0_0_2, c = n0_0_0, k = n0_0_1, y = n0_1
                    _r = n0_0_0.where(_new(UOp, _EXP, (_t7 := n0_0_1 - n0_1).dtype, (_t7,)), _new(UOp, _EXP, (_t8 := n0_0_2 - n0_1).dtype, (_t8,)))
                    if _r is not None:
                        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                        if _r is not n: return _r, _mask_actions_rules[1]
        else:
            if n0.op is _CAST:
                if len(n0.src) == 1:
                    n0_0 = n0.src[0]
                    if n0_0.op is _CAST and len(n0_0.src) == 1:
                        n0_0_0 = n0_0.src[0]
                        if n0_0_0.op is _SUB:
                            n0_0_0_0, n0_0_0_1 = n0_0_0.src
                            if n0_0_0_0.op is _CAST and len(n0_0_0_0.src) == 1:
                                n0_0_0_0_0 = n0_0_0_0.src[0]
                                if n0_0_0_0_0.op is _WHERE:
                                    n0_0_0_0_0_0, n0_0_0_0_0_1, n0_0_0_0_0_2 = n0_0_0_0_0.src
                                    if n0_0_0_0_0_2.op is _CONST:
                                        # rule exp_where_half_else at rules/opt.rules:177
                                        #   exp_where_half_else: EXP(CAST(CAST(SUB(CAST(WHERE(c, a, k:CONST)) as w, y)) as h) as f) if widens(w, k) -> c.where(exp_rounded(a.cast(w.dtype) - y, h, f), exp_rounded(w.const_like(k.arg) - y, h, f))
                                        #+ if _mask_actions_st: _mask_actions_st.attempts[2] += 1
                                        # a = n0_0_0_0_0_1, c = n0_0_0_0_0_0, f = n0, h = n0_0, k = n0_0_0_0_0_2, w = n0_0_0_0, y = n0_0_0_1
                                        if widens(n0_0_0_0, n0_0_0_0_0_2):
                                            _r = n0_0_0_0_0_0.where(exp_rounded(n0_0_0_0_0_1.cast(n0_0_0_0.dtype) - n0_0_0_1, n0_0, n0), exp_rounded(n0_0_0_0.const_like(n0_0_0_0_0_2.arg) - n0_0_0_1, n0_0, n0))
                                            if _r is not None:
                                                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                                                if _r is not n: return _r, _mask_actions_rules[2]
                                    if n0_0_0_0_0_1.op is _CONST:
                                        # rule exp_where_half_then at rules/opt.rules:179
                                        #   exp_where_half_then: EXP(CAST(CAST(SUB(CAST(WHERE(c, k:CONST, b)) as w, y)) as h) as f) if widens(w, k) -> c.where(exp_rounded(w.const_like(k.arg) - y, h, f), exp_rounded(b.cast(w.dtype) - y, h, f))
                                        #+ if _mask_actions_st: _mask_actions_st.attempts[3] += 1
                                        # b = n0_0_0_0_0_2, c = n0_0_0_0_0_0, f = n0, h = n0_0, k = n0_0_0_0_0_1, w = n0_0_0_0, y = n0_0_0_1
                                        if widens(n0_0_0_0, n0_0_0_0_0_1):
                                            _r = n0_0_0_0_0_0.where(exp_rounded(n0_0_0_0.const_like(n0_0_0_0_0_1.arg) - n0_0_0_1, n0_0, n0), exp_rounded(n0_0_0_0_0_2.cast(n0_0_0_0.dtype) - n0_0_0_1, n0_0, n0))
                                            if _r is not None:
                                                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                                                if _r is not n: return _r, _mask_actions_rules[3]
    return None


_mask_actions_part = RuleMatcher('mask_actions', _mask_actions_rules, {
    Ops.EXP: _mask_actions_EXP,
}, home=(globals(), '_mask_actions_st'))


# ======================================================================== select_actions
_select_actions_rules = (
    RuleInfo('where_else_mul', 'rules/opt.rules', 191, 'where_else_mul: WHERE(c, a, MUL[b, WHERE(c, _, q)]) -> c.where(a, b * q)'),
    RuleInfo('where_then_mul', 'rules/opt.rules', 192, 'where_then_mul: WHERE(c, MUL[b, WHERE(c, p, _)], z) -> c.where(b * p, z)'),
    RuleInfo('where_else_add', 'rules/opt.rules', 193, 'where_else_add: WHERE(c, a, ADD[b, WHERE(c, _, q)]) -> c.where(a, b + q)'),
    RuleInfo('where_then_add', 'rules/opt.rules', 194, 'where_then_add: WHERE(c, ADD[b, WHERE(c, p, _)], z) -> c.where(b + p, z)'),
)
_select_actions_st = match_stats('select_actions', _select_actions_rules)  # None unless counting

def _select_actions_WHERE(n, ctx):
    try:
        n0, n1, n2 = n.src
    except ValueError:
        return None
    # no rule here matches unless a source has one of these ops (a quick rejection)
    if n1.op not in _OPS0 and n2.op not in _OPS0: return None
    if n2.op is _MUL:
        if n1.op is _MUL:
            n2_0, n2_1 = n2.src
            if n2_1.op is _WHERE:
                n2_1_0 = n2_1.src[0]
                n2_1_2 = n2_1.src[2]
                if n2_1_0 is n0:
                    # rule where_else_mul at rules/opt.rules:191
                    #   where_else_mul: WHERE(c, a, MUL[b, WHERE(c, _, q)]) -> c.where(a, b * q)
                    #+ if _select_actions_st: _select_actions_st.attempts[0] += 1
                    # a = n1, b = n2_0, c = n0, q = n2_1_2
                    _r = n0.where(n1, n2_0 * n2_1_2)
                    if _r is not None:
                        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                        if _r is not n: return _r, _select_actions_rules[0]
            if n2_0.op is _WHERE:
                n2_0_0 = n2_0.src[0]
                n2_0_2 = n2_0.src[2]
                if n2_0_0 is n0:
                    # rule where_else_mul at rules/opt.rules:191
                    #   where_else_mul: WHERE(c, a, MUL[b, WHERE(c, _, q)]) -> c.where(a, b * q)
                    #+ if _select_actions_st: _select_actions_st.attempts[0] += 1
                    # a = n1, b = n2_1, c = n0, q = n2_0_2
                    _r = n0.where(n1, n2_1 * n2_0_2)
                    if _r is not None:
                        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                        if _r is not n: return _r, _select_actions_rules[0]
            n1_0, n1_1 = n1.src
            if n1_1.op is _WHERE:
                n1_1_0 = n1_1.src[0]
                n1_1_1 = n1_1.src[1]
                if n1_1_0 is n0:
                    # rule where_then_mul at rules/opt.rules:192
                    #   where_then_mul: WHERE(c, MUL[b, WHERE(c, p, _)], z) -> c.where(b * p, z)
                    #+ if _select_actions_st: _select_actions_st.attempts[1] += 1
                    # b = n1_0, c = n0, p = n1_1_1, z = n2
                    _r = n0.where(n1_0 * n1_1_1, n2)
                    if _r is not None:
                        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                        if _r is not n: return _r, _select_actions_rules[1]
            if n1_0.op is _WHERE:
                n1_0_0 = n1_0.src[0]
                n1_0_1 = n1_0.src[1]
                if n1_0_0 is n0:
                    # rule where_then_mul at rules/opt.rules:192
                    #   where_then_mul: WHERE(c, MUL[b, WHERE(c, p, _)], z) -> c.where(b * p, z)
                    #+ if _select_actions_st: _select_actions_st.attempts[1] += 1
                    # b = n1_1, c = n0, p = n1_0_1, z = n2
                    _r = n0.where(n1_1 * n1_0_1, n2)
                    if _r is not None:
                        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                        if _r is not n: return _r, _select_actions_rules[1]
        else:
            n2_0, n2_1 = n2.src
            if n2_1.op is _WHERE:
                n2_1_0 = n2_1.src[0]
                n2_1_2 = n2_1.src[2]
                if n2_1_0 is n0:
                    # rule where_else_mul at rules/opt.rules:191
                    #   where_else_mul: WHERE(c, a, MUL[b, WHERE(c, _, q)]) -> c.where(a, b * q)
                    #+ if _select_actions_st: _select_actions_st.attempts[0] += 1
                    # a = n1, b = n2_0, c = n0, q = n2_1_2
                    _r = n0.where(n1, n2_0 * n2_1_2)
                    if _r is not None:
                        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                        if _r is not n: return _r, _select_actions_rules[0]
            if n2_0.op is _WHERE:
                n2_0_0 = n2_0.src[0]
                n2_0_2 = n2_0.src[2]
                if n2_0_0 is n0:
                    # rule where_else_mul at rules/opt.rules:191
                    #   where_else_mul: WHERE(c, a, MUL[b, WHERE(c, _, q)]) -> c.where(a, b * q)
                    #+ if _select_actions_st: _select_actions_st.attempts[0] += 1
                    # a = n1, b = n2_1, c = n0, q = n2_0_2
                    _r = n0.where(n1, n2_1 * n2_0_2)
                    if _r is not None:
                        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                        if _r is not n: return _r, _select_actions_rules[0]
            if n1.op is _ADD:
                n1_0, n1_1 = n1.src
                if n1_1.op is _WHERE:
                    n1_1_0 = n1_1.src[0]
                    n1_1_1 = n1_1.src[1]
                    if n1_1_0 is n0:
                        # rule where_then_add at rules/opt.rules:194
                        #   where_then_add: WHERE(c, ADD[b, WHERE(c, p, _)], z) -> c.where(b + p, z)
                        #+ if _select_actions_st: _select_actions_st.attempts[3] += 1
                        # b = n1_0, c = n0, p = n1_1_1, z = n2
                        _r = n0.where(n1_0 + n1_1_1, n2)
                        if _r is not None:
                            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                            if _r is not n: return _r, _select_actions_rules[3]
                if n1_0.op is _WHERE:
                    n1_0_0 = n1_0.src[0]
                    n1_0_1 = n1_0.src[1]
                    if n1_0_0 is n0:
                        # rule where_then_add at rules/opt.rules:194
                        #   where_then_add: WHERE(c, ADD[b, WHERE(c, p, _)], z) -> c.where(b + p, z)
                        #+ if _select_actions_st: _select_actions_st.attempts[3] += 1
                        # b = n1_1, c = n0, p = n1_0_1, z = n2
                        _r = n0.where(n1_1 + n1_0_1, n2)
                        if _r is not None:
                            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                            if _r is not n: return _r, _select_actions_rules[3]
    else:
        if n1.op is _MUL:
            n1_0, n1_1 = n1.src
            if n1_1.op is _WHERE:
                n1_1_0 = n1_1.src[0]
                n1_1_1 = n1_1.src[1]
                if n1_1_0 is n0:
                    # rule where_then_mul at rules/opt.rules:192
                    #   where_then_mul: WHERE(c, MUL[b, WHERE(c, p, _)], z) -> c.where(b * p, z)
                    #+ if _select_actions_st: _select_actions_st.attempts[1] += 1
                    # b = n1_0, c = n0, p = n1_1_1, z = n2
                    _r = n0.where(n1_0 * n1_1_1, n2)
                    if _r is not None:
                        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                        if _r is not n: return _r, _select_actions_rules[1]
            if n1_0.op is _WHERE:
                n1_0_0 = n1_0.src[0]
                n1_0_1 = n1_0.src[1]
                if n1_0_0 is n0:
                    # rule where_then_mul at rules/opt.rules:192
                    #   where_then_mul: WHERE(c, MUL[b, WHERE(c, p, _)], z) -> c.where(b * p, z)
                    #+ if _select_actions_st: _select_actions_st.attempts[1] += 1
                    # b = n1_1, c = n0, p = n1_0_1, z = n2
                    _r = n0.where(n1_1 * n1_0_1, n2)
                    if _r is not None:
                        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                        if _r is not n: return _r, _select_actions_rules[1]
            if n2.op is _ADD:
                n2_0, n2_1 = n2.src
                if n2_1.op is _WHERE:
                    n2_1_0 = n2_1.src[0]
                    n2_1_2 = n2_1.src[2]
                    if n2_1_0 is n0:
                        # rule where_else_add at rules/opt.rules:193
                        #   where_else_add: WHERE(c, a, ADD[b, WHERE(c, _, q)]) -> c.where(a, b + q)
                        #+ if _select_actions_st: _select_actions_st.attempts[2] += 1
                        # a = n1, b = n2_0, c = n0, q = n2_1_2
                        _r = n0.where(n1, n2_0 + n2_1_2)
                        if _r is not None:
                            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                            if _r is not n: return _r, _select_actions_rules[2]
                if n2_0.op is _WHERE:
                    n2_0_0 = n2_0.src[0]
                    n2_0_2 = n2_0.src[2]
                    if n2_0_0 is n0:
                        # rule where_else_add at rules/opt.rules:193
                        #   where_else_add: WHERE(c, a, ADD[b, WHERE(c, _, q)]) -> c.where(a, b + q)
                        #+ if _select_actions_st: _select_actions_st.attempts[2] += 1
                        # a = n1, b = n2_1, c = n0, q = n2_0_2
                        _r = n0.where(n1, n2_1 + n2_0_2)
                        if _r is not None:
                            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                            if _r is not n: return _r, _select_actions_rules[2]
        else:
            if n2.op is _ADD:
                n2_0, n2_1 = n2.src
                if n2_1.op is _WHERE:
                    n2_1_0 = n2_1.src[0]
                    n2_1_2 = n2_1.src[2]
                    if n2_1_0 is n0:
                        # rule where_else_add at rules/opt.rules:193
                        #   where_else_add: WHERE(c, a, ADD[b, WHERE(c, _, q)]) -> c.where(a, b + q)
                        #+ if _select_actions_st: _select_actions_st.attempts[2] += 1
                        # a = n1, b = n2_0, c = n0, q = n2_1_2
                        _r = n0.where(n1, n2_0 + n2_1_2)
                        if _r is not None:
                            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                            if _r is not n: return _r, _select_actions_rules[2]
                if n2_0.op is _WHERE:
                    n2_0_0 = n2_0.src[0]
                    n2_0_2 = n2_0.src[2]
                    if n2_0_0 is n0:
                        # rule where_else_add at rules/opt.rules:193
                        #   where_else_add: WHERE(c, a, ADD[b, WHERE(c, _, q)]) -> c.where(a, b + q)
                        #+ if _select_actions_st: _select_actions_st.attempts[2] += 1
                        # a = n1, b = n2_1, c = n0, q = n2_0_2
                        _r = n0.where(n1, n2_1 + n2_0_2)
                        if _r is not None:
                            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                            if _r is not n: return _r, _select_actions_rules[2]
            if n1.op is _ADD:
                n1_0, n1_1 = n1.src
                if n1_1.op is _WHERE:
                    n1_1_0 = n1_1.src[0]
                    n1_1_1 = n1_1.src[1]
                    if n1_1_0 is n0:
                        # rule where_then_add at rules/opt.rules:194
                        #   where_then_add: WHERE(c, ADD[b, WHERE(c, p, _)], z) -> c.where(b + p, z)
                        #+ if _select_actions_st: _select_actions_st.attempts[3] += 1
                        # b = n1_0, c = n0, p = n1_1_1, z = n2
                        _r = n0.where(n1_0 + n1_1_1, n2)
                        if _r is not None:
                            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                            if _r is not n: return _r, _select_actions_rules[3]
                if n1_0.op is _WHERE:
                    n1_0_0 = n1_0.src[0]
                    n1_0_1 = n1_0.src[1]
                    if n1_0_0 is n0:
                        # rule where_then_add at rules/opt.rules:194
                        #   where_then_add: WHERE(c, ADD[b, WHERE(c, p, _)], z) -> c.where(b + p, z)
                        #+ if _select_actions_st: _select_actions_st.attempts[3] += 1
                        # b = n1_1, c = n0, p = n1_0_1, z = n2
                        _r = n0.where(n1_1 + n1_0_1, n2)
                        if _r is not None:
                            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                            if _r is not n: return _r, _select_actions_rules[3]
    return None


_select_actions_part = RuleMatcher('select_actions', _select_actions_rules, {
    Ops.WHERE: _select_actions_WHERE,
}, home=(globals(), '_select_actions_st'))


# ======================================================================== the rule sets
_S_opt_actions = compose('opt_actions', _opt_actions_part)
opt_actions = _S_opt_actions
_S_mask_actions = compose('mask_actions', _mask_actions_part)
mask_actions = _S_mask_actions
_S_select_actions = compose('select_actions', _select_actions_part)
select_actions = _S_select_actions
_S_opt = compose('opt', _S_opt_actions, _S_mask_actions, _S_select_actions, _generated_symbolic.MATCHERS['sym'])
opt = _S_opt

MATCHERS = {
    'opt_actions': _S_opt_actions,
    'mask_actions': _S_mask_actions,
    'select_actions': _S_select_actions,
    'opt': _S_opt,
}

PIPELINES = {}
