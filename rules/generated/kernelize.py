# generated from rules/kernelize.rules by `rulegrad gen`; do not edit
# source sha256: 8874567cf0d83d0a095dbdaf1fdb909caaef35de59bc8466829a22f3c4142a5b
# imports rules/rangeify.rules sha256: 499ced1f0b30231d4e0cad50aa9da9ce7abeaf160d7763b5fed1064b5627f1e3
# imports rules/movement.rules sha256: 2e32f3d8ef1dbaa8750670902dcebcd491b0f134e184e7556fddf6752b5bcc70
# imports rules/symbolic.rules sha256: a6a51ae7863a7637798664f439214feebcd542a5b103154001c4472c0219e28c
# imports rules/kernel.rules sha256: fd9a5acddc32dd9efbc80ae8477716d64661f807dc8d2df1ca8e350e5851c207
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
from rulegrad.runtime.buffer import Buffer
from rulegrad.rules.rangeify_helpers import FIRST_RANGE
from rulegrad.rules.kernelize_helpers import FUSED
from rulegrad.rules.buffer_limit import KernelBufferLimit
from rulegrad.runtime.view import ShapeTracker
from rulegrad.rules.kernelize_helpers import can_pad
from rulegrad.rules.kernelize_helpers import children_of
from itertools import count
from rulegrad.runtime.device import device_of
from rulegrad.runtime.env import env_flag
from rulegrad.runtime.view import flatten
from rulegrad.runtime.rewrite import graph_rewrite
from rulegrad.rules.kernelize_helpers import is_computed
from rulegrad.rules.kernelize_helpers import kernel_reads
from rulegrad.rules import matcher
from rulegrad.rules.rangeify_helpers import reduce_over
from rulegrad.runtime.ops import reduce_start
from rulegrad.rules.kernelize_helpers import root_value
from rulegrad.runtime.view import unflatten
from rulegrad.rules.generated import rangeify as _generated_rangeify

SOURCE = 'rules/kernelize.rules'
SOURCE_SHA256 = '8874567cf0d83d0a095dbdaf1fdb909caaef35de59bc8466829a22f3c4142a5b'
DEPENDENCIES = (('rules/rangeify.rules', '499ced1f0b30231d4e0cad50aa9da9ce7abeaf160d7763b5fed1064b5627f1e3'), ('rules/movement.rules', '2e32f3d8ef1dbaa8750670902dcebcd491b0f134e184e7556fddf6752b5bcc70'), ('rules/symbolic.rules', 'a6a51ae7863a7637798664f439214feebcd542a5b103154001c4472c0219e28c'), ('rules/kernel.rules', 'fd9a5acddc32dd9efbc80ae8477716d64661f807dc8d2df1ca8e350e5851c207'), )
_ASSIGN = Ops.ASSIGN
_BUFFER = Ops.BUFFER
_CONST = Ops.CONST
_FUSE = Ops.FUSE
_INDEX = Ops.INDEX
_KERNEL = Ops.KERNEL
_REDUCE_AXIS = Ops.REDUCE_AXIS
_VIEW = Ops.VIEW
_OPS0 = frozenset({Ops.RESHAPE, Ops.PERMUTE, Ops.EXPAND, Ops.PAD, Ops.SHRINK, Ops.FLIP, Ops.CONTIGUOUS_BACKWARD, Ops.DETACH, Ops.CAST, Ops.BITCAST, Ops.NEG, Ops.EXP, Ops.LOG, Ops.EXP2, Ops.LOG2, Ops.SIN, Ops.SQRT, Ops.RECIPROCAL, Ops.TRUNC, Ops.ADD, Ops.SUB, Ops.MUL, Ops.FDIV, Ops.IDIV, Ops.MOD, Ops.MAX, Ops.MIN, Ops.POW, Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ, Ops.AND, Ops.OR, Ops.XOR, Ops.SHL, Ops.SHR, Ops.WHERE, Ops.MULACC, Ops.COS})
_OPS1 = frozenset({Ops.BUFFER, Ops.ASSIGN})
_OPS2 = frozenset({Ops.CAST, Ops.BITCAST, Ops.NEG, Ops.EXP, Ops.LOG, Ops.EXP2, Ops.LOG2, Ops.SIN, Ops.SQRT, Ops.RECIPROCAL, Ops.TRUNC, Ops.ADD, Ops.SUB, Ops.MUL, Ops.FDIV, Ops.IDIV, Ops.MOD, Ops.MAX, Ops.MIN, Ops.POW, Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ, Ops.AND, Ops.OR, Ops.XOR, Ops.SHL, Ops.SHR, Ops.WHERE, Ops.MULACC, Ops.COS})
_OPS3 = frozenset({Ops.CONTIGUOUS, Ops.COPY})
_OPS4 = frozenset({Ops.CONST, Ops.CONTIGUOUS, Ops.COPY, Ops.REDUCE_AXIS, Ops.CAST, Ops.BITCAST, Ops.NEG, Ops.EXP, Ops.LOG, Ops.EXP2, Ops.LOG2, Ops.SIN, Ops.SQRT, Ops.RECIPROCAL, Ops.TRUNC, Ops.ADD, Ops.SUB, Ops.MUL, Ops.FDIV, Ops.IDIV, Ops.MOD, Ops.MAX, Ops.MIN, Ops.POW, Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ, Ops.AND, Ops.OR, Ops.XOR, Ops.SHL, Ops.SHR, Ops.WHERE, Ops.MULACC, Ops.COS})


# ======================================================================== definitions, contexts
_UNSET = object()  # a context's field not given to its constructor


def stops_fuse(x):
    """`def stops_fuse`, declared at rules/kernelize.rules:31."""
    return x.op not in GroupOp.Elementwise and x.op not in GroupOp.Movement and x.op not in (Ops.REDUCE_AXIS, Ops.DETACH, Ops.CONTIGUOUS_BACKWARD, Ops.FUSE)


