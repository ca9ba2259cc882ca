# generated from rules/kernelize.rules by `rulegrad gen`; do not edit
# source sha256: 4e59338214e21935b53ded6e1231a80b0ae88cf1564bb91781cf3f17ccd9eea9
'Matchers for the rule sets of rules/kernelize.rules: do_fuse, merge_views, do_realize, group, add_contiguous, finalize_contiguous, create_kernels, create_ast.'

from math import prod  # noqa: F401

from rulegrad.runtime.dtype import DTYPE_CLASSES, dtypes  # noqa: F401
from rulegrad.runtime.matcher import RuleMatcher, compose, helper_from, match_stats  # noqa: F401
from rulegrad.runtime.matcher import as_uop as _as_uop  # noqa: F401
from rulegrad.runtime.ops import GroupOp, Ops  # noqa: F401
from rulegrad.runtime.rewrite import RewriteNotReady, RuleInfo  # noqa: F401
from rulegrad.runtime.uop import UNSET as _UNSET  # noqa: F401
from rulegrad.runtime.uop import UOp  # noqa: F401
from rulegrad.runtime.uop import new_uop as _new  # noqa: F401
from rulegrad.rules.kernelize_helpers import create_kernel
from rulegrad.rules.kernelize_helpers import fuse_reduce
from rulegrad.rules.kernelize_helpers import fuse_srcs
from rulegrad.rules.kernelize_helpers import group_realizes
from rulegrad.rules.kernelize_helpers import index_reduce
from rulegrad.rules.kernelize_helpers import index_view
from rulegrad.rules.kernelize_helpers import is_arange
from rulegrad.rules.kernelize_helpers import is_computed
from rulegrad.rules.kernelize_helpers import limit_bufs
from rulegrad.rules.kernelize_helpers import push_index
from rulegrad.rules.kernelize_helpers import push_index_first
from rulegrad.rules.kernelize_helpers import realize
from rulegrad.rules.kernelize_helpers import realize_before_view
from rulegrad.rules.kernelize_helpers import realize_roots
from rulegrad.rules.kernelize_helpers import realize_wrap
from rulegrad.rules.kernelize_helpers import stops_fuse
from rulegrad.rules.kernelize_helpers import to_wrap
from rulegrad.rules.kernelize_helpers import view_of
from rulegrad.rules.kernelize_helpers import view_view

SOURCE = 'rules/kernelize.rules'
SOURCE_SHA256 = '4e59338214e21935b53ded6e1231a80b0ae88cf1564bb91781cf3f17ccd9eea9'
DEPENDENCIES = ()
_CONST = Ops.CONST
_REDUCE_AXIS = Ops.REDUCE_AXIS
_VIEW = Ops.VIEW
_OPS0 = frozenset({Ops.RESHAPE, Ops.PERMUTE, Ops.EXPAND, Ops.PAD, Ops.SHRINK, Ops.FLIP, Ops.CONTIGUOUS_BACKWARD, Ops.DETACH, Ops.CAST, Ops.BITCAST, Ops.NEG, Ops.EXP, Ops.LOG, Ops.EXP2, Ops.LOG2, Ops.SIN, Ops.SQRT, Ops.RECIPROCAL, Ops.TRUNC, Ops.ADD, Ops.SUB, Ops.MUL, Ops.FDIV, Ops.IDIV, Ops.MOD, Ops.MAX, Ops.MIN, Ops.POW, Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ, Ops.AND, Ops.OR, Ops.XOR, Ops.SHL, Ops.SHR, Ops.WHERE, Ops.MULACC})
_OPS1 = frozenset({Ops.CAST, Ops.BITCAST, Ops.NEG, Ops.EXP, Ops.LOG, Ops.EXP2, Ops.LOG2, Ops.SIN, Ops.SQRT, Ops.RECIPROCAL, Ops.TRUNC, Ops.ADD, Ops.SUB, Ops.MUL, Ops.FDIV, Ops.IDIV, Ops.MOD, Ops.MAX, Ops.MIN, Ops.POW, Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ, Ops.AND, Ops.OR, Ops.XOR, Ops.SHL, Ops.SHR, Ops.WHERE, Ops.MULACC})
_OPS2 = frozenset({Ops.CONTIGUOUS, Ops.COPY})
_OPS3 = frozenset({Ops.CONST, Ops.CONTIGUOUS, Ops.COPY, Ops.REDUCE_AXIS, Ops.CAST, Ops.BITCAST, Ops.NEG, Ops.EXP, Ops.LOG, Ops.EXP2, Ops.LOG2, Ops.SIN, Ops.SQRT, Ops.RECIPROCAL, Ops.TRUNC, Ops.ADD, Ops.SUB, Ops.MUL, Ops.FDIV, Ops.IDIV, Ops.MOD, Ops.MAX, Ops.MIN, Ops.POW, Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ, Ops.AND, Ops.OR, Ops.XOR, Ops.SHL, Ops.SHR, Ops.WHERE, Ops.MULACC, Ops.VIEW})


