# generated from rules/kernel.rules by `rulegrad gen`; do not edit
# source sha256: fd9a5acddc32dd9efbc80ae8477716d64661f807dc8d2df1ca8e350e5851c207
# imports rules/symbolic.rules sha256: a6a51ae7863a7637798664f439214feebcd542a5b103154001c4472c0219e28c
'Matchers for the rule sets of rules/kernel.rules: split_kernels, to_kernel.'

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
from rulegrad.runtime.ops import Placed
from math import copysign
from rulegrad.runtime.view import flatten
from rulegrad.rules.analyses import unmask
from rulegrad.rules.generated import symbolic as _generated_symbolic

SOURCE = 'rules/kernel.rules'
SOURCE_SHA256 = 'fd9a5acddc32dd9efbc80ae8477716d64661f807dc8d2df1ca8e350e5851c207'
DEPENDENCIES = (('rules/symbolic.rules', 'a6a51ae7863a7637798664f439214feebcd542a5b103154001c4472c0219e28c'), )
_ADD = Ops.ADD
_AND = Ops.AND
_ASSIGN = Ops.ASSIGN
_BUFFER = Ops.BUFFER
_CAST = Ops.CAST
_CMPEQ = Ops.CMPEQ
_CONST = Ops.CONST
_DEFINE_REG = Ops.DEFINE_REG
_INDEX = Ops.INDEX
_INVALID = Ops.INVALID
_KERNEL = Ops.KERNEL
_LOAD = Ops.LOAD
_RANGE = Ops.RANGE
_SINK = Ops.SINK
_STORE = Ops.STORE
_WHERE = Ops.WHERE


# ======================================================================== definitions, contexts
_UNSET = object()  # a context's field not given to its constructor


def loop_sizes(rngs):
    """`def loop_sizes`, declared at rules/kernel.rules:43."""
    return [int(r.src[0].arg) if r.op is Ops.RANGE else 1 for r in rngs]


def sizes(rngs):
    """`def sizes`, declared at rules/kernel.rules:44."""
    return [str(r.src[0].arg) for r in rngs]


def reduce_sizes(k):
    """`def reduce_sizes`, declared at rules/kernel.rules:45."""
    return sizes([r for r in k.ranges.values() if r.arg[1] == 'reduce'])


def new_buffer(size, b):
    """`def new_buffer`, declared at rules/kernel.rules:47."""
    return _new(UOp, Ops.BUFFER, b.dtype, (), Buffer(size, b.dtype, device=b.arg.device if isinstance(b.arg, Placed) else b.arg))


def loop_order(b):
    """`def loop_order`, declared at rules/kernel.rules:49."""
    return b.arg.order if isinstance(b.arg, Placed) else None


def in_order(order, rngs):
    """`def in_order`, declared at rules/kernel.rules:51."""
    return rngs if order is None else tuple(rngs[i] for i in order)


def offset_of(rngs, shape):
    """`def offset_of`, declared at rules/kernel.rules:53."""
    return flatten(rngs, shape, UOp.const(dtypes.index, 0))


def stored(v, rngs, b, shape):
    """`def stored`, declared at rules/kernel.rules:54."""
    return _new(UOp, Ops.STORE, dtypes.void, (_new(UOp, Ops.INDEX, (_t1 := new_buffer(prod(shape), b)).dtype, (_t1, offset_of(rngs, shape))), v, *rngs), loop_order(b), b.tag)


def kernel_name(v, ast, k):
    """`def kernel_name`, declared at rules/kernel.rules:57."""
    loops = sizes(ast.src[0].src[2:])
    reds = reduce_sizes(k)
    return ('copy' if v.op is Ops.COPY else 'r' if reds else 'E') + '_' + '_'.join(loops + reds or ['1'])


def kernel_of(v, ast, k):
    """`def kernel_of`, declared at rules/kernel.rules:60."""
    return _new(UOp, Ops.KERNEL, dtypes.void, (*k.deps,), Kernel(kernel_name(v, ast, k), ast, tuple(k.slots)))


def at_ranges(x, rngs, at):
    """`def at_ranges`, declared at rules/kernel.rules:62."""
    return x.substitute(dict((r, i) for r, i in zip(rngs, at) if r.op is Ops.RANGE))


def pick_start(v, dt):
    """`def pick_start`, declared at rules/kernel.rules:132."""
    return v is False if dt is dtypes.bool else v == 0 and copysign(1.0, v) < 0 if dt.is_float else v == 0 and v is not False


def casts_range(r, q):
    """`def casts_range`, declared at rules/kernel.rules:135."""
    n = r.src[0]
    return n.vmin >= 1 and q.dtype.is_int and q.dtype.max >= n.vmax - 1


def picks_range(red, a, r, q):
    """`def picks_range`, declared at rules/kernel.rules:137."""
    return red.arg is Ops.ADD and r in red.src[1:] and casts_range(r, q) and r not in a.toposort()


def zero(t):
    """`def zero`, declared at rules/kernel.rules:139."""
    return (t.src[0] if t.op is Ops.CAST else t).src[2].arg