def constants_only(x):
    """`def constants_only`, declared at rules/kernelize.rules:34."""
    return all(n.op is not Ops.BUFFER for n in x.toposort())


def row_major_buffer(x):
    """`def row_major_buffer`, declared at rules/kernelize.rules:36."""
    return x.op is Ops.BUFFER or x.op is Ops.VIEW and x.src[0].op is Ops.BUFFER and x.arg.is_contiguous and x.size == x.src[0].size


def plain_pad(v, x):
    """`def plain_pad`, declared at rules/kernelize.rules:39."""
    vs = v.arg.views
    return len(vs) == 1 and vs[0].mask is not None and x.size >= prod(e - b for b, e in vs[0].mask)


def out_buffer(x):
    """`def out_buffer`, declared at rules/kernelize.rules:143."""
    return _new(UOp, Ops.BUFFER, x.dtype, (), Buffer(prod(x.shape), x.dtype, device=device_of(x)))


def store(tgt, value, rngs):
    """`def store`, declared at rules/kernelize.rules:145."""
    return _new(UOp, Ops.STORE, dtypes.void, (tgt, value, *rngs))


def new_store(buf, x, rngs, value):
    """`def new_store`, declared at rules/kernelize.rules:146."""
    return store(_new(UOp, Ops.INDEX, buf.dtype, (buf, flatten(rngs, x.shape, UOp.const(dtypes.index, 0)))), value, rngs)


def placeholder(st):
    """`def placeholder`, declared at rules/kernelize.rules:148."""
    return UOp.range(max(st.src[0].src[0].arg.size, 1), FIRST_RANGE - 1)


def number_tag(r):
    """`def number_tag`, declared at rules/kernelize.rules:150."""
    return None if r.arg is None else (r.arg,)


def ast_passes(value, ctx):
    """`def ast_passes`, declared at rules/kernelize.rules:153."""
    return graph_rewrite(value, matcher('kernelize', 'create_ast'), ctx=ctx, bottom_up=True, name='create_ast')


def split_store(st):
    """`def split_store`, declared at rules/kernelize.rules:154."""
    return matcher('kernel', 'split_kernels').rewrite(st)


def viewed_kernel(r, x, st, view):
    """`def viewed_kernel`, declared at rules/kernelize.rules:158."""
    a = split_store(st)
    p = placeholder(st)
    return _new(UOp, Ops.VIEW, x.dtype, (a.replace(arg=(p, (p,)), tag=number_tag(r)),), view)


def kernel_view(r, x, st):
    """`def kernel_view`, declared at rules/kernelize.rules:160."""
    return viewed_kernel(r, x, st, ShapeTracker.from_shape(x.shape))


def assign_view(r, x, t, st):
    """`def assign_view`, declared at rules/kernelize.rules:163."""
    return kernel_view(r, x, st) if t.op is not Ops.VIEW else viewed_kernel(r, x, st, t.arg)


def view_at(v, idx):
    """`def view_at`, declared at rules/kernelize.rules:179."""
    return v.arg.index(list(idx.src[1:]))


def as_index(i):
    """`def as_index`, declared at rules/kernelize.rules:181."""
    return UOp.const(dtypes.index, i) if isinstance(i, int) else i


def masked(valid, i):
    """`def masked`, declared at rules/kernelize.rules:183."""
    return i if valid is None else valid.where(i, _new(UOp, Ops.INVALID, dtypes.index, ()))


def or_zero(valid, x):
    """`def or_zero`, declared at rules/kernelize.rules:184."""
    return x if valid is None else valid.where(x, UOp.const(x.dtype, 0))


def reduce_at(idx, axes, rngs):
    """`def reduce_at`, declared at rules/kernelize.rules:186."""
    return [rngs[axes.index(i)] if i in axes else a for i, a in enumerate(idx.src[1:])]


def source_at(red, at):
    """`def source_at`, declared at rules/kernelize.rules:188."""
    return _new(UOp, Ops.INDEX, (_t1 := red.src[0]).dtype, (_t1, *at)).cast(red.dtype)


def reduce_of(red, at, rngs):
    """`def reduce_of`, declared at rules/kernelize.rules:190."""
    return reduce_over(source_at(red, at), [r for r in rngs if r.op is Ops.RANGE], red.arg[0], reduce_start(red.arg))


class FuseContext:
    """`context FuseContext`, declared at rules/kernelize.rules:46."""

    fuse_arange: 'bool'

    def __init__(self, fuse_arange=_UNSET):
        ctx = self
        ctx.fuse_arange = env_flag('FUSE_ARANGE') if fuse_arange is _UNSET else fuse_arange