# ======================================================================== do_fuse
_do_fuse_rules = (
    RuleInfo('fuse_reduce', 'rules/kernelize.rules', 16, 'fuse_reduce: FUSE(REDUCE_AXIS as r) -> fuse_reduce(r)'),
    RuleInfo('fuse_push', 'rules/kernelize.rules', 17, 'fuse_push: FUSE({Elementwise, Movement, DETACH, CONTIGUOUS_BACKWARD} as x) -> fuse_srcs(x)'),
    RuleInfo('fuse_stop', 'rules/kernelize.rules', 18, 'fuse_stop: FUSE(x) if stops_fuse(x) -> x'),
    RuleInfo('fuse_arange', 'rules/kernelize.rules', 20, 'fuse_arange: REDUCE_AXIS as r if is_arange(ctx, r) -> r.replace(tag="fuse")'),
)
_do_fuse_st = match_stats('do_fuse', _do_fuse_rules)  # None unless counting

def _do_fuse_FUSE(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        o0 = n0.op
        if o0 is _REDUCE_AXIS:
            # rule fuse_reduce at rules/kernelize.rules:16
            #   fuse_reduce: FUSE(REDUCE_AXIS as r) -> fuse_reduce(r)
            if _do_fuse_st: _do_fuse_st.attempts[0] += 1
            r = n0
            _r = _as_uop(n, fuse_reduce(r))
            if _r is not None and _r is not n: return _r, _do_fuse_rules[0]
        elif o0 in _OPS0:
            # rule fuse_push at rules/kernelize.rules:17
            #   fuse_push: FUSE({Elementwise, Movement, DETACH, CONTIGUOUS_BACKWARD} as x) -> fuse_srcs(x)
            if _do_fuse_st: _do_fuse_st.attempts[1] += 1
            x = n0
            _r = _as_uop(n, fuse_srcs(x))
            if _r is not None and _r is not n: return _r, _do_fuse_rules[1]
        # rule fuse_stop at rules/kernelize.rules:18
        #   fuse_stop: FUSE(x) if stops_fuse(x) -> x
        if _do_fuse_st: _do_fuse_st.attempts[2] += 1
        x = n0
        if stops_fuse(x):
            return x, _do_fuse_rules[2]
    return None

def _do_fuse_REDUCE_AXIS(n, ctx):
    # rule fuse_arange at rules/kernelize.rules:20
    #   fuse_arange: REDUCE_AXIS as r if is_arange(ctx, r) -> r.replace(tag="fuse")
    if _do_fuse_st: _do_fuse_st.attempts[3] += 1
    r = n
    if is_arange(ctx, r):
        _r = _as_uop(n, r.replace(tag='fuse'))
        if _r is not None and _r is not n: return _r, _do_fuse_rules[3]
    return None


_do_fuse_part = RuleMatcher('do_fuse', _do_fuse_rules, {
    Ops.FUSE: _do_fuse_FUSE,
    Ops.REDUCE_AXIS: _do_fuse_REDUCE_AXIS,
}, home=(globals(), '_do_fuse_st'))


# ======================================================================== merge_views
_merge_views_rules = (
    RuleInfo('mop_to_view', 'rules/kernelize.rules', 27, 'mop_to_view: Movement(x) as m -> view_of(m, x)'),
    RuleInfo('view_noop', 'rules/kernelize.rules', 29, 'view_noop: VIEW(x) as v if v.arg.is_contiguous and v.shape == x.shape -> x'),
)
_merge_views_st = match_stats('merge_views', _merge_views_rules)  # None unless counting

def _merge_views_r0(n, ctx, m, x):
    # rule mop_to_view at rules/kernelize.rules:27
    #   mop_to_view: Movement(x) as m -> view_of(m, x)
    return _as_uop(n, view_of(m, x))

def _merge_views_RESHAPE(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule mop_to_view at rules/kernelize.rules:27
        #   mop_to_view: Movement(x) as m -> view_of(m, x)
        if _merge_views_st: _merge_views_st.attempts[0] += 1
        _r = _merge_views_r0(n, ctx, n, n0)
        if _r is not None and _r is not n: return _r, _merge_views_rules[0]
    return None

def _merge_views_PERMUTE(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule mop_to_view at rules/kernelize.rules:27
        #   mop_to_view: Movement(x) as m -> view_of(m, x)
        if _merge_views_st: _merge_views_st.attempts[0] += 1
        _r = _merge_views_r0(n, ctx, n, n0)
        if _r is not None and _r is not n: return _r, _merge_views_rules[0]
    return None

def _merge_views_EXPAND(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule mop_to_view at rules/kernelize.rules:27
        #   mop_to_view: Movement(x) as m -> view_of(m, x)
        if _merge_views_st: _merge_views_st.attempts[0] += 1
        _r = _merge_views_r0(n, ctx, n, n0)
        if _r is not None and _r is not n: return _r, _merge_views_rules[0]
    return None

def _merge_views_PAD(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule mop_to_view at rules/kernelize.rules:27
        #   mop_to_view: Movement(x) as m -> view_of(m, x)
        if _merge_views_st: _merge_views_st.attempts[0] += 1
        _r = _merge_views_r0(n, ctx, n, n0)
        if _r is not None and _r is not n: return _r, _merge_views_rules[0]
    return None

def _merge_views_SHRINK(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule mop_to_view at rules/kernelize.rules:27
        #   mop_to_view: Movement(x) as m -> view_of(m, x)
        if _merge_views_st: _merge_views_st.attempts[0] += 1
        _r = _merge_views_r0(n, ctx, n, n0)
        if _r is not None and _r is not n: return _r, _merge_views_rules[0]
    return None

def _merge_views_FLIP(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule mop_to_view at rules/kernelize.rules:27
        #   mop_to_view: Movement(x) as m -> view_of(m, x)
        if _merge_views_st: _merge_views_st.attempts[0] += 1
        _r = _merge_views_r0(n, ctx, n, n0)
        if _r is not None and _r is not n: return _r, _merge_views_rules[0]
    return None

def _merge_views_VIEW(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule view_noop at rules/kernelize.rules:29
        #   view_noop: VIEW(x) as v if v.arg.is_contiguous and v.shape == x.shape -> x
        if _merge_views_st: _merge_views_st.attempts[1] += 1
        v = n
        x = n0
        if v.arg.is_contiguous and v.shape == x.shape:
            return x, _merge_views_rules[1]
    return None


_merge_views_part = RuleMatcher('merge_views', _merge_views_rules, {
    Ops.RESHAPE: _merge_views_RESHAPE,
    Ops.PERMUTE: _merge_views_PERMUTE,
    Ops.EXPAND: _merge_views_EXPAND,
    Ops.PAD: _merge_views_PAD,
    Ops.SHRINK: _merge_views_SHRINK,
    Ops.FLIP: _merge_views_FLIP,
    Ops.VIEW: _merge_views_VIEW,
}, home=(globals(), '_merge_views_st'))


# ======================================================================== do_realize
_do_realize_rules = (
    RuleInfo('realize_roots', 'rules/kernelize.rules', 36, 'realize_roots: SINK as s -> realize_roots(ctx, s)'),
    RuleInfo('realize_effect', 'rules/kernelize.rules', 37, 'realize_effect: {ASSIGN, COPY, BUFFER_VIEW, CONTIGUOUS} as x -> realize(ctx, x)'),
    RuleInfo('realize_view', 'rules/kernelize.rules', 38, 'realize_view: VIEW(x) as v if is_computed(x) -> realize_before_view(ctx, v, x)'),
)
_do_realize_st = match_stats('do_realize', _do_realize_rules)  # None unless counting

def _do_realize_SINK(n, ctx):
    # rule realize_roots at rules/kernelize.rules:36
    #   realize_roots: SINK as s -> realize_roots(ctx, s)
    if _do_realize_st: _do_realize_st.attempts[0] += 1
    s = n
    _r = _as_uop(n, realize_roots(ctx, s))
    if _r is not None and _r is not n: return _r, _do_realize_rules[0]
    return None

def _do_realize_CONTIGUOUS(n, ctx):
    # rule realize_effect at rules/kernelize.rules:37
    #   realize_effect: {ASSIGN, COPY, BUFFER_VIEW, CONTIGUOUS} as x -> realize(ctx, x)
    if _do_realize_st: _do_realize_st.attempts[1] += 1
    x = n
    _r = _as_uop(n, realize(ctx, x))
    if _r is not None and _r is not n: return _r, _do_realize_rules[1]
    return None

def _do_realize_COPY(n, ctx):
    # rule realize_effect at rules/kernelize.rules:37
    #   realize_effect: {ASSIGN, COPY, BUFFER_VIEW, CONTIGUOUS} as x -> realize(ctx, x)
    if _do_realize_st: _do_realize_st.attempts[1] += 1
    x = n
    _r = _as_uop(n, realize(ctx, x))
    if _r is not None and _r is not n: return _r, _do_realize_rules[1]
    return None

def _do_realize_BUFFER_VIEW(n, ctx):
    # rule realize_effect at rules/kernelize.rules:37
    #   realize_effect: {ASSIGN, COPY, BUFFER_VIEW, CONTIGUOUS} as x -> realize(ctx, x)
    if _do_realize_st: _do_realize_st.attempts[1] += 1
    x = n
    _r = _as_uop(n, realize(ctx, x))
    if _r is not None and _r is not n: return _r, _do_realize_rules[1]
    return None

def _do_realize_ASSIGN(n, ctx):
    # rule realize_effect at rules/kernelize.rules:37
    #   realize_effect: {ASSIGN, COPY, BUFFER_VIEW, CONTIGUOUS} as x -> realize(ctx, x)
    if _do_realize_st: _do_realize_st.attempts[1] += 1
    x = n
    _r = _as_uop(n, realize(ctx, x))
    if _r is not None and _r is not n: return _r, _do_realize_rules[1]
    return None

def _do_realize_VIEW(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule realize_view at rules/kernelize.rules:38
        #   realize_view: VIEW(x) as v if is_computed(x) -> realize_before_view(ctx, v, x)
        if _do_realize_st: _do_realize_st.attempts[2] += 1
        v = n
        x = n0
        if is_computed(x):
            _r = _as_uop(n, realize_before_view(ctx, v, x))
            if _r is not None and _r is not n: return _r, _do_realize_rules[2]
    return None


_do_realize_part = RuleMatcher('do_realize', _do_realize_rules, {
    Ops.SINK: _do_realize_SINK,
    Ops.CONTIGUOUS: _do_realize_CONTIGUOUS,
    Ops.COPY: _do_realize_COPY,
    Ops.BUFFER_VIEW: _do_realize_BUFFER_VIEW,
    Ops.ASSIGN: _do_realize_ASSIGN,
    Ops.VIEW: _do_realize_VIEW,
}, home=(globals(), '_do_realize_st'))


# ======================================================================== group
_group_rules = (
    RuleInfo('group_reduces', 'rules/kernelize.rules', 43, 'group_reduces: SINK as s -> group_realizes(ctx, s)'),
)
_group_st = match_stats('group', _group_rules)  # None unless counting

def _group_SINK(n, ctx):
    # rule group_reduces at rules/kernelize.rules:43
    #   group_reduces: SINK as s -> group_realizes(ctx, s)
    if _group_st: _group_st.attempts[0] += 1
    s = n
    _r = _as_uop(n, group_realizes(ctx, s))
    if _r is not None and _r is not n: return _r, _group_rules[0]
    return None


_group_part = RuleMatcher('group', _group_rules, {
    Ops.SINK: _group_SINK,
}, home=(globals(), '_group_st'))


# ======================================================================== add_contiguous
_add_contiguous_rules = (
    RuleInfo('add_realize', 'rules/kernelize.rules', 49, 'add_realize: x if to_wrap(ctx, x) -> realize_wrap(ctx, x)'),
)
_add_contiguous_st = match_stats('add_contiguous', _add_contiguous_rules)  # None unless counting

def _add_contiguous_any0(n, ctx):
    # rule add_realize at rules/kernelize.rules:49
    #   add_realize: x if to_wrap(ctx, x) -> realize_wrap(ctx, x)
    if _add_contiguous_st: _add_contiguous_st.attempts[0] += 1
    x = n
    if to_wrap(ctx, x):
        _r = _as_uop(n, realize_wrap(ctx, x))
        if _r is not None and _r is not n: return _r, _add_contiguous_rules[0]
    return None


_add_contiguous_part = RuleMatcher('add_contiguous', _add_contiguous_rules, {
    **dict.fromkeys(Ops, _add_contiguous_any0),
}, home=(globals(), '_add_contiguous_st'))


# ======================================================================== finalize_contiguous
_finalize_contiguous_rules = (
    RuleInfo('limit_bufs', 'rules/kernelize.rules', 56, 'limit_bufs: {ADD, SUB, MUL, FDIV, IDIV, MOD, MAX, MIN, POW, CMPLT, CMPNE, CMPEQ, AND, OR, XOR, SHL, SHR, WHERE, MULACC} as root -> limit_bufs(ctx, root)'),
    RuleInfo('remove_tags', 'rules/kernelize.rules', 58, 'remove_tags: x if x.tag is not None -> x.replace(tag=None)'),
)
_finalize_contiguous_st = match_stats('finalize_contiguous', _finalize_contiguous_rules)  # None unless counting

def _finalize_contiguous_r0(n, ctx, root):
    # rule limit_bufs at rules/kernelize.rules:56
    #   limit_bufs: {ADD, SUB, MUL, FDIV, IDIV, MOD, MAX, MIN, POW, CMPLT, CMPNE, CMPEQ, AND, OR, XOR, SHL, SHR, WHERE, MULACC} as root -> limit_bufs(ctx, root)
    return _as_uop(n, limit_bufs(ctx, root))

def _finalize_contiguous_any0(n, ctx):
    # rule remove_tags at rules/kernelize.rules:58
    #   remove_tags: x if x.tag is not None -> x.replace(tag=None)
    if _finalize_contiguous_st: _finalize_contiguous_st.attempts[1] += 1
    x = n
    if x.tag is not None:
        _r = _as_uop(n, x.replace(tag=None))
        if _r is not None and _r is not n: return _r, _finalize_contiguous_rules[1]
    return None

def _finalize_contiguous_ADD(n, ctx):
    # rule limit_bufs at rules/kernelize.rules:56
    #   limit_bufs: {ADD, SUB, MUL, FDIV, IDIV, MOD, MAX, MIN, POW, CMPLT, CMPNE, CMPEQ, AND, OR, XOR, SHL, SHR, WHERE, MULACC} as root -> limit_bufs(ctx, root)
    if _finalize_contiguous_st: _finalize_contiguous_st.attempts[0] += 1
    _r = _finalize_contiguous_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r, _finalize_contiguous_rules[0]
    _h = _finalize_contiguous_any0(n, ctx)
    if _h is not None: return _h
    return None

def _finalize_contiguous_SUB(n, ctx):
    # rule limit_bufs at rules/kernelize.rules:56
    #   limit_bufs: {ADD, SUB, MUL, FDIV, IDIV, MOD, MAX, MIN, POW, CMPLT, CMPNE, CMPEQ, AND, OR, XOR, SHL, SHR, WHERE, MULACC} as root -> limit_bufs(ctx, root)
    if _finalize_contiguous_st: _finalize_contiguous_st.attempts[0] += 1
    _r = _finalize_contiguous_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r, _finalize_contiguous_rules[0]
    _h = _finalize_contiguous_any0(n, ctx)
    if _h is not None: return _h
    return None

def _finalize_contiguous_MUL(n, ctx):
    # rule limit_bufs at rules/kernelize.rules:56
    #   limit_bufs: {ADD, SUB, MUL, FDIV, IDIV, MOD, MAX, MIN, POW, CMPLT, CMPNE, CMPEQ, AND, OR, XOR, SHL, SHR, WHERE, MULACC} as root -> limit_bufs(ctx, root)
    if _finalize_contiguous_st: _finalize_contiguous_st.attempts[0] += 1
    _r = _finalize_contiguous_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r, _finalize_contiguous_rules[0]
    _h = _finalize_contiguous_any0(n, ctx)
    if _h is not None: return _h
    return None

def _finalize_contiguous_FDIV(n, ctx):
    # rule limit_bufs at rules/kernelize.rules:56
    #   limit_bufs: {ADD, SUB, MUL, FDIV, IDIV, MOD, MAX, MIN, POW, CMPLT, CMPNE, CMPEQ, AND, OR, XOR, SHL, SHR, WHERE, MULACC} as root -> limit_bufs(ctx, root)
    if _finalize_contiguous_st: _finalize_contiguous_st.attempts[0] += 1
    _r = _finalize_contiguous_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r, _finalize_contiguous_rules[0]
    _h = _finalize_contiguous_any0(n, ctx)
    if _h is not None: return _h
    return None

def _finalize_contiguous_IDIV(n, ctx):
    # rule limit_bufs at rules/kernelize.rules:56
    #   limit_bufs: {ADD, SUB, MUL, FDIV, IDIV, MOD, MAX, MIN, POW, CMPLT, CMPNE, CMPEQ, AND, OR, XOR, SHL, SHR, WHERE, MULACC} as root -> limit_bufs(ctx, root)
    if _finalize_contiguous_st: _finalize_contiguous_st.attempts[0] += 1
    _r = _finalize_contiguous_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r, _finalize_contiguous_rules[0]
    _h = _finalize_contiguous_any0(n, ctx)
    if _h is not None: return _h
    return None

def _finalize_contiguous_MOD(n, ctx):
    # rule limit_bufs at rules/kernelize.rules:56
    #   limit_bufs: {ADD, SUB, MUL, FDIV, IDIV, MOD, MAX, MIN, POW, CMPLT, CMPNE, CMPEQ, AND, OR, XOR, SHL, SHR, WHERE, MULACC} as root -> limit_bufs(ctx, root)
    if _finalize_contiguous_st: _finalize_contiguous_st.attempts[0] += 1
    _r = _finalize_contiguous_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r, _finalize_contiguous_rules[0]
    _h = _finalize_contiguous_any0(n, ctx)
    if _h is not None: return _h
    return None

def _finalize_contiguous_MAX(n, ctx):
    # rule limit_bufs at rules/kernelize.rules:56
    #   limit_bufs: {ADD, SUB, MUL, FDIV, IDIV, MOD, MAX, MIN, POW, CMPLT, CMPNE, CMPEQ, AND, OR, XOR, SHL, SHR, WHERE, MULACC} as root -> limit_bufs(ctx, root)
    if _finalize_contiguous_st: _finalize_contiguous_st.attempts[0] += 1
    _r = _finalize_contiguous_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r, _finalize_contiguous_rules[0]
    _h = _finalize_contiguous_any0(n, ctx)
    if _h is not None: return _h
    return None

def _finalize_contiguous_MIN(n, ctx):
    # rule limit_bufs at rules/kernelize.rules:56
    #   limit_bufs: {ADD, SUB, MUL, FDIV, IDIV, MOD, MAX, MIN, POW, CMPLT, CMPNE, CMPEQ, AND, OR, XOR, SHL, SHR, WHERE, MULACC} as root -> limit_bufs(ctx, root)
    if _finalize_contiguous_st: _finalize_contiguous_st.attempts[0] += 1
    _r = _finalize_contiguous_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r, _finalize_contiguous_rules[0]
    _h = _finalize_contiguous_any0(n, ctx)
    if _h is not None: return _h
    return None

def _finalize_contiguous_POW(n, ctx):
    # rule limit_bufs at rules/kernelize.rules:56
    #   limit_bufs: {ADD, SUB, MUL, FDIV, IDIV, MOD, MAX, MIN, POW, CMPLT, CMPNE, CMPEQ, AND, OR, XOR, SHL, SHR, WHERE, MULACC} as root -> limit_bufs(ctx, root)
    if _finalize_contiguous_st: _finalize_contiguous_st.attempts[0] += 1
    _r = _finalize_contiguous_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r, _finalize_contiguous_rules[0]
    _h = _finalize_contiguous_any0(n, ctx)
    if _h is not None: return _h
    return None

def _finalize_contiguous_CMPLT(n, ctx):
    # rule limit_bufs at rules/kernelize.rules:56
    #   limit_bufs: {ADD, SUB, MUL, FDIV, IDIV, MOD, MAX, MIN, POW, CMPLT, CMPNE, CMPEQ, AND, OR, XOR, SHL, SHR, WHERE, MULACC} as root -> limit_bufs(ctx, root)
    if _finalize_contiguous_st: _finalize_contiguous_st.attempts[0] += 1
    _r = _finalize_contiguous_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r, _finalize_contiguous_rules[0]
    _h = _finalize_contiguous_any0(n, ctx)
    if _h is not None: return _h
    return None

def _finalize_contiguous_CMPNE(n, ctx):
    # rule limit_bufs at rules/kernelize.rules:56
    #   limit_bufs: {ADD, SUB, MUL, FDIV, IDIV, MOD, MAX, MIN, POW, CMPLT, CMPNE, CMPEQ, AND, OR, XOR, SHL, SHR, WHERE, MULACC} as root -> limit_bufs(ctx, root)
    if _finalize_contiguous_st: _finalize_contiguous_st.attempts[0] += 1
    _r = _finalize_contiguous_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r, _finalize_contiguous_rules[0]
    _h = _finalize_contiguous_any0(n, ctx)
    if _h is not None: return _h
    return None

def _finalize_contiguous_CMPEQ(n, ctx):
    # rule limit_bufs at rules/kernelize.rules:56
    #   limit_bufs: {ADD, SUB, MUL, FDIV, IDIV, MOD, MAX, MIN, POW, CMPLT, CMPNE, CMPEQ, AND, OR, XOR, SHL, SHR, WHERE, MULACC} as root -> limit_bufs(ctx, root)
    if _finalize_contiguous_st: _finalize_contiguous_st.attempts[0] += 1
    _r = _finalize_contiguous_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r, _finalize_contiguous_rules[0]
    _h = _finalize_contiguous_any0(n, ctx)
    if _h is not None: return _h
    return None

def _finalize_contiguous_AND(n, ctx):
    # rule limit_bufs at rules/kernelize.rules:56
    #   limit_bufs: {ADD, SUB, MUL, FDIV, IDIV, MOD, MAX, MIN, POW, CMPLT, CMPNE, CMPEQ, AND, OR, XOR, SHL, SHR, WHERE, MULACC} as root -> limit_bufs(ctx, root)
    if _finalize_contiguous_st: _finalize_contiguous_st.attempts[0] += 1
    _r = _finalize_contiguous_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r, _finalize_contiguous_rules[0]
    _h = _finalize_contiguous_any0(n, ctx)
    if _h is not None: return _h
    return None

def _finalize_contiguous_OR(n, ctx):
    # rule limit_bufs at rules/kernelize.rules:56
    #   limit_bufs: {ADD, SUB, MUL, FDIV, IDIV, MOD, MAX, MIN, POW, CMPLT, CMPNE, CMPEQ, AND, OR, XOR, SHL, SHR, WHERE, MULACC} as root -> limit_bufs(ctx, root)
    if _finalize_contiguous_st: _finalize_contiguous_st.attempts[0] += 1
    _r = _finalize_contiguous_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r, _finalize_contiguous_rules[0]
    _h = _finalize_contiguous_any0(n, ctx)
    if _h is not None: return _h
    return None

def _finalize_contiguous_XOR(n, ctx):
    # rule limit_bufs at rules/kernelize.rules:56
    #   limit_bufs: {ADD, SUB, MUL, FDIV, IDIV, MOD, MAX, MIN, POW, CMPLT, CMPNE, CMPEQ, AND, OR, XOR, SHL, SHR, WHERE, MULACC} as root -> limit_bufs(ctx, root)
    if _finalize_contiguous_st: _finalize_contiguous_st.attempts[0] += 1
    _r = _finalize_contiguous_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r, _finalize_contiguous_rules[0]
    _h = _finalize_contiguous_any0(n, ctx)
    if _h is not None: return _h
    return None

def _finalize_contiguous_SHL(n, ctx):
    # rule limit_bufs at rules/kernelize.rules:56
    #   limit_bufs: {ADD, SUB, MUL, FDIV, IDIV, MOD, MAX, MIN, POW, CMPLT, CMPNE, CMPEQ, AND, OR, XOR, SHL, SHR, WHERE, MULACC} as root -> limit_bufs(ctx, root)
    if _finalize_contiguous_st: _finalize_contiguous_st.attempts[0] += 1
    _r = _finalize_contiguous_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r, _finalize_contiguous_rules[0]
    _h = _finalize_contiguous_any0(n, ctx)
    if _h is not None: return _h
    return None

def _finalize_contiguous_SHR(n, ctx):
    # rule limit_bufs at rules/kernelize.rules:56
    #   limit_bufs: {ADD, SUB, MUL, FDIV, IDIV, MOD, MAX, MIN, POW, CMPLT, CMPNE, CMPEQ, AND, OR, XOR, SHL, SHR, WHERE, MULACC} as root -> limit_bufs(ctx, root)
    if _finalize_contiguous_st: _finalize_contiguous_st.attempts[0] += 1
    _r = _finalize_contiguous_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r, _finalize_contiguous_rules[0]
    _h = _finalize_contiguous_any0(n, ctx)
    if _h is not None: return _h
    return None

def _finalize_contiguous_WHERE(n, ctx):
    # rule limit_bufs at rules/kernelize.rules:56
    #   limit_bufs: {ADD, SUB, MUL, FDIV, IDIV, MOD, MAX, MIN, POW, CMPLT, CMPNE, CMPEQ, AND, OR, XOR, SHL, SHR, WHERE, MULACC} as root -> limit_bufs(ctx, root)
    if _finalize_contiguous_st: _finalize_contiguous_st.attempts[0] += 1
    _r = _finalize_contiguous_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r, _finalize_contiguous_rules[0]
    _h = _finalize_contiguous_any0(n, ctx)
    if _h is not None: return _h
    return None

def _finalize_contiguous_MULACC(n, ctx):
    # rule limit_bufs at rules/kernelize.rules:56
    #   limit_bufs: {ADD, SUB, MUL, FDIV, IDIV, MOD, MAX, MIN, POW, CMPLT, CMPNE, CMPEQ, AND, OR, XOR, SHL, SHR, WHERE, MULACC} as root -> limit_bufs(ctx, root)
    if _finalize_contiguous_st: _finalize_contiguous_st.attempts[0] += 1
    _r = _finalize_contiguous_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r, _finalize_contiguous_rules[0]
    _h = _finalize_contiguous_any0(n, ctx)
    if _h is not None: return _h
    return None


_finalize_contiguous_part = RuleMatcher('finalize_contiguous', _finalize_contiguous_rules, {
    Ops.SINK: _finalize_contiguous_any0,
    Ops.NOOP: _finalize_contiguous_any0,
    Ops.GROUP: _finalize_contiguous_any0,
    Ops.BUFFER: _finalize_contiguous_any0,
    Ops.DEVICE: _finalize_contiguous_any0,
    Ops.UNIQUE: _finalize_contiguous_any0,
    Ops.CONST: _finalize_contiguous_any0,
    Ops.DEFINE_VAR: _finalize_contiguous_any0,
    Ops.BIND: _finalize_contiguous_any0,
    Ops.RESHAPE: _finalize_contiguous_any0,
    Ops.PERMUTE: _finalize_contiguous_any0,
    Ops.EXPAND: _finalize_contiguous_any0,
    Ops.PAD: _finalize_contiguous_any0,
    Ops.SHRINK: _finalize_contiguous_any0,
    Ops.FLIP: _finalize_contiguous_any0,
    Ops.CONTIGUOUS: _finalize_contiguous_any0,
    Ops.CONTIGUOUS_BACKWARD: _finalize_contiguous_any0,
    Ops.DETACH: _finalize_contiguous_any0,
    Ops.FUSE: _finalize_contiguous_any0,
    Ops.REALIZE: _finalize_contiguous_any0,
    Ops.COPY: _finalize_contiguous_any0,
    Ops.BUFFER_VIEW: _finalize_contiguous_any0,
    Ops.ASSIGN: _finalize_contiguous_any0,
    Ops.MSELECT: _finalize_contiguous_any0,
    Ops.MSTACK: _finalize_contiguous_any0,
    Ops.MULTI: _finalize_contiguous_any0,
    Ops.REDUCE_AXIS: _finalize_contiguous_any0,
    Ops.CHILD: _finalize_contiguous_any0,
    Ops.CHILDREN: _finalize_contiguous_any0,
    Ops.BUFFERIZE: _finalize_contiguous_any0,
    Ops.RANGE: _finalize_contiguous_any0,
    Ops.END: _finalize_contiguous_any0,
    Ops.INDEX: _finalize_contiguous_any0,
    Ops.LOAD: _finalize_contiguous_any0,
    Ops.STORE: _finalize_contiguous_any0,
    Ops.REDUCE: _finalize_contiguous_any0,
    Ops.DEFINE_GLOBAL: _finalize_contiguous_any0,
    Ops.DEFINE_LOCAL: _finalize_contiguous_any0,
    Ops.DEFINE_REG: _finalize_contiguous_any0,
    Ops.KERNEL: _finalize_contiguous_any0,
    Ops.IF: _finalize_contiguous_any0,
    Ops.ENDIF: _finalize_contiguous_any0,
    Ops.INVALID: _finalize_contiguous_any0,
    Ops.CAST: _finalize_contiguous_any0,
    Ops.BITCAST: _finalize_contiguous_any0,
    Ops.NEG: _finalize_contiguous_any0,
    Ops.EXP: _finalize_contiguous_any0,
    Ops.LOG: _finalize_contiguous_any0,
    Ops.EXP2: _finalize_contiguous_any0,
    Ops.LOG2: _finalize_contiguous_any0,
    Ops.SIN: _finalize_contiguous_any0,
    Ops.SQRT: _finalize_contiguous_any0,
    Ops.RECIPROCAL: _finalize_contiguous_any0,
    Ops.TRUNC: _finalize_contiguous_any0,
    Ops.ADD: _finalize_contiguous_ADD,
    Ops.SUB: _finalize_contiguous_SUB,
    Ops.MUL: _finalize_contiguous_MUL,
    Ops.FDIV: _finalize_contiguous_FDIV,
    Ops.IDIV: _finalize_contiguous_IDIV,
    Ops.MOD: _finalize_contiguous_MOD,
    Ops.MAX: _finalize_contiguous_MAX,
    Ops.MIN: _finalize_contiguous_MIN,
    Ops.POW: _finalize_contiguous_POW,
    Ops.CMPLT: _finalize_contiguous_CMPLT,
    Ops.CMPNE: _finalize_contiguous_CMPNE,
    Ops.CMPEQ: _finalize_contiguous_CMPEQ,
    Ops.AND: _finalize_contiguous_AND,
    Ops.OR: _finalize_contiguous_OR,
    Ops.XOR: _finalize_contiguous_XOR,
    Ops.SHL: _finalize_contiguous_SHL,
    Ops.SHR: _finalize_contiguous_SHR,
    Ops.WHERE: _finalize_contiguous_WHERE,
    Ops.MULACC: _finalize_contiguous_MULACC,
    Ops.VIEW: _finalize_contiguous_any0,
}, home=(globals(), '_finalize_contiguous_st'))


# ======================================================================== create_kernels
_create_kernels_rules = (
    RuleInfo('create_kernel', 'rules/kernelize.rules', 65, 'create_kernel: REALIZE as r -> create_kernel(ctx, r)'),
    RuleInfo('view_view', 'rules/kernelize.rules', 66, 'view_view: VIEW(VIEW as a) as b -> view_view(a, b)'),
)
_create_kernels_st = match_stats('create_kernels', _create_kernels_rules)  # None unless counting

def _create_kernels_REALIZE(n, ctx):
    # rule create_kernel at rules/kernelize.rules:65
    #   create_kernel: REALIZE as r -> create_kernel(ctx, r)
    if _create_kernels_st: _create_kernels_st.attempts[0] += 1
    r = n
    _r = _as_uop(n, create_kernel(ctx, r))
    if _r is not None and _r is not n: return _r, _create_kernels_rules[0]
    return None

def _create_kernels_VIEW(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is _VIEW:
            # rule view_view at rules/kernelize.rules:66
            #   view_view: VIEW(VIEW as a) as b -> view_view(a, b)
            if _create_kernels_st: _create_kernels_st.attempts[1] += 1
            a = n0
            b = n
            _r = _as_uop(n, view_view(a, b))
            if _r is not None and _r is not n: return _r, _create_kernels_rules[1]
    return None


_create_kernels_part = RuleMatcher('create_kernels', _create_kernels_rules, {
    Ops.REALIZE: _create_kernels_REALIZE,
    Ops.VIEW: _create_kernels_VIEW,
}, home=(globals(), '_create_kernels_st'))


# ======================================================================== create_ast
_create_ast_rules = (
    RuleInfo('ast_view', 'rules/kernelize.rules', 74, 'ast_view: INDEX(VIEW as v, ...) as idx -> index_view(v, idx)'),
    RuleInfo('ast_alu', 'rules/kernelize.rules', 75, 'ast_alu: INDEX(Elementwise as x, ...) as idx -> push_index(x, idx)'),
    RuleInfo('ast_marker', 'rules/kernelize.rules', 76, 'ast_marker: INDEX({CONTIGUOUS, COPY} as x, ...) as idx -> push_index_first(x, idx)'),
    RuleInfo('ast_reduce', 'rules/kernelize.rules', 77, 'ast_reduce: INDEX(REDUCE_AXIS as r, ...) as idx -> index_reduce(ctx, r, idx)'),
    RuleInfo('ast_const', 'rules/kernelize.rules', 78, 'ast_const: INDEX(c:CONST, ...) -> c'),
)
_create_ast_st = match_stats('create_ast', _create_ast_rules)  # None unless counting

def _create_ast_INDEX(n, ctx):
    if len(n.src) >= 1:
        n0 = n.src[0]
        o0 = n0.op
        if o0 in _OPS3:
            if o0 is _VIEW:
                # rule ast_view at rules/kernelize.rules:74
                #   ast_view: INDEX(VIEW as v, ...) as idx -> index_view(v, idx)
                if _create_ast_st: _create_ast_st.attempts[0] += 1
                idx = n
                v = n0
                _r = _as_uop(n, index_view(v, idx))
                if _r is not None and _r is not n: return _r, _create_ast_rules[0]
            elif o0 in _OPS1:
                # rule ast_alu at rules/kernelize.rules:75
                #   ast_alu: INDEX(Elementwise as x, ...) as idx -> push_index(x, idx)
                if _create_ast_st: _create_ast_st.attempts[1] += 1
                idx = n
                x = n0
                _r = _as_uop(n, push_index(x, idx))
                if _r is not None and _r is not n: return _r, _create_ast_rules[1]
            elif o0 in _OPS2:
                # rule ast_marker at rules/kernelize.rules:76
                #   ast_marker: INDEX({CONTIGUOUS, COPY} as x, ...) as idx -> push_index_first(x, idx)
                if _create_ast_st: _create_ast_st.attempts[2] += 1
                idx = n
                x = n0
                _r = _as_uop(n, push_index_first(x, idx))
                if _r is not None and _r is not n: return _r, _create_ast_rules[2]
            elif o0 is _REDUCE_AXIS:
                # rule ast_reduce at rules/kernelize.rules:77
                #   ast_reduce: INDEX(REDUCE_AXIS as r, ...) as idx -> index_reduce(ctx, r, idx)
                if _create_ast_st: _create_ast_st.attempts[3] += 1
                idx = n
                r = n0
                _r = _as_uop(n, index_reduce(ctx, r, idx))
                if _r is not None and _r is not n: return _r, _create_ast_rules[3]
            elif o0 is _CONST:
                # rule ast_const at rules/kernelize.rules:78
                #   ast_const: INDEX(c:CONST, ...) -> c
                if _create_ast_st: _create_ast_st.attempts[4] += 1
                c = n0
                return c, _create_ast_rules[4]
    return None


_create_ast_part = RuleMatcher('create_ast', _create_ast_rules, {
    Ops.INDEX: _create_ast_INDEX,
}, home=(globals(), '_create_ast_st'))


# ======================================================================== the rule sets
_S_do_fuse = compose('do_fuse', _do_fuse_part)
do_fuse = _S_do_fuse
_S_merge_views = compose('merge_views', _merge_views_part)
merge_views = _S_merge_views
_S_do_realize = compose('do_realize', _do_realize_part)
do_realize = _S_do_realize
_S_group = compose('group', _group_part)
group = _S_group
_S_add_contiguous = compose('add_contiguous', _add_contiguous_part)
add_contiguous = _S_add_contiguous
_S_finalize_contiguous = compose('finalize_contiguous', _finalize_contiguous_part)
finalize_contiguous = _S_finalize_contiguous
_S_create_kernels = compose('create_kernels', _create_kernels_part)
create_kernels = _S_create_kernels
_S_create_ast = compose('create_ast', _create_ast_part)
create_ast = _S_create_ast

MATCHERS = {
    'do_fuse': _S_do_fuse,
    'merge_views': _S_merge_views,
    'do_realize': _S_do_realize,
    'group': _S_group,
    'add_contiguous': _S_add_contiguous,
    'finalize_contiguous': _S_finalize_contiguous,
    'create_kernels': _S_create_kernels,
    'create_ast': _S_create_ast,
}

PIPELINES = {}
