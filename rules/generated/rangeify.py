# generated from rules/rangeify.rules by `rulegrad gen`; do not edit
# source sha256: 4bd25a22b8484aeb01687d838f8a8b3238d308b9db050d982b40392f2b1fbd42
# imports rules/movement.rules sha256: f8bf9f2fe732c1ccb65d44edf7f96b6168635bd35d4bde2a57c0ae03a9efb226
# imports rules/symbolic.rules sha256: 3a79ef5199b66a4f8ac8b5e4b60bfde0bf127f7610db78415da268b63a7b0a70
'Matchers for the rule sets of rules/rangeify.rules: earliest_rewrites, do_realize, add_realize, pm_children, pm_mops, pm_rangeify, pm_cleanups, split_kernels.'

from math import prod  # noqa: F401

from rulegrad.runtime.dtype import DTYPE_CLASSES, dtypes  # noqa: F401
from rulegrad.runtime.matcher import RuleMatcher, compose, helper_from, match_stats  # noqa: F401
from rulegrad.runtime.matcher import as_uop as _as_uop  # noqa: F401
from rulegrad.runtime.ops import GroupOp, Ops  # noqa: F401
from rulegrad.runtime.rewrite import RewriteNotReady, RuleInfo  # noqa: F401
from rulegrad.runtime.uop import UOp  # noqa: F401
from rulegrad.rules.rangeify_helpers import bufferize_to_store
from rulegrad.rules.rangeify_helpers import extract_children
from rulegrad.rules.rangeify_helpers import has_marked_child
from rulegrad.rules.rangeify_helpers import identity_value
from rulegrad.rules.rangeify_helpers import index_child
from rulegrad.rules.rangeify_helpers import keep_copy_source
from rulegrad.rules.rangeify_helpers import map_expand
from rulegrad.rules.rangeify_helpers import map_flip
from rulegrad.rules.rangeify_helpers import map_pad
from rulegrad.rules.rangeify_helpers import map_permute
from rulegrad.rules.rangeify_helpers import map_realize
from rulegrad.rules.rangeify_helpers import map_reduce
from rulegrad.rules.rangeify_helpers import map_reshape
from rulegrad.rules.rangeify_helpers import map_shrink
from rulegrad.rules.rangeify_helpers import mark_children
from rulegrad.rules.rangeify_helpers import merge_tags
from rulegrad.rules.rangeify_helpers import push_index
from rulegrad.rules.rangeify_helpers import push_index_first
from rulegrad.rules.rangeify_helpers import reads_target_moved
from rulegrad.rules.rangeify_helpers import realize_assign_value
from rulegrad.rules.rangeify_helpers import realize_copy_source
from rulegrad.rules.rangeify_helpers import realize_node
from rulegrad.rules.rangeify_helpers import realize_sink_srcs
from rulegrad.rules.rangeify_helpers import reduce_of_expand
from rulegrad.rules.rangeify_helpers import remove_bufferize
from rulegrad.rules.rangeify_helpers import split_reduce
from rulegrad.rules.rangeify_helpers import split_store
from rulegrad.rules.rangeify_helpers import unprocessed_index
from rulegrad.rules.rangeify_helpers import wrap_realize
from rulegrad.rules.generated import movement as _generated_movement
from rulegrad.rules.generated import symbolic as _generated_symbolic

SOURCE = 'rules/rangeify.rules'
SOURCE_SHA256 = '4bd25a22b8484aeb01687d838f8a8b3238d308b9db050d982b40392f2b1fbd42'
DEPENDENCIES = (('rules/movement.rules', 'f8bf9f2fe732c1ccb65d44edf7f96b6168635bd35d4bde2a57c0ae03a9efb226'), ('rules/symbolic.rules', '3a79ef5199b66a4f8ac8b5e4b60bfde0bf127f7610db78415da268b63a7b0a70'), )
_OPS0 = frozenset({Ops.RESHAPE, Ops.PERMUTE, Ops.EXPAND, Ops.PAD, Ops.SHRINK, Ops.FLIP})
_OPS1 = frozenset({Ops.CONST, Ops.DEFINE_VAR})
_OPS2 = frozenset({Ops.CAST, Ops.BITCAST, Ops.NEG, Ops.EXP, Ops.LOG, Ops.EXP2, Ops.LOG2, Ops.SIN, Ops.SQRT, Ops.RECIPROCAL, Ops.TRUNC, Ops.ADD, Ops.SUB, Ops.MUL, Ops.FDIV, Ops.IDIV, Ops.MOD, Ops.MAX, Ops.MIN, Ops.POW, Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ, Ops.AND, Ops.OR, Ops.XOR, Ops.SHL, Ops.SHR, Ops.WHERE, Ops.MULACC})
_OPS3 = frozenset({Ops.NOOP, Ops.CONTIGUOUS, Ops.COPY})
_OPS4 = frozenset({Ops.BUFFER, Ops.REALIZE, Ops.BUFFERIZE})
_OPS5 = frozenset({Ops.NOOP, Ops.BUFFER, Ops.CONST, Ops.DEFINE_VAR, Ops.CONTIGUOUS, Ops.REALIZE, Ops.COPY, Ops.ASSIGN, Ops.REDUCE_AXIS, Ops.CHILD, Ops.BUFFERIZE, Ops.CAST, Ops.BITCAST, Ops.NEG, Ops.EXP, Ops.LOG, Ops.EXP2, Ops.LOG2, Ops.SIN, Ops.SQRT, Ops.RECIPROCAL, Ops.TRUNC, Ops.ADD, Ops.SUB, Ops.MUL, Ops.FDIV, Ops.IDIV, Ops.MOD, Ops.MAX, Ops.MIN, Ops.POW, Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ, Ops.AND, Ops.OR, Ops.XOR, Ops.SHL, Ops.SHR, Ops.WHERE, Ops.MULACC})


