# generated from rules/rangeify.rules by `rulegrad gen`; do not edit
# source sha256: c3475f0fb0ad537e5d9667c031bb1c97c010b0ca17e993d2574f40a2a9bacf96
# imports rules/movement.rules sha256: f8bf9f2fe732c1ccb65d44edf7f96b6168635bd35d4bde2a57c0ae03a9efb226
# imports rules/symbolic.rules sha256: fa06c95d62d5c099031734767d0b8c06a220a2adbbe43f432f805189cc906d54
"""Matchers for the rule sets of rules/rangeify.rules: earliest_rewrites, do_realize, add_realize, pm_children, pm_mops, pm_rangeify, pm_cleanups, split_kernels."""

from math import prod  # noqa: F401

from rulegrad.runtime.dtype import DTYPE_CLASSES, dtypes  # noqa: F401
from rulegrad.runtime.matcher import RuleMatcher, helper_from  # noqa: F401
from rulegrad.runtime.matcher import as_uop as _as_uop  # noqa: F401
from rulegrad.runtime.ops import GroupOp, Ops  # noqa: F401
from rulegrad.runtime.rewrite import RewriteNotReady, RuleInfo  # noqa: F401
from rulegrad.runtime.uop import UOp  # noqa: F401
from rulegrad.rules.rangeify_helpers import bufferize_to_store
from rulegrad.rules.symbolic_helpers import cast_value
from rulegrad.rules.movement_helpers import compose_flip
from rulegrad.rules.movement_helpers import compose_pad
from rulegrad.rules.movement_helpers import compose_permute
from rulegrad.rules.movement_helpers import compose_shrink
from rulegrad.rules.rangeify_helpers import extract_children
from rulegrad.rules.symbolic_helpers import fold_alu
from rulegrad.rules.rangeify_helpers import has_marked_child
from rulegrad.rules.rangeify_helpers import identity_value
from rulegrad.rules.rangeify_helpers import index_child
from rulegrad.rules.movement_helpers import is_identity
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
from rulegrad.rules.movement_helpers import no_padding
from rulegrad.rules.rangeify_helpers import push_index
from rulegrad.rules.rangeify_helpers import push_index_first
from rulegrad.rules.rangeify_helpers import reads_target_moved
from rulegrad.rules.rangeify_helpers import realize_assign_value
from rulegrad.rules.rangeify_helpers import realize_node
from rulegrad.rules.rangeify_helpers import realize_parents
from rulegrad.rules.rangeify_helpers import realize_sink_srcs
from rulegrad.rules.rangeify_helpers import reduce_of_expand
from rulegrad.rules.rangeify_helpers import remove_bufferize
from rulegrad.rules.rangeify_helpers import split_reduce
from rulegrad.rules.rangeify_helpers import split_store
from rulegrad.rules.rangeify_helpers import unprocessed_index
from rulegrad.rules.rangeify_helpers import wrap_realize

SOURCE = 'rules/rangeify.rules'
SOURCE_SHA256 = 'c3475f0fb0ad537e5d9667c031bb1c97c010b0ca17e993d2574f40a2a9bacf96'
DEPENDENCIES = (('rules/movement.rules', 'f8bf9f2fe732c1ccb65d44edf7f96b6168635bd35d4bde2a57c0ae03a9efb226'), ('rules/symbolic.rules', 'fa06c95d62d5c099031734767d0b8c06a220a2adbbe43f432f805189cc906d54'), )
_OPS0 = frozenset({Ops.CONST, Ops.DEFINE_VAR})
_OPS1 = frozenset({Ops.CAST, Ops.BITCAST, Ops.NEG, Ops.EXP, Ops.LOG, Ops.EXP2, Ops.LOG2, Ops.SIN, Ops.SQRT, Ops.RECIPROCAL, Ops.TRUNC, Ops.ADD, Ops.SUB, Ops.MUL, Ops.FDIV, Ops.IDIV, Ops.MOD, Ops.MAX, Ops.MIN, Ops.POW, Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ, Ops.AND, Ops.OR, Ops.XOR, Ops.SHL, Ops.SHR, Ops.WHERE, Ops.MULACC})
_OPS2 = frozenset({Ops.NOOP, Ops.CONTIGUOUS, Ops.COPY})
_OPS3 = frozenset({Ops.BUFFER, Ops.REALIZE, Ops.BUFFERIZE})
_DT4 = DTYPE_CLASSES['ints']


# ======================================================================== rule set earliest_rewrites

def _earliest_rewrites_r2(n, ctx, x):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    if not (x.size == 0 and x.base.op is not Ops.BUFFER): return None
    return _as_uop(n, x.const_like(0))

