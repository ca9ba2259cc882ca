# generated from rules/kernel.rules by `rulegrad gen`; do not edit
# source sha256: 4d45b2787e9e6986702b54be669074b32d63da44f9f328b0533cbba12ff44603
# imports rules/symbolic.rules sha256: 3a79ef5199b66a4f8ac8b5e4b60bfde0bf127f7610db78415da268b63a7b0a70
'Matchers for the rule sets of rules/kernel.rules: split_kernels, to_kernel.'

from math import prod  # noqa: F401

from rulegrad.runtime.dtype import DTYPE_CLASSES, dtypes  # noqa: F401
from rulegrad.runtime.matcher import RuleMatcher, compose, helper_from, match_stats  # noqa: F401
from rulegrad.runtime.matcher import as_uop as _as_uop  # noqa: F401
from rulegrad.runtime.ops import GroupOp, Ops  # noqa: F401
from rulegrad.runtime.rewrite import RewriteNotReady, RuleInfo  # noqa: F401
from rulegrad.runtime.uop import UOp  # noqa: F401
from rulegrad.runtime.uop import new_uop as _new  # noqa: F401
from rulegrad.rules.rangeify_helpers import KernelContext
from rulegrad.rules.rangeify_helpers import bufferize_to_store
from rulegrad.rules.rangeify_helpers import define_load
from rulegrad.rules.rangeify_helpers import define_load_after
from rulegrad.rules.rangeify_helpers import define_store
from rulegrad.rules.rangeify_helpers import make_kernel
from rulegrad.rules.generated import symbolic as _generated_symbolic

SOURCE = 'rules/kernel.rules'
SOURCE_SHA256 = '4d45b2787e9e6986702b54be669074b32d63da44f9f328b0533cbba12ff44603'
DEPENDENCIES = (('rules/symbolic.rules', '3a79ef5199b66a4f8ac8b5e4b60bfde0bf127f7610db78415da268b63a7b0a70'), )
_ASSIGN = Ops.ASSIGN
_BUFFER = Ops.BUFFER
_INDEX = Ops.INDEX
_INVALID = Ops.INVALID
_KERNEL = Ops.KERNEL
_SINK = Ops.SINK
_STORE = Ops.STORE


# ======================================================================== split_kernels
_split_kernels_rules = (
    RuleInfo('store_assign', 'rules/kernel.rules', 17, 'store_assign: BUFFERIZE(ASSIGN(t, v), *rngs) as b -> STORE(t, v, *rngs, tag=b.tag)'),
    RuleInfo('to_store', 'rules/kernel.rules', 19, 'to_store: BUFFERIZE as b -> bufferize_to_store(b)'),
    RuleInfo('split_store', 'rules/kernel.rules', 21, 'split_store: STORE as st -> make_kernel(st, *kernel(SINK(st)))'),
)
_split_kernels_st = match_stats('split_kernels', _split_kernels_rules)  # None unless counting

def _split_kernels_BUFFERIZE(n, ctx):
    if len(n.src) >= 1:
        n0 = n.src[0]
        if n0.op is _ASSIGN and len(n0.src) == 2:
            n0_0, n0_1 = n0.src
            # rule store_assign at rules/kernel.rules:17
            #   store_assign: BUFFERIZE(ASSIGN(t, v), *rngs) as b -> STORE(t, v, *rngs, tag=b.tag)
            if _split_kernels_st: _split_kernels_st.attempts[0] += 1
            b = n
            rngs = n.src[1:]
            t = n0_0
            v = n0_1
            _r = _new(UOp, _STORE, t.dtype, (t, v, *rngs), None, b.tag)
            if _r is not n: return _r, _split_kernels_rules[0]
    # rule to_store at rules/kernel.rules:19
    #   to_store: BUFFERIZE as b -> bufferize_to_store(b)
    if _split_kernels_st: _split_kernels_st.attempts[1] += 1
    b = n
    _r = _as_uop(n, bufferize_to_store(b))
    if _r is not None and _r is not n: return _r, _split_kernels_rules[1]
    return None

def _split_kernels_STORE(n, ctx):
    # rule split_store at rules/kernel.rules:21
    #   split_store: STORE as st -> make_kernel(st, *kernel(SINK(st)))
    if _split_kernels_st: _split_kernels_st.attempts[2] += 1
    st = n
    _r = _as_uop(n, make_kernel(st, *kernel(_new(UOp, _SINK, st.dtype, (st,)))))
    if _r is not None and _r is not n: return _r, _split_kernels_rules[2]
    return None


_split_kernels_part = RuleMatcher('split_kernels', _split_kernels_rules, {
    Ops.BUFFERIZE: _split_kernels_BUFFERIZE,
    Ops.STORE: _split_kernels_STORE,
}, home=(globals(), '_split_kernels_st'))


# ======================================================================== to_kernel
_to_kernel_rules = (
    RuleInfo('kernel_store', 'rules/kernel.rules', 28, 'kernel_store: STORE(INDEX(BUFFER, _), ...) as st -> define_store(ctx, st)'),
    RuleInfo('load_input', 'rules/kernel.rules', 30, 'load_input: INDEX(BUFFER as b, off) -> define_load(ctx, b, off)'),
    RuleInfo('load_kernel', 'rules/kernel.rules', 32, 'load_kernel: INDEX(ASSIGN(BUFFER, KERNEL) as a, ...) as idx -> define_load_after(ctx, a, idx)'),
    RuleInfo('unmask_value', 'rules/kernel.rules', 37, 'unmask_value: WHERE(_, e, INVALID) -> e'),
    RuleInfo('strip_marker', 'rules/kernel.rules', 39, 'strip_marker: {CONTIGUOUS, NOOP, COPY}(x, ...) -> x'),
    RuleInfo('renumber', 'rules/kernel.rules', 41, 'renumber: RANGE as r if r.arg[0] >= ctx.first_range -> ctx.ranges.setdefault(r, r.replace(arg=(len(ctx.ranges), r.arg[1])))'),
)
_to_kernel_st = match_stats('to_kernel', _to_kernel_rules)  # None unless counting