def picks(red, a, r, q, t):
    """`def picks`, declared at rules/kernel.rules:141."""
    return not red.dtype.is_float and pick_start(zero(t), red.dtype) and picks_range(red, a, r, q)


def acc_picks(red, acc, a, r, q, t):
    """`def acc_picks`, declared at rules/kernel.rules:142."""
    return acc.src == red.src[1:] and pick_start(acc.arg, red.dtype) and pick_start(zero(t), red.dtype) and picks_range(red, a, r, q)


def at_pick(t, a, r):
    """`def at_pick`, declared at rules/kernel.rules:145."""
    e = a.cast(dtypes.index)
    return t.substitute(dict([(r, UOp.const(dtypes.index, -1).lt(e).alu(Ops.AND, e.lt(r.src[0])).where(e, UOp.const(dtypes.index, 0)))]))


def without(red, r):
    """`def without`, declared at rules/kernel.rules:148."""
    return tuple(x for x in red.src[1:] if x is not r)


def drop_range(red, r, value):
    """`def drop_range`, declared at rules/kernel.rules:150."""
    return value if len(red.src) == 2 else _new(UOp, Ops.REDUCE, red.dtype, (value, *without(red, r)), Ops.ADD)


def drop_acc(red, acc, r, value):
    """`def drop_acc`, declared at rules/kernel.rules:152."""
    return value if len(red.src) == 2 else drop_range(red, r, _new(UOp, Ops.ADD, (_t1 := acc.replace(src=without(red, r))).dtype, (_t1, value)))


class KernelContext:
    """`context KernelContext`, declared at rules/kernel.rules:20."""

    slots: 'dict[Buffer, int]'
    deps: 'dict[UOp, None]'
    ranges: 'dict[UOp, UOp]'

    def __init__(self, slots=_UNSET, deps=_UNSET, ranges=_UNSET):
        ctx = self
        ctx.slots = dict() if slots is _UNSET else slots
        ctx.deps = dict() if deps is _UNSET else deps
        ctx.ranges = dict() if ranges is _UNSET else ranges

    def define_global(self, b):
        ctx = self
        return _new(UOp, Ops.DEFINE_GLOBAL, b.dtype, (), ctx.slots.setdefault(b.arg, len(ctx.slots)))

    def read(self, b, dep=None):
        ctx = self
        noted = ctx.deps.setdefault(b if dep is None else dep)
        return ctx.define_global(b)

    def number(self, r):
        ctx = self
        return ctx.ranges.setdefault(r, r.replace(arg=(len(ctx.ranges), r.arg[1])))

    def loops(self, rngs):
        ctx = self
        return [ctx.number(r) for r in rngs if r.op is Ops.RANGE]


class Kernel:
    """`record Kernel`, declared at rules/kernel.rules:36."""

    name: 'str'
    ast: 'UOp'
    bufs: 'tuple[Buffer, ...]'

    def __init__(self, name, ast, bufs):
        ctx = self
        ctx.name = name
        ctx.ast = ast
        ctx.bufs = bufs


# ======================================================================== split_kernels
_split_kernels_rules = (
    RuleInfo('store_assign', 'rules/kernel.rules', 69, 'store_assign: BUFFERIZE(ASSIGN(t, v), *rngs) as b -> STORE(t, v, *rngs, tag=b.tag)'),
    RuleInfo('to_store', 'rules/kernel.rules', 73, 'to_store: BUFFERIZE(v, *rngs) as b -> stored(v, rngs, b, loop_sizes(rngs))'),
    RuleInfo('split_store', 'rules/kernel.rules', 79, 'split_store: STORE(INDEX(buf, off, ...), v, *rngs) as st -> ASSIGN(buf, kernel_of(v, *kernel(SINK(st))), arg=(off, rngs), tag=st.tag)'),
)
_split_kernels_st = match_stats('split_kernels', _split_kernels_rules)  # None unless counting

def _split_kernels_BUFFERIZE(n, ctx):
    if len(n.src) >= 1:
        n0 = n.src[0]
        if n0.op is _ASSIGN and len(n0.src) == 2:
            n0_0, n0_1 = n0.src
            # rule store_assign at rules/kernel.rules:69
            #   store_assign: BUFFERIZE(ASSIGN(t, v), *rngs) as b -> STORE(t, v, *rngs, tag=b.tag)
            #+ if _split_kernels_st: _split_kernels_st.attempts[0] += 1
            # b = n, t = n0_0, v = n0_1
            rngs = n.src[1:]
            _r = _new(UOp, _STORE, n0_0.dtype, (n0_0, n0_1, *rngs), None, n.tag)
            if _r is not n: return _r, _split_kernels_rules[0]
        # rule to_store at rules/kernel.rules:73
        #   to_store: BUFFERIZE(v, *rngs) as b -> stored(v, rngs, b, loop_sizes(rngs))
        #+ if _split_kernels_st: _split_kernels_st.attempts[1] += 1
        # b = n, v = n0
        rngs = n.src[1:]
        _r = stored(n0, rngs, n, loop_sizes(rngs))
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _split_kernels_rules[1]
    return None

