# generated from rules/rangeify.rules by `rulegrad gen`; do not edit
# source sha256: 499ced1f0b30231d4e0cad50aa9da9ce7abeaf160d7763b5fed1064b5627f1e3
# imports rules/movement.rules sha256: 2e32f3d8ef1dbaa8750670902dcebcd491b0f134e184e7556fddf6752b5bcc70
# imports rules/symbolic.rules sha256: a6a51ae7863a7637798664f439214feebcd542a5b103154001c4472c0219e28c
# imports rules/kernel.rules sha256: fd9a5acddc32dd9efbc80ae8477716d64661f807dc8d2df1ca8e350e5851c207
'Matchers for the rule sets of rules/rangeify.rules: limit_buffers, earliest_rewrites, do_realize, add_realize, pm_children, pm_mops, pm_rangeify, pm_cleanups, keep_buffers.'

from math import prod  # noqa: F401

from rulegrad.runtime.dtype import DTYPE_CLASSES, dtypes  # noqa: F401
from rulegrad.runtime.matcher import RuleMatcher, compose, helper_from, match_stats  # noqa: F401
from rulegrad.runtime.matcher import as_uop as _as_uop  # noqa: F401
from rulegrad.runtime.ops import GroupOp, Ops  # noqa: F401
from rulegrad.runtime.rewrite import RewriteNotReady, RuleInfo  # noqa: F401
from rulegrad.runtime.uop import UNSET as _UNSET  # noqa: F401
from rulegrad.runtime.uop import UOp  # noqa: F401
from rulegrad.runtime.uop import new_uop as _new  # noqa: F401
from rulegrad.rules.buffer_limit import BufferLimit
from rulegrad.rules.rangeify_helpers import FIRST_RANGE
from rulegrad.runtime.ops import Placed
from rulegrad.runtime.target import SPLIT_MIN_ROWS
from rulegrad.runtime.target import SPLIT_PARTS
from rulegrad.runtime.target import UNROLL_MAX
from rulegrad.runtime.target import VECTORS_MAX
from rulegrad.runtime.target import VECTOR_LANES
from rulegrad.rules.buffer_limit import buffers_loaded
from rulegrad.runtime.target import cache_bytes
from itertools import count
from rulegrad.runtime.device import device_of
from rulegrad.rules.analyses import expensive
from rulegrad.runtime.view import flatten
from rulegrad.rules.rangeify_helpers import inline_reduce_ok
from rulegrad.rules.rangeify_helpers import is_products
from math import lcm
from rulegrad.rules.rangeify_helpers import local_axes
from rulegrad.rules.flash_cost import local_max_array
from rulegrad.rules.rangeify_helpers import local_value_row
from rulegrad.rules.rangeify_helpers import map_reduce
from rulegrad.runtime.target import parallel_min_work
from rulegrad.runtime.window_stack import parts_max
from rulegrad.rules.rangeify_helpers import predict_buffers
from rulegrad.rules.rangeify_helpers import predict_local_values
from rulegrad.rules.flash_cost import ranges_in
from rulegrad.rules.read_twice import read_twice
from rulegrad.rules.analyses import reads_moved
from rulegrad.runtime.ops import reduce_from
from rulegrad.runtime.view import reshape_index
from rulegrad.rules.rangeify_helpers import shared_reductions
from rulegrad.rules.flash_cost import shares_threads
from rulegrad.runtime.target import stack_bytes
from rulegrad.runtime.target import threads
from rulegrad.rules.flash_cost import too_long
from rulegrad.runtime.uop import toposort
from rulegrad.runtime.target import vector_bytes
from rulegrad.runtime.target import vector_lanes
from rulegrad.rules.symbolic_helpers import wrap
from rulegrad.dsl.names import fold
from rulegrad.rules.generated import kernel as _generated_kernel
from rulegrad.rules.generated import movement as _generated_movement
from rulegrad.rules.generated import symbolic as _generated_symbolic

SOURCE = 'rules/rangeify.rules'
SOURCE_SHA256 = '499ced1f0b30231d4e0cad50aa9da9ce7abeaf160d7763b5fed1064b5627f1e3'
DEPENDENCIES = (('rules/movement.rules', '2e32f3d8ef1dbaa8750670902dcebcd491b0f134e184e7556fddf6752b5bcc70'), ('rules/symbolic.rules', 'a6a51ae7863a7637798664f439214feebcd542a5b103154001c4472c0219e28c'), ('rules/kernel.rules', 'fd9a5acddc32dd9efbc80ae8477716d64661f807dc8d2df1ca8e350e5851c207'), )
_ASSIGN = Ops.ASSIGN
_BIND = Ops.BIND
_BUFFER = Ops.BUFFER
_BUFFERIZE = Ops.BUFFERIZE
_BUFFER_VIEW = Ops.BUFFER_VIEW
_CHILD = Ops.CHILD
_CHILDREN = Ops.CHILDREN
_CONST = Ops.CONST
_CONTIGUOUS = Ops.CONTIGUOUS
_COPY = Ops.COPY
_DEFINE_LOCAL = Ops.DEFINE_LOCAL
_DEFINE_VAR = Ops.DEFINE_VAR
_DEVICE = Ops.DEVICE
_EXPAND = Ops.EXPAND
_FLIP = Ops.FLIP
_INDEX = Ops.INDEX
_MAX = Ops.MAX
_MUL = Ops.MUL
_PAD = Ops.PAD
_PERMUTE = Ops.PERMUTE
_RANGE = Ops.RANGE
_REALIZE = Ops.REALIZE
_RECIPROCAL = Ops.RECIPROCAL
_REDUCE_AXIS = Ops.REDUCE_AXIS
_RESHAPE = Ops.RESHAPE
_SHRINK = Ops.SHRINK
_SINK = Ops.SINK
_OPS0 = frozenset({Ops.RESHAPE, Ops.PERMUTE, Ops.EXPAND, Ops.PAD, Ops.SHRINK, Ops.FLIP})
_OPS1 = frozenset({Ops.CONST, Ops.DEFINE_VAR})
_OPS2 = frozenset({Ops.CAST, Ops.BITCAST, Ops.NEG, Ops.EXP, Ops.LOG, Ops.EXP2, Ops.LOG2, Ops.SIN, Ops.SQRT, Ops.RECIPROCAL, Ops.TRUNC, Ops.ADD, Ops.SUB, Ops.MUL, Ops.FDIV, Ops.IDIV, Ops.MOD, Ops.MAX, Ops.MIN, Ops.POW, Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ, Ops.AND, Ops.OR, Ops.XOR, Ops.SHL, Ops.SHR, Ops.WHERE, Ops.MULACC, Ops.COS})
_OPS3 = frozenset({Ops.NOOP, Ops.CONTIGUOUS, Ops.COPY})
_OPS4 = frozenset({Ops.NOOP, Ops.CONST, Ops.DEFINE_VAR, Ops.CONTIGUOUS, Ops.COPY, Ops.ASSIGN, Ops.CAST, Ops.BITCAST, Ops.NEG, Ops.EXP, Ops.LOG, Ops.EXP2, Ops.LOG2, Ops.SIN, Ops.SQRT, Ops.RECIPROCAL, Ops.TRUNC, Ops.ADD, Ops.SUB, Ops.MUL, Ops.FDIV, Ops.IDIV, Ops.MOD, Ops.MAX, Ops.MIN, Ops.POW, Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ, Ops.AND, Ops.OR, Ops.XOR, Ops.SHL, Ops.SHR, Ops.WHERE, Ops.MULACC, Ops.COS})
_OPS5 = frozenset({Ops.BUFFER, Ops.REALIZE, Ops.BUFFERIZE})


# ======================================================================== definitions, contexts
_UNSET = object()  # a context's field not given to its constructor


def nests_in(red, src):
    """`def nests_in`, declared at rules/rangeify.rules:61."""
    return red.op is Ops.REDUCE_AXIS and src is red.src[0] and src.op is Ops.REDUCE_AXIS and src.arg[0] is red.arg[0]


def reduced(shape, axes):
    """`def reduced`, declared at rules/rangeify.rules:191."""
    return prod(shape[i] for i in axes)