class KernelizeContext:
    """`context KernelizeContext`, declared at rules/kernelize.rules:53."""

    dont_realize_expand: 'bool'
    dont_group_reduces: 'bool'
    children: 'dict[UOp, dict[UOp, None]]'
    realizes: 'dict[UOp, None]'
    reduce_for: 'dict[UOp, UOp]'
    order: 'list[UOp]'
    ids: 'count'

    def __init__(self, dont_realize_expand=_UNSET, dont_group_reduces=_UNSET, children=_UNSET, realizes=_UNSET, reduce_for=_UNSET, order=_UNSET, ids=_UNSET, *, sink=None):
        ctx = self
        ctx.dont_realize_expand = env_flag('DONT_REALIZE_EXPAND') if dont_realize_expand is _UNSET else dont_realize_expand
        ctx.dont_group_reduces = env_flag('DONT_GROUP_REDUCES') if dont_group_reduces is _UNSET else dont_group_reduces
        ctx.children = children_of(sink) if children is _UNSET else children
        ctx.realizes = dict() if realizes is _UNSET else realizes
        ctx.reduce_for = dict() if reduce_for is _UNSET else reduce_for
        ctx.order = list() if order is _UNSET else order
        ctx.ids = count(FIRST_RANGE) if ids is _UNSET else ids

    @classmethod
    def start(cls, sink):
        return cls(sink=sink)

    def realize(self, x):
        ctx = self
        return ctx.realizes.setdefault(x)

    def expands(self, v, x):
        ctx = self
        return x.size < v.arg.size and not ctx.dont_realize_expand and not plain_pad(v, x)

    def undecided(self, r):
        ctx = self
        return r.tag != FUSED and r not in ctx.realizes and r not in ctx.reduce_for

    def fits(self, reads):
        ctx = self
        return reads is not None and len(reads) == 1 and all(whole and tr not in ctx.reduce_for and tr.op is not Ops.ASSIGN for tr, whole in reads.items())

    def alone(self, r):
        ctx = self
        noted = ctx.reduce_for.setdefault(r, r)
        return ctx.realize(r)

    def join(self, r, into):
        ctx = self
        return ctx.reduce_for.update(((r, r), (into, r)))

    def wrap(self, x):
        ctx = self
        noted = ctx.order.append(x)
        return _new(UOp, Ops.REALIZE, x.dtype, (x.replace(tag='realized'),), len(ctx.order) - 1)

    def new_range(self, size, kind):
        ctx = self
        return UOp.const(dtypes.index, 0) if size == 1 else UOp.range(size, next(ctx.ids), kind)

    def loops(self, shape):
        ctx = self
        return tuple(ctx.new_range(s, 'loop') for s in shape)


# ======================================================================== do_fuse
_do_fuse_rules = (
    RuleInfo('fuse_reduce', 'rules/kernelize.rules', 85, 'fuse_reduce: FUSE(REDUCE_AXIS as r) -> r.replace(src=(r.src[0].f(Ops.FUSE),), tag=FUSED)'),
    RuleInfo('fuse_push', 'rules/kernelize.rules', 86, 'fuse_push: FUSE({Elementwise, Movement, DETACH, CONTIGUOUS_BACKWARD} as x) -> x.replace(src=tuple(s.f(Ops.FUSE) for s in x.src))'),
    RuleInfo('fuse_stop', 'rules/kernelize.rules', 87, 'fuse_stop: FUSE(x) if stops_fuse(x) -> x'),
    RuleInfo('fuse_arange', 'rules/kernelize.rules', 89, 'fuse_arange: REDUCE_AXIS as r if ctx.fuse_arange and r.tag is None and constants_only(r.src[0]) -> r.replace(tag=FUSED)'),
)
_do_fuse_st = match_stats('do_fuse', _do_fuse_rules)  # None unless counting