def _split_kernels_STORE(n, ctx):
    if len(n.src) >= 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is _INDEX and len(n0.src) >= 2:
            n0_0 = n0.src[0]
            n0_1 = n0.src[1]
            # rule split_store at rules/kernel.rules:79
            #   split_store: STORE(INDEX(buf, off, ...), v, *rngs) as st -> ASSIGN(buf, kernel_of(v, *kernel(SINK(st))), arg=(off, rngs), tag=st.tag)
            #+ if _split_kernels_st: _split_kernels_st.attempts[2] += 1
            # buf = n0_0, off = n0_1, st = n, v = n1
            rngs = n.src[2:]
            _r = _new(UOp, _ASSIGN, n0_0.dtype, (n0_0, kernel_of(n1, *kernel(_new(UOp, _SINK, n.dtype, (n,))))), (n0_1, rngs), n.tag)
            if _r is not n: return _r, _split_kernels_rules[2]
    return None


_split_kernels_part = RuleMatcher('split_kernels', _split_kernels_rules, {
    Ops.BUFFERIZE: _split_kernels_BUFFERIZE,
    Ops.STORE: _split_kernels_STORE,
}, home=(globals(), '_split_kernels_st'))


# ======================================================================== to_kernel
_to_kernel_rules = (
    RuleInfo('kernel_store', 'rules/kernel.rules', 88, 'kernel_store: STORE(INDEX(BUFFER as b, off), v, *rngs) as st -> STORE(INDEX(ctx.define_global(b), unmask(off)[0]), v, *ctx.loops(in_order(st.arg, rngs)), dtype=dtypes.void)'),
    RuleInfo('load_input', 'rules/kernel.rules', 92, 'load_input: INDEX(BUFFER as b, off) -> LOAD(INDEX(g, *unmask(off))) where g = ctx.read(b)'),
    RuleInfo('load_kernel', 'rules/kernel.rules', 95, 'load_kernel: INDEX(ASSIGN(BUFFER as b, KERNEL) as a, *at) -> LOAD(INDEX(ctx.read(b, a), *unmask(at_ranges(a.arg[0], a.arg[1], at))))'),
    RuleInfo('unmask_value', 'rules/kernel.rules', 100, 'unmask_value: WHERE(_, e, INVALID) -> e'),
    RuleInfo('strip_marker', 'rules/kernel.rules', 102, 'strip_marker: {CONTIGUOUS, NOOP, COPY}(x, ...) -> x'),
    RuleInfo('pick_load', 'rules/kernel.rules', 106, 'pick_load: REDUCE(WHERE(CMPEQ[a, CAST(r:RANGE) as q], _, 0) as t, ..., arg=Ops.ADD) as red if picks(red, a, r, q, t) -> drop_range(red, r, at_pick(t, a, r))'),
    RuleInfo('pick_load_and', 'rules/kernel.rules', 108, 'pick_load_and: REDUCE(WHERE(AND[CMPEQ[a, CAST(r:RANGE) as q], _], _, 0) as t, ..., arg=Ops.ADD) as red if picks(red, a, r, q, t) -> drop_range(red, r, at_pick(t, a, r))'),
    RuleInfo('pick_acc', 'rules/kernel.rules', 110, 'pick_acc: REDUCE(ADD(acc:DEFINE_REG, WHERE(CMPEQ[a, CAST(r:RANGE) as q], _, 0) as t), ..., arg=Ops.ADD) as red if acc_picks(red, acc, a, r, q, t) -> drop_acc(red, acc, r, at_pick(t, a, r))'),
    RuleInfo('pick_acc_cast', 'rules/kernel.rules', 113, 'pick_acc_cast: REDUCE(ADD(acc:DEFINE_REG, CAST(WHERE(CMPEQ[a, CAST(r:RANGE) as q], _, 0)) as t), ..., arg=Ops.ADD) as red if acc_picks(red, acc, a, r, q, t) -> drop_acc(red, acc, r, at_pick(t, a, r))'),
    RuleInfo('pick_acc_and', 'rules/kernel.rules', 115, 'pick_acc_and: REDUCE(ADD(acc:DEFINE_REG, WHERE(AND[CMPEQ[a, CAST(r:RANGE) as q], _], _, 0) as t), ..., arg=Ops.ADD) as red if acc_picks(red, acc, a, r, q, t) -> drop_acc(red, acc, r, at_pick(t, a, r))'),
    RuleInfo('renumber', 'rules/kernel.rules', 118, 'renumber: RANGE as r if r.arg[0] >= FIRST_RANGE -> ctx.number(r)'),
)
_to_kernel_st = match_stats('to_kernel', _to_kernel_rules)  # None unless counting

def _to_kernel_NOOP(n, ctx):
    if len(n.src) >= 1:
        n0 = n.src[0]
        # rule strip_marker at rules/kernel.rules:102
        #   strip_marker: {CONTIGUOUS, NOOP, COPY}(x, ...) -> x
        #+ if _to_kernel_st: _to_kernel_st.attempts[4] += 1
        # x = n0
        return n0, _to_kernel_rules[4]
    return None