def times(y, n, dt):
    """`def times`, declared at rules/rangeify.rules:194."""
    return y if n == 1 or dt.is_bool else y * wrap(dt, n) if dt.is_int else y * float(n) if n <= (2048, 16777216, 9007199254740992)[dt.itemsize // 4] else None


def started(v, red):
    """`def started`, declared at rules/rangeify.rules:198."""
    return v + reduce_from(red.arg, red.dtype) if v is not None and red.dtype.is_float else v


def ones_at(shape, axes):
    """`def ones_at`, declared at rules/rangeify.rules:200."""
    return tuple(1 if i in axes else s for i, s in enumerate(shape))


def flat(x, axes):
    """`def flat`, declared at rules/rangeify.rules:202."""
    return all(x.shape[i] == 1 for i in axes)


def repeated(x, e, red):
    """`def repeated`, declared at rules/rangeify.rules:205."""
    y = x.expand(ones_at(e.shape, red.arg[1]))
    return y if red.arg[0] is not Ops.ADD else started(times(y, reduced(e.shape, red.arg[1]), red.dtype), red)


def per_output(x, red):
    """`def per_output`, declared at rules/rangeify.rules:208."""
    return x.size // max(red.size, 1)


def last_axes(x, red):
    """`def last_axes`, declared at rules/rangeify.rules:210."""
    return tuple(sorted(red.arg[1])) == tuple(range(len(x.shape) - len(red.arg[1]), len(x.shape)))


def local_max_row():
    """`def local_max_row`, declared at rules/rangeify.rules:218."""
    return min(cache_bytes(2) // (2 * 2 * 4), stack_bytes() // (2 * 8))


def apart(x, red):
    """`def apart`, declared at rules/rangeify.rules:228."""
    return prod(x.shape[max(red.arg[1]) + 1:]) * x.dtype.itemsize


def column_why(n, b):
    """`def column_why`, declared at rules/rangeify.rules:229."""
    return None if b < vector_bytes() or n <= UNROLL_MAX else 'a column of ' + str(n) + ' values ' + str(b) + ' bytes apart > UNROLL_MAX'


def strided_why(x, red):
    """`def strided_why`, declared at rules/rangeify.rules:230."""
    return column_why(per_output(x, red), apart(x, red))


def run_bytes(x, red):
    """`def run_bytes`, declared at rules/rangeify.rules:233."""
    return prod(x.shape[max([-1] + [i for i, s in enumerate(x.shape) if s > 1 and i not in red.arg[1]]) + 1:]) * x.dtype.itemsize


def in_cache(x, red):
    """`def in_cache`, declared at rules/rangeify.rules:251."""
    return x.size * x.dtype.itemsize <= cache_bytes(2) and run_bytes(x, red) >= VECTORS_MAX * vector_bytes() and shares_threads(red.size, x.size)


def channel_fits(red):
    """`def channel_fits`, declared at rules/rangeify.rules:252."""
    return per_output(red.src[0], red) <= local_max_row() and strided_why(red.src[0], red) is None and in_cache(red.src[0], red)


def beyond(n):
    """`def beyond`, declared at rules/rangeify.rules:264."""
    return n.op in (Ops.REALIZE, Ops.BUFFERIZE, Ops.BUFFER)


def not_reshape(n):
    """`def not_reshape`, declared at rules/rangeify.rules:265."""
    return n.op is not Ops.RESHAPE


def past_reshapes(n):
    """`def past_reshapes`, declared at rules/rangeify.rules:266."""
    return beyond(n) or not (n.op in GroupOp.Elementwise or n.op in (Ops.RESHAPE, Ops.REDUCE_AXIS))


def axes_over_1(shape):
    """`def axes_over_1`, declared at rules/rangeify.rules:267."""
    return tuple((i, s) for i, s in enumerate(shape) if s != 1)


def reshaped_back(n):
    """`def reshaped_back`, declared at rules/rangeify.rules:268."""
    return all(axes_over_1(r.shape) == axes_over_1(n.shape) for r in toposort(n.src[0], past_reshapes) if r.op is Ops.REDUCE_AXIS)


def same_place(n, x):
    """`def same_place`, declared at rules/rangeify.rules:269."""
    return len(n.shape) != len(x.shape) or toposort(n, not_reshape)[0].src[0].shape == n.shape or reshaped_back(n)


def moves(n, x):
    """`def moves`, declared at rules/rangeify.rules:270."""
    return n.op is Ops.PERMUTE or n.op is Ops.RESHAPE and not same_place(n, x)


def moved(x, nodes):
    """`def moved`, declared at rules/rangeify.rules:271."""
    return any(n.op is Ops.REDUCE_AXIS for n in toposort(_new(UOp, Ops.SINK, dtypes.void, (*[n.src[0] for n in nodes if moves(n, x)],)), beyond))


def reductions(x, nodes):
    """`def reductions`, declared at rules/rangeify.rules:272."""
    return [n for n in nodes if n.op is Ops.REDUCE_AXIS and n.shape != x.shape]


def kept(x, red):
    """`def kept`, declared at rules/rangeify.rules:273."""
    return tuple(i for i, s in enumerate(x.shape) if red.shape[i] == s > 1) if all(r in (1, s) for r, s in zip(red.shape, x.shape)) else None


def ranked(x, reds):
    """`def ranked`, declared at rules/rangeify.rules:274."""
    return len(reds) > 0 and x.op is not Ops.ASSIGN and all(len(r.shape) == len(x.shape) and channel_fits(r) and not is_products(r) for r in reds)


def leads(k, rngs):
    """`def leads`, declared at rules/rangeify.rules:275."""
    return k == tuple(i for i, r in enumerate(rngs) if r.op is Ops.RANGE)[:len(k)]


def channel_first(k, rngs):
    """`def channel_first`, declared at rules/rangeify.rules:276."""
    return None if len(k) != 1 or not k[0] or leads(k[0], rngs) else k[0] + tuple(i for i in range(len(rngs)) if i not in k[0])


def placed_order(x, reds, rngs):
    """`def placed_order`, declared at rules/rangeify.rules:278."""
    return channel_first(tuple(set(kept(x, r) for r in reds)) if ranked(x, reds) else (), rngs)


def channel_order(x, rngs):
    """`def channel_order`, declared at rules/rangeify.rules:279."""
    nodes = toposort(x, beyond)
    o = placed_order(x, reductions(x, nodes), rngs)
    return None if o is None or moved(x, nodes) else o


def keeps_row(x, red):
    """`def keeps_row`, declared at rules/rangeify.rules:288."""
    return last_axes(x, red) and per_output(x, red) <= local_max_row() and shares_threads(red.size, x.size)


def splits_worth(x, red):
    """`def splits_worth`, declared at rules/rangeify.rules:291."""
    return per_output(x, red) >= SPLIT_MIN_ROWS and red.size < SPLIT_MIN_ROWS and not keeps_row(x, red)


def divisor(n, top):
    """`def divisor`, declared at rules/rangeify.rules:293."""
    return max([d for d in range(8, top + 1) if n % d == 0], default=0)


def split_top(red):
    """`def split_top`, declared at rules/rangeify.rules:296."""
    return min(SPLIT_PARTS, 4194304 // max(red.size, 1))


def splits(x, red):
    """`def splits`, declared at rules/rangeify.rules:298."""
    return [(a, d) for a, d in [(a, divisor(x.shape[a], split_top(red))) for a in red.arg[1]] if d]


def split_axis(x, a, d):
    """`def split_axis`, declared at rules/rangeify.rules:300."""
    shape = x.shape[:a] + (d, x.shape[a] // d) + x.shape[a + 1:]
    return x.reshape(shape).permute(tuple(i for i in range(len(shape)) if i != a) + (a,))


def partials(x, red, a, d):
    """`def partials`, declared at rules/rangeify.rules:303."""
    return _new(UOp, Ops.REDUCE_AXIS, red.dtype, (split_axis(x, a, d),), red.arg)


def over_last(p, red):
    """`def over_last`, declared at rules/rangeify.rules:305."""
    return _new(UOp, Ops.REDUCE_AXIS, red.dtype, (p,), red.arg[:1] + ((len(p.shape) - 1,),) + red.arg[2:])


def uneven(x, red):
    """`def uneven`, declared at rules/rangeify.rules:312."""
    return red.size > 1 and not shares_threads(red.size, x.size)


def partials_apart(p, x, red):
    """`def partials_apart`, declared at rules/rangeify.rules:313."""
    return p.f(Ops.CONTIGUOUS) if uneven(x, red) else p


def tail_split(a, n, top):
    """`def tail_split`, declared at rules/rangeify.rules:320."""
    return [(a, top, n // top * top)] if isinstance(n, int) and n >= 2 * top else []


def tail_parts(x, red):
    """`def tail_parts`, declared at rules/rangeify.rules:321."""
    return tail_split(red.arg[1][0], x.shape[red.arg[1][0]], split_top(red)) if uneven(x, red) and len(red.arg[1]) == 1 else []


def part_of(x, a, lo, hi):
    """`def part_of`, declared at rules/rangeify.rules:323."""
    return x.shrink(tuple((lo, hi) if i == a else (0, s) for i, s in enumerate(x.shape)))


def split_head(x, red, a, d, h):
    """`def split_head`, declared at rules/rangeify.rules:326."""
    return over_last(partials_apart(partials(part_of(x, a, 0, h), red, a, d), x, red), red).reshape(red.shape)


def split_rest(x, red, a, h):
    """`def split_rest`, declared at rules/rangeify.rules:327."""
    return _new(UOp, Ops.REDUCE_AXIS, red.dtype, (part_of(x, a, h, x.shape[a]),), red.arg).reshape(red.shape)


def head_tail(x, red, a, d, h):
    """`def head_tail`, declared at rules/rangeify.rules:328."""
    return split_head(x, red, a, d, h).alu(red.arg[0], split_rest(x, red, a, h))


def axis_run(red):
    """`def axis_run`, declared at rules/rangeify.rules:343."""
    return tuple(sorted(red.arg[1])) == tuple(range(min(red.arg[1]), max(red.arg[1]) + 1))


def batched(x, red):
    """`def batched`, declared at rules/rangeify.rules:345."""
    a = min(red.arg[1])
    b = max(red.arg[1])
    return (prod(x.shape[:a]), prod(x.shape[a:b + 1]), prod(x.shape[b + 1:]))


def shared_rows(s):
    """`def shared_rows`, declared at rules/rangeify.rules:353."""
    return s[0] < threads() and -(-s[2] // threads()) <= VECTORS_MAX * VECTOR_LANES and prod(s) >= parallel_min_work()


def few_columns(red, s):
    """`def few_columns`, declared at rules/rangeify.rules:354."""
    return not red.dtype.is_bool and 2 <= s[2] and (s[2] <= 2 * vector_bytes() // red.dtype.itemsize or shared_rows(s))


def unfused(reductions):
    """`def unfused`, declared at rules/rangeify.rules:358."""
    return len(reductions) > 0 and all(r.tag is None for r in reductions)


def per_column(x, e):
    """`def per_column`, declared at rules/rangeify.rules:359."""
    return len(e.shape) > 0 and x.shape[-1] == e.shape[-1] > 1 and unfused([n for n in x.toposort() if n.op is Ops.REDUCE_AXIS])


def broadcast_read(x):
    """`def broadcast_read`, declared at rules/rangeify.rules:360."""
    return any(n.op in (Ops.EXPAND, Ops.REDUCE_AXIS) for n in x.toposort())


def shares_only(red, s):
    """`def shares_only`, declared at rules/rangeify.rules:368."""
    n = vector_lanes(red.dtype.itemsize)
    return red.arg[0] in (Ops.MAX, Ops.MIN) and threads() > 1 and n <= s[2] < 2 * n


def narrow_batches(x, red, s):
    """`def narrow_batches`, declared at rules/rangeify.rules:369."""
    return s[0] > 0 and few_columns(red, s) and s[1] * s[2] * red.dtype.itemsize > cache_bytes(1) and (not broadcast_read(x) or shares_only(red, s))


def narrow(x, red):
    """`def narrow`, declared at rules/rangeify.rules:370."""
    return len(red.arg) == 2 and axis_run(red) and narrow_batches(x, red, batched(x, red))


def lanes_for(s, n):
    """`def lanes_for`, declared at rules/rangeify.rules:380."""
    c = s[2]
    run = lcm(c, n)
    top = VECTORS_MAX * n
    return top // run * run if run <= top else top // c * c if c <= top else c if shared_rows(s) else None


def shares_for(b, rows, k):
    """`def shares_for`, declared at rules/rangeify.rules:387."""
    return lcm(b, threads()) // b * max(1, -(-rows // (k * threads() * (SPLIT_MIN_ROWS - 1))))


def reduce_on(v, red, a):
    """`def reduce_on`, declared at rules/rangeify.rules:389."""
    return _new(UOp, Ops.REDUCE_AXIS, v.dtype, (v,), (red.arg[0], (a,)))


def partials_of(flat, red, n, t, lanes):
    """`def partials_of`, declared at rules/rangeify.rules:391."""
    b = flat.shape[0]
    c = flat.shape[2]
    return _new(UOp, Ops.CONTIGUOUS, (_t1 := reduce_on(flat.shrink(((0, b), (0, n), (0, c))).reshape((b, t, n * c // (t * lanes), lanes)), red, 2)).dtype, (_t1,))


def head_of(flat, red, n, t, lanes):
    """`def head_of`, declared at rules/rangeify.rules:395."""
    k = lanes // flat.shape[2]
    return reduce_on(partials_of(flat, red, n, t, lanes).reshape((flat.shape[0], t * k, flat.shape[2])), red, 1)


def with_tail(head, flat, red, n):
    """`def with_tail`, declared at rules/rangeify.rules:397."""
    return head if n == flat.shape[1] else head.alu(red.arg[0], reduce_on(flat.shrink(((0, flat.shape[0]), (n, flat.shape[1]), (0, flat.shape[2]))), red, 1))


def head_rows(rows, k, t):
    """`def head_rows`, declared at rules/rangeify.rules:401."""
    return t * k * (rows // (t * k)) if t * k > 1 and rows // (t * k) >= 2 else None


def split_narrow(flat, red, lanes, n, t):
    """`def split_narrow`, declared at rules/rangeify.rules:402."""
    return None if n is None else with_tail(head_of(flat, red, n, t, lanes), flat, red, n).reshape(red.shape)


def narrow_rows(flat, red, lanes):
    """`def narrow_rows`, declared at rules/rangeify.rules:403."""
    k = lanes // flat.shape[2]
    t = shares_for(flat.shape[0], flat.shape[1], k)
    return split_narrow(flat, red, lanes, head_rows(flat.shape[1], k, t), t)


def acc_dtype(red):
    """`def acc_dtype`, declared at rules/rangeify.rules:407."""
    return dtypes.float32 if red.dtype is dtypes.float16 and red.arg[0] is Ops.ADD else red.dtype


def small_ints(x):
    """`def small_ints`, declared at rules/rangeify.rules:412."""
    return x.op is Ops.CAST and (x.src[0].dtype.is_bool or x.src[0].dtype in (dtypes.int8, dtypes.uint8, dtypes.int16))


def int_sum(x, red, s):
    """`def int_sum`, declared at rules/rangeify.rules:413."""
    return red.arg[0] is Ops.ADD and red.dtype in (dtypes.int64, dtypes.uint64) and small_ints(x) and s[1] * (65536 if x.src[0].dtype is dtypes.int16 else 256) < 2147483648


def sum_dtype(x, red, s):
    """`def sum_dtype`, declared at rules/rangeify.rules:414."""
    return dtypes.int32 if int_sum(x, red, s) else acc_dtype(red)


def narrow_acc(x, red, s, lanes):
    """`def narrow_acc`, declared at rules/rangeify.rules:415."""
    return None if lanes is None else narrow_rows(x.cast(sum_dtype(x, red, s)).reshape(s), red, lanes)


def partial_lanes(red):
    """`def partial_lanes`, declared at rules/rangeify.rules:419."""
    return vector_lanes(acc_dtype(red).itemsize) if red.arg[0] in (Ops.MAX, Ops.MIN) else VECTOR_LANES


def row_lanes(x, red, s):
    """`def row_lanes`, declared at rules/rangeify.rules:421."""
    return s[2] if broadcast_read(x) else lanes_for(s, partial_lanes(red))


def narrow_split(x, red):
    """`def narrow_split`, declared at rules/rangeify.rules:422."""
    s = batched(x, red)
    p = narrow_acc(x, red, s, row_lanes(x, red, s))
    return None if p is None else p.cast(red.dtype)


def with_src(n, first):
    """`def with_src`, declared at rules/rangeify.rules:537."""
    return n.replace(src=(first,) + n.src[1:])


def sink(nodes):
    """`def sink`, declared at rules/rangeify.rules:539."""
    return _new(UOp, Ops.SINK, dtypes.void, (*nodes,))


def unexpand(idx, r):
    """`def unexpand`, declared at rules/rangeify.rules:541."""
    return [a if p == q else UOp.const(dtypes.index, 0) for a, p, q in zip(idx, r.src[0].shape, r.shape)]


def dropped(old, idx, r):
    """`def dropped`, declared at rules/rangeify.rules:543."""
    gone = [a for a, p, q in zip(idx, r.src[0].shape, r.shape) if p != q]
    return old + tuple(g for g in sink(gone).toposort() if g.op is Ops.RANGE and g not in old) or None


def inside(a, s, p):
    """`def inside`, declared at rules/rangeify.rules:546."""
    return fold(Ops.AND, ([a.lt(s - p[1])] if p[1] else []) + ([UOp.const(dtypes.index, p[0] - 1).lt(a)] if p[0] else []))


def unpad(a, c, p, n):
    """`def unpad`, declared at rules/rangeify.rules:551."""
    return a if c is None else c.where(UOp.const(dtypes.index, 0) if n == 1 else a - p[0] if p[0] else a, _new(UOp, Ops.INVALID, dtypes.index, ()))


def pad_conds(idx, r):
    """`def pad_conds`, declared at rules/rangeify.rules:553."""
    return [inside(a, s, p) for a, s, p in zip(idx, r.shape, r.arg)]


def unpadded(idx, conds, r):
    """`def unpadded`, declared at rules/rangeify.rules:554."""
    return [unpad(a, c, p, n) for a, c, p, n in zip(idx, conds, r.arg, r.src[0].shape)]


def all_of(conds):
    """`def all_of`, declared at rules/rangeify.rules:556."""
    return fold(Ops.AND, [c for c in conds if c is not None])


def masked_off(n):
    """`def masked_off`, declared at rules/rangeify.rules:558."""
    return [UOp.const(dtypes.bool, False).where(UOp.const(dtypes.index, 0), _new(UOp, Ops.INVALID, dtypes.index, ()))] * n


def unreshape(idx, r, x):
    """`def unreshape`, declared at rules/rangeify.rules:560."""
    return reshape_index(idx, r.shape, x.shape, UOp.const(dtypes.index, 0)) if 0 not in x.shape else masked_off(len(x.shape))


def simplified(out):
    """`def simplified`, declared at rules/rangeify.rules:563."""
    mixed = [e for e in out if e.op in (Ops.MOD, Ops.IDIV)]
    done = dict(zip(mixed, simplify(sink(mixed))[0].src)) if mixed else dict()
    return [done.get(e, e) for e in out]


def local_array(value, own):
    """`def local_array`, declared at rules/rangeify.rules:593."""
    return _new(UOp, Ops.DEFINE_LOCAL, value.dtype, (value, *own))


def array_bytes(a):
    """`def array_bytes`, declared at rules/rangeify.rules:595."""
    return prod(r.src[0].arg for r in a.src[1:]) * a.dtype.itemsize


def array_offset(x, idx, axes):
    """`def array_offset`, declared at rules/rangeify.rules:597."""
    return flatten([idx.src[1 + a] for a in axes], [x.shape[a] for a in axes], UOp.const(dtypes.index, 0))


def over(n, most, bound='LOCAL_MAX_ARRAY'):
    """`def over`, declared at rules/rangeify.rules:599."""
    return 'array of ' + str(n) + ' > ' + bound + ' ' + str(most)


def row_array(n, why):
    """`def row_array`, declared at rules/rangeify.rules:600."""
    return 'local array [' + str(n) + '] once per row' + why


def value_why(n, most):
    """`def value_why`, declared at rules/rangeify.rules:603."""
    return 'not local: recomputed by each reader (' + over(n, most, 'LOCAL_MAX_ROW') + ')' if n > most else row_array(n, ': each element computed once, not once per reader')


def part_read(x, idx, axes):
    """`def part_read`, declared at rules/rangeify.rules:606."""
    return any(idx.src[1 + a].src[0].arg != x.shape[a] for a in axes)


def size_why(n, most):
    """`def size_why`, declared at rules/rangeify.rules:607."""
    return 'not local: ' + over(n, most) if n > most else row_array(n, ' of its reader')


def array_why(x, idx, axes, long):
    """`def array_why`, declared at rules/rangeify.rules:608."""
    return 'not local: ' + long if long is not None else None if part_read(x, idx, axes) else size_why(reduced(x.shape, axes), local_max_array())


def scalar_why(row, outer):
    """`def scalar_why`, declared at rules/rangeify.rules:611."""
    return 'local scalar once per row of its reader (' + str(row) + ' elements)' if outer else "not local: not read at its reader's outer loops (work would repeat)"


def row_why(row, most, ctx, at):
    """`def row_why`, declared at rules/rangeify.rules:613."""
    return 'not local: row of ' + str(row) + ' > LOCAL_MAX_ROW ' + str(most) if row > most else scalar_why(row, ctx.outer_loops(at, True))


def reduce_why(forced, long, row, most, ctx, at):
    """`def reduce_why`, declared at rules/rangeify.rules:615."""
    return 'not local: an earlier run buffered it for another reader' if forced else 'not local: ' + long if long is not None else row_why(row, most, ctx, at)


def same_buffer(b, idx, b2):
    """`def same_buffer`, declared at rules/rangeify.rules:698."""
    return idx.src[1:] == b2.src[1:] and b.shape == b2.shape and b.src[0].op is not Ops.ASSIGN


class RealizeContext:
    """`context RealizeContext`, declared at rules/rangeify.rules:38."""

    realize: 'set[UOp]'
    order: 'dict[UOp, int]'

    def __init__(self, realize=_UNSET, order=_UNSET):
        ctx = self
        ctx.realize = set() if realize is _UNSET else realize
        ctx.order = dict() if order is _UNSET else order


class ChildrenContext:
    """`context ChildrenContext`, declared at rules/rangeify.rules:45."""

    children: 'dict[UOp, list[UOp]]'

    def __init__(self, children=_UNSET, *, sink=None):
        ctx = self
        ctx.children = shared_reductions(sink) if children is _UNSET else children

    @classmethod
    def start(cls, sink):
        return cls(sink=sink)

    def child(self, x, s):
        ctx = self
        rs = ctx.children.get(s)
        return _new(UOp, Ops.CHILD, (_t1 := _new(UOp, Ops.CHILDREN, s.dtype, (s,), len(rs))).dtype, (_t1,), (rs.index(x), len(rs))) if rs else s


class RangeifyContext:
    """`context RangeifyContext`, declared at rules/rangeify.rules:64."""

    force: 'frozenset[UOp]'
    predicted: 'frozenset[UOp]'
    local_values: 'dict[UOp, tuple[int, ...]]'
    ids: 'count'
    group: 'dict[UOp, tuple[UOp, ...]]'
    buffers: 'dict[UOp, UOp]'
    reads: 'dict[UOp, set[tuple]]'
    inlined: 'set[UOp]'
    kernel_loops: 'dict[UOp, tuple[UOp, ...]]'
    local: 'dict[tuple, UOp]'
    products: 'dict[UOp, int]'
    costs: 'dict[UOp, dict[str, None]]'

    def __init__(self, force=_UNSET, predicted=_UNSET, local_values=_UNSET, ids=_UNSET, group=_UNSET, buffers=_UNSET, reads=_UNSET, inlined=_UNSET, kernel_loops=_UNSET, local=_UNSET, products=_UNSET, costs=_UNSET, *, sink=None):
        ctx = self
        ctx.force = frozenset() if force is _UNSET else force
        ctx.predicted = predict_buffers(sink, nests_in) if predicted is _UNSET else predicted
        ctx.local_values = predict_local_values(sink, ctx.predicted) if local_values is _UNSET else local_values
        ctx.ids = count(FIRST_RANGE) if ids is _UNSET else ids
        ctx.group = dict() if group is _UNSET else group
        ctx.buffers = dict() if buffers is _UNSET else buffers
        ctx.reads = dict() if reads is _UNSET else reads
        ctx.inlined = set() if inlined is _UNSET else inlined
        ctx.kernel_loops = dict() if kernel_loops is _UNSET else kernel_loops
        ctx.local = dict() if local is _UNSET else local
        ctx.products = dict() if products is _UNSET else products
        ctx.costs = dict() if costs is _UNSET else costs

    @classmethod
    def start(cls, sink):
        return cls(sink=sink)

    def again(self):
        ctx = self
        more = ctx.must_buffer()
        return ctx.next_run(more) if not (more - ctx.force).isdisjoint(ctx.inlined) else None

    def must_buffer(self):
        ctx = self
        return ctx.force.union(ctx.buffers, [c for c, rs in ctx.reads.items() if len(rs) > 1])

    def next_run(self, force):
        ctx = self
        return RangeifyContext(force=force, predicted=ctx.predicted, local_values=ctx.local_values, costs=ctx.costs)

    def buffer(self, x):
        ctx = self
        return ctx.buffers[x] if x in ctx.buffers else ctx.new_buffer(x)

    def new_buffer(self, x):
        ctx = self
        rngs = ctx.new_ranges(x.shape)
        return ctx.buffers.setdefault(x, _new(UOp, Ops.BUFFERIZE, (_t1 := _new(UOp, Ops.INDEX, x.dtype, (x, *rngs))).dtype, (_t1, *rngs), device_of(x)))

    def chose(self, node, why):
        ctx = self
        noted = None if why is None else ctx.costs.setdefault(node, dict()).update([(why, None)])
        return why is not None and why.startswith('local')

    def placed(self, x, rngs):
        ctx = self
        o = channel_order(x, rngs)
        return device_of(x) if o is None else ctx.regrouped(Placed(device_of(x), o), rngs)

    def regrouped(self, p, rngs):
        ctx = self
        loops = tuple(rngs[i] for i in p.order if rngs[i].op is Ops.RANGE)
        grouped = ctx.group.update((r, loops) for r in loops)
        return p

    def new_range(self, size, kind='loop'):
        ctx = self
        return UOp.const(dtypes.index, 0) if size == 1 else UOp.range(size, next(ctx.ids), kind)

    def value_row(self, x, idx):
        ctx = self
        row = ctx.row_of(x, idx)
        n = reduced(x.shape, ctx.local_values[x])
        return row if row is not None and ctx.chose(x, value_why(n, local_max_row())) else None

    def array(self, x, idx):
        ctx = self
        found = ctx.axes_of(idx)
        return found if found is not None and ctx.chose(x, array_why(x, idx, found[1], too_long(ctx, idx, x if is_products(x) else None))) else None

    def row_of(self, x, idx):
        ctx = self
        row = local_value_row(ctx, x, idx)
        return row if row is not None and ctx.fits_stack(x, idx, ctx.local_values[x], row) else None

    def axes_of(self, idx):
        ctx = self
        found = local_axes(ctx, idx)
        return found if found is not None and ctx.fits_stack(idx.src[0], idx, found[1], found[0]) else None

    def outer_loops(self, idxs, alone=False):
        ctx = self
        rs = ranges_in(*idxs)
        return bool(rs) and all(r.arg[1] == 'loop' for r in rs) and set(ctx.group.get(rs[0], ())[:len(rs)]) == set(rs) or alone and not rs

    def fits_stack(self, x, idx, axes, kernel):
        ctx = self
        return ctx.array_key(x, idx, axes) in ctx.local or ctx.stack_used(kernel) + reduced(x.shape, axes) * x.dtype.itemsize <= stack_bytes()

    def stack_used(self, kernel):
        ctx = self
        return sum(array_bytes(a) for a in ctx.local.values() if a.op is Ops.DEFINE_LOCAL and ctx.kernel_loops.get(a.src[1]) == kernel)

    def reduce_local(self, red, x, idx, at):
        ctx = self
        return ctx.chose(red, reduce_why(red in ctx.force, too_long(ctx, idx) or strided_why(x, red), per_output(x, red), local_max_row(), ctx, at))

    def array_read(self, x, idx, kernel, axes):
        ctx = self
        return _new(UOp, Ops.LOAD, (_t2 := _new(UOp, Ops.INDEX, (_t1 := ctx.array_of(x, idx, kernel, axes)).dtype, (_t1, array_offset(x, idx, axes)))).dtype, (_t2,))

    def array_of(self, x, idx, kernel, axes):
        ctx = self
        key = ctx.array_key(x, idx, axes)
        return ctx.local[key] if key in ctx.local else ctx.new_array(key, x, idx, kernel, axes)

    def array_key(self, x, idx, axes):
        ctx = self
        return (x, tuple(None if a in axes else i for a, i in enumerate(idx.src[1:])))

    def made_in(self, x, idx, axes):
        ctx = self
        made = ctx.local.get(ctx.array_key(x, idx, axes))
        return None if made is None else ctx.kernel_loops.get(made.src[1])

    def new_array(self, key, x, idx, kernel, axes):
        ctx = self
        noted = ctx.inlined.add(x)
        own = ctx.local_ranges(x, axes, kernel)
        return ctx.local.setdefault(key, local_array(ctx.array_value(x, idx, own, axes), own))

    def local_ranges(self, x, axes, kernel):
        ctx = self
        return ctx.in_kernel(tuple(ctx.new_range(x.shape[a], 'local') for a in axes), kernel)

    def in_kernel(self, own, kernel):
        ctx = self
        grouped = ctx.group.update((r, own) for r in own)
        kl = ctx.kernel_loops.update((r, kernel) for r in own)
        return own

    def array_value(self, x, idx, own, axes):
        ctx = self
        v = _new(UOp, Ops.INDEX, x.dtype, (x, *[own[axes.index(a)] if a in axes else i for a, i in enumerate(idx.src[1:])]))
        return map_reduce(ctx, x, v, local=True) if x.op is Ops.REDUCE_AXIS else v

    def reduce_row(self, red, idx):
        ctx = self
        key = (red, idx.src[1:])
        return ctx.local[key] if key in ctx.local else ctx.new_row(key, red)

    def new_row(self, key, red):
        ctx = self
        noted = ctx.inlined.add(red)
        return ctx.local.setdefault(key, map_reduce(ctx, red, _new(UOp, Ops.INDEX, red.dtype, (red, *key[1])), local=True))

    def read_at(self, at, idx):
        ctx = self
        return (at, None) if ctx.outer_loops(at) else (at, idx.arg)

    def wants_buffer(self, x, idx):
        ctx = self
        return x in ctx.predicted or not inline_reduce_ok(ctx, idx)

    def fills(self, red, idx):
        ctx = self
        own = ctx.buffers.get(red)
        return own is not None and own.src[0] is idx

    def new_ranges(self, shape):
        ctx = self
        rngs = tuple(ctx.new_range(s) for s in shape)
        real = tuple(r for r in rngs if r.op is Ops.RANGE)
        grouped = ctx.group.update((r, real) for r in real)
        return rngs


# ======================================================================== limit_buffers
_limit_buffers_rules = (
    RuleInfo('limit_buffers', 'rules/rangeify.rules', 183, 'limit_buffers: {Binary, Ternary} as n if len(buffers_loaded(ctx, n)) > ctx.limit - 1 -> n.replace(src=tuple(s.f(ctx.wrap) if len(buffers_loaded(ctx, s)) > 1 else s for s in n.src))'),
)
_limit_buffers_st = match_stats('limit_buffers', _limit_buffers_rules)  # None unless counting

def _limit_buffers_r0(n, ctx, c_n):
    # rule limit_buffers at rules/rangeify.rules:183
    #   limit_buffers: {Binary, Ternary} as n if len(buffers_loaded(ctx, n)) > ctx.limit - 1 -> n.replace(src=tuple(s.f(ctx.wrap) if len(buffers_loaded(ctx, s)) > 1 else s for s in n.src))
    if not (len(buffers_loaded(ctx, c_n)) > ctx.limit - 1): return None
    return _as_uop(n, c_n.replace(src=tuple(s.f(ctx.wrap) if len(buffers_loaded(ctx, s)) > 1 else s for s in c_n.src)))

def _limit_buffers_ADD(n, ctx):
    # rule limit_buffers at rules/rangeify.rules:183
    #   limit_buffers: {Binary, Ternary} as n if len(buffers_loaded(ctx, n)) > ctx.limit - 1 -> n.replace(src=tuple(s.f(ctx.wrap) if len(buffers_loaded(ctx, s)) > 1 else s for s in n.src))
    #+ if _limit_buffers_st: _limit_buffers_st.attempts[0] += 1
    _r = _limit_buffers_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r, _limit_buffers_rules[0]
    return None

def _limit_buffers_SUB(n, ctx):
    # rule limit_buffers at rules/rangeify.rules:183
    #   limit_buffers: {Binary, Ternary} as n if len(buffers_loaded(ctx, n)) > ctx.limit - 1 -> n.replace(src=tuple(s.f(ctx.wrap) if len(buffers_loaded(ctx, s)) > 1 else s for s in n.src))
    #+ if _limit_buffers_st: _limit_buffers_st.attempts[0] += 1
    _r = _limit_buffers_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r, _limit_buffers_rules[0]
    return None

def _limit_buffers_MUL(n, ctx):
    # rule limit_buffers at rules/rangeify.rules:183
    #   limit_buffers: {Binary, Ternary} as n if len(buffers_loaded(ctx, n)) > ctx.limit - 1 -> n.replace(src=tuple(s.f(ctx.wrap) if len(buffers_loaded(ctx, s)) > 1 else s for s in n.src))
    #+ if _limit_buffers_st: _limit_buffers_st.attempts[0] += 1
    _r = _limit_buffers_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r, _limit_buffers_rules[0]
    return None

def _limit_buffers_FDIV(n, ctx):
    # rule limit_buffers at rules/rangeify.rules:183
    #   limit_buffers: {Binary, Ternary} as n if len(buffers_loaded(ctx, n)) > ctx.limit - 1 -> n.replace(src=tuple(s.f(ctx.wrap) if len(buffers_loaded(ctx, s)) > 1 else s for s in n.src))
    #+ if _limit_buffers_st: _limit_buffers_st.attempts[0] += 1
    _r = _limit_buffers_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r, _limit_buffers_rules[0]
    return None

def _limit_buffers_IDIV(n, ctx):
    # rule limit_buffers at rules/rangeify.rules:183
    #   limit_buffers: {Binary, Ternary} as n if len(buffers_loaded(ctx, n)) > ctx.limit - 1 -> n.replace(src=tuple(s.f(ctx.wrap) if len(buffers_loaded(ctx, s)) > 1 else s for s in n.src))
    #+ if _limit_buffers_st: _limit_buffers_st.attempts[0] += 1
    _r = _limit_buffers_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r, _limit_buffers_rules[0]
    return None

def _limit_buffers_MOD(n, ctx):
    # rule limit_buffers at rules/rangeify.rules:183
    #   limit_buffers: {Binary, Ternary} as n if len(buffers_loaded(ctx, n)) > ctx.limit - 1 -> n.replace(src=tuple(s.f(ctx.wrap) if len(buffers_loaded(ctx, s)) > 1 else s for s in n.src))
    #+ if _limit_buffers_st: _limit_buffers_st.attempts[0] += 1
    _r = _limit_buffers_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r, _limit_buffers_rules[0]
    return None

def _limit_buffers_MAX(n, ctx):
    # rule limit_buffers at rules/rangeify.rules:183
    #   limit_buffers: {Binary, Ternary} as n if len(buffers_loaded(ctx, n)) > ctx.limit - 1 -> n.replace(src=tuple(s.f(ctx.wrap) if len(buffers_loaded(ctx, s)) > 1 else s for s in n.src))
    #+ if _limit_buffers_st: _limit_buffers_st.attempts[0] += 1
    _r = _limit_buffers_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r, _limit_buffers_rules[0]
    return None

def _limit_buffers_MIN(n, ctx):
    # rule limit_buffers at rules/rangeify.rules:183
    #   limit_buffers: {Binary, Ternary} as n if len(buffers_loaded(ctx, n)) > ctx.limit - 1 -> n.replace(src=tuple(s.f(ctx.wrap) if len(buffers_loaded(ctx, s)) > 1 else s for s in n.src))
    #+ if _limit_buffers_st: _limit_buffers_st.attempts[0] += 1
    _r = _limit_buffers_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r, _limit_buffers_rules[0]
    return None

def _limit_buffers_POW(n, ctx):
    # rule limit_buffers at rules/rangeify.rules:183
    #   limit_buffers: {Binary, Ternary} as n if len(buffers_loaded(ctx, n)) > ctx.limit - 1 -> n.replace(src=tuple(s.f(ctx.wrap) if len(buffers_loaded(ctx, s)) > 1 else s for s in n.src))
    #+ if _limit_buffers_st: _limit_buffers_st.attempts[0] += 1
    _r = _limit_buffers_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r, _limit_buffers_rules[0]
    return None

def _limit_buffers_CMPLT(n, ctx):
    # rule limit_buffers at rules/rangeify.rules:183
    #   limit_buffers: {Binary, Ternary} as n if len(buffers_loaded(ctx, n)) > ctx.limit - 1 -> n.replace(src=tuple(s.f(ctx.wrap) if len(buffers_loaded(ctx, s)) > 1 else s for s in n.src))
    #+ if _limit_buffers_st: _limit_buffers_st.attempts[0] += 1
    _r = _limit_buffers_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r, _limit_buffers_rules[0]
    return None

def _limit_buffers_CMPNE(n, ctx):
    # rule limit_buffers at rules/rangeify.rules:183
    #   limit_buffers: {Binary, Ternary} as n if len(buffers_loaded(ctx, n)) > ctx.limit - 1 -> n.replace(src=tuple(s.f(ctx.wrap) if len(buffers_loaded(ctx, s)) > 1 else s for s in n.src))
    #+ if _limit_buffers_st: _limit_buffers_st.attempts[0] += 1
    _r = _limit_buffers_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r, _limit_buffers_rules[0]
    return None

def _limit_buffers_CMPEQ(n, ctx):
    # rule limit_buffers at rules/rangeify.rules:183
    #   limit_buffers: {Binary, Ternary} as n if len(buffers_loaded(ctx, n)) > ctx.limit - 1 -> n.replace(src=tuple(s.f(ctx.wrap) if len(buffers_loaded(ctx, s)) > 1 else s for s in n.src))
    #+ if _limit_buffers_st: _limit_buffers_st.attempts[0] += 1
    _r = _limit_buffers_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r, _limit_buffers_rules[0]
    return None

def _limit_buffers_AND(n, ctx):
    # rule limit_buffers at rules/rangeify.rules:183
    #   limit_buffers: {Binary, Ternary} as n if len(buffers_loaded(ctx, n)) > ctx.limit - 1 -> n.replace(src=tuple(s.f(ctx.wrap) if len(buffers_loaded(ctx, s)) > 1 else s for s in n.src))
    #+ if _limit_buffers_st: _limit_buffers_st.attempts[0] += 1
    _r = _limit_buffers_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r, _limit_buffers_rules[0]
    return None

def _limit_buffers_OR(n, ctx):
    # rule limit_buffers at rules/rangeify.rules:183
    #   limit_buffers: {Binary, Ternary} as n if len(buffers_loaded(ctx, n)) > ctx.limit - 1 -> n.replace(src=tuple(s.f(ctx.wrap) if len(buffers_loaded(ctx, s)) > 1 else s for s in n.src))
    #+ if _limit_buffers_st: _limit_buffers_st.attempts[0] += 1
    _r = _limit_buffers_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r, _limit_buffers_rules[0]
    return None

def _limit_buffers_XOR(n, ctx):
    # rule limit_buffers at rules/rangeify.rules:183
    #   limit_buffers: {Binary, Ternary} as n if len(buffers_loaded(ctx, n)) > ctx.limit - 1 -> n.replace(src=tuple(s.f(ctx.wrap) if len(buffers_loaded(ctx, s)) > 1 else s for s in n.src))
    #+ if _limit_buffers_st: _limit_buffers_st.attempts[0] += 1
    _r = _limit_buffers_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r, _limit_buffers_rules[0]
    return None

def _limit_buffers_SHL(n, ctx):
    # rule limit_buffers at rules/rangeify.rules:183
    #   limit_buffers: {Binary, Ternary} as n if len(buffers_loaded(ctx, n)) > ctx.limit - 1 -> n.replace(src=tuple(s.f(ctx.wrap) if len(buffers_loaded(ctx, s)) > 1 else s for s in n.src))
    #+ if _limit_buffers_st: _limit_buffers_st.attempts[0] += 1
    _r = _limit_buffers_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r, _limit_buffers_rules[0]
    return None

def _limit_buffers_SHR(n, ctx):
    # rule limit_buffers at rules/rangeify.rules:183
    #   limit_buffers: {Binary, Ternary} as n if len(buffers_loaded(ctx, n)) > ctx.limit - 1 -> n.replace(src=tuple(s.f(ctx.wrap) if len(buffers_loaded(ctx, s)) > 1 else s for s in n.src))
    #+ if _limit_buffers_st: _limit_buffers_st.attempts[0] += 1
    _r = _limit_buffers_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r, _limit_buffers_rules[0]
    return None

def _limit_buffers_WHERE(n, ctx):
    # rule limit_buffers at rules/rangeify.rules:183
    #   limit_buffers: {Binary, Ternary} as n if len(buffers_loaded(ctx, n)) > ctx.limit - 1 -> n.replace(src=tuple(s.f(ctx.wrap) if len(buffers_loaded(ctx, s)) > 1 else s for s in n.src))
    #+ if _limit_buffers_st: _limit_buffers_st.attempts[0] += 1
    _r = _limit_buffers_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r, _limit_buffers_rules[0]
    return None

def _limit_buffers_MULACC(n, ctx):
    # rule limit_buffers at rules/rangeify.rules:183
    #   limit_buffers: {Binary, Ternary} as n if len(buffers_loaded(ctx, n)) > ctx.limit - 1 -> n.replace(src=tuple(s.f(ctx.wrap) if len(buffers_loaded(ctx, s)) > 1 else s for s in n.src))
    #+ if _limit_buffers_st: _limit_buffers_st.attempts[0] += 1
    _r = _limit_buffers_r0(n, ctx, n)
    if _r is not None and _r is not n: return _r, _limit_buffers_rules[0]
    return None


_limit_buffers_part = RuleMatcher('limit_buffers', _limit_buffers_rules, {
    Ops.ADD: _limit_buffers_ADD,
    Ops.SUB: _limit_buffers_SUB,
    Ops.MUL: _limit_buffers_MUL,
    Ops.FDIV: _limit_buffers_FDIV,
    Ops.IDIV: _limit_buffers_IDIV,
    Ops.MOD: _limit_buffers_MOD,
    Ops.MAX: _limit_buffers_MAX,
    Ops.MIN: _limit_buffers_MIN,
    Ops.POW: _limit_buffers_POW,
    Ops.CMPLT: _limit_buffers_CMPLT,
    Ops.CMPNE: _limit_buffers_CMPNE,
    Ops.CMPEQ: _limit_buffers_CMPEQ,
    Ops.AND: _limit_buffers_AND,
    Ops.OR: _limit_buffers_OR,
    Ops.XOR: _limit_buffers_XOR,
    Ops.SHL: _limit_buffers_SHL,
    Ops.SHR: _limit_buffers_SHR,
    Ops.WHERE: _limit_buffers_WHERE,
    Ops.MULACC: _limit_buffers_MULACC,
}, home=(globals(), '_limit_buffers_st'))


# ======================================================================== earliest_rewrites
_earliest_rewrites_rules = (
    RuleInfo('drop_marker', 'rules/rangeify.rules', 426, 'drop_marker: {DETACH, CONTIGUOUS_BACKWARD, FUSE}(x) -> x'),
    RuleInfo('variable_noop', 'rules/rangeify.rules', 429, 'variable_noop: RESHAPE(x) as r if r.tag is not None and x.shape == r.arg -> x'),
    RuleInfo('variable_mark', 'rules/rangeify.rules', 430, 'variable_mark: {Movement} as m if m.tag is not None -> m.replace(tag=None)'),
    RuleInfo('size_zero', 'rules/rangeify.rules', 433, 'size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)'),
    RuleInfo('reduce_empty', 'rules/rangeify.rules', 435, 'reduce_empty: REDUCE_AXIS(x) as red if x.size == 0 and red.size != 0 -> red.const_like(reduce_from(red.arg, red.dtype))'),
    RuleInfo('reduce_expand', 'rules/rangeify.rules', 444, 'reduce_expand: REDUCE_AXIS(EXPAND(x) as e) as red if red.arg[0] is not Ops.MUL and reduced(e.shape, red.arg[1]) != 0 and flat(x, red.arg[1]) -> repeated(x, e, red)'),
    RuleInfo('reduce_stack', 'rules/rangeify.rules', 450, 'reduce_stack: REDUCE_AXIS(x) as red if red.arg[0] is Ops.MAX and red.arg[1] == (len(x.shape) - 1,) and m is not None -> m.reshape(red.shape) where m = parts_max(x)'),
    RuleInfo('narrow_reduce', 'rules/rangeify.rules', 461, 'narrow_reduce: REDUCE_AXIS(x) as red if narrow(x, red) and p is not None -> p where p = narrow_split(x, red)'),
    RuleInfo('split_reduceop', 'rules/rangeify.rules', 470, 'split_reduceop: REDUCE_AXIS(x) as red if splits_worth(x, red) and s -> over_last(partials_apart(partials(x, red, *s[0]), x, red), red).reshape(red.shape) where s = splits(x, red)'),
    RuleInfo('split_tail', 'rules/rangeify.rules', 474, 'split_tail: REDUCE_AXIS(x) as red if splits_worth(x, red) and not splits(x, red) and t -> head_tail(x, red, *t[0]) where t = tail_parts(x, red)'),
    RuleInfo('recip_column', 'rules/rangeify.rules', 483, 'recip_column: RECIPROCAL(EXPAND(x) as e) if per_column(x, e) -> x.alu(Ops.RECIPROCAL).f(Ops.CONTIGUOUS).expand(e.arg)'),
    RuleInfo('copy_const', 'rules/rangeify.rules', 485, 'copy_const: COPY(EXPAND(RESHAPE(c:CONST)) as e, ...) -> e'),
    RuleInfo('assign_hazard', 'rules/rangeify.rules', 490, 'assign_hazard: ASSIGN(t, x) as a if x.op is not Ops.CONTIGUOUS and reads_moved(t, x) -> a.replace(src=(t, x.f(Ops.CONTIGUOUS)))'),
    RuleInfo('libm_stored', 'rules/rangeify.rules', 496, 'libm_stored: SINK as s if xs -> s.substitute(dict((x, x.f(Ops.CONTIGUOUS)) for x in xs)) where xs = read_twice(s)'),
)
_earliest_rewrites_st = match_stats('earliest_rewrites', _earliest_rewrites_rules)  # None unless counting

def _earliest_rewrites_r2(n, ctx, m):
    # rule variable_mark at rules/rangeify.rules:430
    #   variable_mark: {Movement} as m if m.tag is not None -> m.replace(tag=None)
    if not (m.tag is not None): return None
    return _as_uop(n, m.replace(tag=None))

def _earliest_rewrites_any0(n, ctx):
    # rule size_zero at rules/rangeify.rules:433
    #   size_zero: {Movement, Elementwise, REDUCE_AXIS, CONTIGUOUS} as x if x.size == 0 and x.base.op is not Ops.BUFFER -> x.const_like(0)
    #+ if _earliest_rewrites_st: _earliest_rewrites_st.attempts[3] += 1
    # x = n
    if n.size == 0 and n.base.op is not _BUFFER:
        _r = n.const_like(0)
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _earliest_rewrites_rules[3]
    return None

def _earliest_rewrites_SINK(n, ctx):
    # rule libm_stored at rules/rangeify.rules:496
    #   libm_stored: SINK as s if xs -> s.substitute(dict((x, x.f(Ops.CONTIGUOUS)) for x in xs)) where xs = read_twice(s)
    #+ if _earliest_rewrites_st: _earliest_rewrites_st.attempts[13] += 1
    # s = n
    xs = read_twice(n)
    if xs:
        _r = n.substitute(dict((x, x.f(_CONTIGUOUS)) for x in xs))
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _earliest_rewrites_rules[13]
    return None

def _earliest_rewrites_RESHAPE(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule variable_noop at rules/rangeify.rules:429
        #   variable_noop: RESHAPE(x) as r if r.tag is not None and x.shape == r.arg -> x
        #+ if _earliest_rewrites_st: _earliest_rewrites_st.attempts[1] += 1
        # r = n, x = n0
        if n.tag is not None and n0.shape == n.arg:
            return n0, _earliest_rewrites_rules[1]
    # rule variable_mark at rules/rangeify.rules:430
    #   variable_mark: {Movement} as m if m.tag is not None -> m.replace(tag=None)
    #+ if _earliest_rewrites_st: _earliest_rewrites_st.attempts[2] += 1
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r, _earliest_rewrites_rules[2]
    _h = _earliest_rewrites_any0(n, ctx)
    if _h is not None: return _h
    return None

def _earliest_rewrites_PERMUTE(n, ctx):
    # rule variable_mark at rules/rangeify.rules:430
    #   variable_mark: {Movement} as m if m.tag is not None -> m.replace(tag=None)
    #+ if _earliest_rewrites_st: _earliest_rewrites_st.attempts[2] += 1
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r, _earliest_rewrites_rules[2]
    _h = _earliest_rewrites_any0(n, ctx)
    if _h is not None: return _h
    return None

def _earliest_rewrites_EXPAND(n, ctx):
    # rule variable_mark at rules/rangeify.rules:430
    #   variable_mark: {Movement} as m if m.tag is not None -> m.replace(tag=None)
    #+ if _earliest_rewrites_st: _earliest_rewrites_st.attempts[2] += 1
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r, _earliest_rewrites_rules[2]
    _h = _earliest_rewrites_any0(n, ctx)
    if _h is not None: return _h
    return None

def _earliest_rewrites_PAD(n, ctx):
    # rule variable_mark at rules/rangeify.rules:430
    #   variable_mark: {Movement} as m if m.tag is not None -> m.replace(tag=None)
    #+ if _earliest_rewrites_st: _earliest_rewrites_st.attempts[2] += 1
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r, _earliest_rewrites_rules[2]
    _h = _earliest_rewrites_any0(n, ctx)
    if _h is not None: return _h
    return None

def _earliest_rewrites_SHRINK(n, ctx):
    # rule variable_mark at rules/rangeify.rules:430
    #   variable_mark: {Movement} as m if m.tag is not None -> m.replace(tag=None)
    #+ if _earliest_rewrites_st: _earliest_rewrites_st.attempts[2] += 1
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r, _earliest_rewrites_rules[2]
    _h = _earliest_rewrites_any0(n, ctx)
    if _h is not None: return _h
    return None

def _earliest_rewrites_FLIP(n, ctx):
    # rule variable_mark at rules/rangeify.rules:430
    #   variable_mark: {Movement} as m if m.tag is not None -> m.replace(tag=None)
    #+ if _earliest_rewrites_st: _earliest_rewrites_st.attempts[2] += 1
    _r = _earliest_rewrites_r2(n, ctx, n)
    if _r is not None and _r is not n: return _r, _earliest_rewrites_rules[2]
    _h = _earliest_rewrites_any0(n, ctx)
    if _h is not None: return _h
    return None

def _earliest_rewrites_CONTIGUOUS_BACKWARD(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule drop_marker at rules/rangeify.rules:426
        #   drop_marker: {DETACH, CONTIGUOUS_BACKWARD, FUSE}(x) -> x
        #+ if _earliest_rewrites_st: _earliest_rewrites_st.attempts[0] += 1
        # x = n0
        return n0, _earliest_rewrites_rules[0]
    return None

def _earliest_rewrites_DETACH(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule drop_marker at rules/rangeify.rules:426
        #   drop_marker: {DETACH, CONTIGUOUS_BACKWARD, FUSE}(x) -> x
        #+ if _earliest_rewrites_st: _earliest_rewrites_st.attempts[0] += 1
        # x = n0
        return n0, _earliest_rewrites_rules[0]
    return None

def _earliest_rewrites_FUSE(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule drop_marker at rules/rangeify.rules:426
        #   drop_marker: {DETACH, CONTIGUOUS_BACKWARD, FUSE}(x) -> x
        #+ if _earliest_rewrites_st: _earliest_rewrites_st.attempts[0] += 1
        # x = n0
        return n0, _earliest_rewrites_rules[0]
    return None

def _earliest_rewrites_COPY(n, ctx):
    if len(n.src) >= 1:
        n0 = n.src[0]
        if n0.op is _EXPAND and len(n0.src) == 1:
            n0_0 = n0.src[0]
            if n0_0.op is _RESHAPE and len(n0_0.src) == 1:
                n0_0_0 = n0_0.src[0]
                if n0_0_0.op is _CONST:
                    # rule copy_const at rules/rangeify.rules:485
                    #   copy_const: COPY(EXPAND(RESHAPE(c:CONST)) as e, ...) -> e
                    #+ if _earliest_rewrites_st: _earliest_rewrites_st.attempts[11] += 1
                    # c = n0_0_0, e = n0
                    return n0, _earliest_rewrites_rules[11]
    return None

def _earliest_rewrites_ASSIGN(n, ctx):
    try:
        n0, n1 = n.src
    except ValueError:
        return None
    # rule assign_hazard at rules/rangeify.rules:490
    #   assign_hazard: ASSIGN(t, x) as a if x.op is not Ops.CONTIGUOUS and reads_moved(t, x) -> a.replace(src=(t, x.f(Ops.CONTIGUOUS)))
    #+ if _earliest_rewrites_st: _earliest_rewrites_st.attempts[12] += 1
    # a = n, t = n0, x = n1
    if n1.op is not _CONTIGUOUS and reads_moved(n0, n1):
        _r = n.replace(src=(n0, n1.f(_CONTIGUOUS)))
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _earliest_rewrites_rules[12]
    return None

def _earliest_rewrites_REDUCE_AXIS(n, ctx):
    _h = _earliest_rewrites_any0(n, ctx)
    if _h is not None: return _h
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule reduce_empty at rules/rangeify.rules:435
        #   reduce_empty: REDUCE_AXIS(x) as red if x.size == 0 and red.size != 0 -> red.const_like(reduce_from(red.arg, red.dtype))
        #+ if _earliest_rewrites_st: _earliest_rewrites_st.attempts[4] += 1
        # red = n, x = n0
        if n0.size == 0 and n.size != 0:
            _r = n.const_like(reduce_from(n.arg, n.dtype))
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _earliest_rewrites_rules[4]
        if n0.op is _EXPAND and len(n0.src) == 1:
            n0_0 = n0.src[0]
            # rule reduce_expand at rules/rangeify.rules:444
            #   reduce_expand: REDUCE_AXIS(EXPAND(x) as e) as red if red.arg[0] is not Ops.MUL and reduced(e.shape, red.arg[1]) != 0 and flat(x, red.arg[1]) -> repeated(x, e, red)
            #+ if _earliest_rewrites_st: _earliest_rewrites_st.attempts[5] += 1
            # e = n0, red = n, x = n0_0
            if n.arg[0] is not _MUL and reduced(n0.shape, n.arg[1]) != 0 and flat(n0_0, n.arg[1]):
                _r = repeated(n0_0, n0, n)
                if _r is not None:
                    if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                    if _r is not n: return _r, _earliest_rewrites_rules[5]
        # rule reduce_stack at rules/rangeify.rules:450
        #   reduce_stack: REDUCE_AXIS(x) as red if red.arg[0] is Ops.MAX and red.arg[1] == (len(x.shape) - 1,) and m is not None -> m.reshape(red.shape) where m = parts_max(x)
        #+ if _earliest_rewrites_st: _earliest_rewrites_st.attempts[6] += 1
        # red = n, x = n0
        if n.arg[0] is _MAX and n.arg[1] == (len(n0.shape) - 1,):
            m = parts_max(n0)
            if m is not None:
                _r = m.reshape(n.shape)
                if _r is not None:
                    if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                    if _r is not n: return _r, _earliest_rewrites_rules[6]
        # rule narrow_reduce at rules/rangeify.rules:461
        #   narrow_reduce: REDUCE_AXIS(x) as red if narrow(x, red) and p is not None -> p where p = narrow_split(x, red)
        #+ if _earliest_rewrites_st: _earliest_rewrites_st.attempts[7] += 1
        # red = n, x = n0
        if narrow(n0, n):
            p = narrow_split(n0, n)
            if p is not None:
                _r = p
                if _r is not None:
                    if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                    if _r is not n: return _r, _earliest_rewrites_rules[7]
        # rule split_reduceop at rules/rangeify.rules:470
        #   split_reduceop: REDUCE_AXIS(x) as red if splits_worth(x, red) and s -> over_last(partials_apart(partials(x, red, *s[0]), x, red), red).reshape(red.shape) where s = splits(x, red)
        #+ if _earliest_rewrites_st: _earliest_rewrites_st.attempts[8] += 1
        # red = n, x = n0
        if splits_worth(n0, n):
            s = splits(n0, n)
            if s:
                _r = over_last(partials_apart(partials(n0, n, *s[0]), n0, n), n).reshape(n.shape)
                if _r is not None:
                    if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                    if _r is not n: return _r, _earliest_rewrites_rules[8]
        # rule split_tail at rules/rangeify.rules:474
        #   split_tail: REDUCE_AXIS(x) as red if splits_worth(x, red) and not splits(x, red) and t -> head_tail(x, red, *t[0]) where t = tail_parts(x, red)
        #+ if _earliest_rewrites_st: _earliest_rewrites_st.attempts[9] += 1
        # red = n, x = n0
        if splits_worth(n0, n) and not splits(n0, n):
            t = tail_parts(n0, n)
            if t:
                _r = head_tail(n0, n, *t[0])
                if _r is not None:
                    if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                    if _r is not n: return _r, _earliest_rewrites_rules[9]
    return None

def _earliest_rewrites_RECIPROCAL(n, ctx):
    _h = _earliest_rewrites_any0(n, ctx)
    if _h is not None: return _h
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is _EXPAND and len(n0.src) == 1:
            n0_0 = n0.src[0]
            # rule recip_column at rules/rangeify.rules:483
            #   recip_column: RECIPROCAL(EXPAND(x) as e) if per_column(x, e) -> x.alu(Ops.RECIPROCAL).f(Ops.CONTIGUOUS).expand(e.arg)
            #+ if _earliest_rewrites_st: _earliest_rewrites_st.attempts[10] += 1
            # e = n0, x = n0_0
            if per_column(n0_0, n0):
                _r = n0_0.alu(_RECIPROCAL).f(_CONTIGUOUS).expand(n0.arg)
                if _r is not None:
                    if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                    if _r is not n: return _r, _earliest_rewrites_rules[10]
    return None


_earliest_rewrites_part = RuleMatcher('earliest_rewrites', _earliest_rewrites_rules, {
    Ops.SINK: _earliest_rewrites_SINK,
    Ops.RESHAPE: _earliest_rewrites_RESHAPE,
    Ops.PERMUTE: _earliest_rewrites_PERMUTE,
    Ops.EXPAND: _earliest_rewrites_EXPAND,
    Ops.PAD: _earliest_rewrites_PAD,
    Ops.SHRINK: _earliest_rewrites_SHRINK,
    Ops.FLIP: _earliest_rewrites_FLIP,
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
    Ops.RECIPROCAL: _earliest_rewrites_RECIPROCAL,
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
    Ops.COS: _earliest_rewrites_any0,
}, home=(globals(), '_earliest_rewrites_st'))


# ======================================================================== do_realize
_do_realize_rules = (
    RuleInfo('realize_roots', 'rules/rangeify.rules', 504, 'realize_roots: SINK as s -> ctx.realize.update(x for x in s.src if x.op is not Ops.BUFFER and not (x.op is Ops.RESHAPE and x.src[0].op is Ops.BUFFER))'),
    RuleInfo('realize_effects', 'rules/rangeify.rules', 507, 'realize_effects: {ASSIGN, COPY, BUFFER_VIEW, CONTIGUOUS} as x -> ctx.realize.add(x)'),
    RuleInfo('realize_copy_src', 'rules/rangeify.rules', 510, 'realize_copy_src: COPY(x, ...) if x.base.op not in (Ops.BUFFER, Ops.CONST) -> ctx.realize.add(x)'),
    RuleInfo('realize_assign', 'rules/rangeify.rules', 513, 'realize_assign: ASSIGN(_, v, ...) if v.op not in (Ops.CONTIGUOUS, Ops.ASSIGN, Ops.COPY, Ops.BUFFER, Ops.BUFFER_VIEW, Ops.CONST, Ops.BIND, Ops.DEVICE, Ops.DEFINE_VAR) -> ctx.realize.add(v)'),
)
_do_realize_st = match_stats('do_realize', _do_realize_rules)  # None unless counting

def _do_realize_SINK(n, ctx):
    # rule realize_roots at rules/rangeify.rules:504
    #   realize_roots: SINK as s -> ctx.realize.update(x for x in s.src if x.op is not Ops.BUFFER and not (x.op is Ops.RESHAPE and x.src[0].op is Ops.BUFFER))
    #+ if _do_realize_st: _do_realize_st.attempts[0] += 1
    # s = n
    _r = ctx.realize.update(x for x in n.src if x.op is not _BUFFER and not (x.op is _RESHAPE and x.src[0].op is _BUFFER))
    if _r is not None:
        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
        if _r is not n: return _r, _do_realize_rules[0]
    return None

def _do_realize_CONTIGUOUS(n, ctx):
    # rule realize_effects at rules/rangeify.rules:507
    #   realize_effects: {ASSIGN, COPY, BUFFER_VIEW, CONTIGUOUS} as x -> ctx.realize.add(x)
    #+ if _do_realize_st: _do_realize_st.attempts[1] += 1
    # x = n
    _r = ctx.realize.add(n)
    if _r is not None:
        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
        if _r is not n: return _r, _do_realize_rules[1]
    return None

def _do_realize_COPY(n, ctx):
    # rule realize_effects at rules/rangeify.rules:507
    #   realize_effects: {ASSIGN, COPY, BUFFER_VIEW, CONTIGUOUS} as x -> ctx.realize.add(x)
    #+ if _do_realize_st: _do_realize_st.attempts[1] += 1
    # x = n
    _r = ctx.realize.add(n)
    if _r is not None:
        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
        if _r is not n: return _r, _do_realize_rules[1]
    if len(n.src) >= 1:
        n0 = n.src[0]
        # rule realize_copy_src at rules/rangeify.rules:510
        #   realize_copy_src: COPY(x, ...) if x.base.op not in (Ops.BUFFER, Ops.CONST) -> ctx.realize.add(x)
        #+ if _do_realize_st: _do_realize_st.attempts[2] += 1
        # x = n0
        if n0.base.op not in (_BUFFER, _CONST):
            _r = ctx.realize.add(n0)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _do_realize_rules[2]
    return None

def _do_realize_BUFFER_VIEW(n, ctx):
    # rule realize_effects at rules/rangeify.rules:507
    #   realize_effects: {ASSIGN, COPY, BUFFER_VIEW, CONTIGUOUS} as x -> ctx.realize.add(x)
    #+ if _do_realize_st: _do_realize_st.attempts[1] += 1
    # x = n
    _r = ctx.realize.add(n)
    if _r is not None:
        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
        if _r is not n: return _r, _do_realize_rules[1]
    return None

def _do_realize_ASSIGN(n, ctx):
    # rule realize_effects at rules/rangeify.rules:507
    #   realize_effects: {ASSIGN, COPY, BUFFER_VIEW, CONTIGUOUS} as x -> ctx.realize.add(x)
    #+ if _do_realize_st: _do_realize_st.attempts[1] += 1
    # x = n
    _r = ctx.realize.add(n)
    if _r is not None:
        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
        if _r is not n: return _r, _do_realize_rules[1]
    if len(n.src) >= 2:
        n1 = n.src[1]
        # rule realize_assign at rules/rangeify.rules:513
        #   realize_assign: ASSIGN(_, v, ...) if v.op not in (Ops.CONTIGUOUS, Ops.ASSIGN, Ops.COPY, Ops.BUFFER, Ops.BUFFER_VIEW, Ops.CONST, Ops.BIND, Ops.DEVICE, Ops.DEFINE_VAR) -> ctx.realize.add(v)
        #+ if _do_realize_st: _do_realize_st.attempts[3] += 1
        # v = n1
        if n1.op not in (_CONTIGUOUS, _ASSIGN, _COPY, _BUFFER, _BUFFER_VIEW, _CONST, _BIND, _DEVICE, _DEFINE_VAR):
            _r = ctx.realize.add(n1)
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
}, home=(globals(), '_do_realize_st'))


# ======================================================================== add_realize
_add_realize_rules = (
    RuleInfo('add_realize', 'rules/rangeify.rules', 517, 'add_realize: x if x in ctx.realize and x.tag is None -> REALIZE(x.replace(tag="realized"), tag=(ctx.order.setdefault(x, len(ctx.order)),))'),
)
_add_realize_st = match_stats('add_realize', _add_realize_rules)  # None unless counting

def _add_realize_any0(n, ctx):
    # rule add_realize at rules/rangeify.rules:517
    #   add_realize: x if x in ctx.realize and x.tag is None -> REALIZE(x.replace(tag="realized"), tag=(ctx.order.setdefault(x, len(ctx.order)),))
    #+ if _add_realize_st: _add_realize_st.attempts[0] += 1
    # x = n
    if n in ctx.realize and n.tag is None:
        _r = _new(UOp, _REALIZE, (_t1 := n.replace(tag='realized')).dtype, (_t1,), None, (ctx.order.setdefault(n, len(ctx.order)),))
        if _r is not n: return _r, _add_realize_rules[0]
    return None


_add_realize_part = RuleMatcher('add_realize', _add_realize_rules, {
    **dict.fromkeys(Ops, _add_realize_any0),
}, home=(globals(), '_add_realize_st'))


# ======================================================================== pm_children
_pm_children_rules = (
    RuleInfo('mark_children', 'rules/rangeify.rules', 526, 'mark_children: x if ctx.children and x.op not in (Ops.CHILD, Ops.CHILDREN) and any(s in ctx.children for s in x.src) -> x.replace(src=tuple(ctx.child(x, s) for s in x.src))'),
    RuleInfo('unmark', 'rules/rangeify.rules', 530, 'unmark: x if x.tag == "realized" -> x.replace(tag=None)'),
)
_pm_children_st = match_stats('pm_children', _pm_children_rules)  # None unless counting

def _pm_children_any0(n, ctx):
    # rule mark_children at rules/rangeify.rules:526
    #   mark_children: x if ctx.children and x.op not in (Ops.CHILD, Ops.CHILDREN) and any(s in ctx.children for s in x.src) -> x.replace(src=tuple(ctx.child(x, s) for s in x.src))
    #+ if _pm_children_st: _pm_children_st.attempts[0] += 1
    # x = n
    if ctx.children and n.op not in (_CHILD, _CHILDREN) and any(s in ctx.children for s in n.src):
        _r = n.replace(src=tuple(ctx.child(n, s) for s in n.src))
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _pm_children_rules[0]
    # rule unmark at rules/rangeify.rules:530
    #   unmark: x if x.tag == "realized" -> x.replace(tag=None)
    #+ if _pm_children_st: _pm_children_st.attempts[1] += 1
    # x = n
    if n.tag == 'realized':
        _r = n.replace(tag=None)
        if _r is not None:
            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
            if _r is not n: return _r, _pm_children_rules[1]
    return None


_pm_children_part = RuleMatcher('pm_children', _pm_children_rules, {
    **dict.fromkeys(Ops, _pm_children_any0),
}, home=(globals(), '_pm_children_st'))


# ======================================================================== pm_mops
_pm_mops_rules = (
    RuleInfo('index_shrink', 'rules/rangeify.rules', 568, 'index_shrink: INDEX(SHRINK as r, *idx) as i -> INDEX(r.src[0], *[a + s[0] if s[0] != 0 else a for a, s in zip(idx, r.arg)], arg=i.arg)'),
    RuleInfo('index_permute', 'rules/rangeify.rules', 570, 'index_permute: INDEX(PERMUTE as r, *idx) as i -> INDEX(r.src[0], *[idx[r.arg.index(k)] for k in range(len(idx))], arg=i.arg)'),
    RuleInfo('index_flip', 'rules/rangeify.rules', 572, 'index_flip: INDEX(FLIP as r, *idx) as i -> INDEX(r.src[0], *[(s - 1) - a if f else a for a, s, f in zip(idx, r.shape, r.arg)], arg=i.arg)'),
    RuleInfo('index_expand', 'rules/rangeify.rules', 575, 'index_expand: INDEX(EXPAND as r, *idx) as i -> INDEX(r.src[0], *unexpand(idx, r), arg=dropped(i.arg or (), idx, r))'),
    RuleInfo('index_pad', 'rules/rangeify.rules', 578, 'index_pad: INDEX(PAD(x) as r, *idx) as i -> v if ok is None else ok.where(v, UOp.const(r.dtype, 0)) where cs = pad_conds(idx, r), v = INDEX(x, *unpadded(idx, cs, r), arg=i.arg), ok = all_of(cs)'),
    RuleInfo('index_reshape', 'rules/rangeify.rules', 584, 'index_reshape: INDEX(RESHAPE(x) as r, *idx) as i -> INDEX(x, *simplified(unreshape(idx, r, x)), arg=i.arg)'),
)
_pm_mops_st = match_stats('pm_mops', _pm_mops_rules)  # None unless counting

def _pm_mops_INDEX(n, ctx):
    if len(n.src) >= 1:
        n0 = n.src[0]
        o0 = n0.op
        if o0 in _OPS0:
            if o0 is _SHRINK:
                # rule index_shrink at rules/rangeify.rules:568
                #   index_shrink: INDEX(SHRINK as r, *idx) as i -> INDEX(r.src[0], *[a + s[0] if s[0] != 0 else a for a, s in zip(idx, r.arg)], arg=i.arg)
                #+ if _pm_mops_st: _pm_mops_st.attempts[0] += 1
                # i = n, r = n0
                idx = n.src[1:]
                _r = _new(UOp, _INDEX, (_t1 := n0.src[0]).dtype, (_t1, *[a + s[0] if s[0] != 0 else a for a, s in zip(idx, n0.arg)]), n.arg)
                if _r is not n: return _r, _pm_mops_rules[0]
            elif o0 is _PERMUTE:
                # rule index_permute at rules/rangeify.rules:570
                #   index_permute: INDEX(PERMUTE as r, *idx) as i -> INDEX(r.src[0], *[idx[r.arg.index(k)] for k in range(len(idx))], arg=i.arg)
                #+ if _pm_mops_st: _pm_mops_st.attempts[1] += 1
                # i = n, r = n0
                idx = n.src[1:]
                _r = _new(UOp, _INDEX, (_t2 := n0.src[0]).dtype, (_t2, *[idx[n0.arg.index(k)] for k in range(len(idx))]), n.arg)
                if _r is not n: return _r, _pm_mops_rules[1]
            elif o0 is _FLIP:
                # rule index_flip at rules/rangeify.rules:572
                #   index_flip: INDEX(FLIP as r, *idx) as i -> INDEX(r.src[0], *[(s - 1) - a if f else a for a, s, f in zip(idx, r.shape, r.arg)], arg=i.arg)
                #+ if _pm_mops_st: _pm_mops_st.attempts[2] += 1
                # i = n, r = n0
                idx = n.src[1:]
                _r = _new(UOp, _INDEX, (_t3 := n0.src[0]).dtype, (_t3, *[s - 1 - a if f else a for a, s, f in zip(idx, n0.shape, n0.arg)]), n.arg)
                if _r is not n: return _r, _pm_mops_rules[2]
            elif o0 is _EXPAND:
                # rule index_expand at rules/rangeify.rules:575
                #   index_expand: INDEX(EXPAND as r, *idx) as i -> INDEX(r.src[0], *unexpand(idx, r), arg=dropped(i.arg or (), idx, r))
                #+ if _pm_mops_st: _pm_mops_st.attempts[3] += 1
                # i = n, r = n0
                idx = n.src[1:]
                _r = _new(UOp, _INDEX, (_t4 := n0.src[0]).dtype, (_t4, *unexpand(idx, n0)), dropped(n.arg or (), idx, n0))
                if _r is not n: return _r, _pm_mops_rules[3]
            elif o0 is _PAD and len(n0.src) == 1:
                n0_0 = n0.src[0]
                # rule index_pad at rules/rangeify.rules:578
                #   index_pad: INDEX(PAD(x) as r, *idx) as i -> v if ok is None else ok.where(v, UOp.const(r.dtype, 0)) where cs = pad_conds(idx, r), v = INDEX(x, *unpadded(idx, cs, r), arg=i.arg), ok = all_of(cs)
                #+ if _pm_mops_st: _pm_mops_st.attempts[4] += 1
                # i = n, r = n0, x = n0_0
                idx = n.src[1:]
                cs = pad_conds(idx, n0)
                v = _new(UOp, _INDEX, n0_0.dtype, (n0_0, *unpadded(idx, cs, n0)), n.arg)
                ok = all_of(cs)
                _r = _as_uop(n, v) if ok is None else _as_uop(n, ok.where(v, UOp.const(n0.dtype, 0)))
                if _r is not None and _r is not n: return _r, _pm_mops_rules[4]
            elif o0 is _RESHAPE and len(n0.src) == 1:
                n0_0 = n0.src[0]
                # rule index_reshape at rules/rangeify.rules:584
                #   index_reshape: INDEX(RESHAPE(x) as r, *idx) as i -> INDEX(x, *simplified(unreshape(idx, r, x)), arg=i.arg)
                #+ if _pm_mops_st: _pm_mops_st.attempts[5] += 1
                # i = n, r = n0, x = n0_0
                idx = n.src[1:]
                _r = _new(UOp, _INDEX, n0_0.dtype, (n0_0, *simplified(unreshape(idx, n0, n0_0))), n.arg)
                if _r is not n: return _r, _pm_mops_rules[5]
    return None


_pm_mops_part = RuleMatcher('pm_mops', _pm_mops_rules, {
    Ops.INDEX: _pm_mops_INDEX,
}, home=(globals(), '_pm_mops_st'))


# ======================================================================== pm_rangeify
_pm_rangeify_rules = (
    RuleInfo('realize', 'rules/rangeify.rules', 621, 'realize: REALIZE as r -> BUFFERIZE(INDEX(x, *rngs), *rngs, arg=ctx.placed(x, rngs), tag=r.tag) where x = r.src[0], rngs = ctx.new_ranges(x.shape)'),
    RuleInfo('child_buffer', 'rules/rangeify.rules', 625, 'child_buffer: INDEX(CHILD(CHILDREN(c)), *at) if c in ctx.force -> INDEX(ctx.buffer(c), *at)'),
    RuleInfo('index_child', 'rules/rangeify.rules', 628, 'index_child: INDEX(CHILD(CHILDREN(c)), *at) as idx -> INDEX(c, *at, arg=idx.arg) where read = ctx.reads.setdefault(c, set()).add(ctx.read_at(at, idx)), inlined = ctx.inlined.add(c)'),
    RuleInfo('index_const', 'rules/rangeify.rules', 631, 'index_const: INDEX({CONST, DEFINE_VAR} as c, ...) -> c'),
    RuleInfo('index_assign', 'rules/rangeify.rules', 633, 'index_assign: INDEX(ASSIGN as a, *idx) as i -> a.replace(src=tuple(INDEX(s, *idx, arg=i.arg) for s in a.src))'),
    RuleInfo('local_value', 'rules/rangeify.rules', 646, 'local_value: INDEX(Elementwise as x, ...) as idx if x in ctx.local_values and row -> ctx.array_read(x, idx, row, ctx.local_values[x]) where row = ctx.value_row(x, idx)'),
    RuleInfo('local_array', 'rules/rangeify.rules', 653, 'local_array: INDEX(REDUCE_AXIS(s) as x, ...) as idx if x not in ctx.force and ctx.wants_buffer(x, idx) and s.size != x.size and arr -> ctx.array_read(x, idx, *arr) where arr = ctx.array(x, idx)'),
    RuleInfo('index_alu', 'rules/rangeify.rules', 656, 'index_alu: INDEX(Elementwise as x, *idx) as i -> x.replace(src=tuple(INDEX(s, *idx, arg=i.arg) for s in x.src))'),
    RuleInfo('index_marker', 'rules/rangeify.rules', 658, 'index_marker: INDEX({CONTIGUOUS, COPY, NOOP} as x, *idx) as i -> x.replace(src=(INDEX(x.src[0], *idx, arg=i.arg),) + x.src[1:])'),
    RuleInfo('local_reduce', 'rules/rangeify.rules', 674, 'local_reduce: INDEX(REDUCE_AXIS(x) as red, *at) as idx if (idx.arg or red in ctx.reads) and ctx.reduce_local(red, x, idx, at) -> ctx.reduce_row(red, idx)'),
    RuleInfo('reduce_buffer', 'rules/rangeify.rules', 679, 'reduce_buffer: INDEX(REDUCE_AXIS as red, *at) as idx if not ctx.fills(red, idx) and (red in ctx.force or ctx.wants_buffer(red, idx)) -> INDEX(ctx.buffer(red), *at)'),
    RuleInfo('index_reduce', 'rules/rangeify.rules', 682, 'index_reduce: INDEX(REDUCE_AXIS as red, ...) as idx -> map_reduce(ctx, red, idx)'),
    RuleInfo('index_positions', 'rules/rangeify.rules', 686, 'index_positions: INDEX(b:BUFFER, i) if b.arg.positions -> i.cast(b.dtype)'),
    RuleInfo('index_memory', 'rules/rangeify.rules', 688, 'index_memory: INDEX({BUFFER, BUFFERIZE, REALIZE}, ...) as idx if idx.arg is not None -> idx.replace(arg=None)'),
    RuleInfo('index_other', 'rules/rangeify.rules', 690, 'index_other: INDEX(x, ...) if x.op not in (Ops.REALIZE, Ops.BUFFERIZE, Ops.BUFFER, Ops.DEFINE_LOCAL) -> error "rangeify: no rule pushes an INDEX through " + x.op.name'),
)
_pm_rangeify_st = match_stats('pm_rangeify', _pm_rangeify_rules)  # None unless counting

def _pm_rangeify_REALIZE(n, ctx):
    # rule realize at rules/rangeify.rules:621
    #   realize: REALIZE as r -> BUFFERIZE(INDEX(x, *rngs), *rngs, arg=ctx.placed(x, rngs), tag=r.tag) where x = r.src[0], rngs = ctx.new_ranges(x.shape)
    #+ if _pm_rangeify_st: _pm_rangeify_st.attempts[0] += 1
    # r = n
    x = n.src[0]
    rngs = ctx.new_ranges(x.shape)
    _r = _new(UOp, _BUFFERIZE, (_t1 := _new(UOp, _INDEX, x.dtype, (x, *rngs))).dtype, (_t1, *rngs), ctx.placed(x, rngs), n.tag)
    if _r is not n: return _r, _pm_rangeify_rules[0]
    return None

def _pm_rangeify_INDEX(n, ctx):
    if len(n.src) >= 1:
        n0 = n.src[0]
        o0 = n0.op
        if o0 in _OPS0:
            if o0 is _SHRINK:
                # rule index_shrink at rules/rangeify.rules:568
                #   index_shrink: INDEX(SHRINK as r, *idx) as i -> INDEX(r.src[0], *[a + s[0] if s[0] != 0 else a for a, s in zip(idx, r.arg)], arg=i.arg)
                #+ if _pm_mops_st: _pm_mops_st.attempts[0] += 1
                # i = n, r = n0
                idx = n.src[1:]
                _r = _new(UOp, _INDEX, (_t1 := n0.src[0]).dtype, (_t1, *[a + s[0] if s[0] != 0 else a for a, s in zip(idx, n0.arg)]), n.arg)
                if _r is not n: return _r, _pm_mops_rules[0]
            elif o0 is _PERMUTE:
                # rule index_permute at rules/rangeify.rules:570
                #   index_permute: INDEX(PERMUTE as r, *idx) as i -> INDEX(r.src[0], *[idx[r.arg.index(k)] for k in range(len(idx))], arg=i.arg)
                #+ if _pm_mops_st: _pm_mops_st.attempts[1] += 1
                # i = n, r = n0
                idx = n.src[1:]
                _r = _new(UOp, _INDEX, (_t2 := n0.src[0]).dtype, (_t2, *[idx[n0.arg.index(k)] for k in range(len(idx))]), n.arg)
                if _r is not n: return _r, _pm_mops_rules[1]
            elif o0 is _FLIP:
                # rule index_flip at rules/rangeify.rules:572
                #   index_flip: INDEX(FLIP as r, *idx) as i -> INDEX(r.src[0], *[(s - 1) - a if f else a for a, s, f in zip(idx, r.shape, r.arg)], arg=i.arg)
                #+ if _pm_mops_st: _pm_mops_st.attempts[2] += 1
                # i = n, r = n0
                idx = n.src[1:]
                _r = _new(UOp, _INDEX, (_t3 := n0.src[0]).dtype, (_t3, *[s - 1 - a if f else a for a, s, f in zip(idx, n0.shape, n0.arg)]), n.arg)
                if _r is not n: return _r, _pm_mops_rules[2]
            elif o0 is _EXPAND:
                # rule index_expand at rules/rangeify.rules:575
                #   index_expand: INDEX(EXPAND as r, *idx) as i -> INDEX(r.src[0], *unexpand(idx, r), arg=dropped(i.arg or (), idx, r))
                #+ if _pm_mops_st: _pm_mops_st.attempts[3] += 1
                # i = n, r = n0
                idx = n.src[1:]
                _r = _new(UOp, _INDEX, (_t4 := n0.src[0]).dtype, (_t4, *unexpand(idx, n0)), dropped(n.arg or (), idx, n0))
                if _r is not n: return _r, _pm_mops_rules[3]
            elif o0 is _PAD and len(n0.src) == 1:
                n0_0 = n0.src[0]
                # rule index_pad at rules/rangeify.rules:578
                #   index_pad: INDEX(PAD(x) as r, *idx) as i -> v if ok is None else ok.where(v, UOp.const(r.dtype, 0)) where cs = pad_conds(idx, r), v = INDEX(x, *unpadded(idx, cs, r), arg=i.arg), ok = all_of(cs)
                #+ if _pm_mops_st: _pm_mops_st.attempts[4] += 1
                # i = n, r = n0, x = n0_0
                idx = n.src[1:]
                cs = pad_conds(idx, n0)
                v = _new(UOp, _INDEX, n0_0.dtype, (n0_0, *unpadded(idx, cs, n0)), n.arg)
                ok = all_of(cs)
                _r = _as_uop(n, v) if ok is None else _as_uop(n, ok.where(v, UOp.const(n0.dtype, 0)))
                if _r is not None and _r is not n: return _r, _pm_mops_rules[4]
            elif o0 is _RESHAPE and len(n0.src) == 1:
                n0_0 = n0.src[0]
                # rule index_reshape at rules/rangeify.rules:584
                #   index_reshape: INDEX(RESHAPE(x) as r, *idx) as i -> INDEX(x, *simplified(unreshape(idx, r, x)), arg=i.arg)
                #+ if _pm_mops_st: _pm_mops_st.attempts[5] += 1
                # i = n, r = n0, x = n0_0
                idx = n.src[1:]
                _r = _new(UOp, _INDEX, n0_0.dtype, (n0_0, *simplified(unreshape(idx, n0, n0_0))), n.arg)
                if _r is not n: return _r, _pm_mops_rules[5]
    if len(n.src) >= 1:
        n0 = n.src[0]
        if n0.op is _REDUCE_AXIS:
            if len(n0.src) == 1:
                n0_0 = n0.src[0]
                # rule local_array at rules/rangeify.rules:653
                #   local_array: INDEX(REDUCE_AXIS(s) as x, ...) as idx if x not in ctx.force and ctx.wants_buffer(x, idx) and s.size != x.size and arr -> ctx.array_read(x, idx, *arr) where arr = ctx.array(x, idx)
                #+ if _pm_rangeify_st: _pm_rangeify_st.attempts[6] += 1
                # idx = n, s = n0_0, x = n0
                if n0 not in ctx.force and ctx.wants_buffer(n0, n) and n0_0.size != n0.size:
                    arr = ctx.array(n0, n)
                    if arr:
                        _r = ctx.array_read(n0, n, *arr)
                        if _r is not None:
                            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                            if _r is not n: return _r, _pm_rangeify_rules[6]
                # rule local_reduce at rules/rangeify.rules:674
                #   local_reduce: INDEX(REDUCE_AXIS(x) as red, *at) as idx if (idx.arg or red in ctx.reads) and ctx.reduce_local(red, x, idx, at) -> ctx.reduce_row(red, idx)
                #+ if _pm_rangeify_st: _pm_rangeify_st.attempts[9] += 1
                # idx = n, red = n0, x = n0_0
                at = n.src[1:]
                if (n.arg or n0 in ctx.reads) and ctx.reduce_local(n0, n0_0, n, at):
                    _r = ctx.reduce_row(n0, n)
                    if _r is not None:
                        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                        if _r is not n: return _r, _pm_rangeify_rules[9]
            # rule reduce_buffer at rules/rangeify.rules:679
            #   reduce_buffer: INDEX(REDUCE_AXIS as red, *at) as idx if not ctx.fills(red, idx) and (red in ctx.force or ctx.wants_buffer(red, idx)) -> INDEX(ctx.buffer(red), *at)
            #+ if _pm_rangeify_st: _pm_rangeify_st.attempts[10] += 1
            # idx = n, red = n0
            at = n.src[1:]
            if not ctx.fills(n0, n) and (n0 in ctx.force or ctx.wants_buffer(n0, n)):
                _r = _new(UOp, _INDEX, (_t2 := ctx.buffer(n0)).dtype, (_t2, *at))
                if _r is not n: return _r, _pm_rangeify_rules[10]
            # rule index_reduce at rules/rangeify.rules:682
            #   index_reduce: INDEX(REDUCE_AXIS as red, ...) as idx -> map_reduce(ctx, red, idx)
            #+ if _pm_rangeify_st: _pm_rangeify_st.attempts[11] += 1
            # idx = n, red = n0
            _r = map_reduce(ctx, n0, n)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _pm_rangeify_rules[11]
        else:
            if n0.op is _CHILD:
                if len(n0.src) == 1:
                    n0_0 = n0.src[0]
                    if n0_0.op is _CHILDREN and len(n0_0.src) == 1:
                        n0_0_0 = n0_0.src[0]
                        # rule child_buffer at rules/rangeify.rules:625
                        #   child_buffer: INDEX(CHILD(CHILDREN(c)), *at) if c in ctx.force -> INDEX(ctx.buffer(c), *at)
                        #+ if _pm_rangeify_st: _pm_rangeify_st.attempts[1] += 1
                        # c = n0_0_0
                        at = n.src[1:]
                        if n0_0_0 in ctx.force:
                            _r = _new(UOp, _INDEX, (_t3 := ctx.buffer(n0_0_0)).dtype, (_t3, *at))
                            if _r is not n: return _r, _pm_rangeify_rules[1]
                        # rule index_child at rules/rangeify.rules:628
                        #   index_child: INDEX(CHILD(CHILDREN(c)), *at) as idx -> INDEX(c, *at, arg=idx.arg) where read = ctx.reads.setdefault(c, set()).add(ctx.read_at(at, idx)), inlined = ctx.inlined.add(c)
                        #+ if _pm_rangeify_st: _pm_rangeify_st.attempts[2] += 1
                        # c = n0_0_0, idx = n
                        at = n.src[1:]
                        read = ctx.reads.setdefault(n0_0_0, set()).add(ctx.read_at(at, n))
                        inlined = ctx.inlined.add(n0_0_0)
                        _r = _new(UOp, _INDEX, n0_0_0.dtype, (n0_0_0, *at), n.arg)
                        if _r is not n: return _r, _pm_rangeify_rules[2]
            else:
                o0 = n0.op
                if o0 in _OPS4:
                    if o0 in _OPS1:
                        # rule index_const at rules/rangeify.rules:631
                        #   index_const: INDEX({CONST, DEFINE_VAR} as c, ...) -> c
                        #+ if _pm_rangeify_st: _pm_rangeify_st.attempts[3] += 1
                        # c = n0
                        return n0, _pm_rangeify_rules[3]
                    elif o0 is _ASSIGN:
                        # rule index_assign at rules/rangeify.rules:633
                        #   index_assign: INDEX(ASSIGN as a, *idx) as i -> a.replace(src=tuple(INDEX(s, *idx, arg=i.arg) for s in a.src))
                        #+ if _pm_rangeify_st: _pm_rangeify_st.attempts[4] += 1
                        # a = n0, i = n
                        idx = n.src[1:]
                        _r = n0.replace(src=tuple(_new(UOp, _INDEX, s.dtype, (s, *idx), n.arg) for s in n0.src))
                        if _r is not None:
                            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                            if _r is not n: return _r, _pm_rangeify_rules[4]
                    elif o0 in _OPS2:
                        # rule local_value at rules/rangeify.rules:646
                        #   local_value: INDEX(Elementwise as x, ...) as idx if x in ctx.local_values and row -> ctx.array_read(x, idx, row, ctx.local_values[x]) where row = ctx.value_row(x, idx)
                        #+ if _pm_rangeify_st: _pm_rangeify_st.attempts[5] += 1
                        # idx = n, x = n0
                        if n0 in ctx.local_values:
                            row = ctx.value_row(n0, n)
                            if row:
                                _r = ctx.array_read(n0, n, row, ctx.local_values[n0])
                                if _r is not None:
                                    if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                                    if _r is not n: return _r, _pm_rangeify_rules[5]
                        # rule index_alu at rules/rangeify.rules:656
                        #   index_alu: INDEX(Elementwise as x, *idx) as i -> x.replace(src=tuple(INDEX(s, *idx, arg=i.arg) for s in x.src))
                        #+ if _pm_rangeify_st: _pm_rangeify_st.attempts[7] += 1
                        # i = n, x = n0
                        idx = n.src[1:]
                        _r = n0.replace(src=tuple(_new(UOp, _INDEX, s.dtype, (s, *idx), n.arg) for s in n0.src))
                        if _r is not None:
                            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                            if _r is not n: return _r, _pm_rangeify_rules[7]
                    elif o0 in _OPS3:
                        # rule index_marker at rules/rangeify.rules:658
                        #   index_marker: INDEX({CONTIGUOUS, COPY, NOOP} as x, *idx) as i -> x.replace(src=(INDEX(x.src[0], *idx, arg=i.arg),) + x.src[1:])
                        #+ if _pm_rangeify_st: _pm_rangeify_st.attempts[8] += 1
                        # i = n, x = n0
                        idx = n.src[1:]
                        _r = n0.replace(src=(_new(UOp, _INDEX, (_t5 := n0.src[0]).dtype, (_t5, *idx), n.arg),) + n0.src[1:])
                        if _r is not None:
                            if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                            if _r is not n: return _r, _pm_rangeify_rules[8]
    if len(n.src) == 2:
        n0, n1 = n.src
        if n0.op is _BUFFER:
            # rule index_positions at rules/rangeify.rules:686
            #   index_positions: INDEX(b:BUFFER, i) if b.arg.positions -> i.cast(b.dtype)
            #+ if _pm_rangeify_st: _pm_rangeify_st.attempts[12] += 1
            # b = n0, i = n1
            if n0.arg.positions:
                _r = n1.cast(n0.dtype)
                if _r is not None:
                    if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                    if _r is not n: return _r, _pm_rangeify_rules[12]
    if len(n.src) >= 1:
        n0 = n.src[0]
        if n0.op in _OPS5:
            # rule index_memory at rules/rangeify.rules:688
            #   index_memory: INDEX({BUFFER, BUFFERIZE, REALIZE}, ...) as idx if idx.arg is not None -> idx.replace(arg=None)
            #+ if _pm_rangeify_st: _pm_rangeify_st.attempts[13] += 1
            # idx = n
            if n.arg is not None:
                _r = n.replace(arg=None)
                if _r is not None:
                    if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                    if _r is not n: return _r, _pm_rangeify_rules[13]
        # rule index_other at rules/rangeify.rules:690
        #   index_other: INDEX(x, ...) if x.op not in (Ops.REALIZE, Ops.BUFFERIZE, Ops.BUFFER, Ops.DEFINE_LOCAL) -> error "rangeify: no rule pushes an INDEX through " + x.op.name
        #+ if _pm_rangeify_st: _pm_rangeify_st.attempts[14] += 1
        # x = n0
        if n0.op not in (_REALIZE, _BUFFERIZE, _BUFFER, _DEFINE_LOCAL):
            raise RuntimeError('rangeify: no rule pushes an INDEX through ' + n0.op.name)
    return None


_pm_rangeify_part = RuleMatcher('pm_rangeify', _pm_rangeify_rules, {
    Ops.REALIZE: _pm_rangeify_REALIZE,
    Ops.INDEX: _pm_rangeify_INDEX,
}, home=(globals(), '_pm_rangeify_st'), over=True)


# ======================================================================== pm_cleanups
_pm_cleanups_rules = (
    RuleInfo('noop_buffer', 'rules/rangeify.rules', 703, 'noop_buffer: BUFFERIZE(INDEX(b:BUFFERIZE, ...) as idx, ...) as b2 if same_buffer(b, idx, b2) -> b.replace(tag=((b.tag or ()) + (b2.tag or ())) or None)'),
    RuleInfo('const_buffer', 'rules/rangeify.rules', 705, 'const_buffer: INDEX(BUFFERIZE(c:CONST, ...), ...) -> c'),
    RuleInfo('remove_buffer', 'rules/rangeify.rules', 708, 'remove_buffer: INDEX(BUFFERIZE(src, *rngs), *at) if src.op is not Ops.CONTIGUOUS and not expensive(src) -> src.substitute(dict((r, i) for r, i in zip(rngs, at) if r.op is Ops.RANGE))'),
    RuleInfo('copy_const_idx', 'rules/rangeify.rules', 711, 'copy_const_idx: COPY(c:CONST, ...) -> c'),
    RuleInfo('copy_keeps_src', 'rules/rangeify.rules', 716, 'copy_keeps_src: COPY(INDEX(BUFFERIZE(x, ...) as b, ...) as idx, ...) as c if x.op not in (Ops.CONTIGUOUS, Ops.COPY, Ops.CONST, Ops.ASSIGN) -> with_src(c, with_src(idx, with_src(b, CONTIGUOUS(x))))'),
)
_pm_cleanups_st = match_stats('pm_cleanups', _pm_cleanups_rules)  # None unless counting

def _pm_cleanups_COPY(n, ctx):
    if len(n.src) >= 1:
        n0 = n.src[0]
        o0 = n0.op
        if o0 is _CONST:
            # rule copy_const_idx at rules/rangeify.rules:711
            #   copy_const_idx: COPY(c:CONST, ...) -> c
            #+ if _pm_cleanups_st: _pm_cleanups_st.attempts[3] += 1
            # c = n0
            return n0, _pm_cleanups_rules[3]
        elif o0 is _INDEX and len(n0.src) >= 1:
            n0_0 = n0.src[0]
            if n0_0.op is _BUFFERIZE and len(n0_0.src) >= 1:
                n0_0_0 = n0_0.src[0]
                # rule copy_keeps_src at rules/rangeify.rules:716
                #   copy_keeps_src: COPY(INDEX(BUFFERIZE(x, ...) as b, ...) as idx, ...) as c if x.op not in (Ops.CONTIGUOUS, Ops.COPY, Ops.CONST, Ops.ASSIGN) -> with_src(c, with_src(idx, with_src(b, CONTIGUOUS(x))))
                #+ if _pm_cleanups_st: _pm_cleanups_st.attempts[4] += 1
                # b = n0_0, c = n, idx = n0, x = n0_0_0
                if n0_0_0.op not in (_CONTIGUOUS, _COPY, _CONST, _ASSIGN):
                    _r = with_src(n, with_src(n0, with_src(n0_0, _new(UOp, _CONTIGUOUS, n0_0_0.dtype, (n0_0_0,)))))
                    if _r is not None:
                        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                        if _r is not n: return _r, _pm_cleanups_rules[4]
    return None

def _pm_cleanups_BUFFERIZE(n, ctx):
    if len(n.src) >= 1:
        n0 = n.src[0]
        if n0.op is _INDEX and len(n0.src) >= 1:
            n0_0 = n0.src[0]
            if n0_0.op is _BUFFERIZE:
                # rule noop_buffer at rules/rangeify.rules:703
                #   noop_buffer: BUFFERIZE(INDEX(b:BUFFERIZE, ...) as idx, ...) as b2 if same_buffer(b, idx, b2) -> b.replace(tag=((b.tag or ()) + (b2.tag or ())) or None)
                #+ if _pm_cleanups_st: _pm_cleanups_st.attempts[0] += 1
                # b = n0_0, b2 = n, idx = n0
                if same_buffer(n0_0, n0, n):
                    _r = n0_0.replace(tag=(n0_0.tag or ()) + (n.tag or ()) or None)
                    if _r is not None:
                        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                        if _r is not n: return _r, _pm_cleanups_rules[0]
    return None

def _pm_cleanups_INDEX(n, ctx):
    if len(n.src) >= 1:
        n0 = n.src[0]
        if n0.op is _BUFFERIZE:
            if len(n0.src) >= 1:
                n0_0 = n0.src[0]
                if n0_0.op is _CONST:
                    # rule const_buffer at rules/rangeify.rules:705
                    #   const_buffer: INDEX(BUFFERIZE(c:CONST, ...), ...) -> c
                    #+ if _pm_cleanups_st: _pm_cleanups_st.attempts[1] += 1
                    # c = n0_0
                    return n0_0, _pm_cleanups_rules[1]
                # rule remove_buffer at rules/rangeify.rules:708
                #   remove_buffer: INDEX(BUFFERIZE(src, *rngs), *at) if src.op is not Ops.CONTIGUOUS and not expensive(src) -> src.substitute(dict((r, i) for r, i in zip(rngs, at) if r.op is Ops.RANGE))
                #+ if _pm_cleanups_st: _pm_cleanups_st.attempts[2] += 1
                # src = n0_0
                at = n.src[1:]
                rngs = n0.src[1:]
                if n0_0.op is not _CONTIGUOUS and not expensive(n0_0):
                    _r = n0_0.substitute(dict((r, i) for r, i in zip(rngs, at) if r.op is _RANGE))
                    if _r is not None:
                        if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                        if _r is not n: return _r, _pm_cleanups_rules[2]
    return None


_pm_cleanups_part = RuleMatcher('pm_cleanups', _pm_cleanups_rules, {
    Ops.COPY: _pm_cleanups_COPY,
    Ops.BUFFERIZE: _pm_cleanups_BUFFERIZE,
    Ops.INDEX: _pm_cleanups_INDEX,
}, home=(globals(), '_pm_cleanups_st'))


# ======================================================================== keep_buffers
_keep_buffers_rules = (
    RuleInfo('tagged_buffers', 'rules/rangeify.rules', 724, 'tagged_buffers: SINK as s -> SINK(*[x for x in s.toposort() if x.op is Ops.BUFFERIZE and x.tag is not None], dtype=dtypes.void)'),
)
_keep_buffers_st = match_stats('keep_buffers', _keep_buffers_rules)  # None unless counting

def _keep_buffers_SINK(n, ctx):
    # rule tagged_buffers at rules/rangeify.rules:724
    #   tagged_buffers: SINK as s -> SINK(*[x for x in s.toposort() if x.op is Ops.BUFFERIZE and x.tag is not None], dtype=dtypes.void)
    #+ if _keep_buffers_st: _keep_buffers_st.attempts[0] += 1
    # s = n
    _r = _new(UOp, _SINK, dtypes.void, (*[x for x in n.toposort() if x.op is _BUFFERIZE and x.tag is not None],))
    if _r is not n: return _r, _keep_buffers_rules[0]
    return None


_keep_buffers_part = RuleMatcher('keep_buffers', _keep_buffers_rules, {
    Ops.SINK: _keep_buffers_SINK,
}, home=(globals(), '_keep_buffers_st'))


# ======================================================================== the rule sets
_S_limit_buffers = compose('limit_buffers', _limit_buffers_part)
limit_buffers = _S_limit_buffers
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
_S_keep_buffers = compose('keep_buffers', _keep_buffers_part)
keep_buffers = _S_keep_buffers

MATCHERS = {
    'limit_buffers': _S_limit_buffers,
    'earliest_rewrites': _S_earliest_rewrites,
    'do_realize': _S_do_realize,
    'add_realize': _S_add_realize,
    'pm_children': _S_pm_children,
    'pm_mops': _S_pm_mops,
    'pm_rangeify': _S_pm_rangeify,
    'pm_cleanups': _S_pm_cleanups,
    'keep_buffers': _S_keep_buffers,
}


# ======================================================================== the pipelines
from rulegrad.runtime.pipeline import Pass as _Pass, Pipeline as _Pipeline  # noqa: E402

simplify = _Pipeline('simplify', (
    _Pass('sym', 'sym', _generated_symbolic.MATCHERS['sym'], location='rules/rangeify.rules:589'),
))

rangeify = _Pipeline('rangeify', (
    _Pass('limit_buffers', 'limit_buffers', _S_limit_buffers, ctx=BufferLimit, location='rules/rangeify.rules:733'),
    _Pass('earliest', 'earliest_rewrites', _S_earliest_rewrites, location='rules/rangeify.rules:735'),
    _Pass('do_realize', 'do_realize', _S_do_realize, ctx=RealizeContext, collect=True, location='rules/rangeify.rules:737'),
    _Pass('add_realize', 'add_realize', _S_add_realize, bottom_up=True, ctx='do_realize', location='rules/rangeify.rules:739'),
    _Pass('pm_children', 'pm_children', _S_pm_children, bottom_up=True, ctx=ChildrenContext, spec='tensor', location='rules/rangeify.rules:742'),
    _Pass('pm_rangeify', 'pm_rangeify', _S_pm_rangeify, bottom_up=True, ctx=RangeifyContext, until_settled=True, spec='rangeified', location='rules/rangeify.rules:745'),
    _Pass('pm_cleanups', 'pm_cleanups', _S_pm_cleanups, bottom_up=True, spec='rangeified', location='rules/rangeify.rules:747'),
    _Pass('keep_buffers', 'keep_buffers', _S_keep_buffers, bottom_up=True, location='rules/rangeify.rules:748'),
    _Pass('split_kernels', 'split_kernels', _generated_kernel.MATCHERS['split_kernels'], spec='kernels', location='rules/rangeify.rules:751'),
))

PIPELINES = {
    'simplify': simplify,
    'rangeify': rangeify,
}