# ======================================================================== earliest_rewrites
_earliest_rewrites_rules = (
    RuleInfo('drop_marker', 'rules/rangeify.rules', 17, 'drop_marker: {DETACH, CONTIGUOUS_BACKWARD, FUSE}(x) -> x'),
    RuleInfo('size_zero', 'rules/rangeify.rules', 20, 'size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)'),
    RuleInfo('reduce_empty', 'rules/rangeify.rules', 22, 'reduce_empty: REDUCE_AXIS(x) as red if x.size == 0 and red.size != 0 -> red.const_like(identity_value(red.arg[0], red.dtype))'),
    RuleInfo('reduce_expand', 'rules/rangeify.rules', 26, 'reduce_expand: REDUCE_AXIS(EXPAND(x) as e) as red -> reduce_of_expand(red, e, x)'),
    RuleInfo('split_reduceop', 'rules/rangeify.rules', 28, 'split_reduceop: REDUCE_AXIS(x) as red if x.size // max(red.size, 1) >= 32768 -> split_reduce(red, x)'),
    RuleInfo('copy_const', 'rules/rangeify.rules', 30, 'copy_const: COPY(EXPAND(RESHAPE(c:CONST)) as e, ...) -> e'),
    RuleInfo('assign_hazard', 'rules/rangeify.rules', 35, 'assign_hazard: ASSIGN(t, x) as a if x.op is not Ops.CONTIGUOUS and reads_target_moved(t, x) -> a.replace(src=(t, x.f(Ops.CONTIGUOUS)))'),
)
_earliest_rewrites_st = match_stats('earliest_rewrites', _earliest_rewrites_rules)  # None unless counting

def _earliest_rewrites_any0(n, ctx):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    if _earliest_rewrites_st: _earliest_rewrites_st.attempts[1] += 1
    x = n
    if x.size == 0 and x.base.op is not Ops.BUFFER:
        _r = _as_uop(n, x.const_like(0))
        if _r is not None and _r is not n: return _r, _earliest_rewrites_rules[1]
    return None