def _to_kernel_CONTIGUOUS(n, ctx):
    if len(n.src) >= 1:
        n0 = n.src[0]
        # rule strip_marker at rules/kernel.rules:102
        #   strip_marker: {CONTIGUOUS, NOOP, COPY}(x, ...) -> x
        #+ if _to_kernel_st: _to_kernel_st.attempts[4] += 1
        # x = n0
        return n0, _to_kernel_rules[4]
    return None

def _to_kernel_COPY(n, ctx):
    if len(n.src) >= 1:
        n0 = n.src[0]
        # rule strip_marker at rules/kernel.rules:102
        #   strip_marker: {CONTIGUOUS, NOOP, COPY}(x, ...) -> x
        #+ if _to_kernel_st: _to_kernel_st.attempts[4] += 1
        # x = n0
        return n0, _to_kernel_rules[4]
    return None

def _to_kernel_RANGE(n, ctx):
    # rule renumber at rules/kernel.rules:118
    #   renumber: RANGE as r if r.arg[0] >= FIRST_RANGE -> ctx.number(r)
    #+ if _to_kernel_st: _to_kernel_st.attempts[10] += 1
    # r = n
    if n.arg[0] >= FIRST_RANGE:
        _r = ctx.number(n)
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _to_kernel_rules[10]
    return None

def _to_kernel_INDEX(n, ctx):
    if len(n.src) == 2:
        n0, n1 = n.src
        if n0.op is _BUFFER:
            # rule load_input at rules/kernel.rules:92
            #   load_input: INDEX(BUFFER as b, off) -> LOAD(INDEX(g, *unmask(off))) where g = ctx.read(b)
            #+ if _to_kernel_st: _to_kernel_st.attempts[1] += 1
            # b = n0, off = n1
            g = ctx.read(n0)
            _r = _new(UOp, _LOAD, (_t1 := _new(UOp, _INDEX, g.dtype, (g, *unmask(n1)))).dtype, (_t1,))
            if _r is not n: return _r, _to_kernel_rules[1]
    if len(n.src) >= 1:
        n0 = n.src[0]
        if n0.op is _ASSIGN and len(n0.src) == 2:
            n0_0, n0_1 = n0.src
            if n0_0.op is _BUFFER and n0_1.op is _KERNEL:
                # rule load_kernel at rules/kernel.rules:95
                #   load_kernel: INDEX(ASSIGN(BUFFER as b, KERNEL) as a, *at) -> LOAD(INDEX(ctx.read(b, a), *unmask(at_ranges(a.arg[0], a.arg[1], at))))
                #+ if _to_kernel_st: _to_kernel_st.attempts[2] += 1
                # a = n0, b = n0_0
                at = n.src[1:]
                _r = _new(UOp, _LOAD, (_t3 := _new(UOp, _INDEX, (_t2 := ctx.read(n0_0, n0)).dtype, (_t2, *unmask(at_ranges(n0.arg[0], n0.arg[1], at))))).dtype, (_t3,))
                if _r is not n: return _r, _to_kernel_rules[2]
    return None

def _to_kernel_STORE(n, ctx):
    if len(n.src) >= 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is _INDEX and len(n0.src) == 2:
            n0_0, n0_1 = n0.src
            if n0_0.op is _BUFFER:
                # rule kernel_store at rules/kernel.rules:88
                #   kernel_store: STORE(INDEX(BUFFER as b, off), v, *rngs) as st -> STORE(INDEX(ctx.define_global(b), unmask(off)[0]), v, *ctx.loops(in_order(st.arg, rngs)), dtype=dtypes.void)
                #+ if _to_kernel_st: _to_kernel_st.attempts[0] += 1
                # b = n0_0, off = n0_1, st = n, v = n1
                rngs = n.src[2:]
                _r = _new(UOp, _STORE, dtypes.void, (_new(UOp, _INDEX, (_t4 := ctx.define_global(n0_0)).dtype, (_t4, unmask(n0_1)[0])), n1, *ctx.loops(in_order(n.arg, rngs))))
                if _r is not n: return _r, _to_kernel_rules[0]
    return None