def _earliest_rewrites_RESHAPE(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is Ops.RESHAPE and len(n0.src) == 1:
            n0_0 = n0.src[0]
            # rule reshape_reshape at rules/movement.rules:11
            #   reshape_reshape: RESHAPE(RESHAPE(x)) as r -> x.reshape(r.arg)
            r = n
            x = n0_0
            _r = _as_uop(n, x.reshape(r.arg))
            if _r is not None and _r is not n: return _r
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _earliest_rewrites_PERMUTE(n, ctx):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _earliest_rewrites_EXPAND(n, ctx):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _earliest_rewrites_PAD(n, ctx):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _earliest_rewrites_SHRINK(n, ctx):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _earliest_rewrites_FLIP(n, ctx):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _earliest_rewrites_CONTIGUOUS(n, ctx):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _earliest_rewrites_CONTIGUOUS_BACKWARD(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule drop_marker at rules/rangeify.rules:17
        #   drop_marker: {DETACH, CONTIGUOUS_BACKWARD, FUSE}(x) -> x
        x = n0
        return x
    return None

def _earliest_rewrites_DETACH(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule drop_marker at rules/rangeify.rules:17
        #   drop_marker: {DETACH, CONTIGUOUS_BACKWARD, FUSE}(x) -> x
        x = n0
        return x
    return None

def _earliest_rewrites_FUSE(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule drop_marker at rules/rangeify.rules:17
        #   drop_marker: {DETACH, CONTIGUOUS_BACKWARD, FUSE}(x) -> x
        x = n0
        return x
    return None

def _earliest_rewrites_COPY(n, ctx):
    if len(n.src) >= 1:
        n0 = n.src[0]
        if n0.op is Ops.EXPAND and len(n0.src) == 1:
            n0_0 = n0.src[0]
            if n0_0.op is Ops.RESHAPE and len(n0_0.src) == 1:
                n0_0_0 = n0_0.src[0]
                if n0_0_0.op is Ops.CONST:
                    # rule copy_const at rules/rangeify.rules:28
                    #   copy_const: COPY(EXPAND(RESHAPE(c:CONST)) as e, ...) -> e
                    c = n0_0_0
                    e = n0
                    return e
    return None

def _earliest_rewrites_ASSIGN(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        # rule assign_no_buffer at rules/rangeify.rules:30
        #   assign_no_buffer: ASSIGN(t, x) if t.base.op is not Ops.BUFFER -> x
        t = n0
        x = n1
        if t.base.op is not Ops.BUFFER:
            return x
        # rule assign_hazard at rules/rangeify.rules:35
        #   assign_hazard: ASSIGN(t, x) as a if x.op is not Ops.CONTIGUOUS and reads_target_moved(t, x) -> a.replace(src=(t, x.f(Ops.CONTIGUOUS)))
        a = n
        t = n0
        x = n1
        if x.op is not Ops.CONTIGUOUS and reads_target_moved(t, x):
            _r = _as_uop(n, a.replace(src=(t, x.f(Ops.CONTIGUOUS))))
            if _r is not None and _r is not n: return _r
    return None

def _earliest_rewrites_REDUCE_AXIS(n, ctx):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule reduce_empty at rules/rangeify.rules:22
        #   reduce_empty: REDUCE_AXIS(x) as red if x.size == 0 and red.size != 0 -> red.const_like(identity_value(red.arg[0], red.dtype))
        red = n
        x = n0
        if x.size == 0 and red.size != 0:
            _r = _as_uop(n, red.const_like(identity_value(red.arg[0], red.dtype)))
            if _r is not None and _r is not n: return _r
        if n0.op is Ops.EXPAND and len(n0.src) == 1:
            n0_0 = n0.src[0]
            # rule reduce_expand at rules/rangeify.rules:24
            #   reduce_expand: REDUCE_AXIS(EXPAND(x) as e) as red -> reduce_of_expand(red, e, x)
            e = n0
            red = n
            x = n0_0
            _r = _as_uop(n, reduce_of_expand(red, e, x))
            if _r is not None and _r is not n: return _r
        # rule split_reduceop at rules/rangeify.rules:26
        #   split_reduceop: REDUCE_AXIS(x) as red if x.size // max(red.size, 1) >= 32768 -> split_reduce(red, x)
        red = n
        x = n0
        if x.size // max(red.size, 1) >= 32768:
            _r = _as_uop(n, split_reduce(red, x))
            if _r is not None and _r is not n: return _r
    return None

def _earliest_rewrites_CAST(n, ctx):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _earliest_rewrites_BITCAST(n, ctx):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _earliest_rewrites_NEG(n, ctx):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _earliest_rewrites_EXP(n, ctx):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _earliest_rewrites_LOG(n, ctx):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _earliest_rewrites_EXP2(n, ctx):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _earliest_rewrites_LOG2(n, ctx):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _earliest_rewrites_SIN(n, ctx):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _earliest_rewrites_SQRT(n, ctx):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _earliest_rewrites_RECIPROCAL(n, ctx):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _earliest_rewrites_TRUNC(n, ctx):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _earliest_rewrites_ADD(n, ctx):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _earliest_rewrites_SUB(n, ctx):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _earliest_rewrites_MUL(n, ctx):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _earliest_rewrites_FDIV(n, ctx):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _earliest_rewrites_IDIV(n, ctx):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _earliest_rewrites_MOD(n, ctx):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _earliest_rewrites_MAX(n, ctx):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _earliest_rewrites_MIN(n, ctx):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _earliest_rewrites_POW(n, ctx):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _earliest_rewrites_CMPLT(n, ctx):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _earliest_rewrites_CMPNE(n, ctx):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _earliest_rewrites_CMPEQ(n, ctx):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _earliest_rewrites_AND(n, ctx):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _earliest_rewrites_OR(n, ctx):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _earliest_rewrites_XOR(n, ctx):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _earliest_rewrites_SHL(n, ctx):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _earliest_rewrites_SHR(n, ctx):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _earliest_rewrites_WHERE(n, ctx):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _earliest_rewrites_MULACC(n, ctx):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _earliest_rewrites_RESHAPE_t(n, ctx, _st):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is Ops.RESHAPE and len(n0.src) == 1:
            n0_0 = n0.src[0]
            # rule reshape_reshape at rules/movement.rules:11
            #   reshape_reshape: RESHAPE(RESHAPE(x)) as r -> x.reshape(r.arg)
            r = n
            x = n0_0
            _t = _st.start(0)
            _r = _as_uop(n, x.reshape(r.arg))
            _st.stop(0, _t, _r, n)
            if _r is not None and _r is not n: return _r, 0
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _t = _st.start(2)
    _r = _earliest_rewrites_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _earliest_rewrites_PERMUTE_t(n, ctx, _st):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _t = _st.start(2)
    _r = _earliest_rewrites_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _earliest_rewrites_EXPAND_t(n, ctx, _st):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _t = _st.start(2)
    _r = _earliest_rewrites_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _earliest_rewrites_PAD_t(n, ctx, _st):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _t = _st.start(2)
    _r = _earliest_rewrites_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _earliest_rewrites_SHRINK_t(n, ctx, _st):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _t = _st.start(2)
    _r = _earliest_rewrites_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _earliest_rewrites_FLIP_t(n, ctx, _st):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _t = _st.start(2)
    _r = _earliest_rewrites_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _earliest_rewrites_CONTIGUOUS_t(n, ctx, _st):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _t = _st.start(2)
    _r = _earliest_rewrites_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _earliest_rewrites_CONTIGUOUS_BACKWARD_t(n, ctx, _st):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule drop_marker at rules/rangeify.rules:17
        #   drop_marker: {DETACH, CONTIGUOUS_BACKWARD, FUSE}(x) -> x
        x = n0
        _t = _st.start(1)
        _r = x
        _st.stop(1, _t, _r, n)
        if _r is not None and _r is not n: return _r, 1
    return None

def _earliest_rewrites_DETACH_t(n, ctx, _st):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule drop_marker at rules/rangeify.rules:17
        #   drop_marker: {DETACH, CONTIGUOUS_BACKWARD, FUSE}(x) -> x
        x = n0
        _t = _st.start(1)
        _r = x
        _st.stop(1, _t, _r, n)
        if _r is not None and _r is not n: return _r, 1
    return None

def _earliest_rewrites_FUSE_t(n, ctx, _st):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule drop_marker at rules/rangeify.rules:17
        #   drop_marker: {DETACH, CONTIGUOUS_BACKWARD, FUSE}(x) -> x
        x = n0
        _t = _st.start(1)
        _r = x
        _st.stop(1, _t, _r, n)
        if _r is not None and _r is not n: return _r, 1
    return None

def _earliest_rewrites_COPY_t(n, ctx, _st):
    if len(n.src) >= 1:
        n0 = n.src[0]
        if n0.op is Ops.EXPAND and len(n0.src) == 1:
            n0_0 = n0.src[0]
            if n0_0.op is Ops.RESHAPE and len(n0_0.src) == 1:
                n0_0_0 = n0_0.src[0]
                if n0_0_0.op is Ops.CONST:
                    # rule copy_const at rules/rangeify.rules:28
                    #   copy_const: COPY(EXPAND(RESHAPE(c:CONST)) as e, ...) -> e
                    c = n0_0_0
                    e = n0
                    _t = _st.start(6)
                    _r = e
                    _st.stop(6, _t, _r, n)
                    if _r is not None and _r is not n: return _r, 6
    return None

def _earliest_rewrites_ASSIGN_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        # rule assign_no_buffer at rules/rangeify.rules:30
        #   assign_no_buffer: ASSIGN(t, x) if t.base.op is not Ops.BUFFER -> x
        t = n0
        x = n1
        _t = _st.start(7)
        _r = x if t.base.op is not Ops.BUFFER else None
        _st.stop(7, _t, _r, n)
        if _r is not None and _r is not n: return _r, 7
        # rule assign_hazard at rules/rangeify.rules:35
        #   assign_hazard: ASSIGN(t, x) as a if x.op is not Ops.CONTIGUOUS and reads_target_moved(t, x) -> a.replace(src=(t, x.f(Ops.CONTIGUOUS)))
        a = n
        t = n0
        x = n1
        _t = _st.start(8)
        _r = _as_uop(n, a.replace(src=(t, x.f(Ops.CONTIGUOUS)))) if x.op is not Ops.CONTIGUOUS and reads_target_moved(t, x) else None
        _st.stop(8, _t, _r, n)
        if _r is not None and _r is not n: return _r, 8
    return None

def _earliest_rewrites_REDUCE_AXIS_t(n, ctx, _st):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _t = _st.start(2)
    _r = _earliest_rewrites_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule reduce_empty at rules/rangeify.rules:22
        #   reduce_empty: REDUCE_AXIS(x) as red if x.size == 0 and red.size != 0 -> red.const_like(identity_value(red.arg[0], red.dtype))
        red = n
        x = n0
        _t = _st.start(3)
        _r = _as_uop(n, red.const_like(identity_value(red.arg[0], red.dtype))) if x.size == 0 and red.size != 0 else None
        _st.stop(3, _t, _r, n)
        if _r is not None and _r is not n: return _r, 3
        if n0.op is Ops.EXPAND and len(n0.src) == 1:
            n0_0 = n0.src[0]
            # rule reduce_expand at rules/rangeify.rules:24
            #   reduce_expand: REDUCE_AXIS(EXPAND(x) as e) as red -> reduce_of_expand(red, e, x)
            e = n0
            red = n
            x = n0_0
            _t = _st.start(4)
            _r = _as_uop(n, reduce_of_expand(red, e, x))
            _st.stop(4, _t, _r, n)
            if _r is not None and _r is not n: return _r, 4
        # rule split_reduceop at rules/rangeify.rules:26
        #   split_reduceop: REDUCE_AXIS(x) as red if x.size // max(red.size, 1) >= 32768 -> split_reduce(red, x)
        red = n
        x = n0
        _t = _st.start(5)
        _r = _as_uop(n, split_reduce(red, x)) if x.size // max(red.size, 1) >= 32768 else None
        _st.stop(5, _t, _r, n)
        if _r is not None and _r is not n: return _r, 5
    return None

def _earliest_rewrites_CAST_t(n, ctx, _st):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _t = _st.start(2)
    _r = _earliest_rewrites_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _earliest_rewrites_BITCAST_t(n, ctx, _st):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _t = _st.start(2)
    _r = _earliest_rewrites_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _earliest_rewrites_NEG_t(n, ctx, _st):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _t = _st.start(2)
    _r = _earliest_rewrites_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _earliest_rewrites_EXP_t(n, ctx, _st):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _t = _st.start(2)
    _r = _earliest_rewrites_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _earliest_rewrites_LOG_t(n, ctx, _st):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _t = _st.start(2)
    _r = _earliest_rewrites_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _earliest_rewrites_EXP2_t(n, ctx, _st):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _t = _st.start(2)
    _r = _earliest_rewrites_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _earliest_rewrites_LOG2_t(n, ctx, _st):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _t = _st.start(2)
    _r = _earliest_rewrites_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _earliest_rewrites_SIN_t(n, ctx, _st):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _t = _st.start(2)
    _r = _earliest_rewrites_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _earliest_rewrites_SQRT_t(n, ctx, _st):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _t = _st.start(2)
    _r = _earliest_rewrites_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _earliest_rewrites_RECIPROCAL_t(n, ctx, _st):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _t = _st.start(2)
    _r = _earliest_rewrites_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _earliest_rewrites_TRUNC_t(n, ctx, _st):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _t = _st.start(2)
    _r = _earliest_rewrites_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _earliest_rewrites_ADD_t(n, ctx, _st):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _t = _st.start(2)
    _r = _earliest_rewrites_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _earliest_rewrites_SUB_t(n, ctx, _st):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _t = _st.start(2)
    _r = _earliest_rewrites_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _earliest_rewrites_MUL_t(n, ctx, _st):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _t = _st.start(2)
    _r = _earliest_rewrites_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _earliest_rewrites_FDIV_t(n, ctx, _st):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _t = _st.start(2)
    _r = _earliest_rewrites_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _earliest_rewrites_IDIV_t(n, ctx, _st):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _t = _st.start(2)
    _r = _earliest_rewrites_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _earliest_rewrites_MOD_t(n, ctx, _st):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _t = _st.start(2)
    _r = _earliest_rewrites_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _earliest_rewrites_MAX_t(n, ctx, _st):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _t = _st.start(2)
    _r = _earliest_rewrites_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _earliest_rewrites_MIN_t(n, ctx, _st):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _t = _st.start(2)
    _r = _earliest_rewrites_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _earliest_rewrites_POW_t(n, ctx, _st):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _t = _st.start(2)
    _r = _earliest_rewrites_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _earliest_rewrites_CMPLT_t(n, ctx, _st):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _t = _st.start(2)
    _r = _earliest_rewrites_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _earliest_rewrites_CMPNE_t(n, ctx, _st):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _t = _st.start(2)
    _r = _earliest_rewrites_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _earliest_rewrites_CMPEQ_t(n, ctx, _st):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _t = _st.start(2)
    _r = _earliest_rewrites_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _earliest_rewrites_AND_t(n, ctx, _st):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _t = _st.start(2)
    _r = _earliest_rewrites_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _earliest_rewrites_OR_t(n, ctx, _st):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _t = _st.start(2)
    _r = _earliest_rewrites_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _earliest_rewrites_XOR_t(n, ctx, _st):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _t = _st.start(2)
    _r = _earliest_rewrites_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _earliest_rewrites_SHL_t(n, ctx, _st):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _t = _st.start(2)
    _r = _earliest_rewrites_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _earliest_rewrites_SHR_t(n, ctx, _st):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _t = _st.start(2)
    _r = _earliest_rewrites_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _earliest_rewrites_WHERE_t(n, ctx, _st):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _t = _st.start(2)
    _r = _earliest_rewrites_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _earliest_rewrites_MULACC_t(n, ctx, _st):
    # rule size_zero at rules/rangeify.rules:20
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    _t = _st.start(2)
    _r = _earliest_rewrites_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None


_earliest_rewrites_rules = (
    RuleInfo('reshape_reshape', 'rules/movement.rules', 11, 'reshape_reshape: RESHAPE(RESHAPE(x)) as r -> x.reshape(r.arg)'),
    RuleInfo('drop_marker', 'rules/rangeify.rules', 17, 'drop_marker: {DETACH, CONTIGUOUS_BACKWARD, FUSE}(x) -> x'),
    RuleInfo('size_zero', 'rules/rangeify.rules', 20, 'size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)'),
    RuleInfo('reduce_empty', 'rules/rangeify.rules', 22, 'reduce_empty: REDUCE_AXIS(x) as red if x.size == 0 and red.size != 0 -> red.const_like(identity_value(red.arg[0], red.dtype))'),
    RuleInfo('reduce_expand', 'rules/rangeify.rules', 24, 'reduce_expand: REDUCE_AXIS(EXPAND(x) as e) as red -> reduce_of_expand(red, e, x)'),
    RuleInfo('split_reduceop', 'rules/rangeify.rules', 26, 'split_reduceop: REDUCE_AXIS(x) as red if x.size // max(red.size, 1) >= 32768 -> split_reduce(red, x)'),
    RuleInfo('copy_const', 'rules/rangeify.rules', 28, 'copy_const: COPY(EXPAND(RESHAPE(c:CONST)) as e, ...) -> e'),
    RuleInfo('assign_no_buffer', 'rules/rangeify.rules', 30, 'assign_no_buffer: ASSIGN(t, x) if t.base.op is not Ops.BUFFER -> x'),
    RuleInfo('assign_hazard', 'rules/rangeify.rules', 35, 'assign_hazard: ASSIGN(t, x) as a if x.op is not Ops.CONTIGUOUS and reads_target_moved(t, x) -> a.replace(src=(t, x.f(Ops.CONTIGUOUS)))'),
)
_earliest_rewrites_matcher = RuleMatcher(
    'earliest_rewrites', _earliest_rewrites_rules,
    {
        Ops.RESHAPE: _earliest_rewrites_RESHAPE,
        Ops.PERMUTE: _earliest_rewrites_PERMUTE,
        Ops.EXPAND: _earliest_rewrites_EXPAND,
        Ops.PAD: _earliest_rewrites_PAD,
        Ops.SHRINK: _earliest_rewrites_SHRINK,
        Ops.FLIP: _earliest_rewrites_FLIP,
        Ops.CONTIGUOUS: _earliest_rewrites_CONTIGUOUS,
        Ops.CONTIGUOUS_BACKWARD: _earliest_rewrites_CONTIGUOUS_BACKWARD,
        Ops.DETACH: _earliest_rewrites_DETACH,
        Ops.FUSE: _earliest_rewrites_FUSE,
        Ops.COPY: _earliest_rewrites_COPY,
        Ops.ASSIGN: _earliest_rewrites_ASSIGN,
        Ops.REDUCE_AXIS: _earliest_rewrites_REDUCE_AXIS,
        Ops.CAST: _earliest_rewrites_CAST,
        Ops.BITCAST: _earliest_rewrites_BITCAST,
        Ops.NEG: _earliest_rewrites_NEG,
        Ops.EXP: _earliest_rewrites_EXP,
        Ops.LOG: _earliest_rewrites_LOG,
        Ops.EXP2: _earliest_rewrites_EXP2,
        Ops.LOG2: _earliest_rewrites_LOG2,
        Ops.SIN: _earliest_rewrites_SIN,
        Ops.SQRT: _earliest_rewrites_SQRT,
        Ops.RECIPROCAL: _earliest_rewrites_RECIPROCAL,
        Ops.TRUNC: _earliest_rewrites_TRUNC,
        Ops.ADD: _earliest_rewrites_ADD,
        Ops.SUB: _earliest_rewrites_SUB,
        Ops.MUL: _earliest_rewrites_MUL,
        Ops.FDIV: _earliest_rewrites_FDIV,
        Ops.IDIV: _earliest_rewrites_IDIV,
        Ops.MOD: _earliest_rewrites_MOD,
        Ops.MAX: _earliest_rewrites_MAX,
        Ops.MIN: _earliest_rewrites_MIN,
        Ops.POW: _earliest_rewrites_POW,
        Ops.CMPLT: _earliest_rewrites_CMPLT,
        Ops.CMPNE: _earliest_rewrites_CMPNE,
        Ops.CMPEQ: _earliest_rewrites_CMPEQ,
        Ops.AND: _earliest_rewrites_AND,
        Ops.OR: _earliest_rewrites_OR,
        Ops.XOR: _earliest_rewrites_XOR,
        Ops.SHL: _earliest_rewrites_SHL,
        Ops.SHR: _earliest_rewrites_SHR,
        Ops.WHERE: _earliest_rewrites_WHERE,
        Ops.MULACC: _earliest_rewrites_MULACC,
    },
    {
        Ops.RESHAPE: _earliest_rewrites_RESHAPE_t,
        Ops.PERMUTE: _earliest_rewrites_PERMUTE_t,
        Ops.EXPAND: _earliest_rewrites_EXPAND_t,
        Ops.PAD: _earliest_rewrites_PAD_t,
        Ops.SHRINK: _earliest_rewrites_SHRINK_t,
        Ops.FLIP: _earliest_rewrites_FLIP_t,
        Ops.CONTIGUOUS: _earliest_rewrites_CONTIGUOUS_t,
        Ops.CONTIGUOUS_BACKWARD: _earliest_rewrites_CONTIGUOUS_BACKWARD_t,
        Ops.DETACH: _earliest_rewrites_DETACH_t,
        Ops.FUSE: _earliest_rewrites_FUSE_t,
        Ops.COPY: _earliest_rewrites_COPY_t,
        Ops.ASSIGN: _earliest_rewrites_ASSIGN_t,
        Ops.REDUCE_AXIS: _earliest_rewrites_REDUCE_AXIS_t,
        Ops.CAST: _earliest_rewrites_CAST_t,
        Ops.BITCAST: _earliest_rewrites_BITCAST_t,
        Ops.NEG: _earliest_rewrites_NEG_t,
        Ops.EXP: _earliest_rewrites_EXP_t,
        Ops.LOG: _earliest_rewrites_LOG_t,
        Ops.EXP2: _earliest_rewrites_EXP2_t,
        Ops.LOG2: _earliest_rewrites_LOG2_t,
        Ops.SIN: _earliest_rewrites_SIN_t,
        Ops.SQRT: _earliest_rewrites_SQRT_t,
        Ops.RECIPROCAL: _earliest_rewrites_RECIPROCAL_t,
        Ops.TRUNC: _earliest_rewrites_TRUNC_t,
        Ops.ADD: _earliest_rewrites_ADD_t,
        Ops.SUB: _earliest_rewrites_SUB_t,
        Ops.MUL: _earliest_rewrites_MUL_t,
        Ops.FDIV: _earliest_rewrites_FDIV_t,
        Ops.IDIV: _earliest_rewrites_IDIV_t,
        Ops.MOD: _earliest_rewrites_MOD_t,
        Ops.MAX: _earliest_rewrites_MAX_t,
        Ops.MIN: _earliest_rewrites_MIN_t,
        Ops.POW: _earliest_rewrites_POW_t,
        Ops.CMPLT: _earliest_rewrites_CMPLT_t,
        Ops.CMPNE: _earliest_rewrites_CMPNE_t,
        Ops.CMPEQ: _earliest_rewrites_CMPEQ_t,
        Ops.AND: _earliest_rewrites_AND_t,
        Ops.OR: _earliest_rewrites_OR_t,
        Ops.XOR: _earliest_rewrites_XOR_t,
        Ops.SHL: _earliest_rewrites_SHL_t,
        Ops.SHR: _earliest_rewrites_SHR_t,
        Ops.WHERE: _earliest_rewrites_WHERE_t,
        Ops.MULACC: _earliest_rewrites_MULACC_t,
    },
)
earliest_rewrites = _earliest_rewrites_matcher


# ======================================================================== rule set do_realize

def _do_realize_SINK(n, ctx):
    # rule realize_roots at rules/rangeify.rules:42
    #   realize_roots: SINK as s -> realize_sink_srcs(ctx, s)
    s = n
    _r = _as_uop(n, realize_sink_srcs(ctx, s))
    if _r is not None and _r is not n: return _r
    return None

def _do_realize_CONTIGUOUS(n, ctx):
    # rule realize_effects at rules/rangeify.rules:44
    #   realize_effects: {ASSIGN, COPY, BUFFER_VIEW, CONTIGUOUS} as x -> realize_node(ctx, x)
    x = n
    _r = _as_uop(n, realize_node(ctx, x))
    if _r is not None and _r is not n: return _r
    return None

def _do_realize_COPY(n, ctx):
    # rule realize_effects at rules/rangeify.rules:44
    #   realize_effects: {ASSIGN, COPY, BUFFER_VIEW, CONTIGUOUS} as x -> realize_node(ctx, x)
    x = n
    _r = _as_uop(n, realize_node(ctx, x))
    if _r is not None and _r is not n: return _r
    # rule realize_copy_src at rules/rangeify.rules:46
    #   realize_copy_src: COPY as c -> realize_parents(ctx, c)
    c = n
    _r = _as_uop(n, realize_parents(ctx, c))
    if _r is not None and _r is not n: return _r
    return None

def _do_realize_BUFFER_VIEW(n, ctx):
    # rule realize_effects at rules/rangeify.rules:44
    #   realize_effects: {ASSIGN, COPY, BUFFER_VIEW, CONTIGUOUS} as x -> realize_node(ctx, x)
    x = n
    _r = _as_uop(n, realize_node(ctx, x))
    if _r is not None and _r is not n: return _r
    return None

def _do_realize_ASSIGN(n, ctx):
    # rule realize_effects at rules/rangeify.rules:44
    #   realize_effects: {ASSIGN, COPY, BUFFER_VIEW, CONTIGUOUS} as x -> realize_node(ctx, x)
    x = n
    _r = _as_uop(n, realize_node(ctx, x))
    if _r is not None and _r is not n: return _r
    # rule realize_assign at rules/rangeify.rules:48
    #   realize_assign: ASSIGN as a -> realize_assign_value(ctx, a)
    a = n
    _r = _as_uop(n, realize_assign_value(ctx, a))
    if _r is not None and _r is not n: return _r
    return None

def _do_realize_SINK_t(n, ctx, _st):
    # rule realize_roots at rules/rangeify.rules:42
    #   realize_roots: SINK as s -> realize_sink_srcs(ctx, s)
    s = n
    _t = _st.start(0)
    _r = _as_uop(n, realize_sink_srcs(ctx, s))
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _do_realize_CONTIGUOUS_t(n, ctx, _st):
    # rule realize_effects at rules/rangeify.rules:44
    #   realize_effects: {ASSIGN, COPY, BUFFER_VIEW, CONTIGUOUS} as x -> realize_node(ctx, x)
    x = n
    _t = _st.start(1)
    _r = _as_uop(n, realize_node(ctx, x))
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    return None

def _do_realize_COPY_t(n, ctx, _st):
    # rule realize_effects at rules/rangeify.rules:44
    #   realize_effects: {ASSIGN, COPY, BUFFER_VIEW, CONTIGUOUS} as x -> realize_node(ctx, x)
    x = n
    _t = _st.start(1)
    _r = _as_uop(n, realize_node(ctx, x))
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule realize_copy_src at rules/rangeify.rules:46
    #   realize_copy_src: COPY as c -> realize_parents(ctx, c)
    c = n
    _t = _st.start(2)
    _r = _as_uop(n, realize_parents(ctx, c))
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _do_realize_BUFFER_VIEW_t(n, ctx, _st):
    # rule realize_effects at rules/rangeify.rules:44
    #   realize_effects: {ASSIGN, COPY, BUFFER_VIEW, CONTIGUOUS} as x -> realize_node(ctx, x)
    x = n
    _t = _st.start(1)
    _r = _as_uop(n, realize_node(ctx, x))
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    return None

def _do_realize_ASSIGN_t(n, ctx, _st):
    # rule realize_effects at rules/rangeify.rules:44
    #   realize_effects: {ASSIGN, COPY, BUFFER_VIEW, CONTIGUOUS} as x -> realize_node(ctx, x)
    x = n
    _t = _st.start(1)
    _r = _as_uop(n, realize_node(ctx, x))
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule realize_assign at rules/rangeify.rules:48
    #   realize_assign: ASSIGN as a -> realize_assign_value(ctx, a)
    a = n
    _t = _st.start(3)
    _r = _as_uop(n, realize_assign_value(ctx, a))
    _st.stop(3, _t, _r, n)
    if _r is not None and _r is not n: return _r, 3
    return None


_do_realize_rules = (
    RuleInfo('realize_roots', 'rules/rangeify.rules', 42, 'realize_roots: SINK as s -> realize_sink_srcs(ctx, s)'),
    RuleInfo('realize_effects', 'rules/rangeify.rules', 44, 'realize_effects: {ASSIGN, COPY, BUFFER_VIEW, CONTIGUOUS} as x -> realize_node(ctx, x)'),
    RuleInfo('realize_copy_src', 'rules/rangeify.rules', 46, 'realize_copy_src: COPY as c -> realize_parents(ctx, c)'),
    RuleInfo('realize_assign', 'rules/rangeify.rules', 48, 'realize_assign: ASSIGN as a -> realize_assign_value(ctx, a)'),
)
_do_realize_matcher = RuleMatcher(
    'do_realize', _do_realize_rules,
    {
        Ops.SINK: _do_realize_SINK,
        Ops.CONTIGUOUS: _do_realize_CONTIGUOUS,
        Ops.COPY: _do_realize_COPY,
        Ops.BUFFER_VIEW: _do_realize_BUFFER_VIEW,
        Ops.ASSIGN: _do_realize_ASSIGN,
    },
    {
        Ops.SINK: _do_realize_SINK_t,
        Ops.CONTIGUOUS: _do_realize_CONTIGUOUS_t,
        Ops.COPY: _do_realize_COPY_t,
        Ops.BUFFER_VIEW: _do_realize_BUFFER_VIEW_t,
        Ops.ASSIGN: _do_realize_ASSIGN_t,
    },
)
do_realize = _do_realize_matcher


# ======================================================================== rule set add_realize

def _add_realize_r0(n, ctx, x):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    if not (x in ctx.realize and x.tag is None): return None
    return _as_uop(n, wrap_realize(ctx, x))

def _add_realize_SINK(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_NOOP(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_GROUP(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_BUFFER(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_DEVICE(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_UNIQUE(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_CONST(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_DEFINE_VAR(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_BIND(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_RESHAPE(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_PERMUTE(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_EXPAND(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_PAD(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_SHRINK(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_FLIP(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_CONTIGUOUS(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_CONTIGUOUS_BACKWARD(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_DETACH(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_FUSE(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_REALIZE(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_COPY(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_BUFFER_VIEW(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_ASSIGN(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_MSELECT(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_MSTACK(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_MULTI(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_REDUCE_AXIS(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_CHILD(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_CHILDREN(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_BUFFERIZE(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_RANGE(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_END(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_INDEX(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_LOAD(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_STORE(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_REDUCE(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_DEFINE_GLOBAL(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_DEFINE_LOCAL(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_DEFINE_REG(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_KERNEL(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_IF(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_ENDIF(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_INVALID(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_CAST(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_BITCAST(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_NEG(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_EXP(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_LOG(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_EXP2(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_LOG2(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_SIN(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_SQRT(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_RECIPROCAL(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_TRUNC(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_ADD(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_SUB(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_MUL(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_FDIV(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_IDIV(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_MOD(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_MAX(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_MIN(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_POW(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_CMPLT(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_CMPNE(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_CMPEQ(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_AND(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_OR(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_XOR(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_SHL(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_SHR(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_WHERE(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_MULACC(n, ctx):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _r = _add_realize_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _add_realize_SINK_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_NOOP_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_GROUP_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_BUFFER_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_DEVICE_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_UNIQUE_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_CONST_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_DEFINE_VAR_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_BIND_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_RESHAPE_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_PERMUTE_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_EXPAND_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_PAD_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_SHRINK_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_FLIP_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_CONTIGUOUS_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_CONTIGUOUS_BACKWARD_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_DETACH_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_FUSE_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_REALIZE_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_COPY_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_BUFFER_VIEW_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_ASSIGN_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_MSELECT_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_MSTACK_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_MULTI_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_REDUCE_AXIS_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_CHILD_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_CHILDREN_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_BUFFERIZE_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_RANGE_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_END_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_INDEX_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_LOAD_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_STORE_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_REDUCE_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_DEFINE_GLOBAL_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_DEFINE_LOCAL_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_DEFINE_REG_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_KERNEL_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_IF_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_ENDIF_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_INVALID_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_CAST_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_BITCAST_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_NEG_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_EXP_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_LOG_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_EXP2_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_LOG2_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_SIN_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_SQRT_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_RECIPROCAL_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_TRUNC_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_ADD_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_SUB_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_MUL_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_FDIV_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_IDIV_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_MOD_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_MAX_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_MIN_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_POW_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_CMPLT_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_CMPNE_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_CMPEQ_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_AND_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_OR_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_XOR_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_SHL_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_SHR_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_WHERE_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None

def _add_realize_MULACC_t(n, ctx, _st):
    # rule add_realize at rules/rangeify.rules:51
    #   add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)
    _t = _st.start(0)
    _r = _add_realize_r0(n, ctx, n)
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None


_add_realize_rules = (
    RuleInfo('add_realize', 'rules/rangeify.rules', 51, 'add_realize: x if x in ctx.realize and x.tag is None -> wrap_realize(ctx, x)'),
)
_add_realize_matcher = RuleMatcher(
    'add_realize', _add_realize_rules,
    {
        Ops.SINK: _add_realize_SINK,
        Ops.NOOP: _add_realize_NOOP,
        Ops.GROUP: _add_realize_GROUP,
        Ops.BUFFER: _add_realize_BUFFER,
        Ops.DEVICE: _add_realize_DEVICE,
        Ops.UNIQUE: _add_realize_UNIQUE,
        Ops.CONST: _add_realize_CONST,
        Ops.DEFINE_VAR: _add_realize_DEFINE_VAR,
        Ops.BIND: _add_realize_BIND,
        Ops.RESHAPE: _add_realize_RESHAPE,
        Ops.PERMUTE: _add_realize_PERMUTE,
        Ops.EXPAND: _add_realize_EXPAND,
        Ops.PAD: _add_realize_PAD,
        Ops.SHRINK: _add_realize_SHRINK,
        Ops.FLIP: _add_realize_FLIP,
        Ops.CONTIGUOUS: _add_realize_CONTIGUOUS,
        Ops.CONTIGUOUS_BACKWARD: _add_realize_CONTIGUOUS_BACKWARD,
        Ops.DETACH: _add_realize_DETACH,
        Ops.FUSE: _add_realize_FUSE,
        Ops.REALIZE: _add_realize_REALIZE,
        Ops.COPY: _add_realize_COPY,
        Ops.BUFFER_VIEW: _add_realize_BUFFER_VIEW,
        Ops.ASSIGN: _add_realize_ASSIGN,
        Ops.MSELECT: _add_realize_MSELECT,
        Ops.MSTACK: _add_realize_MSTACK,
        Ops.MULTI: _add_realize_MULTI,
        Ops.REDUCE_AXIS: _add_realize_REDUCE_AXIS,
        Ops.CHILD: _add_realize_CHILD,
        Ops.CHILDREN: _add_realize_CHILDREN,
        Ops.BUFFERIZE: _add_realize_BUFFERIZE,
        Ops.RANGE: _add_realize_RANGE,
        Ops.END: _add_realize_END,
        Ops.INDEX: _add_realize_INDEX,
        Ops.LOAD: _add_realize_LOAD,
        Ops.STORE: _add_realize_STORE,
        Ops.REDUCE: _add_realize_REDUCE,
        Ops.DEFINE_GLOBAL: _add_realize_DEFINE_GLOBAL,
        Ops.DEFINE_LOCAL: _add_realize_DEFINE_LOCAL,
        Ops.DEFINE_REG: _add_realize_DEFINE_REG,
        Ops.KERNEL: _add_realize_KERNEL,
        Ops.IF: _add_realize_IF,
        Ops.ENDIF: _add_realize_ENDIF,
        Ops.INVALID: _add_realize_INVALID,
        Ops.CAST: _add_realize_CAST,
        Ops.BITCAST: _add_realize_BITCAST,
        Ops.NEG: _add_realize_NEG,
        Ops.EXP: _add_realize_EXP,
        Ops.LOG: _add_realize_LOG,
        Ops.EXP2: _add_realize_EXP2,
        Ops.LOG2: _add_realize_LOG2,
        Ops.SIN: _add_realize_SIN,
        Ops.SQRT: _add_realize_SQRT,
        Ops.RECIPROCAL: _add_realize_RECIPROCAL,
        Ops.TRUNC: _add_realize_TRUNC,
        Ops.ADD: _add_realize_ADD,
        Ops.SUB: _add_realize_SUB,
        Ops.MUL: _add_realize_MUL,
        Ops.FDIV: _add_realize_FDIV,
        Ops.IDIV: _add_realize_IDIV,
        Ops.MOD: _add_realize_MOD,
        Ops.MAX: _add_realize_MAX,
        Ops.MIN: _add_realize_MIN,
        Ops.POW: _add_realize_POW,
        Ops.CMPLT: _add_realize_CMPLT,
        Ops.CMPNE: _add_realize_CMPNE,
        Ops.CMPEQ: _add_realize_CMPEQ,
        Ops.AND: _add_realize_AND,
        Ops.OR: _add_realize_OR,
        Ops.XOR: _add_realize_XOR,
        Ops.SHL: _add_realize_SHL,
        Ops.SHR: _add_realize_SHR,
        Ops.WHERE: _add_realize_WHERE,
        Ops.MULACC: _add_realize_MULACC,
    },
    {
        Ops.SINK: _add_realize_SINK_t,
        Ops.NOOP: _add_realize_NOOP_t,
        Ops.GROUP: _add_realize_GROUP_t,
        Ops.BUFFER: _add_realize_BUFFER_t,
        Ops.DEVICE: _add_realize_DEVICE_t,
        Ops.UNIQUE: _add_realize_UNIQUE_t,
        Ops.CONST: _add_realize_CONST_t,
        Ops.DEFINE_VAR: _add_realize_DEFINE_VAR_t,
        Ops.BIND: _add_realize_BIND_t,
        Ops.RESHAPE: _add_realize_RESHAPE_t,
        Ops.PERMUTE: _add_realize_PERMUTE_t,
        Ops.EXPAND: _add_realize_EXPAND_t,
        Ops.PAD: _add_realize_PAD_t,
        Ops.SHRINK: _add_realize_SHRINK_t,
        Ops.FLIP: _add_realize_FLIP_t,
        Ops.CONTIGUOUS: _add_realize_CONTIGUOUS_t,
        Ops.CONTIGUOUS_BACKWARD: _add_realize_CONTIGUOUS_BACKWARD_t,
        Ops.DETACH: _add_realize_DETACH_t,
        Ops.FUSE: _add_realize_FUSE_t,
        Ops.REALIZE: _add_realize_REALIZE_t,
        Ops.COPY: _add_realize_COPY_t,
        Ops.BUFFER_VIEW: _add_realize_BUFFER_VIEW_t,
        Ops.ASSIGN: _add_realize_ASSIGN_t,
        Ops.MSELECT: _add_realize_MSELECT_t,
        Ops.MSTACK: _add_realize_MSTACK_t,
        Ops.MULTI: _add_realize_MULTI_t,
        Ops.REDUCE_AXIS: _add_realize_REDUCE_AXIS_t,
        Ops.CHILD: _add_realize_CHILD_t,
        Ops.CHILDREN: _add_realize_CHILDREN_t,
        Ops.BUFFERIZE: _add_realize_BUFFERIZE_t,
        Ops.RANGE: _add_realize_RANGE_t,
        Ops.END: _add_realize_END_t,
        Ops.INDEX: _add_realize_INDEX_t,
        Ops.LOAD: _add_realize_LOAD_t,
        Ops.STORE: _add_realize_STORE_t,
        Ops.REDUCE: _add_realize_REDUCE_t,
        Ops.DEFINE_GLOBAL: _add_realize_DEFINE_GLOBAL_t,
        Ops.DEFINE_LOCAL: _add_realize_DEFINE_LOCAL_t,
        Ops.DEFINE_REG: _add_realize_DEFINE_REG_t,
        Ops.KERNEL: _add_realize_KERNEL_t,
        Ops.IF: _add_realize_IF_t,
        Ops.ENDIF: _add_realize_ENDIF_t,
        Ops.INVALID: _add_realize_INVALID_t,
        Ops.CAST: _add_realize_CAST_t,
        Ops.BITCAST: _add_realize_BITCAST_t,
        Ops.NEG: _add_realize_NEG_t,
        Ops.EXP: _add_realize_EXP_t,
        Ops.LOG: _add_realize_LOG_t,
        Ops.EXP2: _add_realize_EXP2_t,
        Ops.LOG2: _add_realize_LOG2_t,
        Ops.SIN: _add_realize_SIN_t,
        Ops.SQRT: _add_realize_SQRT_t,
        Ops.RECIPROCAL: _add_realize_RECIPROCAL_t,
        Ops.TRUNC: _add_realize_TRUNC_t,
        Ops.ADD: _add_realize_ADD_t,
        Ops.SUB: _add_realize_SUB_t,
        Ops.MUL: _add_realize_MUL_t,
        Ops.FDIV: _add_realize_FDIV_t,
        Ops.IDIV: _add_realize_IDIV_t,
        Ops.MOD: _add_realize_MOD_t,
        Ops.MAX: _add_realize_MAX_t,
        Ops.MIN: _add_realize_MIN_t,
        Ops.POW: _add_realize_POW_t,
        Ops.CMPLT: _add_realize_CMPLT_t,
        Ops.CMPNE: _add_realize_CMPNE_t,
        Ops.CMPEQ: _add_realize_CMPEQ_t,
        Ops.AND: _add_realize_AND_t,
        Ops.OR: _add_realize_OR_t,
        Ops.XOR: _add_realize_XOR_t,
        Ops.SHL: _add_realize_SHL_t,
        Ops.SHR: _add_realize_SHR_t,
        Ops.WHERE: _add_realize_WHERE_t,
        Ops.MULACC: _add_realize_MULACC_t,
    },
)
add_realize = _add_realize_matcher


# ======================================================================== rule set pm_children

def _pm_children_r1(n, ctx, x):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    if not (x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x)): return None
    return _as_uop(n, mark_children(ctx, x))

def _pm_children_r2(n, ctx, x):
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    if not (x.tag == 'realized'): return None
    return _as_uop(n, x.replace(tag=None))

def _pm_children_SINK(n, ctx):
    # rule find_children at rules/rangeify.rules:58
    #   find_children: SINK as s -> extract_children(ctx, s)
    s = n
    _r = _as_uop(n, extract_children(ctx, s))
    if _r is not None and _r is not n: return _r
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_NOOP(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_GROUP(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_BUFFER(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_DEVICE(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_UNIQUE(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_CONST(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_DEFINE_VAR(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_BIND(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_RESHAPE(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_PERMUTE(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_EXPAND(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_PAD(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_SHRINK(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_FLIP(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_CONTIGUOUS(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_CONTIGUOUS_BACKWARD(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_DETACH(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_FUSE(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_REALIZE(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_COPY(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_BUFFER_VIEW(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_ASSIGN(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_MSELECT(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_MSTACK(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_MULTI(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_REDUCE_AXIS(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_CHILD(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_CHILDREN(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_BUFFERIZE(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_RANGE(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_END(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_INDEX(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_LOAD(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_STORE(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_REDUCE(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_DEFINE_GLOBAL(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_DEFINE_LOCAL(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_DEFINE_REG(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_KERNEL(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_IF(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_ENDIF(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_INVALID(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_CAST(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_BITCAST(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_NEG(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_EXP(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_LOG(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_EXP2(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_LOG2(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_SIN(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_SQRT(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_RECIPROCAL(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_TRUNC(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_ADD(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_SUB(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_MUL(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_FDIV(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_IDIV(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_MOD(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_MAX(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_MIN(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_POW(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_CMPLT(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_CMPNE(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_CMPEQ(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_AND(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_OR(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_XOR(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_SHL(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_SHR(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_WHERE(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_MULACC(n, ctx):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _r = _pm_children_r1(n, ctx, n)
    if _r is not None and _r is not n: return _r
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _r = _pm_children_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r
    return None

def _pm_children_SINK_t(n, ctx, _st):
    # rule find_children at rules/rangeify.rules:58
    #   find_children: SINK as s -> extract_children(ctx, s)
    s = n
    _t = _st.start(0)
    _r = _as_uop(n, extract_children(ctx, s))
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_NOOP_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_GROUP_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_BUFFER_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_DEVICE_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_UNIQUE_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_CONST_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_DEFINE_VAR_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_BIND_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_RESHAPE_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_PERMUTE_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_EXPAND_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_PAD_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_SHRINK_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_FLIP_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_CONTIGUOUS_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_CONTIGUOUS_BACKWARD_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_DETACH_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_FUSE_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_REALIZE_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_COPY_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_BUFFER_VIEW_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_ASSIGN_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_MSELECT_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_MSTACK_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_MULTI_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_REDUCE_AXIS_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_CHILD_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_CHILDREN_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_BUFFERIZE_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_RANGE_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_END_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_INDEX_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_LOAD_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_STORE_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_REDUCE_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_DEFINE_GLOBAL_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_DEFINE_LOCAL_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_DEFINE_REG_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_KERNEL_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_IF_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_ENDIF_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_INVALID_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_CAST_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_BITCAST_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_NEG_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_EXP_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_LOG_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_EXP2_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_LOG2_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_SIN_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_SQRT_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_RECIPROCAL_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_TRUNC_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_ADD_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_SUB_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_MUL_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_FDIV_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_IDIV_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_MOD_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_MAX_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_MIN_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_POW_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_CMPLT_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_CMPNE_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_CMPEQ_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_AND_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_OR_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_XOR_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_SHL_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_SHR_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_WHERE_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None

def _pm_children_MULACC_t(n, ctx, _st):
    # rule mark_children at rules/rangeify.rules:59
    #   mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)
    _t = _st.start(1)
    _r = _pm_children_r1(n, ctx, n)
    _st.stop(1, _t, _r, n)
    if _r is not None and _r is not n: return _r, 1
    # rule unmark at rules/rangeify.rules:62
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    _t = _st.start(2)
    _r = _pm_children_r2(n, ctx, n)
    _st.stop(2, _t, _r, n)
    if _r is not None and _r is not n: return _r, 2
    return None


_pm_children_rules = (
    RuleInfo('find_children', 'rules/rangeify.rules', 58, 'find_children: SINK as s -> extract_children(ctx, s)'),
    RuleInfo('mark_children', 'rules/rangeify.rules', 59, 'mark_children: x if x.op not in (Ops.CHILD, Ops.CHILDREN) and has_marked_child(ctx, x) -> mark_children(ctx, x)'),
    RuleInfo('unmark', 'rules/rangeify.rules', 62, 'unmark: x if x.tag == "realized" -> x.replace(tag=None)'),
)
_pm_children_matcher = RuleMatcher(
    'pm_children', _pm_children_rules,
    {
        Ops.SINK: _pm_children_SINK,
        Ops.NOOP: _pm_children_NOOP,
        Ops.GROUP: _pm_children_GROUP,
        Ops.BUFFER: _pm_children_BUFFER,
        Ops.DEVICE: _pm_children_DEVICE,
        Ops.UNIQUE: _pm_children_UNIQUE,
        Ops.CONST: _pm_children_CONST,
        Ops.DEFINE_VAR: _pm_children_DEFINE_VAR,
        Ops.BIND: _pm_children_BIND,
        Ops.RESHAPE: _pm_children_RESHAPE,
        Ops.PERMUTE: _pm_children_PERMUTE,
        Ops.EXPAND: _pm_children_EXPAND,
        Ops.PAD: _pm_children_PAD,
        Ops.SHRINK: _pm_children_SHRINK,
        Ops.FLIP: _pm_children_FLIP,
        Ops.CONTIGUOUS: _pm_children_CONTIGUOUS,
        Ops.CONTIGUOUS_BACKWARD: _pm_children_CONTIGUOUS_BACKWARD,
        Ops.DETACH: _pm_children_DETACH,
        Ops.FUSE: _pm_children_FUSE,
        Ops.REALIZE: _pm_children_REALIZE,
        Ops.COPY: _pm_children_COPY,
        Ops.BUFFER_VIEW: _pm_children_BUFFER_VIEW,
        Ops.ASSIGN: _pm_children_ASSIGN,
        Ops.MSELECT: _pm_children_MSELECT,
        Ops.MSTACK: _pm_children_MSTACK,
        Ops.MULTI: _pm_children_MULTI,
        Ops.REDUCE_AXIS: _pm_children_REDUCE_AXIS,
        Ops.CHILD: _pm_children_CHILD,
        Ops.CHILDREN: _pm_children_CHILDREN,
        Ops.BUFFERIZE: _pm_children_BUFFERIZE,
        Ops.RANGE: _pm_children_RANGE,
        Ops.END: _pm_children_END,
        Ops.INDEX: _pm_children_INDEX,
        Ops.LOAD: _pm_children_LOAD,
        Ops.STORE: _pm_children_STORE,
        Ops.REDUCE: _pm_children_REDUCE,
        Ops.DEFINE_GLOBAL: _pm_children_DEFINE_GLOBAL,
        Ops.DEFINE_LOCAL: _pm_children_DEFINE_LOCAL,
        Ops.DEFINE_REG: _pm_children_DEFINE_REG,
        Ops.KERNEL: _pm_children_KERNEL,
        Ops.IF: _pm_children_IF,
        Ops.ENDIF: _pm_children_ENDIF,
        Ops.INVALID: _pm_children_INVALID,
        Ops.CAST: _pm_children_CAST,
        Ops.BITCAST: _pm_children_BITCAST,
        Ops.NEG: _pm_children_NEG,
        Ops.EXP: _pm_children_EXP,
        Ops.LOG: _pm_children_LOG,
        Ops.EXP2: _pm_children_EXP2,
        Ops.LOG2: _pm_children_LOG2,
        Ops.SIN: _pm_children_SIN,
        Ops.SQRT: _pm_children_SQRT,
        Ops.RECIPROCAL: _pm_children_RECIPROCAL,
        Ops.TRUNC: _pm_children_TRUNC,
        Ops.ADD: _pm_children_ADD,
        Ops.SUB: _pm_children_SUB,
        Ops.MUL: _pm_children_MUL,
        Ops.FDIV: _pm_children_FDIV,
        Ops.IDIV: _pm_children_IDIV,
        Ops.MOD: _pm_children_MOD,
        Ops.MAX: _pm_children_MAX,
        Ops.MIN: _pm_children_MIN,
        Ops.POW: _pm_children_POW,
        Ops.CMPLT: _pm_children_CMPLT,
        Ops.CMPNE: _pm_children_CMPNE,
        Ops.CMPEQ: _pm_children_CMPEQ,
        Ops.AND: _pm_children_AND,
        Ops.OR: _pm_children_OR,
        Ops.XOR: _pm_children_XOR,
        Ops.SHL: _pm_children_SHL,
        Ops.SHR: _pm_children_SHR,
        Ops.WHERE: _pm_children_WHERE,
        Ops.MULACC: _pm_children_MULACC,
    },
    {
        Ops.SINK: _pm_children_SINK_t,
        Ops.NOOP: _pm_children_NOOP_t,
        Ops.GROUP: _pm_children_GROUP_t,
        Ops.BUFFER: _pm_children_BUFFER_t,
        Ops.DEVICE: _pm_children_DEVICE_t,
        Ops.UNIQUE: _pm_children_UNIQUE_t,
        Ops.CONST: _pm_children_CONST_t,
        Ops.DEFINE_VAR: _pm_children_DEFINE_VAR_t,
        Ops.BIND: _pm_children_BIND_t,
        Ops.RESHAPE: _pm_children_RESHAPE_t,
        Ops.PERMUTE: _pm_children_PERMUTE_t,
        Ops.EXPAND: _pm_children_EXPAND_t,
        Ops.PAD: _pm_children_PAD_t,
        Ops.SHRINK: _pm_children_SHRINK_t,
        Ops.FLIP: _pm_children_FLIP_t,
        Ops.CONTIGUOUS: _pm_children_CONTIGUOUS_t,
        Ops.CONTIGUOUS_BACKWARD: _pm_children_CONTIGUOUS_BACKWARD_t,
        Ops.DETACH: _pm_children_DETACH_t,
        Ops.FUSE: _pm_children_FUSE_t,
        Ops.REALIZE: _pm_children_REALIZE_t,
        Ops.COPY: _pm_children_COPY_t,
        Ops.BUFFER_VIEW: _pm_children_BUFFER_VIEW_t,
        Ops.ASSIGN: _pm_children_ASSIGN_t,
        Ops.MSELECT: _pm_children_MSELECT_t,
        Ops.MSTACK: _pm_children_MSTACK_t,
        Ops.MULTI: _pm_children_MULTI_t,
        Ops.REDUCE_AXIS: _pm_children_REDUCE_AXIS_t,
        Ops.CHILD: _pm_children_CHILD_t,
        Ops.CHILDREN: _pm_children_CHILDREN_t,
        Ops.BUFFERIZE: _pm_children_BUFFERIZE_t,
        Ops.RANGE: _pm_children_RANGE_t,
        Ops.END: _pm_children_END_t,
        Ops.INDEX: _pm_children_INDEX_t,
        Ops.LOAD: _pm_children_LOAD_t,
        Ops.STORE: _pm_children_STORE_t,
        Ops.REDUCE: _pm_children_REDUCE_t,
        Ops.DEFINE_GLOBAL: _pm_children_DEFINE_GLOBAL_t,
        Ops.DEFINE_LOCAL: _pm_children_DEFINE_LOCAL_t,
        Ops.DEFINE_REG: _pm_children_DEFINE_REG_t,
        Ops.KERNEL: _pm_children_KERNEL_t,
        Ops.IF: _pm_children_IF_t,
        Ops.ENDIF: _pm_children_ENDIF_t,
        Ops.INVALID: _pm_children_INVALID_t,
        Ops.CAST: _pm_children_CAST_t,
        Ops.BITCAST: _pm_children_BITCAST_t,
        Ops.NEG: _pm_children_NEG_t,
        Ops.EXP: _pm_children_EXP_t,
        Ops.LOG: _pm_children_LOG_t,
        Ops.EXP2: _pm_children_EXP2_t,
        Ops.LOG2: _pm_children_LOG2_t,
        Ops.SIN: _pm_children_SIN_t,
        Ops.SQRT: _pm_children_SQRT_t,
        Ops.RECIPROCAL: _pm_children_RECIPROCAL_t,
        Ops.TRUNC: _pm_children_TRUNC_t,
        Ops.ADD: _pm_children_ADD_t,
        Ops.SUB: _pm_children_SUB_t,
        Ops.MUL: _pm_children_MUL_t,
        Ops.FDIV: _pm_children_FDIV_t,
        Ops.IDIV: _pm_children_IDIV_t,
        Ops.MOD: _pm_children_MOD_t,
        Ops.MAX: _pm_children_MAX_t,
        Ops.MIN: _pm_children_MIN_t,
        Ops.POW: _pm_children_POW_t,
        Ops.CMPLT: _pm_children_CMPLT_t,
        Ops.CMPNE: _pm_children_CMPNE_t,
        Ops.CMPEQ: _pm_children_CMPEQ_t,
        Ops.AND: _pm_children_AND_t,
        Ops.OR: _pm_children_OR_t,
        Ops.XOR: _pm_children_XOR_t,
        Ops.SHL: _pm_children_SHL_t,
        Ops.SHR: _pm_children_SHR_t,
        Ops.WHERE: _pm_children_WHERE_t,
        Ops.MULACC: _pm_children_MULACC_t,
    },
)
pm_children = _pm_children_matcher


# ======================================================================== rule set pm_mops

def _pm_mops_INDEX(n, ctx):
    if len(n.src) >= 1:
        n0 = n.src[0]
        if n0.op is Ops.SHRINK:
            # rule index_shrink at rules/rangeify.rules:68
            #   index_shrink: INDEX(SHRINK as r, ...) as idx -> map_shrink(r, idx)
            idx = n
            r = n0
            _r = _as_uop(n, map_shrink(r, idx))
            if _r is not None and _r is not n: return _r
        if n0.op is Ops.PERMUTE:
            # rule index_permute at rules/rangeify.rules:69
            #   index_permute: INDEX(PERMUTE as r, ...) as idx -> map_permute(r, idx)
            idx = n
            r = n0
            _r = _as_uop(n, map_permute(r, idx))
            if _r is not None and _r is not n: return _r
        if n0.op is Ops.FLIP:
            # rule index_flip at rules/rangeify.rules:70
            #   index_flip: INDEX(FLIP as r, ...) as idx -> map_flip(r, idx)
            idx = n
            r = n0
            _r = _as_uop(n, map_flip(r, idx))
            if _r is not None and _r is not n: return _r
        if n0.op is Ops.EXPAND:
            # rule index_expand at rules/rangeify.rules:71
            #   index_expand: INDEX(EXPAND as r, ...) as idx -> map_expand(r, idx)
            idx = n
            r = n0
            _r = _as_uop(n, map_expand(r, idx))
            if _r is not None and _r is not n: return _r
        if n0.op is Ops.PAD:
            # rule index_pad at rules/rangeify.rules:72
            #   index_pad: INDEX(PAD as r, ...) as idx -> map_pad(r, idx)
            idx = n
            r = n0
            _r = _as_uop(n, map_pad(r, idx))
            if _r is not None and _r is not n: return _r
        if n0.op is Ops.RESHAPE:
            # rule index_reshape at rules/rangeify.rules:73
            #   index_reshape: INDEX(RESHAPE as r, ...) as idx -> map_reshape(r, idx)
            idx = n
            r = n0
            _r = _as_uop(n, map_reshape(r, idx))
            if _r is not None and _r is not n: return _r
    return None

def _pm_mops_INDEX_t(n, ctx, _st):
    if len(n.src) >= 1:
        n0 = n.src[0]
        if n0.op is Ops.SHRINK:
            # rule index_shrink at rules/rangeify.rules:68
            #   index_shrink: INDEX(SHRINK as r, ...) as idx -> map_shrink(r, idx)
            idx = n
            r = n0
            _t = _st.start(0)
            _r = _as_uop(n, map_shrink(r, idx))
            _st.stop(0, _t, _r, n)
            if _r is not None and _r is not n: return _r, 0
        if n0.op is Ops.PERMUTE:
            # rule index_permute at rules/rangeify.rules:69
            #   index_permute: INDEX(PERMUTE as r, ...) as idx -> map_permute(r, idx)
            idx = n
            r = n0
            _t = _st.start(1)
            _r = _as_uop(n, map_permute(r, idx))
            _st.stop(1, _t, _r, n)
            if _r is not None and _r is not n: return _r, 1
        if n0.op is Ops.FLIP:
            # rule index_flip at rules/rangeify.rules:70
            #   index_flip: INDEX(FLIP as r, ...) as idx -> map_flip(r, idx)
            idx = n
            r = n0
            _t = _st.start(2)
            _r = _as_uop(n, map_flip(r, idx))
            _st.stop(2, _t, _r, n)
            if _r is not None and _r is not n: return _r, 2
        if n0.op is Ops.EXPAND:
            # rule index_expand at rules/rangeify.rules:71
            #   index_expand: INDEX(EXPAND as r, ...) as idx -> map_expand(r, idx)
            idx = n
            r = n0
            _t = _st.start(3)
            _r = _as_uop(n, map_expand(r, idx))
            _st.stop(3, _t, _r, n)
            if _r is not None and _r is not n: return _r, 3
        if n0.op is Ops.PAD:
            # rule index_pad at rules/rangeify.rules:72
            #   index_pad: INDEX(PAD as r, ...) as idx -> map_pad(r, idx)
            idx = n
            r = n0
            _t = _st.start(4)
            _r = _as_uop(n, map_pad(r, idx))
            _st.stop(4, _t, _r, n)
            if _r is not None and _r is not n: return _r, 4
        if n0.op is Ops.RESHAPE:
            # rule index_reshape at rules/rangeify.rules:73
            #   index_reshape: INDEX(RESHAPE as r, ...) as idx -> map_reshape(r, idx)
            idx = n
            r = n0
            _t = _st.start(5)
            _r = _as_uop(n, map_reshape(r, idx))
            _st.stop(5, _t, _r, n)
            if _r is not None and _r is not n: return _r, 5
    return None


_pm_mops_rules = (
    RuleInfo('index_shrink', 'rules/rangeify.rules', 68, 'index_shrink: INDEX(SHRINK as r, ...) as idx -> map_shrink(r, idx)'),
    RuleInfo('index_permute', 'rules/rangeify.rules', 69, 'index_permute: INDEX(PERMUTE as r, ...) as idx -> map_permute(r, idx)'),
    RuleInfo('index_flip', 'rules/rangeify.rules', 70, 'index_flip: INDEX(FLIP as r, ...) as idx -> map_flip(r, idx)'),
    RuleInfo('index_expand', 'rules/rangeify.rules', 71, 'index_expand: INDEX(EXPAND as r, ...) as idx -> map_expand(r, idx)'),
    RuleInfo('index_pad', 'rules/rangeify.rules', 72, 'index_pad: INDEX(PAD as r, ...) as idx -> map_pad(r, idx)'),
    RuleInfo('index_reshape', 'rules/rangeify.rules', 73, 'index_reshape: INDEX(RESHAPE as r, ...) as idx -> map_reshape(r, idx)'),
)
_pm_mops_matcher = RuleMatcher(
    'pm_mops', _pm_mops_rules,
    {
        Ops.INDEX: _pm_mops_INDEX,
    },
    {
        Ops.INDEX: _pm_mops_INDEX_t,
    },
)
pm_mops = _pm_mops_matcher


# ======================================================================== rule set pm_rangeify

def _pm_rangeify_REALIZE(n, ctx):
    # rule realize at rules/rangeify.rules:78
    #   realize: REALIZE as r -> map_realize(ctx, r)
    r = n
    _r = _as_uop(n, map_realize(ctx, r))
    if _r is not None and _r is not n: return _r
    return None

def _pm_rangeify_CHILD(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is Ops.CHILDREN and len(n0.src) == 1:
            n0_0 = n0.src[0]
            # rule unread_child at rules/rangeify.rules:81
            #   unread_child: CHILD(CHILDREN(x)) -> x
            x = n0_0
            return x
    return None

def _pm_rangeify_INDEX(n, ctx):
    if len(n.src) >= 1:
        n0 = n.src[0]
        if n0.op is Ops.SHRINK:
            # rule index_shrink at rules/rangeify.rules:68
            #   index_shrink: INDEX(SHRINK as r, ...) as idx -> map_shrink(r, idx)
            idx = n
            r = n0
            _r = _as_uop(n, map_shrink(r, idx))
            if _r is not None and _r is not n: return _r
        if n0.op is Ops.PERMUTE:
            # rule index_permute at rules/rangeify.rules:69
            #   index_permute: INDEX(PERMUTE as r, ...) as idx -> map_permute(r, idx)
            idx = n
            r = n0
            _r = _as_uop(n, map_permute(r, idx))
            if _r is not None and _r is not n: return _r
        if n0.op is Ops.FLIP:
            # rule index_flip at rules/rangeify.rules:70
            #   index_flip: INDEX(FLIP as r, ...) as idx -> map_flip(r, idx)
            idx = n
            r = n0
            _r = _as_uop(n, map_flip(r, idx))
            if _r is not None and _r is not n: return _r
        if n0.op is Ops.EXPAND:
            # rule index_expand at rules/rangeify.rules:71
            #   index_expand: INDEX(EXPAND as r, ...) as idx -> map_expand(r, idx)
            idx = n
            r = n0
            _r = _as_uop(n, map_expand(r, idx))
            if _r is not None and _r is not n: return _r
        if n0.op is Ops.PAD:
            # rule index_pad at rules/rangeify.rules:72
            #   index_pad: INDEX(PAD as r, ...) as idx -> map_pad(r, idx)
            idx = n
            r = n0
            _r = _as_uop(n, map_pad(r, idx))
            if _r is not None and _r is not n: return _r
        if n0.op is Ops.RESHAPE:
            # rule index_reshape at rules/rangeify.rules:73
            #   index_reshape: INDEX(RESHAPE as r, ...) as idx -> map_reshape(r, idx)
            idx = n
            r = n0
            _r = _as_uop(n, map_reshape(r, idx))
            if _r is not None and _r is not n: return _r
        if n0.op is Ops.CHILD and len(n0.src) == 1:
            n0_0 = n0.src[0]
            if n0_0.op is Ops.CHILDREN and len(n0_0.src) == 1:
                n0_0_0 = n0_0.src[0]
                # rule index_child at rules/rangeify.rules:80
                #   index_child: INDEX(CHILD(CHILDREN(c)), ...) as idx -> index_child(ctx, c, idx)
                c = n0_0_0
                idx = n
                _r = _as_uop(n, index_child(ctx, c, idx))
                if _r is not None and _r is not n: return _r
        if n0.op in _OPS0:
            # rule index_const at rules/rangeify.rules:83
            #   index_const: INDEX({CONST, DEFINE_VAR} as c, ...) -> c
            c = n0
            return c
        if n0.op is Ops.ASSIGN:
            # rule index_assign at rules/rangeify.rules:85
            #   index_assign: INDEX(ASSIGN as a, ...) as idx -> push_index(a, idx)
            a = n0
            idx = n
            _r = _as_uop(n, push_index(a, idx))
            if _r is not None and _r is not n: return _r
        if n0.op in _OPS1:
            # rule index_alu at rules/rangeify.rules:87
            #   index_alu: INDEX(Elementwise as x, ...) as idx -> push_index(x, idx)
            idx = n
            x = n0
            _r = _as_uop(n, push_index(x, idx))
            if _r is not None and _r is not n: return _r
        if n0.op in _OPS2:
            # rule index_marker at rules/rangeify.rules:88
            #   index_marker: INDEX({CONTIGUOUS, COPY, NOOP} as x, ...) as idx -> push_index_first(x, idx)
            idx = n
            x = n0
            _r = _as_uop(n, push_index_first(x, idx))
            if _r is not None and _r is not n: return _r
        if n0.op is Ops.REDUCE_AXIS:
            # rule index_reduce at rules/rangeify.rules:90
            #   index_reduce: INDEX(REDUCE_AXIS as red, ...) as idx -> map_reduce(ctx, red, idx)
            idx = n
            red = n0
            _r = _as_uop(n, map_reduce(ctx, red, idx))
            if _r is not None and _r is not n: return _r
        if n0.op in _OPS3:
            # rule index_memory at rules/rangeify.rules:92
            #   index_memory: INDEX({BUFFER, BUFFERIZE, REALIZE}, ...) as idx if idx.arg is not None -> idx.replace(arg=None)
            idx = n
            if idx.arg is not None:
                _r = _as_uop(n, idx.replace(arg=None))
                if _r is not None and _r is not n: return _r
        # rule index_other at rules/rangeify.rules:94
        #   index_other: INDEX(x, ...) if x.op not in (Ops.REALIZE, Ops.BUFFERIZE, Ops.BUFFER) -> unprocessed_index(x)
        x = n0
        if x.op not in (Ops.REALIZE, Ops.BUFFERIZE, Ops.BUFFER):
            _r = _as_uop(n, unprocessed_index(x))
            if _r is not None and _r is not n: return _r
    return None

def _pm_rangeify_REALIZE_t(n, ctx, _st):
    # rule realize at rules/rangeify.rules:78
    #   realize: REALIZE as r -> map_realize(ctx, r)
    r = n
    _t = _st.start(6)
    _r = _as_uop(n, map_realize(ctx, r))
    _st.stop(6, _t, _r, n)
    if _r is not None and _r is not n: return _r, 6
    return None

def _pm_rangeify_CHILD_t(n, ctx, _st):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is Ops.CHILDREN and len(n0.src) == 1:
            n0_0 = n0.src[0]
            # rule unread_child at rules/rangeify.rules:81
            #   unread_child: CHILD(CHILDREN(x)) -> x
            x = n0_0
            _t = _st.start(8)
            _r = x
            _st.stop(8, _t, _r, n)
            if _r is not None and _r is not n: return _r, 8
    return None

def _pm_rangeify_INDEX_t(n, ctx, _st):
    if len(n.src) >= 1:
        n0 = n.src[0]
        if n0.op is Ops.SHRINK:
            # rule index_shrink at rules/rangeify.rules:68
            #   index_shrink: INDEX(SHRINK as r, ...) as idx -> map_shrink(r, idx)
            idx = n
            r = n0
            _t = _st.start(0)
            _r = _as_uop(n, map_shrink(r, idx))
            _st.stop(0, _t, _r, n)
            if _r is not None and _r is not n: return _r, 0
        if n0.op is Ops.PERMUTE:
            # rule index_permute at rules/rangeify.rules:69
            #   index_permute: INDEX(PERMUTE as r, ...) as idx -> map_permute(r, idx)
            idx = n
            r = n0
            _t = _st.start(1)
            _r = _as_uop(n, map_permute(r, idx))
            _st.stop(1, _t, _r, n)
            if _r is not None and _r is not n: return _r, 1
        if n0.op is Ops.FLIP:
            # rule index_flip at rules/rangeify.rules:70
            #   index_flip: INDEX(FLIP as r, ...) as idx -> map_flip(r, idx)
            idx = n
            r = n0
            _t = _st.start(2)
            _r = _as_uop(n, map_flip(r, idx))
            _st.stop(2, _t, _r, n)
            if _r is not None and _r is not n: return _r, 2
        if n0.op is Ops.EXPAND:
            # rule index_expand at rules/rangeify.rules:71
            #   index_expand: INDEX(EXPAND as r, ...) as idx -> map_expand(r, idx)
            idx = n
            r = n0
            _t = _st.start(3)
            _r = _as_uop(n, map_expand(r, idx))
            _st.stop(3, _t, _r, n)
            if _r is not None and _r is not n: return _r, 3
        if n0.op is Ops.PAD:
            # rule index_pad at rules/rangeify.rules:72
            #   index_pad: INDEX(PAD as r, ...) as idx -> map_pad(r, idx)
            idx = n
            r = n0
            _t = _st.start(4)
            _r = _as_uop(n, map_pad(r, idx))
            _st.stop(4, _t, _r, n)
            if _r is not None and _r is not n: return _r, 4
        if n0.op is Ops.RESHAPE:
            # rule index_reshape at rules/rangeify.rules:73
            #   index_reshape: INDEX(RESHAPE as r, ...) as idx -> map_reshape(r, idx)
            idx = n
            r = n0
            _t = _st.start(5)
            _r = _as_uop(n, map_reshape(r, idx))
            _st.stop(5, _t, _r, n)
            if _r is not None and _r is not n: return _r, 5
        if n0.op is Ops.CHILD and len(n0.src) == 1:
            n0_0 = n0.src[0]
            if n0_0.op is Ops.CHILDREN and len(n0_0.src) == 1:
                n0_0_0 = n0_0.src[0]
                # rule index_child at rules/rangeify.rules:80
                #   index_child: INDEX(CHILD(CHILDREN(c)), ...) as idx -> index_child(ctx, c, idx)
                c = n0_0_0
                idx = n
                _t = _st.start(7)
                _r = _as_uop(n, index_child(ctx, c, idx))
                _st.stop(7, _t, _r, n)
                if _r is not None and _r is not n: return _r, 7
        if n0.op in _OPS0:
            # rule index_const at rules/rangeify.rules:83
            #   index_const: INDEX({CONST, DEFINE_VAR} as c, ...) -> c
            c = n0
            _t = _st.start(9)
            _r = c
            _st.stop(9, _t, _r, n)
            if _r is not None and _r is not n: return _r, 9
        if n0.op is Ops.ASSIGN:
            # rule index_assign at rules/rangeify.rules:85
            #   index_assign: INDEX(ASSIGN as a, ...) as idx -> push_index(a, idx)
            a = n0
            idx = n
            _t = _st.start(10)
            _r = _as_uop(n, push_index(a, idx))
            _st.stop(10, _t, _r, n)
            if _r is not None and _r is not n: return _r, 10
        if n0.op in _OPS1:
            # rule index_alu at rules/rangeify.rules:87
            #   index_alu: INDEX(Elementwise as x, ...) as idx -> push_index(x, idx)
            idx = n
            x = n0
            _t = _st.start(11)
            _r = _as_uop(n, push_index(x, idx))
            _st.stop(11, _t, _r, n)
            if _r is not None and _r is not n: return _r, 11
        if n0.op in _OPS2:
            # rule index_marker at rules/rangeify.rules:88
            #   index_marker: INDEX({CONTIGUOUS, COPY, NOOP} as x, ...) as idx -> push_index_first(x, idx)
            idx = n
            x = n0
            _t = _st.start(12)
            _r = _as_uop(n, push_index_first(x, idx))
            _st.stop(12, _t, _r, n)
            if _r is not None and _r is not n: return _r, 12
        if n0.op is Ops.REDUCE_AXIS:
            # rule index_reduce at rules/rangeify.rules:90
            #   index_reduce: INDEX(REDUCE_AXIS as red, ...) as idx -> map_reduce(ctx, red, idx)
            idx = n
            red = n0
            _t = _st.start(13)
            _r = _as_uop(n, map_reduce(ctx, red, idx))
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
        if n0.op in _OPS3:
            # rule index_memory at rules/rangeify.rules:92
            #   index_memory: INDEX({BUFFER, BUFFERIZE, REALIZE}, ...) as idx if idx.arg is not None -> idx.replace(arg=None)
            idx = n
            _t = _st.start(14)
            _r = _as_uop(n, idx.replace(arg=None)) if idx.arg is not None else None
            _st.stop(14, _t, _r, n)
            if _r is not None and _r is not n: return _r, 14
        # rule index_other at rules/rangeify.rules:94
        #   index_other: INDEX(x, ...) if x.op not in (Ops.REALIZE, Ops.BUFFERIZE, Ops.BUFFER) -> unprocessed_index(x)
        x = n0
        _t = _st.start(15)
        _r = _as_uop(n, unprocessed_index(x)) if x.op not in (Ops.REALIZE, Ops.BUFFERIZE, Ops.BUFFER) else None
        _st.stop(15, _t, _r, n)
        if _r is not None and _r is not n: return _r, 15
    return None


_pm_rangeify_rules = (
    RuleInfo('index_shrink', 'rules/rangeify.rules', 68, 'index_shrink: INDEX(SHRINK as r, ...) as idx -> map_shrink(r, idx)'),
    RuleInfo('index_permute', 'rules/rangeify.rules', 69, 'index_permute: INDEX(PERMUTE as r, ...) as idx -> map_permute(r, idx)'),
    RuleInfo('index_flip', 'rules/rangeify.rules', 70, 'index_flip: INDEX(FLIP as r, ...) as idx -> map_flip(r, idx)'),
    RuleInfo('index_expand', 'rules/rangeify.rules', 71, 'index_expand: INDEX(EXPAND as r, ...) as idx -> map_expand(r, idx)'),
    RuleInfo('index_pad', 'rules/rangeify.rules', 72, 'index_pad: INDEX(PAD as r, ...) as idx -> map_pad(r, idx)'),
    RuleInfo('index_reshape', 'rules/rangeify.rules', 73, 'index_reshape: INDEX(RESHAPE as r, ...) as idx -> map_reshape(r, idx)'),
    RuleInfo('realize', 'rules/rangeify.rules', 78, 'realize: REALIZE as r -> map_realize(ctx, r)'),
    RuleInfo('index_child', 'rules/rangeify.rules', 80, 'index_child: INDEX(CHILD(CHILDREN(c)), ...) as idx -> index_child(ctx, c, idx)'),
    RuleInfo('unread_child', 'rules/rangeify.rules', 81, 'unread_child: CHILD(CHILDREN(x)) -> x'),
    RuleInfo('index_const', 'rules/rangeify.rules', 83, 'index_const: INDEX({CONST, DEFINE_VAR} as c, ...) -> c'),
    RuleInfo('index_assign', 'rules/rangeify.rules', 85, 'index_assign: INDEX(ASSIGN as a, ...) as idx -> push_index(a, idx)'),
    RuleInfo('index_alu', 'rules/rangeify.rules', 87, 'index_alu: INDEX(Elementwise as x, ...) as idx -> push_index(x, idx)'),
    RuleInfo('index_marker', 'rules/rangeify.rules', 88, 'index_marker: INDEX({CONTIGUOUS, COPY, NOOP} as x, ...) as idx -> push_index_first(x, idx)'),
    RuleInfo('index_reduce', 'rules/rangeify.rules', 90, 'index_reduce: INDEX(REDUCE_AXIS as red, ...) as idx -> map_reduce(ctx, red, idx)'),
    RuleInfo('index_memory', 'rules/rangeify.rules', 92, 'index_memory: INDEX({BUFFER, BUFFERIZE, REALIZE}, ...) as idx if idx.arg is not None -> idx.replace(arg=None)'),
    RuleInfo('index_other', 'rules/rangeify.rules', 94, 'index_other: INDEX(x, ...) if x.op not in (Ops.REALIZE, Ops.BUFFERIZE, Ops.BUFFER) -> unprocessed_index(x)'),
)
_pm_rangeify_matcher = RuleMatcher(
    'pm_rangeify', _pm_rangeify_rules,
    {
        Ops.REALIZE: _pm_rangeify_REALIZE,
        Ops.CHILD: _pm_rangeify_CHILD,
        Ops.INDEX: _pm_rangeify_INDEX,
    },
    {
        Ops.REALIZE: _pm_rangeify_REALIZE_t,
        Ops.CHILD: _pm_rangeify_CHILD_t,
        Ops.INDEX: _pm_rangeify_INDEX_t,
    },
)
pm_rangeify = _pm_rangeify_matcher


# ======================================================================== rule set pm_cleanups

def _pm_cleanups_r13(n, ctx, a, b, e):
    # rule fold_binary at rules/symbolic.rules:35
    #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
    return _as_uop(n, fold_alu(e.op, a.dtype, a.arg, b.arg))

def _pm_cleanups_COPY(n, ctx):
    if len(n.src) >= 1:
        n0 = n.src[0]
        if n0.op is Ops.CONST:
            # rule copy_const_idx at rules/rangeify.rules:108
            #   copy_const_idx: COPY(c:CONST, ...) -> c
            c = n0
            return c
    return None

def _pm_cleanups_BUFFERIZE(n, ctx):
    if len(n.src) >= 1:
        n0 = n.src[0]
        if n0.op is Ops.INDEX and len(n0.src) >= 1:
            n0_0 = n0.src[0]
            if n0_0.op is Ops.BUFFERIZE:
                # rule noop_buffer at rules/rangeify.rules:102
                #   noop_buffer: BUFFERIZE(INDEX(b:BUFFERIZE, ...) as idx, ...) as b2 if idx.src[1:] == b2.src[1:] and b.shape == b2.shape -> merge_tags(b, b2)
                b = n0_0
                b2 = n
                idx = n0
                if idx.src[1:] == b2.src[1:] and b.shape == b2.shape:
                    _r = _as_uop(n, merge_tags(b, b2))
                    if _r is not None and _r is not n: return _r
    return None

def _pm_cleanups_INDEX(n, ctx):
    if len(n.src) >= 1:
        n0 = n.src[0]
        if n0.op is Ops.SHRINK:
            # rule index_shrink at rules/rangeify.rules:68
            #   index_shrink: INDEX(SHRINK as r, ...) as idx -> map_shrink(r, idx)
            idx = n
            r = n0
            _r = _as_uop(n, map_shrink(r, idx))
            if _r is not None and _r is not n: return _r
        if n0.op is Ops.PERMUTE:
            # rule index_permute at rules/rangeify.rules:69
            #   index_permute: INDEX(PERMUTE as r, ...) as idx -> map_permute(r, idx)
            idx = n
            r = n0
            _r = _as_uop(n, map_permute(r, idx))
            if _r is not None and _r is not n: return _r
        if n0.op is Ops.FLIP:
            # rule index_flip at rules/rangeify.rules:70
            #   index_flip: INDEX(FLIP as r, ...) as idx -> map_flip(r, idx)
            idx = n
            r = n0
            _r = _as_uop(n, map_flip(r, idx))
            if _r is not None and _r is not n: return _r
        if n0.op is Ops.EXPAND:
            # rule index_expand at rules/rangeify.rules:71
            #   index_expand: INDEX(EXPAND as r, ...) as idx -> map_expand(r, idx)
            idx = n
            r = n0
            _r = _as_uop(n, map_expand(r, idx))
            if _r is not None and _r is not n: return _r
        if n0.op is Ops.PAD:
            # rule index_pad at rules/rangeify.rules:72
            #   index_pad: INDEX(PAD as r, ...) as idx -> map_pad(r, idx)
            idx = n
            r = n0
            _r = _as_uop(n, map_pad(r, idx))
            if _r is not None and _r is not n: return _r
        if n0.op is Ops.RESHAPE:
            # rule index_reshape at rules/rangeify.rules:73
            #   index_reshape: INDEX(RESHAPE as r, ...) as idx -> map_reshape(r, idx)
            idx = n
            r = n0
            _r = _as_uop(n, map_reshape(r, idx))
            if _r is not None and _r is not n: return _r
        if n0.op is Ops.BUFFERIZE and len(n0.src) >= 1:
            n0_0 = n0.src[0]
            if n0_0.op is Ops.CONST:
                # rule const_buffer at rules/rangeify.rules:104
                #   const_buffer: INDEX(BUFFERIZE(c:CONST, ...), ...) -> c
                c = n0_0
                return c
            # rule remove_buffer at rules/rangeify.rules:106
            #   remove_buffer: INDEX(BUFFERIZE(src, ...) as buf, ...) as idx -> remove_bufferize(src, buf, idx)
            buf = n0
            idx = n
            src = n0_0
            _r = _as_uop(n, remove_bufferize(src, buf, idx))
            if _r is not None and _r is not n: return _r
    return None

def _pm_cleanups_CAST(n, ctx):
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

def _pm_cleanups_NEG(n, ctx):
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

def _pm_cleanups_ADD(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.dtype in _DT4 and n1.op is Ops.CONST and n1.arg == 0:
            # rule add_zero at rules/symbolic.rules:12
            #   add_zero: ADD[x:ints, 0] -> x
            x = n0
            return x
        if n0.op is Ops.CONST:
            if n0.arg == 0 and n1.dtype in _DT4:
                # rule add_zero at rules/symbolic.rules:12
                #   add_zero: ADD[x:ints, 0] -> x
                x = n1
                return x
            if n1.op is Ops.CONST:
                # rule fold_binary at rules/symbolic.rules:35
                #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
                _r = _pm_cleanups_r13(n, ctx, n0, n1, n)
                if _r is not None and _r is not n: return _r
        if n.dtype in _DT4:
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
                    if n1_0 is n0_0_0 and n0_0_1.op is Ops.CONST and n0_1 is n0_0_1 and n1_1 is n0_0_1:
                        # rule divmod_recombine at rules/symbolic.rules:53
                        #   divmod_recombine: ADD[MUL[IDIV(x, c:CONST), c], MOD(x, c)] if c.arg > 0 -> x
                        c = n0_0_1
                        x = n0_0_0
                        if c.arg > 0:
                            return x
                if n0_1.op is Ops.IDIV and len(n0_1.src) == 2:
                    n0_1_0 = n0_1.src[0]
                    n0_1_1 = n0_1.src[1]
                    if n1_0 is n0_1_0 and n0_1_1.op is Ops.CONST and n0_0 is n0_1_1 and n1_1 is n0_1_1:
                        # rule divmod_recombine at rules/symbolic.rules:53
                        #   divmod_recombine: ADD[MUL[IDIV(x, c:CONST), c], MOD(x, c)] if c.arg > 0 -> x
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
                    if n0_0 is n1_0_0 and n1_0_1.op is Ops.CONST and n1_1 is n1_0_1 and n0_1 is n1_0_1:
                        # rule divmod_recombine at rules/symbolic.rules:53
                        #   divmod_recombine: ADD[MUL[IDIV(x, c:CONST), c], MOD(x, c)] if c.arg > 0 -> x
                        c = n1_0_1
                        x = n1_0_0
                        if c.arg > 0:
                            return x
                if n1_1.op is Ops.IDIV and len(n1_1.src) == 2:
                    n1_1_0 = n1_1.src[0]
                    n1_1_1 = n1_1.src[1]
                    if n0_0 is n1_1_0 and n1_1_1.op is Ops.CONST and n1_0 is n1_1_1 and n0_1 is n1_1_1:
                        # rule divmod_recombine at rules/symbolic.rules:53
                        #   divmod_recombine: ADD[MUL[IDIV(x, c:CONST), c], MOD(x, c)] if c.arg > 0 -> x
                        c = n1_1_1
                        x = n1_1_0
                        if c.arg > 0:
                            return x
    return None

def _pm_cleanups_SUB(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.dtype in _DT4:
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
            _r = _pm_cleanups_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
        if n0.dtype is dtypes.index and n1.op is Ops.CONST:
            # rule sub_const at rules/symbolic.rules:46
            #   sub_const: SUB(x:index, c:CONST) -> x + (-c.arg)
            c = n1
            x = n0
            _r = _as_uop(n, x + -c.arg)
            if _r is not None and _r is not n: return _r
    return None

def _pm_cleanups_MUL(n, ctx):
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
        if n0.dtype in _DT4 and n1.op is Ops.CONST and n1.arg == 0:
            # rule mul_zero at rules/symbolic.rules:19
            #   mul_zero: MUL[x:ints, 0] -> 0
            x = n0
            _r = n.const_like(0)
            if _r is not n: return _r
        if n0.op is Ops.CONST:
            if n0.arg == 0 and n1.dtype in _DT4:
                # rule mul_zero at rules/symbolic.rules:19
                #   mul_zero: MUL[x:ints, 0] -> 0
                x = n1
                _r = n.const_like(0)
                if _r is not n: return _r
            if n1.op is Ops.CONST:
                # rule fold_binary at rules/symbolic.rules:35
                #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
                _r = _pm_cleanups_r13(n, ctx, n0, n1, n)
                if _r is not None and _r is not n: return _r
        if n.dtype in _DT4:
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

def _pm_cleanups_FDIV(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _pm_cleanups_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
    return None

def _pm_cleanups_IDIV(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n1.op is Ops.CONST and n1.arg == 1:
            # rule idiv_one at rules/symbolic.rules:20
            #   idiv_one: IDIV(x, 1) -> x
            x = n0
            return x
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _pm_cleanups_r13(n, ctx, n0, n1, n)
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

def _pm_cleanups_MOD(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.dtype in _DT4 and n1.op is Ops.CONST and n1.arg == 1:
            # rule mod_one at rules/symbolic.rules:21
            #   mod_one: MOD(x:ints, 1) -> 0
            x = n0
            _r = n.const_like(0)
            if _r is not n: return _r
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _pm_cleanups_r13(n, ctx, n0, n1, n)
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

def _pm_cleanups_MAX(n, ctx):
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
            _r = _pm_cleanups_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
    return None

def _pm_cleanups_MIN(n, ctx):
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
            _r = _pm_cleanups_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
    return None

def _pm_cleanups_POW(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _pm_cleanups_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
    return None

def _pm_cleanups_CMPLT(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _pm_cleanups_r13(n, ctx, n0, n1, n)
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

def _pm_cleanups_CMPNE(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _pm_cleanups_r13(n, ctx, n0, n1, n)
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

def _pm_cleanups_CMPEQ(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _pm_cleanups_r13(n, ctx, n0, n1, n)
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

def _pm_cleanups_AND(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _pm_cleanups_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
    return None

def _pm_cleanups_OR(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _pm_cleanups_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
    return None

def _pm_cleanups_XOR(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _pm_cleanups_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
    return None

def _pm_cleanups_SHL(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _pm_cleanups_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
    return None

def _pm_cleanups_SHR(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _r = _pm_cleanups_r13(n, ctx, n0, n1, n)
            if _r is not None and _r is not n: return _r
    return None

def _pm_cleanups_WHERE(n, ctx):
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

def _pm_cleanups_COPY_t(n, ctx, _st):
    if len(n.src) >= 1:
        n0 = n.src[0]
        if n0.op is Ops.CONST:
            # rule copy_const_idx at rules/rangeify.rules:108
            #   copy_const_idx: COPY(c:CONST, ...) -> c
            c = n0
            _t = _st.start(37)
            _r = c
            _st.stop(37, _t, _r, n)
            if _r is not None and _r is not n: return _r, 37
    return None

def _pm_cleanups_BUFFERIZE_t(n, ctx, _st):
    if len(n.src) >= 1:
        n0 = n.src[0]
        if n0.op is Ops.INDEX and len(n0.src) >= 1:
            n0_0 = n0.src[0]
            if n0_0.op is Ops.BUFFERIZE:
                # rule noop_buffer at rules/rangeify.rules:102
                #   noop_buffer: BUFFERIZE(INDEX(b:BUFFERIZE, ...) as idx, ...) as b2 if idx.src[1:] == b2.src[1:] and b.shape == b2.shape -> merge_tags(b, b2)
                b = n0_0
                b2 = n
                idx = n0
                _t = _st.start(34)
                _r = _as_uop(n, merge_tags(b, b2)) if idx.src[1:] == b2.src[1:] and b.shape == b2.shape else None
                _st.stop(34, _t, _r, n)
                if _r is not None and _r is not n: return _r, 34
    return None

def _pm_cleanups_INDEX_t(n, ctx, _st):
    if len(n.src) >= 1:
        n0 = n.src[0]
        if n0.op is Ops.SHRINK:
            # rule index_shrink at rules/rangeify.rules:68
            #   index_shrink: INDEX(SHRINK as r, ...) as idx -> map_shrink(r, idx)
            idx = n
            r = n0
            _t = _st.start(28)
            _r = _as_uop(n, map_shrink(r, idx))
            _st.stop(28, _t, _r, n)
            if _r is not None and _r is not n: return _r, 28
        if n0.op is Ops.PERMUTE:
            # rule index_permute at rules/rangeify.rules:69
            #   index_permute: INDEX(PERMUTE as r, ...) as idx -> map_permute(r, idx)
            idx = n
            r = n0
            _t = _st.start(29)
            _r = _as_uop(n, map_permute(r, idx))
            _st.stop(29, _t, _r, n)
            if _r is not None and _r is not n: return _r, 29
        if n0.op is Ops.FLIP:
            # rule index_flip at rules/rangeify.rules:70
            #   index_flip: INDEX(FLIP as r, ...) as idx -> map_flip(r, idx)
            idx = n
            r = n0
            _t = _st.start(30)
            _r = _as_uop(n, map_flip(r, idx))
            _st.stop(30, _t, _r, n)
            if _r is not None and _r is not n: return _r, 30
        if n0.op is Ops.EXPAND:
            # rule index_expand at rules/rangeify.rules:71
            #   index_expand: INDEX(EXPAND as r, ...) as idx -> map_expand(r, idx)
            idx = n
            r = n0
            _t = _st.start(31)
            _r = _as_uop(n, map_expand(r, idx))
            _st.stop(31, _t, _r, n)
            if _r is not None and _r is not n: return _r, 31
        if n0.op is Ops.PAD:
            # rule index_pad at rules/rangeify.rules:72
            #   index_pad: INDEX(PAD as r, ...) as idx -> map_pad(r, idx)
            idx = n
            r = n0
            _t = _st.start(32)
            _r = _as_uop(n, map_pad(r, idx))
            _st.stop(32, _t, _r, n)
            if _r is not None and _r is not n: return _r, 32
        if n0.op is Ops.RESHAPE:
            # rule index_reshape at rules/rangeify.rules:73
            #   index_reshape: INDEX(RESHAPE as r, ...) as idx -> map_reshape(r, idx)
            idx = n
            r = n0
            _t = _st.start(33)
            _r = _as_uop(n, map_reshape(r, idx))
            _st.stop(33, _t, _r, n)
            if _r is not None and _r is not n: return _r, 33
        if n0.op is Ops.BUFFERIZE and len(n0.src) >= 1:
            n0_0 = n0.src[0]
            if n0_0.op is Ops.CONST:
                # rule const_buffer at rules/rangeify.rules:104
                #   const_buffer: INDEX(BUFFERIZE(c:CONST, ...), ...) -> c
                c = n0_0
                _t = _st.start(35)
                _r = c
                _st.stop(35, _t, _r, n)
                if _r is not None and _r is not n: return _r, 35
            # rule remove_buffer at rules/rangeify.rules:106
            #   remove_buffer: INDEX(BUFFERIZE(src, ...) as buf, ...) as idx -> remove_bufferize(src, buf, idx)
            buf = n0
            idx = n
            src = n0_0
            _t = _st.start(36)
            _r = _as_uop(n, remove_bufferize(src, buf, idx))
            _st.stop(36, _t, _r, n)
            if _r is not None and _r is not n: return _r, 36
    return None

def _pm_cleanups_CAST_t(n, ctx, _st):
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

def _pm_cleanups_NEG_t(n, ctx, _st):
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

def _pm_cleanups_ADD_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.dtype in _DT4 and n1.op is Ops.CONST and n1.arg == 0:
            # rule add_zero at rules/symbolic.rules:12
            #   add_zero: ADD[x:ints, 0] -> x
            x = n0
            _t = _st.start(0)
            _r = x
            _st.stop(0, _t, _r, n)
            if _r is not None and _r is not n: return _r, 0
        if n0.op is Ops.CONST:
            if n0.arg == 0 and n1.dtype in _DT4:
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
                _r = _pm_cleanups_r13(n, ctx, n0, n1, n)
                _st.stop(13, _t, _r, n)
                if _r is not None and _r is not n: return _r, 13
        if n.dtype in _DT4:
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
                    if n1_0 is n0_0_0 and n0_0_1.op is Ops.CONST and n0_1 is n0_0_1 and n1_1 is n0_0_1:
                        # rule divmod_recombine at rules/symbolic.rules:53
                        #   divmod_recombine: ADD[MUL[IDIV(x, c:CONST), c], MOD(x, c)] if c.arg > 0 -> x
                        c = n0_0_1
                        x = n0_0_0
                        _t = _st.start(21)
                        _r = x if c.arg > 0 else None
                        _st.stop(21, _t, _r, n)
                        if _r is not None and _r is not n: return _r, 21
                if n0_1.op is Ops.IDIV and len(n0_1.src) == 2:
                    n0_1_0 = n0_1.src[0]
                    n0_1_1 = n0_1.src[1]
                    if n1_0 is n0_1_0 and n0_1_1.op is Ops.CONST and n0_0 is n0_1_1 and n1_1 is n0_1_1:
                        # rule divmod_recombine at rules/symbolic.rules:53
                        #   divmod_recombine: ADD[MUL[IDIV(x, c:CONST), c], MOD(x, c)] if c.arg > 0 -> x
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
                    if n0_0 is n1_0_0 and n1_0_1.op is Ops.CONST and n1_1 is n1_0_1 and n0_1 is n1_0_1:
                        # rule divmod_recombine at rules/symbolic.rules:53
                        #   divmod_recombine: ADD[MUL[IDIV(x, c:CONST), c], MOD(x, c)] if c.arg > 0 -> x
                        c = n1_0_1
                        x = n1_0_0
                        _t = _st.start(21)
                        _r = x if c.arg > 0 else None
                        _st.stop(21, _t, _r, n)
                        if _r is not None and _r is not n: return _r, 21
                if n1_1.op is Ops.IDIV and len(n1_1.src) == 2:
                    n1_1_0 = n1_1.src[0]
                    n1_1_1 = n1_1.src[1]
                    if n0_0 is n1_1_0 and n1_1_1.op is Ops.CONST and n1_0 is n1_1_1 and n0_1 is n1_1_1:
                        # rule divmod_recombine at rules/symbolic.rules:53
                        #   divmod_recombine: ADD[MUL[IDIV(x, c:CONST), c], MOD(x, c)] if c.arg > 0 -> x
                        c = n1_1_1
                        x = n1_1_0
                        _t = _st.start(21)
                        _r = x if c.arg > 0 else None
                        _st.stop(21, _t, _r, n)
                        if _r is not None and _r is not n: return _r, 21
    return None

def _pm_cleanups_SUB_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.dtype in _DT4:
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
            _r = _pm_cleanups_r13(n, ctx, n0, n1, n)
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

def _pm_cleanups_MUL_t(n, ctx, _st):
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
        if n0.dtype in _DT4 and n1.op is Ops.CONST and n1.arg == 0:
            # rule mul_zero at rules/symbolic.rules:19
            #   mul_zero: MUL[x:ints, 0] -> 0
            x = n0
            _t = _st.start(5)
            _r = n.const_like(0)
            _st.stop(5, _t, _r, n)
            if _r is not None and _r is not n: return _r, 5
        if n0.op is Ops.CONST:
            if n0.arg == 0 and n1.dtype in _DT4:
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
                _r = _pm_cleanups_r13(n, ctx, n0, n1, n)
                _st.stop(13, _t, _r, n)
                if _r is not None and _r is not n: return _r, 13
        if n.dtype in _DT4:
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

def _pm_cleanups_FDIV_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _pm_cleanups_r13(n, ctx, n0, n1, n)
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
    return None

def _pm_cleanups_IDIV_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n1.op is Ops.CONST and n1.arg == 1:
            # rule idiv_one at rules/symbolic.rules:20
            #   idiv_one: IDIV(x, 1) -> x
            x = n0
            _t = _st.start(6)
            _r = x
            _st.stop(6, _t, _r, n)
            if _r is not None and _r is not n: return _r, 6
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _pm_cleanups_r13(n, ctx, n0, n1, n)
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

def _pm_cleanups_MOD_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.dtype in _DT4 and n1.op is Ops.CONST and n1.arg == 1:
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
            _r = _pm_cleanups_r13(n, ctx, n0, n1, n)
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

def _pm_cleanups_MAX_t(n, ctx, _st):
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
            _r = _pm_cleanups_r13(n, ctx, n0, n1, n)
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
    return None

def _pm_cleanups_MIN_t(n, ctx, _st):
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
            _r = _pm_cleanups_r13(n, ctx, n0, n1, n)
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
    return None

def _pm_cleanups_POW_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _pm_cleanups_r13(n, ctx, n0, n1, n)
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
    return None

def _pm_cleanups_CMPLT_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _pm_cleanups_r13(n, ctx, n0, n1, n)
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

def _pm_cleanups_CMPNE_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _pm_cleanups_r13(n, ctx, n0, n1, n)
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

def _pm_cleanups_CMPEQ_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _pm_cleanups_r13(n, ctx, n0, n1, n)
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

def _pm_cleanups_AND_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _pm_cleanups_r13(n, ctx, n0, n1, n)
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
    return None

def _pm_cleanups_OR_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _pm_cleanups_r13(n, ctx, n0, n1, n)
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
    return None

def _pm_cleanups_XOR_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _pm_cleanups_r13(n, ctx, n0, n1, n)
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
    return None

def _pm_cleanups_SHL_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _pm_cleanups_r13(n, ctx, n0, n1, n)
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
    return None

def _pm_cleanups_SHR_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.CONST and n1.op is Ops.CONST:
            # rule fold_binary at rules/symbolic.rules:35
            #   fold_binary: Binary(a:CONST, b:CONST) as e -> fold_alu(e.op, a.dtype, a.arg, b.arg)
            _t = _st.start(13)
            _r = _pm_cleanups_r13(n, ctx, n0, n1, n)
            _st.stop(13, _t, _r, n)
            if _r is not None and _r is not n: return _r, 13
    return None

def _pm_cleanups_WHERE_t(n, ctx, _st):
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


_pm_cleanups_rules = (
    RuleInfo('add_zero', 'rules/symbolic.rules', 12, 'add_zero: ADD[x:ints, 0] -> x'),
    RuleInfo('sub_zero', 'rules/symbolic.rules', 13, 'sub_zero: SUB(x:ints, 0) -> x'),
    RuleInfo('sub_self', 'rules/symbolic.rules', 14, 'sub_self: SUB(x:ints, x) -> 0'),
    RuleInfo('neg_neg', 'rules/symbolic.rules', 15, 'neg_neg: NEG(NEG(x)) -> x'),
    RuleInfo('mul_one', 'rules/symbolic.rules', 18, 'mul_one: MUL[x, 1] -> x'),
    RuleInfo('mul_zero', 'rules/symbolic.rules', 19, 'mul_zero: MUL[x:ints, 0] -> 0'),
    RuleInfo('idiv_one', 'rules/symbolic.rules', 20, 'idiv_one: IDIV(x, 1) -> x'),
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
    RuleInfo('divmod_recombine', 'rules/symbolic.rules', 53, 'divmod_recombine: ADD[MUL[IDIV(x, c:CONST), c], MOD(x, c)] if c.arg > 0 -> x'),
    RuleInfo('mod_mod', 'rules/symbolic.rules', 55, 'mod_mod: MOD(MOD(x, c:CONST) as m, c) if c.arg != 0 -> m'),
    RuleInfo('split_idiv', 'rules/symbolic.rules', 59, 'split_idiv: IDIV(ADD[MUL[x, c:CONST], d], c):index if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg -> x'),
    RuleInfo('split_mod', 'rules/symbolic.rules', 60, 'split_mod: MOD(ADD[MUL[x, c:CONST], d], c):index if c.arg > 0 and x.vmin >= 0 and 0 <= d.vmin and d.vmax < c.arg -> d'),
    RuleInfo('mod_in_range', 'rules/symbolic.rules', 64, 'mod_in_range: MOD(x:index, c:CONST) if 0 <= x.vmin and x.vmax < c.arg -> x'),
    RuleInfo('idiv_in_range', 'rules/symbolic.rules', 65, 'idiv_in_range: IDIV(x:index, c:CONST) if 0 <= x.vmin and x.vmax < c.arg -> 0'),
    RuleInfo('cmp_bounds', 'rules/symbolic.rules', 67, 'cmp_bounds: Comparison(a:index, b) as e if e.vmin == e.vmax -> e.vmin'),
    RuleInfo('index_shrink', 'rules/rangeify.rules', 68, 'index_shrink: INDEX(SHRINK as r, ...) as idx -> map_shrink(r, idx)'),
    RuleInfo('index_permute', 'rules/rangeify.rules', 69, 'index_permute: INDEX(PERMUTE as r, ...) as idx -> map_permute(r, idx)'),
    RuleInfo('index_flip', 'rules/rangeify.rules', 70, 'index_flip: INDEX(FLIP as r, ...) as idx -> map_flip(r, idx)'),
    RuleInfo('index_expand', 'rules/rangeify.rules', 71, 'index_expand: INDEX(EXPAND as r, ...) as idx -> map_expand(r, idx)'),
    RuleInfo('index_pad', 'rules/rangeify.rules', 72, 'index_pad: INDEX(PAD as r, ...) as idx -> map_pad(r, idx)'),
    RuleInfo('index_reshape', 'rules/rangeify.rules', 73, 'index_reshape: INDEX(RESHAPE as r, ...) as idx -> map_reshape(r, idx)'),
    RuleInfo('noop_buffer', 'rules/rangeify.rules', 102, 'noop_buffer: BUFFERIZE(INDEX(b:BUFFERIZE, ...) as idx, ...) as b2 if idx.src[1:] == b2.src[1:] and b.shape == b2.shape -> merge_tags(b, b2)'),
    RuleInfo('const_buffer', 'rules/rangeify.rules', 104, 'const_buffer: INDEX(BUFFERIZE(c:CONST, ...), ...) -> c'),
    RuleInfo('remove_buffer', 'rules/rangeify.rules', 106, 'remove_buffer: INDEX(BUFFERIZE(src, ...) as buf, ...) as idx -> remove_bufferize(src, buf, idx)'),
    RuleInfo('copy_const_idx', 'rules/rangeify.rules', 108, 'copy_const_idx: COPY(c:CONST, ...) -> c'),
)
_pm_cleanups_matcher = RuleMatcher(
    'pm_cleanups', _pm_cleanups_rules,
    {
        Ops.COPY: _pm_cleanups_COPY,
        Ops.BUFFERIZE: _pm_cleanups_BUFFERIZE,
        Ops.INDEX: _pm_cleanups_INDEX,
        Ops.CAST: _pm_cleanups_CAST,
        Ops.NEG: _pm_cleanups_NEG,
        Ops.ADD: _pm_cleanups_ADD,
        Ops.SUB: _pm_cleanups_SUB,
        Ops.MUL: _pm_cleanups_MUL,
        Ops.FDIV: _pm_cleanups_FDIV,
        Ops.IDIV: _pm_cleanups_IDIV,
        Ops.MOD: _pm_cleanups_MOD,
        Ops.MAX: _pm_cleanups_MAX,
        Ops.MIN: _pm_cleanups_MIN,
        Ops.POW: _pm_cleanups_POW,
        Ops.CMPLT: _pm_cleanups_CMPLT,
        Ops.CMPNE: _pm_cleanups_CMPNE,
        Ops.CMPEQ: _pm_cleanups_CMPEQ,
        Ops.AND: _pm_cleanups_AND,
        Ops.OR: _pm_cleanups_OR,
        Ops.XOR: _pm_cleanups_XOR,
        Ops.SHL: _pm_cleanups_SHL,
        Ops.SHR: _pm_cleanups_SHR,
        Ops.WHERE: _pm_cleanups_WHERE,
    },
    {
        Ops.COPY: _pm_cleanups_COPY_t,
        Ops.BUFFERIZE: _pm_cleanups_BUFFERIZE_t,
        Ops.INDEX: _pm_cleanups_INDEX_t,
        Ops.CAST: _pm_cleanups_CAST_t,
        Ops.NEG: _pm_cleanups_NEG_t,
        Ops.ADD: _pm_cleanups_ADD_t,
        Ops.SUB: _pm_cleanups_SUB_t,
        Ops.MUL: _pm_cleanups_MUL_t,
        Ops.FDIV: _pm_cleanups_FDIV_t,
        Ops.IDIV: _pm_cleanups_IDIV_t,
        Ops.MOD: _pm_cleanups_MOD_t,
        Ops.MAX: _pm_cleanups_MAX_t,
        Ops.MIN: _pm_cleanups_MIN_t,
        Ops.POW: _pm_cleanups_POW_t,
        Ops.CMPLT: _pm_cleanups_CMPLT_t,
        Ops.CMPNE: _pm_cleanups_CMPNE_t,
        Ops.CMPEQ: _pm_cleanups_CMPEQ_t,
        Ops.AND: _pm_cleanups_AND_t,
        Ops.OR: _pm_cleanups_OR_t,
        Ops.XOR: _pm_cleanups_XOR_t,
        Ops.SHL: _pm_cleanups_SHL_t,
        Ops.SHR: _pm_cleanups_SHR_t,
        Ops.WHERE: _pm_cleanups_WHERE_t,
    },
)
pm_cleanups = _pm_cleanups_matcher


# ======================================================================== rule set split_kernels

def _split_kernels_BUFFERIZE(n, ctx):
    # rule split_store at rules/rangeify.rules:116
    #   split_store: BUFFERIZE as b -> split_store(bufferize_to_store(b))
    b = n
    _r = _as_uop(n, split_store(bufferize_to_store(b)))
    if _r is not None and _r is not n: return _r
    return None

def _split_kernels_BUFFERIZE_t(n, ctx, _st):
    # rule split_store at rules/rangeify.rules:116
    #   split_store: BUFFERIZE as b -> split_store(bufferize_to_store(b))
    b = n
    _t = _st.start(0)
    _r = _as_uop(n, split_store(bufferize_to_store(b)))
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None


_split_kernels_rules = (
    RuleInfo('split_store', 'rules/rangeify.rules', 116, 'split_store: BUFFERIZE as b -> split_store(bufferize_to_store(b))'),
)
_split_kernels_matcher = RuleMatcher(
    'split_kernels', _split_kernels_rules,
    {
        Ops.BUFFERIZE: _split_kernels_BUFFERIZE,
    },
    {
        Ops.BUFFERIZE: _split_kernels_BUFFERIZE_t,
    },
)
split_kernels = _split_kernels_matcher

MATCHERS = {
    'earliest_rewrites': _earliest_rewrites_matcher,
    'do_realize': _do_realize_matcher,
    'add_realize': _add_realize_matcher,
    'pm_children': _pm_children_matcher,
    'pm_mops': _pm_mops_matcher,
    'pm_rangeify': _pm_rangeify_matcher,
    'pm_cleanups': _pm_cleanups_matcher,
    'split_kernels': _split_kernels_matcher,
}