def _earliest_rewrites_CONTIGUOUS_BACKWARD(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule drop_marker at rules/rangeify.rules:17
        #   drop_marker: {DETACH, CONTIGUOUS_BACKWARD, FUSE}(x) -> x
        if _earliest_rewrites_st: _earliest_rewrites_st.attempts[0] += 1
        x = n0
        return x, _earliest_rewrites_rules[0]
    return None

def _earliest_rewrites_DETACH(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule drop_marker at rules/rangeify.rules:17
        #   drop_marker: {DETACH, CONTIGUOUS_BACKWARD, FUSE}(x) -> x
        if _earliest_rewrites_st: _earliest_rewrites_st.attempts[0] += 1
        x = n0
        return x, _earliest_rewrites_rules[0]
    return None

def _earliest_rewrites_FUSE(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule drop_marker at rules/rangeify.rules:17
        #   drop_marker: {DETACH, CONTIGUOUS_BACKWARD, FUSE}(x) -> x
        if _earliest_rewrites_st: _earliest_rewrites_st.attempts[0] += 1
        x = n0
        return x, _earliest_rewrites_rules[0]
    return None

def _earliest_rewrites_COPY(n, ctx):
    if len(n.src) >= 1:
        n0 = n.src[0]
        if n0.op is Ops.EXPAND and len(n0.src) == 1:
            n0_0 = n0.src[0]
            if n0_0.op is Ops.RESHAPE and len(n0_0.src) == 1:
                n0_0_0 = n0_0.src[0]
                if n0_0_0.op is Ops.CONST:
                    # rule copy_const at rules/rangeify.rules:30
                    #   copy_const: COPY(EXPAND(RESHAPE(c:CONST)) as e, ...) -> e
                    if _earliest_rewrites_st: _earliest_rewrites_st.attempts[5] += 1
                    c = n0_0_0
                    e = n0
                    return e, _earliest_rewrites_rules[5]
    return None

def _earliest_rewrites_ASSIGN(n, ctx):
    if len(n.src) == 2:
        n0, n1 = n.src
        # rule assign_hazard at rules/rangeify.rules:35
        #   assign_hazard: ASSIGN(t, x) as a if x.op is not Ops.CONTIGUOUS and reads_target_moved(t, x) -> a.replace(src=(t, x.f(Ops.CONTIGUOUS)))
        if _earliest_rewrites_st: _earliest_rewrites_st.attempts[6] += 1
        a = n
        t = n0
        x = n1
        if x.op is not Ops.CONTIGUOUS and reads_target_moved(t, x):
            _r = _as_uop(n, a.replace(src=(t, x.f(Ops.CONTIGUOUS))))
            if _r is not None and _r is not n: return _r, _earliest_rewrites_rules[6]
    return None

def _earliest_rewrites_REDUCE_AXIS(n, ctx):
    _h = _earliest_rewrites_any0(n, ctx)
    if _h is not None: return _h
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule reduce_empty at rules/rangeify.rules:22
        #   reduce_empty: REDUCE_AXIS(x) as red if x.size == 0 and red.size != 0 -> red.const_like(identity_value(red.arg[0], red.dtype))
        if _earliest_rewrites_st: _earliest_rewrites_st.attempts[2] += 1
        red = n
        x = n0
        if x.size == 0 and red.size != 0:
            _r = _as_uop(n, red.const_like(identity_value(red.arg[0], red.dtype)))
            if _r is not None and _r is not n: return _r, _earliest_rewrites_rules[2]
        if n0.op is Ops.EXPAND and len(n0.src) == 1:
            n0_0 = n0.src[0]
            # rule reduce_expand at rules/rangeify.rules:26
            #   reduce_expand: REDUCE_AXIS(EXPAND(x) as e) as red -> reduce_of_expand(red, e, x)
            if _earliest_rewrites_st: _earliest_rewrites_st.attempts[3] += 1
            e = n0
            red = n
            x = n0_0
            _r = _as_uop(n, reduce_of_expand(red, e, x))
            if _r is not None and _r is not n: return _r, _earliest_rewrites_rules[3]
        # rule split_reduceop at rules/rangeify.rules:28
        #   split_reduceop: REDUCE_AXIS(x) as red if x.size // max(red.size, 1) >= 32768 -> split_reduce(red, x)
        if _earliest_rewrites_st: _earliest_rewrites_st.attempts[4] += 1
        red = n
        x = n0
        if x.size // max(red.size, 1) >= 32768:
            _r = _as_uop(n, split_reduce(red, x))
            if _r is not None and _r is not n: return _r, _earliest_rewrites_rules[4]
    return None


_earliest_rewrites_part = RuleMatcher('earliest_rewrites', _earliest_rewrites_rules, {
    Ops.RESHAPE: _earliest_rewrites_any0,
    Ops.PERMUTE: _earliest_rewrites_any0,
    Ops.EXPAND: _earliest_rewrites_any0,
    Ops.PAD: _earliest_rewrites_any0,
    Ops.SHRINK: _earliest_rewrites_any0,
    Ops.FLIP: _earliest_rewrites_any0,
    Ops.CONTIGUOUS: _earliest_rewrites_any0,
    Ops.CONTIGUOUS_BACKWARD: _earliest_rewrites_CONTIGUOUS_BACKWARD,
    Ops.DETACH: _earliest_rewrites_DETACH,
    Ops.FUSE: _earliest_rewrites_FUSE,
    Ops.COPY: _earliest_rewrites_COPY,
    Ops.ASSIGN: _earliest_rewrites_ASSIGN,
    Ops.REDUCE_AXIS: _earliest_rewrites_REDUCE_AXIS,
    Ops.CAST: _earliest_rewrites_any0,
    Ops.BITCAST: _earliest_rewrites_any0,
    Ops.NEG: _earliest_rewrites_any0,
    Ops.EXP: _earliest_rewrites_any0,
    Ops.LOG: _earliest_rewrites_any0,
    Ops.EXP2: _earliest_rewrites_any0,
    Ops.LOG2: _earliest_rewrites_any0,
    Ops.SIN: _earliest_rewrites_any0,
    Ops.SQRT: _earliest_rewrites_any0,
    Ops.RECIPROCAL: _earliest_rewrites_any0,
    Ops.TRUNC: _earliest_rewrites_any0,
    Ops.ADD: _earliest_rewrites_any0,
    Ops.SUB: _earliest_rewrites_any0,
    Ops.MUL: _earliest_rewrites_any0,
    Ops.FDIV: _earliest_rewrites_any0,
    Ops.IDIV: _earliest_rewrites_any0,
    Ops.MOD: _earliest_rewrites_any0,
    Ops.MAX: _earliest_rewrites_any0,
    Ops.MIN: _earliest_rewrites_any0,
    Ops.POW: _earliest_rewrites_any0,
    Ops.CMPLT: _earliest_rewrites_any0,
    Ops.CMPNE: _earliest_rewrites_any0,
    Ops.CMPEQ: _earliest_rewrites_any0,
    Ops.AND: _earliest_rewrites_any0,
    Ops.OR: _earliest_rewrites_any0,
    Ops.XOR: _earliest_rewrites_any0,
    Ops.SHL: _earliest_rewrites_any0,
    Ops.SHR: _earliest_rewrites_any0,
    Ops.WHERE: _earliest_rewrites_any0,
    Ops.MULACC: _earliest_rewrites_any0,
}, home=(globals(), '_earliest_rewrites_st'))


# ======================================================================== do_realize
_do_realize_rules = (
    RuleInfo('realize_roots', 'rules/rangeify.rules', 42, 'realize_roots: SINK as s -> realize_sink_srcs(ctx, s)'),
    RuleInfo('realize_effects', 'rules/rangeify.rules', 44, 'realize_effects: {ASSIGN, COPY, BUFFER_VIEW, CONTIGUOUS} as x -> realize_node(ctx, x)'),
    RuleInfo('realize_copy_src', 'rules/rangeify.rules', 46, 'realize_copy_src: COPY as c -> realize_copy_source(ctx, c)'),
    RuleInfo('realize_assign', 'rules/rangeify.rules', 48, 'realize_assign: ASSIGN as a -> realize_assign_value(ctx, a)'),
)
_do_realize_st = match_stats('do_realize', _do_realize_rules)  # None unless counting

def _do_realize_SINK(n, ctx):
    # rule realize_roots at rules/rangeify.rules:42
    #   realize_roots: SINK as s -> realize_sink_srcs(ctx, s)
    if _do_realize_st: _do_realize_st.attempts[0] += 1
    s = n
    _r = _as_uop(n, realize_sink_srcs(ctx, s))
    if _r is not None and _r is not n: return _r, _do_realize_rules[0]
    return None

def _do_realize_CONTIGUOUS(n, ctx):
    # rule realize_effects at rules/rangeify.rules:44
    #   realize_effects: {ASSIGN, COPY, BUFFER_VIEW, CONTIGUOUS} as x -> realize_node(ctx, x)
    if _do_realize_st: _do_realize_st.attempts[1] += 1
    x = n
    _r = _as_uop(n, realize_node(ctx, x))
    if _r is not None and _r is not n: return _r, _do_realize_rules[1]
    return None

def _do_realize_COPY(n, ctx):
    # rule realize_effects at rules/rangeify.rules:44
    #   realize_effects: {ASSIGN, COPY, BUFFER_VIEW, CONTIGUOUS} as x -> realize_node(ctx, x)
    if _do_realize_st: _do_realize_st.attempts[1] += 1
    x = n
    _r = _as_uop(n, realize_node(ctx, x))
    if _r is not None and _r is not n: return _r, _do_realize_rules[1]
    # rule realize_copy_src at rules/rangeify.rules:46
    #   realize_copy_src: COPY as c -> realize_copy_source(ctx, c)
    if _do_realize_st: _do_realize_st.attempts[2] += 1
    c = n
    _r = _as_uop(n, realize_copy_source(ctx, c))
    if _r is not None and _r is not n: return _r, _do_realize_rules[2]
    return None

def _do_realize_BUFFER_VIEW(n, ctx):
    # rule realize_effects at rules/rangeify.rules:44
    #   realize_effects: {ASSIGN, COPY, BUFFER_VIEW, CONTIGUOUS} as x -> realize_node(ctx, x)
    if _do_realize_st: _do_realize_st.attempts[1] += 1
    x = n
    _r = _as_uop(n, realize_node(ctx, x))
    if _r is not None and _r is not n: return _r, _do_realize_rules[1]
    return None

def _do_realize_ASSIGN(n, ctx):
    # rule realize_effects at rules/rangeify.rules:44
    #   realize_effects: {ASSIGN, COPY, BUFFER_VIEW, CONTIGUOUS} as x -> realize_node(ctx, x)
    if _do_realize_st: _do_realize_st.attempts[1] += 1
    x = n
    _r = _as_uop(n, realize_node(ctx, x))
    if _r is not None and _r is not n: return _r, _do_realize_rules[1]
    # rule realize_assign at rules/rangeify.rules:48
    #   realize_assign: ASSIGN as a -> realize_assign_value(ctx, a)
    if _do_realize_st: _do_realize_st.attempts[3] += 1
    a = n
    _r = _as_uop(n, realize_assign_value(ctx, a))
    if _r is not None and _r is not n: return _r, _do_realize_rules[3]
    return None


_do_realize_part = RuleMatcher('do_realize', _do_realize_rules, {
    Ops.SINK: _do_realize_SINK,
    Ops.CONTIGUOUS: _do_realize_CONTIGUOUS,
    Ops.COPY: _do_realize_COPY,
    Ops.BUFFER_VIEW: _do_realize_BUFFER_VIEW,
    Ops.ASSIGN: _do_realize_ASSIGN,
}, home=(globals(), '_do_realize_st'))


# ======================================================================== add_realize
_add_realize_rules = (
    RuleInfo('add_realize', 'rules/rangeify.rules', 51, 'add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)'),
)
_add_realize_st = match_stats('add_realize', _add_realize_rules)  # None unless counting

def _add_realize_any0(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    if _add_realize_st: _add_realize_st.attempts[0] += 1
    x = n
    if x in ctx.realize and x.tag is None:
        _r = _as_uop(n, wrap_realize(ctx, x))
        if _r is not None and _r is not n: return _r, _add_realize_rules[0]
    return None


_add_realize_part = RuleMatcher('add_realize', _add_realize_rules, {
    **dict.fromkeys(Ops, _add_realize_any0),
}, home=(globals(), '_add_realize_st'))


# ======================================================================== pm_children
_pm_children_rules = (
    RuleInfo('find_children', 'rules/rangeify.rules', 58, 'find_children: SINK as s -> extract_children(ctx, s)'),
    RuleInfo('mark_children', 'rules/rangeify.rules', 59, 'mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)'),
    RuleInfo('unmark', 'rules/rangeify.rules', 62, 'unmark: x if x.tag == "realized" -> x.replace(tag=None)'),
)
_pm_children_st = match_stats('pm_children', _pm_children_rules)  # None unless counting

def _pm_children_any0(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    if _pm_children_st: _pm_children_st.attempts[1] += 1
    x = n
    if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x):
        _r = _as_uop(n, mark_children(ctx, x))
        if _r is not None and _r is not n: return _r, _pm_children_rules[1]
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    if _pm_children_st: _pm_children_st.attempts[2] += 1
    x = n
    if x.tag == 'realized':
        _r = _as_uop(n, x.replace(tag=None))
        if _r is not None and _r is not n: return _r, _pm_children_rules[2]
    return None

def _pm_children_SINK(n, ctx):
    # rule find_children at rules/rangeify.rules:58
    #   find_children: SINK as s -> extract_children(ctx, s)
    if _pm_children_st: _pm_children_st.attempts[0] += 1
    s = n
    _r = _as_uop(n, extract_children(ctx, s))
    if _r is not None and _r is not n: return _r, _pm_children_rules[0]
    _h = _pm_children_any0(n, ctx)
    if _h is not None: return _h
    return None


_pm_children_part = RuleMatcher('pm_children', _pm_children_rules, {
    Ops.SINK: _pm_children_SINK,
    Ops.NOOP: _pm_children_any0,
    Ops.GROUP: _pm_children_any0,
    Ops.BUFFER: _pm_children_any0,
    Ops.DEVICE: _pm_children_any0,
    Ops.UNIQUE: _pm_children_any0,
    Ops.CONST: _pm_children_any0,
    Ops.DEFINE_VAR: _pm_children_any0,
    Ops.BIND: _pm_children_any0,
    Ops.RESHAPE: _pm_children_any0,
    Ops.PERMUTE: _pm_children_any0,
    Ops.EXPAND: _pm_children_any0,
    Ops.PAD: _pm_children_any0,
    Ops.SHRINK: _pm_children_any0,
    Ops.FLIP: _pm_children_any0,
    Ops.CONTIGUOUS: _pm_children_any0,
    Ops.CONTIGUOUS_BACKWARD: _pm_children_any0,
    Ops.DETACH: _pm_children_any0,
    Ops.FUSE: _pm_children_any0,
    Ops.REALIZE: _pm_children_any0,
    Ops.COPY: _pm_children_any0,
    Ops.BUFFER_VIEW: _pm_children_any0,
    Ops.ASSIGN: _pm_children_any0,
    Ops.MSELECT: _pm_children_any0,
    Ops.MSTACK: _pm_children_any0,
    Ops.MULTI: _pm_children_any0,
    Ops.REDUCE_AXIS: _pm_children_any0,
    Ops.CHILD: _pm_children_any0,
    Ops.CHILDREN: _pm_children_any0,
    Ops.BUFFERIZE: _pm_children_any0,
    Ops.RANGE: _pm_children_any0,
    Ops.END: _pm_children_any0,
    Ops.INDEX: _pm_children_any0,
    Ops.LOAD: _pm_children_any0,
    Ops.STORE: _pm_children_any0,
    Ops.REDUCE: _pm_children_any0,
    Ops.DEFINE_GLOBAL: _pm_children_any0,
    Ops.DEFINE_LOCAL: _pm_children_any0,
    Ops.DEFINE_REG: _pm_children_any0,
    Ops.KERNEL: _pm_children_any0,
    Ops.IF: _pm_children_any0,
    Ops.ENDIF: _pm_children_any0,
    Ops.INVALID: _pm_children_any0,
    Ops.CAST: _pm_children_any0,
    Ops.BITCAST: _pm_children_any0,
    Ops.NEG: _pm_children_any0,
    Ops.EXP: _pm_children_any0,
    Ops.LOG: _pm_children_any0,
    Ops.EXP2: _pm_children_any0,
    Ops.LOG2: _pm_children_any0,
    Ops.SIN: _pm_children_any0,
    Ops.SQRT: _pm_children_any0,
    Ops.RECIPROCAL: _pm_children_any0,
    Ops.TRUNC: _pm_children_any0,
    Ops.ADD: _pm_children_any0,
    Ops.SUB: _pm_children_any0,
    Ops.MUL: _pm_children_any0,
    Ops.FDIV: _pm_children_any0,
    Ops.IDIV: _pm_children_any0,
    Ops.MOD: _pm_children_any0,
    Ops.MAX: _pm_children_any0,
    Ops.MIN: _pm_children_any0,
    Ops.POW: _pm_children_any0,
    Ops.CMPLT: _pm_children_any0,
    Ops.CMPNE: _pm_children_any0,
    Ops.CMPEQ: _pm_children_any0,
    Ops.AND: _pm_children_any0,
    Ops.OR: _pm_children_any0,
    Ops.XOR: _pm_children_any0,
    Ops.SHL: _pm_children_any0,
    Ops.SHR: _pm_children_any0,
    Ops.WHERE: _pm_children_any0,
    Ops.MULACC: _pm_children_any0,
}, home=(globals(), '_pm_children_st'))


# ======================================================================== pm_mops
_pm_mops_rules = (
    RuleInfo('index_shrink', 'rules/rangeify.rules', 68, 'index_shrink: INDEX(SHRINK as r, ...) as idx -> map_shrink(r, idx)'),
    RuleInfo('index_permute', 'rules/rangeify.rules', 69, 'index_permute: INDEX(PERMUTE as r, ...) as idx -> map_permute(r, idx)'),
    RuleInfo('index_flip', 'rules/rangeify.rules', 70, 'index_flip: INDEX(FLIP as r, ...) as idx -> map_flip(r, idx)'),
    RuleInfo('index_expand', 'rules/rangeify.rules', 71, 'index_expand: INDEX(EXPAND as r, ...) as idx -> map_expand(r, idx)'),
    RuleInfo('index_pad', 'rules/rangeify.rules', 72, 'index_pad: INDEX(PAD as r, ...) as idx -> map_pad(r, idx)'),
    RuleInfo('index_reshape', 'rules/rangeify.rules', 73, 'index_reshape: INDEX(RESHAPE as r, ...) as idx -> map_reshape(r, idx)'),
)
_pm_mops_st = match_stats('pm_mops', _pm_mops_rules)  # None unless counting

def _pm_mops_INDEX(n, ctx):
    if len(n.src) >= 1:
        n0 = n.src[0]
        o0 = n0.op
        if o0 in _OPS0:
            if o0 is Ops.SHRINK:
                # rule index_shrink at rules/rangeify.rules:68
                #   index_shrink: INDEX(SHRINK as r, ...) as idx -> map_shrink(r, idx)
                if _pm_mops_st: _pm_mops_st.attempts[0] += 1
                idx = n
                r = n0
                _r = _as_uop(n, map_shrink(r, idx))
                if _r is not None and _r is not n: return _r, _pm_mops_rules[0]
            elif o0 is Ops.PERMUTE:
                # rule index_permute at rules/rangeify.rules:69
                #   index_permute: INDEX(PERMUTE as r, ...) as idx -> map_permute(r, idx)
                if _pm_mops_st: _pm_mops_st.attempts[1] += 1
                idx = n
                r = n0
                _r = _as_uop(n, map_permute(r, idx))
                if _r is not None and _r is not n: return _r, _pm_mops_rules[1]
            elif o0 is Ops.FLIP:
                # rule index_flip at rules/rangeify.rules:70
                #   index_flip: INDEX(FLIP as r, ...) as idx -> map_flip(r, idx)
                if _pm_mops_st: _pm_mops_st.attempts[2] += 1
                idx = n
                r = n0
                _r = _as_uop(n, map_flip(r, idx))
                if _r is not None and _r is not n: return _r, _pm_mops_rules[2]
            elif o0 is Ops.EXPAND:
                # rule index_expand at rules/rangeify.rules:71
                #   index_expand: INDEX(EXPAND as r, ...) as idx -> map_expand(r, idx)
                if _pm_mops_st: _pm_mops_st.attempts[3] += 1
                idx = n
                r = n0
                _r = _as_uop(n, map_expand(r, idx))
                if _r is not None and _r is not n: return _r, _pm_mops_rules[3]
            elif o0 is Ops.PAD:
                # rule index_pad at rules/rangeify.rules:72
                #   index_pad: INDEX(PAD as r, ...) as idx -> map_pad(r, idx)
                if _pm_mops_st: _pm_mops_st.attempts[4] += 1
                idx = n
                r = n0
                _r = _as_uop(n, map_pad(r, idx))
                if _r is not None and _r is not n: return _r, _pm_mops_rules[4]
            elif o0 is Ops.RESHAPE:
                # rule index_reshape at rules/rangeify.rules:73
                #   index_reshape: INDEX(RESHAPE as r, ...) as idx -> map_reshape(r, idx)
                if _pm_mops_st: _pm_mops_st.attempts[5] += 1
                idx = n
                r = n0
                _r = _as_uop(n, map_reshape(r, idx))
                if _r is not None and _r is not n: return _r, _pm_mops_rules[5]
    return None


_pm_mops_part = RuleMatcher('pm_mops', _pm_mops_rules, {
    Ops.INDEX: _pm_mops_INDEX,
}, home=(globals(), '_pm_mops_st'))


# ======================================================================== pm_rangeify
_pm_rangeify_rules = (
    RuleInfo('realize', 'rules/rangeify.rules', 78, 'realize: REALIZE as r -> map_realize(ctx, r)'),
    RuleInfo('index_child', 'rules/rangeify.rules', 80, 'index_child: INDEX(CHILD(CHILDREN(c)), ...) as idx -> index_child(ctx, c, idx)'),
    RuleInfo('index_const', 'rules/rangeify.rules', 82, 'index_const: INDEX({CONST, DEFINE_VAR} as c, ...) -> c'),
    RuleInfo('index_assign', 'rules/rangeify.rules', 84, 'index_assign: INDEX(ASSIGN as a, ...) as idx -> push_index(a, idx)'),
    RuleInfo('index_alu', 'rules/rangeify.rules', 86, 'index_alu: INDEX(Elementwise as x, ...) as idx -> push_index(x, idx)'),
    RuleInfo('index_marker', 'rules/rangeify.rules', 87, 'index_marker: INDEX({CONTIGUOUS, COPY, NOOP} as x, ...) as idx -> push_index_first(x, idx)'),
    RuleInfo('index_reduce', 'rules/rangeify.rules', 89, 'index_reduce: INDEX(REDUCE_AXIS as red, ...) as idx -> map_reduce(ctx, red, idx)'),
    RuleInfo('index_memory', 'rules/rangeify.rules', 91, 'index_memory: INDEX({BUFFER, BUFFERIZE, REALIZE}, ...) as idx if idx.arg is not None -> idx.replace(arg=None)'),
    RuleInfo('index_other', 'rules/rangeify.rules', 93, 'index_other: INDEX(x, ...) if x.op not in (Ops.REALIZE, Ops.BUFFERIZE, Ops.BUFFER) -> unprocessed_index(x)'),
)
_pm_rangeify_st = match_stats('pm_rangeify', _pm_rangeify_rules)  # None unless counting

def _pm_rangeify_REALIZE(n, ctx):
    # rule realize at rules/rangeify.rules:78
    #   realize: REALIZE as r -> map_realize(ctx, r)
    if _pm_rangeify_st: _pm_rangeify_st.attempts[0] += 1
    r = n
    _r = _as_uop(n, map_realize(ctx, r))
    if _r is not None and _r is not n: return _r, _pm_rangeify_rules[0]
    return None

def _pm_rangeify_INDEX(n, ctx):
    _h = _pm_mops_INDEX(n, ctx)
    if _h is not None: return _h
    if len(n.src) >= 1:
        n0 = n.src[0]
        o0 = n0.op
        if o0 in _OPS5:
            if o0 is Ops.CHILD and len(n0.src) == 1:
                n0_0 = n0.src[0]
                if n0_0.op is Ops.CHILDREN and len(n0_0.src) == 1:
                    n0_0_0 = n0_0.src[0]
                    # rule index_child at rules/rangeify.rules:80
                    #   index_child: INDEX(CHILD(CHILDREN(c)), ...) as idx -> index_child(ctx, c, idx)
                    if _pm_rangeify_st: _pm_rangeify_st.attempts[1] += 1
                    c = n0_0_0
                    idx = n
                    _r = _as_uop(n, index_child(ctx, c, idx))
                    if _r is not None and _r is not n: return _r, _pm_rangeify_rules[1]
            elif o0 in _OPS1:
                # rule index_const at rules/rangeify.rules:82
                #   index_const: INDEX({CONST, DEFINE_VAR} as c, ...) -> c
                if _pm_rangeify_st: _pm_rangeify_st.attempts[2] += 1
                c = n0
                return c, _pm_rangeify_rules[2]
            elif o0 is Ops.ASSIGN:
                # rule index_assign at rules/rangeify.rules:84
                #   index_assign: INDEX(ASSIGN as a, ...) as idx -> push_index(a, idx)
                if _pm_rangeify_st: _pm_rangeify_st.attempts[3] += 1
                a = n0
                idx = n
                _r = _as_uop(n, push_index(a, idx))
                if _r is not None and _r is not n: return _r, _pm_rangeify_rules[3]
            elif o0 in _OPS2:
                # rule index_alu at rules/rangeify.rules:86
                #   index_alu: INDEX(Elementwise as x, ...) as idx -> push_index(x, idx)
                if _pm_rangeify_st: _pm_rangeify_st.attempts[4] += 1
                idx = n
                x = n0
                _r = _as_uop(n, push_index(x, idx))
                if _r is not None and _r is not n: return _r, _pm_rangeify_rules[4]
            elif o0 in _OPS3:
                # rule index_marker at rules/rangeify.rules:87
                #   index_marker: INDEX({CONTIGUOUS, COPY, NOOP} as x, ...) as idx -> push_index_first(x, idx)
                if _pm_rangeify_st: _pm_rangeify_st.attempts[5] += 1
                idx = n
                x = n0
                _r = _as_uop(n, push_index_first(x, idx))
                if _r is not None and _r is not n: return _r, _pm_rangeify_rules[5]
            elif o0 is Ops.REDUCE_AXIS:
                # rule index_reduce at rules/rangeify.rules:89
                #   index_reduce: INDEX(REDUCE_AXIS as red, ...) as idx -> map_reduce(ctx, red, idx)
                if _pm_rangeify_st: _pm_rangeify_st.attempts[6] += 1
                idx = n
                red = n0
                _r = _as_uop(n, map_reduce(ctx, red, idx))
                if _r is not None and _r is not n: return _r, _pm_rangeify_rules[6]
            elif o0 in _OPS4:
                # rule index_memory at rules/rangeify.rules:91
                #   index_memory: INDEX({BUFFER, BUFFERIZE, REALIZE}, ...) as idx if idx.arg is not None -> idx.replace(arg=None)
                if _pm_rangeify_st: _pm_rangeify_st.attempts[7] += 1
                idx = n
                if idx.arg is not None:
                    _r = _as_uop(n, idx.replace(arg=None))
                    if _r is not None and _r is not n: return _r, _pm_rangeify_rules[7]
        # rule index_other at rules/rangeify.rules:93
        #   index_other: INDEX(x, ...) if x.op not in (Ops.REALIZE, Ops.BUFFERIZE, Ops.BUFFER) -> unprocessed_index(x)
        if _pm_rangeify_st: _pm_rangeify_st.attempts[8] += 1
        x = n0
        if x.op not in (Ops.REALIZE, Ops.BUFFERIZE, Ops.BUFFER):
            _r = _as_uop(n, unprocessed_index(x))
            if _r is not None and _r is not n: return _r, _pm_rangeify_rules[8]
    return None


_pm_rangeify_part = RuleMatcher('pm_rangeify', _pm_rangeify_rules, {
    Ops.REALIZE: _pm_rangeify_REALIZE,
    Ops.INDEX: _pm_rangeify_INDEX,
}, home=(globals(), '_pm_rangeify_st'), over=True)


# ======================================================================== pm_cleanups
_pm_cleanups_rules = (
    RuleInfo('noop_buffer', 'rules/rangeify.rules', 101, 'noop_buffer: BUFFERIZE(INDEX(b:BUFFERIZE, ...) as idx, ...) as b2 if idx.src[1:] == b2.src[1:] and b.shape == b2.shape -> merge_tags(b, b2)'),
    RuleInfo('const_buffer', 'rules/rangeify.rules', 103, 'const_buffer: INDEX(BUFFERIZE(c:CONST, ...), ...) -> c'),
    RuleInfo('remove_buffer', 'rules/rangeify.rules', 105, 'remove_buffer: INDEX(BUFFERIZE(src, ...) as buf, ...) as idx -> remove_bufferize(src, buf, idx)'),
    RuleInfo('copy_const_idx', 'rules/rangeify.rules', 107, 'copy_const_idx: COPY(c:CONST, ...) -> c'),
    RuleInfo('copy_keeps_src', 'rules/rangeify.rules', 110, 'copy_keeps_src: COPY(INDEX(BUFFERIZE(x, ...) as b, ...) as idx, ...) as c if x.op not in (Ops.CONTIGUOUS, Ops.COPY, Ops.CONST) -> keep_copy_source(c, idx, b)'),
)
_pm_cleanups_st = match_stats('pm_cleanups', _pm_cleanups_rules)  # None unless counting

def _pm_cleanups_COPY(n, ctx):
    if len(n.src) >= 1:
        n0 = n.src[0]
        o0 = n0.op
        if o0 is Ops.CONST:
            # rule copy_const_idx at rules/rangeify.rules:107
            #   copy_const_idx: COPY(c:CONST, ...) -> c
            if _pm_cleanups_st: _pm_cleanups_st.attempts[3] += 1
            c = n0
            return c, _pm_cleanups_rules[3]
        elif o0 is Ops.INDEX and len(n0.src) >= 1:
            n0_0 = n0.src[0]
            if n0_0.op is Ops.BUFFERIZE and len(n0_0.src) >= 1:
                n0_0_0 = n0_0.src[0]
                # rule copy_keeps_src at rules/rangeify.rules:110
                #   copy_keeps_src: COPY(INDEX(BUFFERIZE(x, ...) as b, ...) as idx, ...) as c if x.op not in (Ops.CONTIGUOUS, Ops.COPY, Ops.CONST) -> keep_copy_source(c, idx, b)
                if _pm_cleanups_st: _pm_cleanups_st.attempts[4] += 1
                b = n0_0
                c = n
                idx = n0
                x = n0_0_0
                if x.op not in (Ops.CONTIGUOUS, Ops.COPY, Ops.CONST):
                    _r = _as_uop(n, keep_copy_source(c, idx, b))
                    if _r is not None and _r is not n: return _r, _pm_cleanups_rules[4]
    return None

def _pm_cleanups_BUFFERIZE(n, ctx):
    if len(n.src) >= 1:
        n0 = n.src[0]
        if n0.op is Ops.INDEX and len(n0.src) >= 1:
            n0_0 = n0.src[0]
            if n0_0.op is Ops.BUFFERIZE:
                # rule noop_buffer at rules/rangeify.rules:101
                #   noop_buffer: BUFFERIZE(INDEX(b:BUFFERIZE, ...) as idx, ...) as b2 if idx.src[1:] == b2.src[1:] and b.shape == b2.shape -> merge_tags(b, b2)
                if _pm_cleanups_st: _pm_cleanups_st.attempts[0] += 1
                b = n0_0
                b2 = n
                idx = n0
                if idx.src[1:] == b2.src[1:] and b.shape == b2.shape:
                    _r = _as_uop(n, merge_tags(b, b2))
                    if _r is not None and _r is not n: return _r, _pm_cleanups_rules[0]
    return None

def _pm_cleanups_INDEX(n, ctx):
    if len(n.src) >= 1:
        n0 = n.src[0]
        if n0.op is Ops.BUFFERIZE and len(n0.src) >= 1:
            n0_0 = n0.src[0]
            if n0_0.op is Ops.CONST:
                # rule const_buffer at rules/rangeify.rules:103
                #   const_buffer: INDEX(BUFFERIZE(c:CONST, ...), ...) -> c
                if _pm_cleanups_st: _pm_cleanups_st.attempts[1] += 1
                c = n0_0
                return c, _pm_cleanups_rules[1]
            # rule remove_buffer at rules/rangeify.rules:105
            #   remove_buffer: INDEX(BUFFERIZE(src, ...) as buf, ...) as idx -> remove_bufferize(src, buf, idx)
            if _pm_cleanups_st: _pm_cleanups_st.attempts[2] += 1
            buf = n0
            idx = n
            src = n0_0
            _r = _as_uop(n, remove_bufferize(src, buf, idx))
            if _r is not None and _r is not n: return _r, _pm_cleanups_rules[2]
    return None


_pm_cleanups_part = RuleMatcher('pm_cleanups', _pm_cleanups_rules, {
    Ops.COPY: _pm_cleanups_COPY,
    Ops.BUFFERIZE: _pm_cleanups_BUFFERIZE,
    Ops.INDEX: _pm_cleanups_INDEX,
}, home=(globals(), '_pm_cleanups_st'))


# ======================================================================== split_kernels
_split_kernels_rules = (
    RuleInfo('split_store', 'rules/rangeify.rules', 118, 'split_store: BUFFERIZE as b -> split_store(bufferize_to_store(b))'),
)
_split_kernels_st = match_stats('split_kernels', _split_kernels_rules)  # None unless counting

def _split_kernels_BUFFERIZE(n, ctx):
    # rule split_store at rules/rangeify.rules:118
    #   split_store: BUFFERIZE as b -> split_store(bufferize_to_store(b))
    if _split_kernels_st: _split_kernels_st.attempts[0] += 1
    b = n
    _r = _as_uop(n, split_store(bufferize_to_store(b)))
    if _r is not None and _r is not n: return _r, _split_kernels_rules[0]
    return None


_split_kernels_part = RuleMatcher('split_kernels', _split_kernels_rules, {
    Ops.BUFFERIZE: _split_kernels_BUFFERIZE,
}, home=(globals(), '_split_kernels_st'))


# ======================================================================== the rule sets
_S_earliest_rewrites = compose('earliest_rewrites', _generated_movement.MATCHERS['double_reshape'], _earliest_rewrites_part)
earliest_rewrites = _S_earliest_rewrites
_S_do_realize = compose('do_realize', _do_realize_part)
do_realize = _S_do_realize
_S_add_realize = compose('add_realize', _add_realize_part)
add_realize = _S_add_realize
_S_pm_children = compose('pm_children', _pm_children_part)
pm_children = _S_pm_children
_S_pm_mops = compose('pm_mops', _pm_mops_part)
pm_mops = _S_pm_mops
_S_pm_rangeify = compose('pm_rangeify', _S_pm_mops, _pm_rangeify_part)
pm_rangeify = _S_pm_rangeify
_S_pm_cleanups = compose('pm_cleanups', _generated_symbolic.MATCHERS['sym'], _S_pm_mops, _pm_cleanups_part)
pm_cleanups = _S_pm_cleanups
_S_split_kernels = compose('split_kernels', _split_kernels_part)
split_kernels = _S_split_kernels

MATCHERS = {
    'earliest_rewrites': _S_earliest_rewrites,
    'do_realize': _S_do_realize,
    'add_realize': _S_add_realize,
    'pm_children': _S_pm_children,
    'pm_mops': _S_pm_mops,
    'pm_rangeify': _S_pm_rangeify,
    'pm_cleanups': _S_pm_cleanups,
    'split_kernels': _S_split_kernels,
}