def _to_kernel_REDUCE(n, ctx):
    if len(n.src) >= 1:
        n0 = n.src[0]
        if n0.op is _ADD:
            if n.arg == Ops.ADD:
                n0_0, n0_1 = n0.src
                if n0_0.op is _DEFINE_REG:
                    o0_1 = n0_1.op
                    if o0_1 is _WHERE:
                        n0_1_0 = n0_1.src[0]
                        n0_1_2 = n0_1.src[2]
                        o0_1_0 = n0_1_0.op
                        if o0_1_0 is _CMPEQ:
                            n0_1_0_0, n0_1_0_1 = n0_1_0.src
                            if n0_1_2.op is _CONST and n0_1_2.arg == 0:
                                if n0_1_0_1.op is _CAST and len(n0_1_0_1.src) == 1:
                                    n0_1_0_1_0 = n0_1_0_1.src[0]
                                    if n0_1_0_1_0.op is _RANGE:
                                        # rule pick_acc at rules/kernel.rules:110
                                        #   pick_acc: REDUCE(ADD(acc:DEFINE_REG, WHERE(CMPEQ[a, CAST(r:RANGE) as q], _, 0) as t), ..., arg=Ops.ADD) as red if acc_picks(red, acc, a, r, q, t) -> drop_acc(red, acc, r, at_pick(t, a, r))
                                        #+ if _to_kernel_st: _to_kernel_st.attempts[7] += 1
                                        # a = n0_1_0_0, acc = n0_0, q = n0_1_0_1, r = n0_1_0_1_0, red = n, t = n0_1
                                        if acc_picks(n, n0_0, n0_1_0_0, n0_1_0_1_0, n0_1_0_1, n0_1):
                                            _r = drop_acc(n, n0_0, n0_1_0_1_0, at_pick(n0_1, n0_1_0_0, n0_1_0_1_0))
                                            if _r is not None:
                                                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                                                if _r is not n: return _r, _to_kernel_rules[7]
                                if n0_1_0_0.op is _CAST and len(n0_1_0_0.src) == 1:
                                    n0_1_0_0_0 = n0_1_0_0.src[0]
                                    if n0_1_0_0_0.op is _RANGE:
                                        # rule pick_acc at rules/kernel.rules:110
                                        #   pick_acc: REDUCE(ADD(acc:DEFINE_REG, WHERE(CMPEQ[a, CAST(r:RANGE) as q], _, 0) as t), ..., arg=Ops.ADD) as red if acc_picks(red, acc, a, r, q, t) -> drop_acc(red, acc, r, at_pick(t, a, r))
                                        #+ if _to_kernel_st: _to_kernel_st.attempts[7] += 1
                                        # a = n0_1_0_1, acc = n0_0, q = n0_1_0_0, r = n0_1_0_0_0, red = n, t = n0_1
                                        if acc_picks(n, n0_0, n0_1_0_1, n0_1_0_0_0, n0_1_0_0, n0_1):
                                            _r = drop_acc(n, n0_0, n0_1_0_0_0, at_pick(n0_1, n0_1_0_1, n0_1_0_0_0))
                                            if _r is not None:
                                                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                                                if _r is not n: return _r, _to_kernel_rules[7]
                        elif o0_1_0 is _AND:
                            n0_1_0_0, n0_1_0_1 = n0_1_0.src
                            if n0_1_2.op is _CONST and n0_1_2.arg == 0:
                                if n0_1_0_0.op is _CMPEQ:
                                    n0_1_0_0_0, n0_1_0_0_1 = n0_1_0_0.src
                                    if n0_1_0_0_1.op is _CAST and len(n0_1_0_0_1.src) == 1:
                                        n0_1_0_0_1_0 = n0_1_0_0_1.src[0]
                                        if n0_1_0_0_1_0.op is _RANGE:
                                            # rule pick_acc_and at rules/kernel.rules:115
                                            #   pick_acc_and: REDUCE(ADD(acc:DEFINE_REG, WHERE(AND[CMPEQ[a, CAST(r:RANGE) as q], _], _, 0) as t), ..., arg=Ops.ADD) as red if acc_picks(red, acc, a, r, q, t) -> drop_acc(red, acc, r, at_pick(t, a, r))
                                            #+ if _to_kernel_st: _to_kernel_st.attempts[9] += 1
                                            # a = n0_1_0_0_0, acc = n0_0, q = n0_1_0_0_1, r = n0_1_0_0_1_0, red = n, t = n0_1
                                            if acc_picks(n, n0_0, n0_1_0_0_0, n0_1_0_0_1_0, n0_1_0_0_1, n0_1):
                                                _r = drop_acc(n, n0_0, n0_1_0_0_1_0, at_pick(n0_1, n0_1_0_0_0, n0_1_0_0_1_0))
                                                if _r is not None:
                                                    if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                                                    if _r is not n: return _r, _to_kernel_rules[9]
                                    if n0_1_0_0_0.op is _CAST and len(n0_1_0_0_0.src) == 1:
                                        n0_1_0_0_0_0 = n0_1_0_0_0.src[0]
                                        if n0_1_0_0_0_0.op is _RANGE:
                                            # rule pick_acc_and at rules/kernel.rules:115
                                            #   pick_acc_and: REDUCE(ADD(acc:DEFINE_REG, WHERE(AND[CMPEQ[a, CAST(r:RANGE) as q], _], _, 0) as t), ..., arg=Ops.ADD) as red if acc_picks(red, acc, a, r, q, t) -> drop_acc(red, acc, r, at_pick(t, a, r))
                                            #+ if _to_kernel_st: _to_kernel_st.attempts[9] += 1
                                            # a = n0_1_0_0_1, acc = n0_0, q = n0_1_0_0_0, r = n0_1_0_0_0_0, red = n, t = n0_1
                                            if acc_picks(n, n0_0, n0_1_0_0_1, n0_1_0_0_0_0, n0_1_0_0_0, n0_1):
                                                _r = drop_acc(n, n0_0, n0_1_0_0_0_0, at_pick(n0_1, n0_1_0_0_1, n0_1_0_0_0_0))
                                                if _r is not None:
                                                    if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                                                    if _r is not n: return _r, _to_kernel_rules[9]
                                if n0_1_0_1.op is _CMPEQ:
                                    n0_1_0_1_0, n0_1_0_1_1 = n0_1_0_1.src
                                    if n0_1_0_1_1.op is _CAST and len(n0_1_0_1_1.src) == 1:
                                        n0_1_0_1_1_0 = n0_1_0_1_1.src[0]
                                        if n0_1_0_1_1_0.op is _RANGE:
                                            # rule pick_acc_and at rules/kernel.rules:115
                                            #   pick_acc_and: REDUCE(ADD(acc:DEFINE_REG, WHERE(AND[CMPEQ[a, CAST(r:RANGE) as q], _], _, 0) as t), ..., arg=Ops.ADD) as red if acc_picks(red, acc, a, r, q, t) -> drop_acc(red, acc, r, at_pick(t, a, r))
                                            #+ if _to_kernel_st: _to_kernel_st.attempts[9] += 1
                                            # a = n0_1_0_1_0, acc = n0_0, q = n0_1_0_1_1, r = n0_1_0_1_1_0, red = n, t = n0_1
                                            if acc_picks(n, n0_0, n0_1_0_1_0, n0_1_0_1_1_0, n0_1_0_1_1, n0_1):
                                                _r = drop_acc(n, n0_0, n0_1_0_1_1_0, at_pick(n0_1, n0_1_0_1_0, n0_1_0_1_1_0))
                                                if _r is not None:
                                                    if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                                                    if _r is not n: return _r, _to_kernel_rules[9]
                                    if n0_1_0_1_0.op is _CAST and len(n0_1_0_1_0.src) == 1:
                                        n0_1_0_1_0_0 = n0_1_0_1_0.src[0]
                                        if n0_1_0_1_0_0.op is _RANGE:
                                            # rule pick_acc_and at rules/kernel.rules:115
                                            #   pick_acc_and: REDUCE(ADD(acc:DEFINE_REG, WHERE(AND[CMPEQ[a, CAST(r:RANGE) as q], _], _, 0) as t), ..., arg=Ops.ADD) as red if acc_picks(red, acc, a, r, q, t) -> drop_acc(red, acc, r, at_pick(t, a, r))
                                            #+ if _to_kernel_st: _to_kernel_st.attempts[9] += 1
                                            # a = n0_1_0_1_1, acc = n0_0, q = n0_1_0_1_0, r = n0_1_0_1_0_0, red = n, t = n0_1
                                            if acc_picks(n, n0_0, n0_1_0_1_1, n0_1_0_1_0_0, n0_1_0_1_0, n0_1):
                                                _r = drop_acc(n, n0_0, n0_1_0_1_0_0, at_pick(n0_1, n0_1_0_1_1, n0_1_0_1_0_0))
                                                if _r is not None:
                                                    if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                                                    if _r is not n: return _r, _to_kernel_rules[9]
                    elif o0_1 is _CAST and len(n0_1.src) == 1:
                        n0_1_0 = n0_1.src[0]
                        if n0_1_0.op is _WHERE:
                            n0_1_0_0 = n0_1_0.src[0]
                            n0_1_0_2 = n0_1_0.src[2]
                            if n0_1_0_0.op is _CMPEQ:
                                n0_1_0_0_0, n0_1_0_0_1 = n0_1_0_0.src
                                if n0_1_0_2.op is _CONST and n0_1_0_2.arg == 0:
                                    if n0_1_0_0_1.op is _CAST and len(n0_1_0_0_1.src) == 1:
                                        n0_1_0_0_1_0 = n0_1_0_0_1.src[0]
                                        if n0_1_0_0_1_0.op is _RANGE:
                                            # rule pick_acc_cast at rules/kernel.rules:113
                                            #   pick_acc_cast: REDUCE(ADD(acc:DEFINE_REG, CAST(WHERE(CMPEQ[a, CAST(r:RANGE) as q], _, 0)) as t), ..., arg=Ops.ADD) as red if acc_picks(red, acc, a, r, q, t) -> drop_acc(red, acc, r, at_pick(t, a, r))
                                            #+ if _to_kernel_st: _to_kernel_st.attempts[8] += 1
                                            # a = n0_1_0_0_0, acc = n0_0, q = n0_1_0_0_1, r = n0_1_0_0_1_0, red = n, t = n0_1
                                            if acc_picks(n, n0_0, n0_1_0_0_0, n0_1_0_0_1_0, n0_1_0_0_1, n0_1):
                                                _r = drop_acc(n, n0_0, n0_1_0_0_1_0, at_pick(n0_1, n0_1_0_0_0, n0_1_0_0_1_0))
                                                if _r is not None:
                                                    if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                                                    if _r is not n: return _r, _to_kernel_rules[8]
                                    if n0_1_0_0_0.op is _CAST and len(n0_1_0_0_0.src) == 1:
                                        n0_1_0_0_0_0 = n0_1_0_0_0.src[0]
                                        if n0_1_0_0_0_0.op is _RANGE:
                                            # rule pick_acc_cast at rules/kernel.rules:113
                                            #   pick_acc_cast: REDUCE(ADD(acc:DEFINE_REG, CAST(WHERE(CMPEQ[a, CAST(r:RANGE) as q], _, 0)) as t), ..., arg=Ops.ADD) as red if acc_picks(red, acc, a, r, q, t) -> drop_acc(red, acc, r, at_pick(t, a, r))
                                            #+ if _to_kernel_st: _to_kernel_st.attempts[8] += 1
                                            # a = n0_1_0_0_1, acc = n0_0, q = n0_1_0_0_0, r = n0_1_0_0_0_0, red = n, t = n0_1
                                            if acc_picks(n, n0_0, n0_1_0_0_1, n0_1_0_0_0_0, n0_1_0_0_0, n0_1):
                                                _r = drop_acc(n, n0_0, n0_1_0_0_0_0, at_pick(n0_1, n0_1_0_0_1, n0_1_0_0_0_0))
                                                if _r is not None:
                                                    if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                                                    if _r is not n: return _r, _to_kernel_rules[8]
        else:
            if n0.op is _WHERE:
                if n.arg == Ops.ADD:
                    n0_0 = n0.src[0]
                    n0_2 = n0.src[2]
                    o0_0 = n0_0.op
                    if o0_0 is _CMPEQ:
                        n0_0_0, n0_0_1 = n0_0.src
                        if n0_2.op is _CONST and n0_2.arg == 0:
                            if n0_0_1.op is _CAST and len(n0_0_1.src) == 1:
                                n0_0_1_0 = n0_0_1.src[0]
                                if n0_0_1_0.op is _RANGE:
                                    # rule pick_load at rules/kernel.rules:106
                                    #   pick_load: REDUCE(WHERE(CMPEQ[a, CAST(r:RANGE) as q], _, 0) as t, ..., arg=Ops.ADD) as red if picks(red, a, r, q, t) -> drop_range(red, r, at_pick(t, a, r))
                                    #+ if _to_kernel_st: _to_kernel_st.attempts[5] += 1
                                    # a = n0_0_0, q = n0_0_1, r = n0_0_1_0, red = n, t = n0
                                    if picks(n, n0_0_0, n0_0_1_0, n0_0_1, n0):
                                        _r = drop_range(n, n0_0_1_0, at_pick(n0, n0_0_0, n0_0_1_0))
                                        if _r is not None:
                                            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                                            if _r is not n: return _r, _to_kernel_rules[5]
                            if n0_0_0.op is _CAST and len(n0_0_0.src) == 1:
                                n0_0_0_0 = n0_0_0.src[0]
                                if n0_0_0_0.op is _RANGE:
                                    # rule pick_load at rules/kernel.rules:106
                                    #   pick_load: REDUCE(WHERE(CMPEQ[a, CAST(r:RANGE) as q], _, 0) as t, ..., arg=Ops.ADD) as red if picks(red, a, r, q, t) -> drop_range(red, r, at_pick(t, a, r))
                                    #+ if _to_kernel_st: _to_kernel_st.attempts[5] += 1
                                    # a = n0_0_1, q = n0_0_0, r = n0_0_0_0, red = n, t = n0
                                    if picks(n, n0_0_1, n0_0_0_0, n0_0_0, n0):
                                        _r = drop_range(n, n0_0_0_0, at_pick(n0, n0_0_1, n0_0_0_0))
                                        if _r is not None:
                                            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                                            if _r is not n: return _r, _to_kernel_rules[5]
                    elif o0_0 is _AND:
                        n0_0_0, n0_0_1 = n0_0.src
                        if n0_2.op is _CONST and n0_2.arg == 0:
                            if n0_0_0.op is _CMPEQ:
                                n0_0_0_0, n0_0_0_1 = n0_0_0.src
                                if n0_0_0_1.op is _CAST and len(n0_0_0_1.src) == 1:
                                    n0_0_0_1_0 = n0_0_0_1.src[0]
                                    if n0_0_0_1_0.op is _RANGE:
                                        # rule pick_load_and at rules/kernel.rules:108
                                        #   pick_load_and: REDUCE(WHERE(AND[CMPEQ[a, CAST(r:RANGE) as q], _], _, 0) as t, ..., arg=Ops.ADD) as red if picks(red, a, r, q, t) -> drop_range(red, r, at_pick(t, a, r))
                                        #+ if _to_kernel_st: _to_kernel_st.attempts[6] += 1
                                        # a = n0_0_0_0, q = n0_0_0_1, r = n0_0_0_1_0, red = n, t = n0
                                        if picks(n, n0_0_0_0, n0_0_0_1_0, n0_0_0_1, n0):
                                            _r = drop_range(n, n0_0_0_1_0, at_pick(n0, n0_0_0_0, n0_0_0_1_0))
                                            if _r is not None:
                                                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                                                if _r is not n: return _r, _to_kernel_rules[6]
                                if n0_0_0_0.op is _CAST and len(n0_0_0_0.src) == 1:
                                    n0_0_0_0_0 = n0_0_0_0.src[0]
                                    if n0_0_0_0_0.op is _RANGE:
                                        # rule pick_load_and at rules/kernel.rules:108
                                        #   pick_load_and: REDUCE(WHERE(AND[CMPEQ[a, CAST(r:RANGE) as q], _], _, 0) as t, ..., arg=Ops.ADD) as red if picks(red, a, r, q, t) -> drop_range(red, r, at_pick(t, a, r))
                                        #+ if _to_kernel_st: _to_kernel_st.attempts[6] += 1
                                        # a = n0_0_0_1, q = n0_0_0_0, r = n0_0_0_0_0, red = n, t = n0
                                        if picks(n, n0_0_0_1, n0_0_0_0_0, n0_0_0_0, n0):
                                            _r = drop_range(n, n0_0_0_0_0, at_pick(n0, n0_0_0_1, n0_0_0_0_0))
                                            if _r is not None:
                                                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                                                if _r is not n: return _r, _to_kernel_rules[6]
                            if n0_0_1.op is _CMPEQ:
                                n0_0_1_0, n0_0_1_1 = n0_0_1.src
                                if n0_0_1_1.op is _CAST and len(n0_0_1_1.src) == 1:
                                    n0_0_1_1_0 = n0_0_1_1.src[0]
                                    if n0_0_1_1_0.op is _RANGE:
                                        # rule pick_load_and at rules/kernel.rules:108
                                        #   pick_load_and: REDUCE(WHERE(AND[CMPEQ[a, CAST(r:RANGE) as q], _], _, 0) as t, ..., arg=Ops.ADD) as red if picks(red, a, r, q, t) -> drop_range(red, r, at_pick(t, a, r))
                                        #+ if _to_kernel_st: _to_kernel_st.attempts[6] += 1
                                        # a = n0_0_1_0, q = n0_0_1_1, r = n0_0_1_1_0, red = n, t = n0
                                        if picks(n, n0_0_1_0, n0_0_1_1_0, n0_0_1_1, n0):
                                            _r = drop_range(n, n0_0_1_1_0, at_pick(n0, n0_0_1_0, n0_0_1_1_0))
                                            if _r is not None:
                                                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                                                if _r is not n: return _r, _to_kernel_rules[6]
                                if n0_0_1_0.op is _CAST and len(n0_0_1_0.src) == 1:
                                    n0_0_1_0_0 = n0_0_1_0.src[0]
                                    if n0_0_1_0_0.op is _RANGE:
                                        # rule pick_load_and at rules/kernel.rules:108
                                        #   pick_load_and: REDUCE(WHERE(AND[CMPEQ[a, CAST(r:RANGE) as q], _], _, 0) as t, ..., arg=Ops.ADD) as red if picks(red, a, r, q, t) -> drop_range(red, r, at_pick(t, a, r))
                                        #+ if _to_kernel_st: _to_kernel_st.attempts[6] += 1
                                        # a = n0_0_1_1, q = n0_0_1_0, r = n0_0_1_0_0, red = n, t = n0
                                        if picks(n, n0_0_1_1, n0_0_1_0_0, n0_0_1_0, n0):
                                            _r = drop_range(n, n0_0_1_0_0, at_pick(n0, n0_0_1_1, n0_0_1_0_0))
                                            if _r is not None:
                                                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                                                if _r is not n: return _r, _to_kernel_rules[6]
    return None