def _do_fuse_FUSE(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        o0 = n0.op
        if o0 is _REDUCE_AXIS:
            # rule fuse_reduce at rules/kernelize.rules:85
            #   fuse_reduce: FUSE(REDUCE_AXIS as r) -> r.replace(src=(r.src[0].f(Ops.FUSE),), tag=FUSED)
            #+ if _do_fuse_st: _do_fuse_st.attempts[0] += 1
            # r = n0
            _r = n0.replace(src=(n0.src[0].f(_FUSE),), tag=FUSED)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _do_fuse_rules[0]
        elif o0 in _OPS0:
            # rule fuse_push at rules/kernelize.rules:86
            #   fuse_push: FUSE({Elementwise, Movement, DETACH, CONTIGUOUS_BACKWARD} as x) -> x.replace(src=tuple(s.f(Ops.FUSE) for s in x.src))
            #+ if _do_fuse_st: _do_fuse_st.attempts[1] += 1
            # x = n0
            _r = n0.replace(src=tuple(s.f(_FUSE) for s in n0.src))
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _do_fuse_rules[1]
        # rule fuse_stop at rules/kernelize.rules:87
        #   fuse_stop: FUSE(x) if stops_fuse(x) -> x
        #+ if _do_fuse_st: _do_fuse_st.attempts[2] += 1
        # x = n0
        if stops_fuse(n0):
            return n0, _do_fuse_rules[2]
    return None

def _do_fuse_REDUCE_AXIS(n, ctx):
    # rule fuse_arange at rules/kernelize.rules:89
    #   fuse_arange: REDUCE_AXIS as r if ctx.fuse_arange and r.tag is None and constants_only(r.src[0]) -> r.replace(tag=FUSED)
    #+ if _do_fuse_st: _do_fuse_st.attempts[3] += 1
    # r = n
    if ctx.fuse_arange and n.tag is None and constants_only(n.src[0]):
        _r = n.replace(tag=FUSED)
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _do_fuse_rules[3]
    return None


_do_fuse_part = RuleMatcher('do_fuse', _do_fuse_rules, {
    Ops.FUSE: _do_fuse_FUSE,
    Ops.REDUCE_AXIS: _do_fuse_REDUCE_AXIS,
}, home=(globals(), '_do_fuse_st'))


# ======================================================================== merge_views
_merge_views_rules = (
    RuleInfo('mop_on_view', 'rules/kernelize.rules', 96, 'mop_on_view: Movement(VIEW(y) as x) as m -> VIEW(y, arg=x.arg.apply(m.op.name, m.arg), dtype=m.dtype)'),
    RuleInfo('mop_to_view', 'rules/kernelize.rules', 97, 'mop_to_view: Movement(x) as m -> VIEW(x, arg=ShapeTracker.from_shape(x.shape).apply(m.op.name, m.arg), dtype=m.dtype)'),
    RuleInfo('view_noop', 'rules/kernelize.rules', 99, 'view_noop: VIEW(x) as v if v.arg.is_contiguous and v.shape == x.shape -> x'),
)
_merge_views_st = match_stats('merge_views', _merge_views_rules)  # None unless counting

def _merge_views_r0(n, ctx, m, x, y):
    # rule mop_on_view at rules/kernelize.rules:96
    #   mop_on_view: Movement(VIEW(y) as x) as m -> VIEW(y, arg=x.arg.apply(m.op.name, m.arg), dtype=m.dtype)
    return _new(UOp, _VIEW, m.dtype, (y,), x.arg.apply(m.op.name, m.arg))

def _merge_views_r1(n, ctx, m, x):
    # rule mop_to_view at rules/kernelize.rules:97
    #   mop_to_view: Movement(x) as m -> VIEW(x, arg=ShapeTracker.from_shape(x.shape).apply(m.op.name, m.arg), dtype=m.dtype)
    return _new(UOp, _VIEW, m.dtype, (x,), ShapeTracker.from_shape(x.shape).apply(m.op.name, m.arg))

def _merge_views_RESHAPE(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is _VIEW and len(n0.src) == 1:
            n0_0 = n0.src[0]
            # rule mop_on_view at rules/kernelize.rules:96
            #   mop_on_view: Movement(VIEW(y) as x) as m -> VIEW(y, arg=x.arg.apply(m.op.name, m.arg), dtype=m.dtype)
            #+ if _merge_views_st: _merge_views_st.attempts[0] += 1
            _r = _merge_views_r0(n, ctx, n, n0, n0_0)
            if _r is not None and _r is not n: return _r, _merge_views_rules[0]
        # rule mop_to_view at rules/kernelize.rules:97
        #   mop_to_view: Movement(x) as m -> VIEW(x, arg=ShapeTracker.from_shape(x.shape).apply(m.op.name, m.arg), dtype=m.dtype)
        #+ if _merge_views_st: _merge_views_st.attempts[1] += 1
        _r = _merge_views_r1(n, ctx, n, n0)
        if _r is not None and _r is not n: return _r, _merge_views_rules[1]
    return None

def _merge_views_PERMUTE(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is _VIEW and len(n0.src) == 1:
            n0_0 = n0.src[0]
            # rule mop_on_view at rules/kernelize.rules:96
            #   mop_on_view: Movement(VIEW(y) as x) as m -> VIEW(y, arg=x.arg.apply(m.op.name, m.arg), dtype=m.dtype)
            #+ if _merge_views_st: _merge_views_st.attempts[0] += 1
            _r = _merge_views_r0(n, ctx, n, n0, n0_0)
            if _r is not None and _r is not n: return _r, _merge_views_rules[0]
        # rule mop_to_view at rules/kernelize.rules:97
        #   mop_to_view: Movement(x) as m -> VIEW(x, arg=ShapeTracker.from_shape(x.shape).apply(m.op.name, m.arg), dtype=m.dtype)
        #+ if _merge_views_st: _merge_views_st.attempts[1] += 1
        _r = _merge_views_r1(n, ctx, n, n0)
        if _r is not None and _r is not n: return _r, _merge_views_rules[1]
    return None

def _merge_views_EXPAND(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is _VIEW and len(n0.src) == 1:
            n0_0 = n0.src[0]
            # rule mop_on_view at rules/kernelize.rules:96
            #   mop_on_view: Movement(VIEW(y) as x) as m -> VIEW(y, arg=x.arg.apply(m.op.name, m.arg), dtype=m.dtype)
            #+ if _merge_views_st: _merge_views_st.attempts[0] += 1
            _r = _merge_views_r0(n, ctx, n, n0, n0_0)
            if _r is not None and _r is not n: return _r, _merge_views_rules[0]
        # rule mop_to_view at rules/kernelize.rules:97
        #   mop_to_view: Movement(x) as m -> VIEW(x, arg=ShapeTracker.from_shape(x.shape).apply(m.op.name, m.arg), dtype=m.dtype)
        #+ if _merge_views_st: _merge_views_st.attempts[1] += 1
        _r = _merge_views_r1(n, ctx, n, n0)
        if _r is not None and _r is not n: return _r, _merge_views_rules[1]
    return None

def _merge_views_PAD(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is _VIEW and len(n0.src) == 1:
            n0_0 = n0.src[0]
            # rule mop_on_view at rules/kernelize.rules:96
            #   mop_on_view: Movement(VIEW(y) as x) as m -> VIEW(y, arg=x.arg.apply(m.op.name, m.arg), dtype=m.dtype)
            #+ if _merge_views_st: _merge_views_st.attempts[0] += 1
            _r = _merge_views_r0(n, ctx, n, n0, n0_0)
            if _r is not None and _r is not n: return _r, _merge_views_rules[0]
        # rule mop_to_view at rules/kernelize.rules:97
        #   mop_to_view: Movement(x) as m -> VIEW(x, arg=ShapeTracker.from_shape(x.shape).apply(m.op.name, m.arg), dtype=m.dtype)
        #+ if _merge_views_st: _merge_views_st.attempts[1] += 1
        _r = _merge_views_r1(n, ctx, n, n0)
        if _r is not None and _r is not n: return _r, _merge_views_rules[1]
    return None

def _merge_views_SHRINK(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is _VIEW and len(n0.src) == 1:
            n0_0 = n0.src[0]
            # rule mop_on_view at rules/kernelize.rules:96
            #   mop_on_view: Movement(VIEW(y) as x) as m -> VIEW(y, arg=x.arg.apply(m.op.name, m.arg), dtype=m.dtype)
            #+ if _merge_views_st: _merge_views_st.attempts[0] += 1
            _r = _merge_views_r0(n, ctx, n, n0, n0_0)
            if _r is not None and _r is not n: return _r, _merge_views_rules[0]
        # rule mop_to_view at rules/kernelize.rules:97
        #   mop_to_view: Movement(x) as m -> VIEW(x, arg=ShapeTracker.from_shape(x.shape).apply(m.op.name, m.arg), dtype=m.dtype)
        #+ if _merge_views_st: _merge_views_st.attempts[1] += 1
        _r = _merge_views_r1(n, ctx, n, n0)
        if _r is not None and _r is not n: return _r, _merge_views_rules[1]
    return None

def _merge_views_FLIP(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is _VIEW and len(n0.src) == 1:
            n0_0 = n0.src[0]
            # rule mop_on_view at rules/kernelize.rules:96
            #   mop_on_view: Movement(VIEW(y) as x) as m -> VIEW(y, arg=x.arg.apply(m.op.name, m.arg), dtype=m.dtype)
            #+ if _merge_views_st: _merge_views_st.attempts[0] += 1
            _r = _merge_views_r0(n, ctx, n, n0, n0_0)
            if _r is not None and _r is not n: return _r, _merge_views_rules[0]
        # rule mop_to_view at rules/kernelize.rules:97
        #   mop_to_view: Movement(x) as m -> VIEW(x, arg=ShapeTracker.from_shape(x.shape).apply(m.op.name, m.arg), dtype=m.dtype)
        #+ if _merge_views_st: _merge_views_st.attempts[1] += 1
        _r = _merge_views_r1(n, ctx, n, n0)
        if _r is not None and _r is not n: return _r, _merge_views_rules[1]
    return None

def _merge_views_VIEW(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule view_noop at rules/kernelize.rules:99
        #   view_noop: VIEW(x) as v if v.arg.is_contiguous and v.shape == x.shape -> x
        #+ if _merge_views_st: _merge_views_st.attempts[2] += 1
        # v = n, x = n0
        if n.arg.is_contiguous and n.shape == n0.shape:
            return n0, _merge_views_rules[2]
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
    RuleInfo('realize_roots', 'rules/kernelize.rules', 107, 'realize_roots: SINK as s -> ctx.realizes.update((root_value(x), None) for x in s.src if not row_major_buffer(x))'),
    RuleInfo('realize_effect', 'rules/kernelize.rules', 108, 'realize_effect: {ASSIGN, COPY, BUFFER_VIEW, CONTIGUOUS} as x -> ctx.realize(x)'),
    RuleInfo('realize_pad', 'rules/kernelize.rules', 110, 'realize_pad: VIEW(x) as v if is_computed(x) and x.tag != FUSED and v.arg.masked and not can_pad(ctx.realizes, x) -> ctx.realize(x)'),
    RuleInfo('realize_expand', 'rules/kernelize.rules', 112, 'realize_expand: VIEW(x) as v if is_computed(x) and x.tag != FUSED and ctx.expands(v, x) -> ctx.realize(x)'),
)
_do_realize_st = match_stats('do_realize', _do_realize_rules)  # None unless counting

def _do_realize_SINK(n, ctx):
    # rule realize_roots at rules/kernelize.rules:107
    #   realize_roots: SINK as s -> ctx.realizes.update((root_value(x), None) for x in s.src if not row_major_buffer(x))
    #+ if _do_realize_st: _do_realize_st.attempts[0] += 1
    # s = n
    _r = ctx.realizes.update((root_value(x), None) for x in n.src if not row_major_buffer(x))
    if _r is not None:
        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
        if _r is not n: return _r, _do_realize_rules[0]
    return None

def _do_realize_CONTIGUOUS(n, ctx):
    # rule realize_effect at rules/kernelize.rules:108
    #   realize_effect: {ASSIGN, COPY, BUFFER_VIEW, CONTIGUOUS} as x -> ctx.realize(x)
    #+ if _do_realize_st: _do_realize_st.attempts[1] += 1
    # x = n
    _r = ctx.realize(n)
    if _r is not None:
        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
        if _r is not n: return _r, _do_realize_rules[1]
    return None

def _do_realize_COPY(n, ctx):
    # rule realize_effect at rules/kernelize.rules:108
    #   realize_effect: {ASSIGN, COPY, BUFFER_VIEW, CONTIGUOUS} as x -> ctx.realize(x)
    #+ if _do_realize_st: _do_realize_st.attempts[1] += 1
    # x = n
    _r = ctx.realize(n)
    if _r is not None:
        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
        if _r is not n: return _r, _do_realize_rules[1]
    return None

def _do_realize_BUFFER_VIEW(n, ctx):
    # rule realize_effect at rules/kernelize.rules:108
    #   realize_effect: {ASSIGN, COPY, BUFFER_VIEW, CONTIGUOUS} as x -> ctx.realize(x)
    #+ if _do_realize_st: _do_realize_st.attempts[1] += 1
    # x = n
    _r = ctx.realize(n)
    if _r is not None:
        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
        if _r is not n: return _r, _do_realize_rules[1]
    return None

def _do_realize_ASSIGN(n, ctx):
    # rule realize_effect at rules/kernelize.rules:108
    #   realize_effect: {ASSIGN, COPY, BUFFER_VIEW, CONTIGUOUS} as x -> ctx.realize(x)
    #+ if _do_realize_st: _do_realize_st.attempts[1] += 1
    # x = n
    _r = ctx.realize(n)
    if _r is not None:
        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
        if _r is not n: return _r, _do_realize_rules[1]
    return None

def _do_realize_VIEW(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule realize_pad at rules/kernelize.rules:110
        #   realize_pad: VIEW(x) as v if is_computed(x) and x.tag != FUSED and v.arg.masked and not can_pad(ctx.realizes, x) -> ctx.realize(x)
        #+ if _do_realize_st: _do_realize_st.attempts[2] += 1
        # v = n, x = n0
        if is_computed(n0) and n0.tag != FUSED and n.arg.masked and not can_pad(ctx.realizes, n0):
            _r = ctx.realize(n0)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _do_realize_rules[2]
        # rule realize_expand at rules/kernelize.rules:112
        #   realize_expand: VIEW(x) as v if is_computed(x) and x.tag != FUSED and ctx.expands(v, x) -> ctx.realize(x)
        #+ if _do_realize_st: _do_realize_st.attempts[3] += 1
        # v = n, x = n0
        if is_computed(n0) and n0.tag != FUSED and ctx.expands(n, n0):
            _r = ctx.realize(n0)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _do_realize_rules[3]
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
    RuleInfo('group_off', 'rules/kernelize.rules', 121, 'group_off: REDUCE_AXIS as r if r.tag != FUSED and ctx.dont_group_reduces -> ctx.realize(r)'),
    RuleInfo('group_join', 'rules/kernelize.rules', 122, 'group_join: REDUCE_AXIS as r if ctx.undecided(r) and ctx.fits(reads) -> ctx.join(r, *reads) where reads = kernel_reads(ctx.children, ctx.realizes, r)'),
    RuleInfo('group_alone', 'rules/kernelize.rules', 123, 'group_alone: REDUCE_AXIS as r if ctx.undecided(r) -> ctx.alone(r)'),
)
_group_st = match_stats('group', _group_rules)  # None unless counting

def _group_REDUCE_AXIS(n, ctx):
    # rule group_off at rules/kernelize.rules:121
    #   group_off: REDUCE_AXIS as r if r.tag != FUSED and ctx.dont_group_reduces -> ctx.realize(r)
    #+ if _group_st: _group_st.attempts[0] += 1
    # r = n
    if n.tag != FUSED and ctx.dont_group_reduces:
        _r = ctx.realize(n)
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _group_rules[0]
    # rule group_join at rules/kernelize.rules:122
    #   group_join: REDUCE_AXIS as r if ctx.undecided(r) and ctx.fits(reads) -> ctx.join(r, *reads) where reads = kernel_reads(ctx.children, ctx.realizes, r)
    #+ if _group_st: _group_st.attempts[1] += 1
    # r = n
    if ctx.undecided(n):
        reads = kernel_reads(ctx.children, ctx.realizes, n)
        if ctx.fits(reads):
            _r = ctx.join(n, *reads)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _group_rules[1]
    # rule group_alone at rules/kernelize.rules:123
    #   group_alone: REDUCE_AXIS as r if ctx.undecided(r) -> ctx.alone(r)
    #+ if _group_st: _group_st.attempts[2] += 1
    # r = n
    if ctx.undecided(n):
        _r = ctx.alone(n)
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _group_rules[2]
    return None


_group_part = RuleMatcher('group', _group_rules, {
    Ops.REDUCE_AXIS: _group_REDUCE_AXIS,
}, home=(globals(), '_group_st'))


# ======================================================================== add_contiguous
_add_contiguous_rules = (
    RuleInfo('add_realize', 'rules/kernelize.rules', 129, 'add_realize: x if x in ctx.realizes and x.tag != "realized" -> ctx.wrap(x)'),
)
_add_contiguous_st = match_stats('add_contiguous', _add_contiguous_rules)  # None unless counting

def _add_contiguous_any0(n, ctx):
    # rule add_realize at rules/kernelize.rules:129
    #   add_realize: x if x in ctx.realizes and x.tag != "realized" -> ctx.wrap(x)
    #+ if _add_contiguous_st: _add_contiguous_st.attempts[0] += 1
    # x = n
    if n in ctx.realizes and n.tag != 'realized':
        _r = ctx.wrap(n)
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _add_contiguous_rules[0]
    return None


_add_contiguous_part = RuleMatcher('add_contiguous', _add_contiguous_rules, {
    **dict.fromkeys(Ops, _add_contiguous_any0),
}, home=(globals(), '_add_contiguous_st'))


# ======================================================================== finalize_contiguous
_finalize_contiguous_rules = (
    RuleInfo('remove_tags', 'rules/kernelize.rules', 135, 'remove_tags: x if x.tag is not None -> x.replace(tag=None)'),
)
_finalize_contiguous_st = match_stats('finalize_contiguous', _finalize_contiguous_rules)  # None unless counting

def _finalize_contiguous_any0(n, ctx):
    # rule remove_tags at rules/kernelize.rules:135
    #   remove_tags: x if x.tag is not None -> x.replace(tag=None)
    #+ if _finalize_contiguous_st: _finalize_contiguous_st.attempts[0] += 1
    # x = n
    if n.tag is not None:
        _r = n.replace(tag=None)
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _finalize_contiguous_rules[0]
    return None


_finalize_contiguous_part = RuleMatcher('finalize_contiguous', _finalize_contiguous_rules, {
    **dict.fromkeys(Ops, _finalize_contiguous_any0),
}, home=(globals(), '_finalize_contiguous_st'))


# ======================================================================== create_kernels
_create_kernels_rules = (
    RuleInfo('create_assign', 'rules/kernelize.rules', 168, 'create_assign: REALIZE(ASSIGN(t, v) as x, ...) as r -> assign_view(r, x, t, store(tgt, ast_passes(INDEX(v, *rngs), ctx), rngs)) where rngs = ctx.loops(x.shape), tgt = ast_passes(INDEX(t, *rngs), ctx)'),
    RuleInfo('create_kernel', 'rules/kernelize.rules', 172, 'create_kernel: REALIZE(x, ...) as r -> kernel_view(r, x, new_store(out_buffer(x), x, rngs, ast_passes(INDEX(x, *rngs), ctx))) where rngs = ctx.loops(x.shape)'),
    RuleInfo('view_view', 'rules/kernelize.rules', 174, 'view_view: VIEW(VIEW(y) as a) as b -> VIEW(y, arg=a.arg + b.arg, dtype=b.dtype)'),
)
_create_kernels_st = match_stats('create_kernels', _create_kernels_rules)  # None unless counting

def _create_kernels_REALIZE(n, ctx):
    if len(n.src) >= 1:
        n0 = n.src[0]
        if n0.op is _ASSIGN and len(n0.src) == 2:
            n0_0, n0_1 = n0.src
            # rule create_assign at rules/kernelize.rules:168
            #   create_assign: REALIZE(ASSIGN(t, v) as x, ...) as r -> assign_view(r, x, t, store(tgt, ast_passes(INDEX(v, *rngs), ctx), rngs)) where rngs = ctx.loops(x.shape), tgt = ast_passes(INDEX(t, *rngs), ctx)
            #+ if _create_kernels_st: _create_kernels_st.attempts[0] += 1
            # r = n, t = n0_0, v = n0_1, x = n0
            rngs = ctx.loops(n0.shape)
            tgt = ast_passes(_new(UOp, _INDEX, n0_0.dtype, (n0_0, *rngs)), ctx)
            _r = assign_view(n, n0, n0_0, store(tgt, ast_passes(_new(UOp, _INDEX, n0_1.dtype, (n0_1, *rngs)), ctx), rngs))
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _create_kernels_rules[0]
        # rule create_kernel at rules/kernelize.rules:172
        #   create_kernel: REALIZE(x, ...) as r -> kernel_view(r, x, new_store(out_buffer(x), x, rngs, ast_passes(INDEX(x, *rngs), ctx))) where rngs = ctx.loops(x.shape)
        #+ if _create_kernels_st: _create_kernels_st.attempts[1] += 1
        # r = n, x = n0
        rngs = ctx.loops(n0.shape)
        _r = kernel_view(n, n0, new_store(out_buffer(n0), n0, rngs, ast_passes(_new(UOp, _INDEX, n0.dtype, (n0, *rngs)), ctx)))
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _create_kernels_rules[1]
    return None

def _create_kernels_VIEW(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is _VIEW and len(n0.src) == 1:
            n0_0 = n0.src[0]
            # rule view_view at rules/kernelize.rules:174
            #   view_view: VIEW(VIEW(y) as a) as b -> VIEW(y, arg=a.arg + b.arg, dtype=b.dtype)
            #+ if _create_kernels_st: _create_kernels_st.attempts[2] += 1
            # a = n0, b = n, y = n0_0
            _r = _new(UOp, _VIEW, n.dtype, (n0_0,), n0.arg + n.arg)
            if _r is not n: return _r, _create_kernels_rules[2]
    return None


_create_kernels_part = RuleMatcher('create_kernels', _create_kernels_rules, {
    Ops.REALIZE: _create_kernels_REALIZE,
    Ops.VIEW: _create_kernels_VIEW,
}, home=(globals(), '_create_kernels_st'))


# ======================================================================== create_ast
_create_ast_rules = (
    RuleInfo('ast_view_const', 'rules/kernelize.rules', 196, 'ast_view_const: INDEX(VIEW(c:CONST) as v, ...) as idx -> or_zero(at[1], c) where at = view_at(v, idx)'),
    RuleInfo('ast_view_mem', 'rules/kernelize.rules', 198, 'ast_view_mem: INDEX(VIEW({BUFFER, ASSIGN} as b) as v, ...) as idx if b.op is Ops.BUFFER or b.src[1].op is Ops.KERNEL -> INDEX(b, masked(at[1], as_index(at[0]))) where at = view_at(v, idx)'),
    RuleInfo('ast_view', 'rules/kernelize.rules', 202, 'ast_view: INDEX(VIEW(b) as v, ...) as idx -> or_zero(at[1], INDEX(b, *[masked(at[1], as_index(i)) for i in unflatten(as_index(at[0]), b.shape)])) where at = view_at(v, idx)'),
    RuleInfo('ast_alu', 'rules/kernelize.rules', 204, 'ast_alu: INDEX(Elementwise as x, *at) as idx -> x.replace(src=tuple(INDEX(s, *at, arg=idx.arg, dtype=s.dtype) for s in x.src))'),
    RuleInfo('ast_marker', 'rules/kernelize.rules', 206, 'ast_marker: INDEX({CONTIGUOUS, COPY} as x, *at) as idx -> x.replace(src=(INDEX(x.src[0], *at, arg=idx.arg, dtype=x.src[0].dtype),) + x.src[1:])'),
    RuleInfo('ast_reduce', 'rules/kernelize.rules', 209, 'ast_reduce: INDEX(REDUCE_AXIS as r, ...) as idx -> reduce_of(r, reduce_at(idx, r.arg[1], rngs), rngs) where rngs = [ctx.new_range(r.src[0].shape[a], "reduce") for a in r.arg[1]]'),
    RuleInfo('ast_const', 'rules/kernelize.rules', 211, 'ast_const: INDEX(c:CONST, ...) -> c'),
)
_create_ast_st = match_stats('create_ast', _create_ast_rules)  # None unless counting

def _create_ast_INDEX(n, ctx):
    if len(n.src) >= 1:
        n0 = n.src[0]
        if n0.op is _VIEW:
            if len(n0.src) == 1:
                n0_0 = n0.src[0]
                o0_0 = n0_0.op
                if o0_0 is _CONST:
                    # rule ast_view_const at rules/kernelize.rules:196
                    #   ast_view_const: INDEX(VIEW(c:CONST) as v, ...) as idx -> or_zero(at[1], c) where at = view_at(v, idx)
                    #+ if _create_ast_st: _create_ast_st.attempts[0] += 1
                    # c = n0_0, idx = n, v = n0
                    at = view_at(n0, n)
                    _r = or_zero(at[1], n0_0)
                    if _r is not None:
                        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                        if _r is not n: return _r, _create_ast_rules[0]
                elif o0_0 in _OPS1:
                    # rule ast_view_mem at rules/kernelize.rules:198
                    #   ast_view_mem: INDEX(VIEW({BUFFER, ASSIGN} as b) as v, ...) as idx if b.op is Ops.BUFFER or b.src[1].op is Ops.KERNEL -> INDEX(b, masked(at[1], as_index(at[0]))) where at = view_at(v, idx)
                    #+ if _create_ast_st: _create_ast_st.attempts[1] += 1
                    # b = n0_0, idx = n, v = n0
                    if n0_0.op is _BUFFER or n0_0.src[1].op is _KERNEL:
                        at = view_at(n0, n)
                        _r = _new(UOp, _INDEX, n0_0.dtype, (n0_0, masked(at[1], as_index(at[0]))))
                        if _r is not n: return _r, _create_ast_rules[1]
                # rule ast_view at rules/kernelize.rules:202
                #   ast_view: INDEX(VIEW(b) as v, ...) as idx -> or_zero(at[1], INDEX(b, *[masked(at[1], as_index(i)) for i in unflatten(as_index(at[0]), b.shape)])) where at = view_at(v, idx)
                #+ if _create_ast_st: _create_ast_st.attempts[2] += 1
                # b = n0_0, idx = n, v = n0
                at = view_at(n0, n)
                _r = or_zero(at[1], _new(UOp, _INDEX, n0_0.dtype, (n0_0, *[masked(at[1], as_index(i)) for i in unflatten(as_index(at[0]), n0_0.shape)])))
                if _r is not None:
                    if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                    if _r is not n: return _r, _create_ast_rules[2]
        else:
            o0 = n0.op
            if o0 in _OPS4:
                if o0 in _OPS2:
                    # rule ast_alu at rules/kernelize.rules:204
                    #   ast_alu: INDEX(Elementwise as x, *at) as idx -> x.replace(src=tuple(INDEX(s, *at, arg=idx.arg, dtype=s.dtype) for s in x.src))
                    #+ if _create_ast_st: _create_ast_st.attempts[3] += 1
                    # idx = n, x = n0
                    at = n.src[1:]
                    _r = n0.replace(src=tuple(_new(UOp, _INDEX, s.dtype, (s, *at), n.arg) for s in n0.src))
                    if _r is not None:
                        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                        if _r is not n: return _r, _create_ast_rules[3]
                elif o0 in _OPS3:
                    # rule ast_marker at rules/kernelize.rules:206
                    #   ast_marker: INDEX({CONTIGUOUS, COPY} as x, *at) as idx -> x.replace(src=(INDEX(x.src[0], *at, arg=idx.arg, dtype=x.src[0].dtype),) + x.src[1:])
                    #+ if _create_ast_st: _create_ast_st.attempts[4] += 1
                    # idx = n, x = n0
                    at = n.src[1:]
                    _r = n0.replace(src=(_new(UOp, _INDEX, n0.src[0].dtype, (n0.src[0], *at), n.arg),) + n0.src[1:])
                    if _r is not None:
                        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                        if _r is not n: return _r, _create_ast_rules[4]
                elif o0 is _REDUCE_AXIS:
                    # rule ast_reduce at rules/kernelize.rules:209
                    #   ast_reduce: INDEX(REDUCE_AXIS as r, ...) as idx -> reduce_of(r, reduce_at(idx, r.arg[1], rngs), rngs) where rngs = [ctx.new_range(r.src[0].shape[a], "reduce") for a in r.arg[1]]
                    #+ if _create_ast_st: _create_ast_st.attempts[5] += 1
                    # idx = n, r = n0
                    rngs = [ctx.new_range(n0.src[0].shape[a], 'reduce') for a in n0.arg[1]]
                    _r = reduce_of(n0, reduce_at(n, n0.arg[1], rngs), rngs)
                    if _r is not None:
                        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                        if _r is not n: return _r, _create_ast_rules[5]
                elif o0 is _CONST:
                    # rule ast_const at rules/kernelize.rules:211
                    #   ast_const: INDEX(c:CONST, ...) -> c
                    #+ if _create_ast_st: _create_ast_st.attempts[6] += 1
                    # c = n0
                    return n0, _create_ast_rules[6]
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


# ======================================================================== the pipelines
from rulegrad.runtime.pipeline import Pass as _Pass, Pipeline as _Pipeline  # noqa: E402

kernelize = _Pipeline('kernelize', (
    _Pass('do_fuse', 'do_fuse', _S_do_fuse, bottom_up=True, ctx=FuseContext, location='rules/kernelize.rules:219'),
    _Pass('earliest', 'earliest_rewrites', _generated_rangeify.MATCHERS['earliest_rewrites'], location='rules/kernelize.rules:221'),
    _Pass('merge_views', 'merge_views', _S_merge_views, location='rules/kernelize.rules:223'),
    _Pass('do_realize', 'do_realize', _S_do_realize, ctx=KernelizeContext, collect=True, location='rules/kernelize.rules:225'),
    _Pass('group', 'group', _S_group, ctx='do_realize', collect=True, location='rules/kernelize.rules:227'),
    _Pass('add_contiguous', 'add_contiguous', _S_add_contiguous, bottom_up=True, ctx='do_realize', location='rules/kernelize.rules:229'),
    _Pass('limit_buffers', 'limit_buffers', _generated_rangeify.MATCHERS['limit_buffers'], ctx=KernelBufferLimit, location='rules/kernelize.rules:232'),
    _Pass('finalize', 'finalize_contiguous', _S_finalize_contiguous, ctx='do_realize', location='rules/kernelize.rules:234'),
    _Pass('create_kernels', 'create_kernels', _S_create_kernels, ctx='do_realize', location='rules/kernelize.rules:236'),
))

PIPELINES = {
    'kernelize': kernelize,
}