def _to_kernel_NOOP(n, ctx):
    if len(n.src) >= 1:
        n0 = n.src[0]
        # rule strip_marker at rules/kernel.rules:39
        #   strip_marker: {CONTIGUOUS, NOOP, COPY}(x, ...) -> x
        if _to_kernel_st: _to_kernel_st.attempts[4] += 1
        x = n0
        return x, _to_kernel_rules[4]
    return None

def _to_kernel_CONTIGUOUS(n, ctx):
    if len(n.src) >= 1:
        n0 = n.src[0]
        # rule strip_marker at rules/kernel.rules:39
        #   strip_marker: {CONTIGUOUS, NOOP, COPY}(x, ...) -> x
        if _to_kernel_st: _to_kernel_st.attempts[4] += 1
        x = n0
        return x, _to_kernel_rules[4]
    return None

def _to_kernel_COPY(n, ctx):
    if len(n.src) >= 1:
        n0 = n.src[0]
        # rule strip_marker at rules/kernel.rules:39
        #   strip_marker: {CONTIGUOUS, NOOP, COPY}(x, ...) -> x
        if _to_kernel_st: _to_kernel_st.attempts[4] += 1
        x = n0
        return x, _to_kernel_rules[4]
    return None

def _to_kernel_RANGE(n, ctx):
    # rule renumber at rules/kernel.rules:41
    #   renumber: RANGE as r if r.arg[0] >= ctx.first_range -> ctx.ranges.setdefault(r, r.replace(arg=(len(ctx.ranges), r.arg[1])))
    if _to_kernel_st: _to_kernel_st.attempts[5] += 1
    r = n
    if r.arg[0] >= ctx.first_range:
        _r = _as_uop(n, ctx.ranges.setdefault(r, r.replace(arg=(len(ctx.ranges), r.arg[1]))))
        if _r is not None and _r is not n: return _r, _to_kernel_rules[5]
    return None

def _to_kernel_INDEX(n, ctx):
    if len(n.src) == 2:
        n0, n1 = n.src
        if n0.op is _BUFFER:
            # rule load_input at rules/kernel.rules:30
            #   load_input: INDEX(BUFFER as b, off) -> define_load(ctx, b, off)
            if _to_kernel_st: _to_kernel_st.attempts[1] += 1
            b = n0
            off = n1
            _r = _as_uop(n, define_load(ctx, b, off))
            if _r is not None and _r is not n: return _r, _to_kernel_rules[1]
    if len(n.src) >= 1:
        n0 = n.src[0]
        if n0.op is _ASSIGN and len(n0.src) == 2:
            n0_0, n0_1 = n0.src
            if n0_0.op is _BUFFER and n0_1.op is _KERNEL:
                # rule load_kernel at rules/kernel.rules:32
                #   load_kernel: INDEX(ASSIGN(BUFFER, KERNEL) as a, ...) as idx -> define_load_after(ctx, a, idx)
                if _to_kernel_st: _to_kernel_st.attempts[2] += 1
                a = n0
                idx = n
                _r = _as_uop(n, define_load_after(ctx, a, idx))
                if _r is not None and _r is not n: return _r, _to_kernel_rules[2]
    return None

def _to_kernel_STORE(n, ctx):
    if len(n.src) >= 1:
        n0 = n.src[0]
        if n0.op is _INDEX and len(n0.src) == 2:
            n0_0 = n0.src[0]
            if n0_0.op is _BUFFER:
                # rule kernel_store at rules/kernel.rules:28
                #   kernel_store: STORE(INDEX(BUFFER, _), ...) as st -> define_store(ctx, st)
                if _to_kernel_st: _to_kernel_st.attempts[0] += 1
                st = n
                _r = _as_uop(n, define_store(ctx, st))
                if _r is not None and _r is not n: return _r, _to_kernel_rules[0]
    return None

def _to_kernel_WHERE(n, ctx):
    if len(n.src) == 3:
        n1 = n.src[1]
        n2 = n.src[2]
        if n2.op is _INVALID:
            # rule unmask_value at rules/kernel.rules:37
            #   unmask_value: WHERE(_, e, INVALID) -> e
            if _to_kernel_st: _to_kernel_st.attempts[3] += 1
            e = n1
            return e, _to_kernel_rules[3]
    return None


_to_kernel_part = RuleMatcher('to_kernel', _to_kernel_rules, {
    Ops.NOOP: _to_kernel_NOOP,
    Ops.CONTIGUOUS: _to_kernel_CONTIGUOUS,
    Ops.COPY: _to_kernel_COPY,
    Ops.RANGE: _to_kernel_RANGE,
    Ops.INDEX: _to_kernel_INDEX,
    Ops.STORE: _to_kernel_STORE,
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
    _Pass('to_kernel', 'to_kernel', _S_to_kernel, bottom_up=True, ctx=KernelContext, spec='kernel', location='rules/kernel.rules:47'),
))

PIPELINES = {
    'kernel': kernel,
}