def _to_kernel_WHERE(n, ctx):
    if len(n.src) == 3:
        n1 = n.src[1]
        n2 = n.src[2]
        if n2.op is _INVALID:
            # rule unmask_value at rules/kernel.rules:100
            #   unmask_value: WHERE(_, e, INVALID) -> e
            #+ if _to_kernel_st: _to_kernel_st.attempts[3] += 1
            # e = n1
            return n1, _to_kernel_rules[3]
    return None


_to_kernel_part = RuleMatcher('to_kernel', _to_kernel_rules, {
    Ops.NOOP: _to_kernel_NOOP,
    Ops.CONTIGUOUS: _to_kernel_CONTIGUOUS,
    Ops.COPY: _to_kernel_COPY,
    Ops.RANGE: _to_kernel_RANGE,
    Ops.INDEX: _to_kernel_INDEX,
    Ops.STORE: _to_kernel_STORE,
    Ops.REDUCE: _to_kernel_REDUCE,
    Ops.WHERE: _to_kernel_WHERE,
}, home=(globals(), '_to_kernel_st'))


# ======================================================================== the rule sets
_S_split_kernels = compose('split_kernels', _split_kernels_part)
split_kernels = _S_split_kernels
_S_to_kernel = compose('to_kernel', _to_kernel_part, _generated_symbolic.MATCHERS['sym'])
to_kernel = _S_to_kernel

MATCHERS = {
    'split_kernels': _S_split_kernels,
    'to_kernel': _S_to_kernel,
}


# ======================================================================== the pipelines
from rulegrad.runtime.pipeline import Pass as _Pass, Pipeline as _Pipeline  # noqa: E402

kernel = _Pipeline('kernel', (
    _Pass('to_kernel', 'to_kernel', _S_to_kernel, bottom_up=True, ctx=KernelContext, spec='kernel', location='rules/kernel.rules:157'),
))

PIPELINES = {
    'kernel': kernel,
}
