# generated from rules/kernel.rules by `rulegrad gen`; do not edit
# source sha256: 99ee9de60c3a3c9260072ed073e87ff9ef4d90cc56f1c7a081bb0cc38e71f837
"""Matchers for the rule sets of rules/kernel.rules: to_kernel, finish_kernel."""

from math import prod  # noqa: F401

from rulegrad.runtime.dtype import DTYPE_CLASSES, dtypes  # noqa: F401
from rulegrad.runtime.matcher import RuleMatcher, helper_from  # noqa: F401
from rulegrad.runtime.matcher import as_uop as _as_uop  # noqa: F401
from rulegrad.runtime.ops import GroupOp, Ops  # noqa: F401
from rulegrad.runtime.rewrite import RewriteNotReady, RuleInfo  # noqa: F401
from rulegrad.runtime.uop import UOp  # noqa: F401
from rulegrad.rules.rangeify_helpers import define_load
from rulegrad.rules.rangeify_helpers import define_load_after
from rulegrad.rules.rangeify_helpers import define_store
from rulegrad.rules.rangeify_helpers import renumber_range

SOURCE = 'rules/kernel.rules'
SOURCE_SHA256 = '99ee9de60c3a3c9260072ed073e87ff9ef4d90cc56f1c7a081bb0cc38e71f837'
DEPENDENCIES = ()


# ======================================================================== rule set to_kernel

def _to_kernel_NOOP(n, ctx):
    if len(n.src) >= 1:
        n0 = n.src[0]
        # rule strip_marker at rules/kernel.rules:23
        #   strip_marker: {CONTIGUOUS, NOOP, COPY}(x, ...) -> x
        x = n0
        return x
    return None

def _to_kernel_CONTIGUOUS(n, ctx):
    if len(n.src) >= 1:
        n0 = n.src[0]
        # rule strip_marker at rules/kernel.rules:23
        #   strip_marker: {CONTIGUOUS, NOOP, COPY}(x, ...) -> x
        x = n0
        return x
    return None

def _to_kernel_COPY(n, ctx):
    if len(n.src) >= 1:
        n0 = n.src[0]
        # rule strip_marker at rules/kernel.rules:23
        #   strip_marker: {CONTIGUOUS, NOOP, COPY}(x, ...) -> x
        x = n0
        return x
    return None

def _to_kernel_RANGE(n, ctx):
    # rule renumber at rules/kernel.rules:24
    #   renumber: RANGE as r if r.tag is None -> renumber_range(ctx, r)
    r = n
    if r.tag is None:
        _r = _as_uop(n, renumber_range(ctx, r))
        if _r is not None and _r is not n: return _r
    return None

def _to_kernel_INDEX(n, ctx):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.BUFFER:
            # rule load_input at rules/kernel.rules:15
            #   load_input: INDEX(BUFFER as b, off) -> define_load(ctx, b, off)
            b = n0
            off = n1
            _r = _as_uop(n, define_load(ctx, b, off))
            if _r is not None and _r is not n: return _r
    if len(n.src) >= 1:
        n0 = n.src[0]
        if n0.op is Ops.ASSIGN and len(n0.src) == 2:
            n0_0 = n0.src[0]
            n0_1 = n0.src[1]
            if n0_0.op is Ops.BUFFER and n0_1.op is Ops.KERNEL:
                # rule load_kernel at rules/kernel.rules:17
                #   load_kernel: INDEX(ASSIGN(BUFFER, KERNEL) as a, ...) as idx -> define_load_after(ctx, a, idx)
                a = n0
                idx = n
                _r = _as_uop(n, define_load_after(ctx, a, idx))
                if _r is not None and _r is not n: return _r
    return None

def _to_kernel_STORE(n, ctx):
    if len(n.src) >= 1:
        n0 = n.src[0]
        if n0.op is Ops.INDEX and len(n0.src) == 2:
            n0_0 = n0.src[0]
            if n0_0.op is Ops.BUFFER:
                # rule kernel_store at rules/kernel.rules:13
                #   kernel_store: STORE(INDEX(BUFFER, _), ...) as st -> define_store(ctx, st)
                st = n
                _r = _as_uop(n, define_store(ctx, st))
                if _r is not None and _r is not n: return _r
    return None

def _to_kernel_INVALID(n, ctx):
    # rule invalid_value at rules/kernel.rules:21
    #   invalid_value: INVALID -> 0
    _r = n.const_like(0)
    if _r is not n: return _r
    return None

def _to_kernel_WHERE(n, ctx):
    if len(n.src) == 3:
        n1 = n.src[1]
        n2 = n.src[2]
        if n2.op is Ops.INVALID:
            # rule unmask_value at rules/kernel.rules:20
            #   unmask_value: WHERE(_, e, INVALID) -> e
            e = n1
            return e
    return None

def _to_kernel_NOOP_t(n, ctx, _st):
    if len(n.src) >= 1:
        n0 = n.src[0]
        # rule strip_marker at rules/kernel.rules:23
        #   strip_marker: {CONTIGUOUS, NOOP, COPY}(x, ...) -> x
        x = n0
        _t = _st.start(5)
        _r = x
        _st.stop(5, _t, _r, n)
        if _r is not None and _r is not n: return _r, 5
    return None

def _to_kernel_CONTIGUOUS_t(n, ctx, _st):
    if len(n.src) >= 1:
        n0 = n.src[0]
        # rule strip_marker at rules/kernel.rules:23
        #   strip_marker: {CONTIGUOUS, NOOP, COPY}(x, ...) -> x
        x = n0
        _t = _st.start(5)
        _r = x
        _st.stop(5, _t, _r, n)
        if _r is not None and _r is not n: return _r, 5
    return None

def _to_kernel_COPY_t(n, ctx, _st):
    if len(n.src) >= 1:
        n0 = n.src[0]
        # rule strip_marker at rules/kernel.rules:23
        #   strip_marker: {CONTIGUOUS, NOOP, COPY}(x, ...) -> x
        x = n0
        _t = _st.start(5)
        _r = x
        _st.stop(5, _t, _r, n)
        if _r is not None and _r is not n: return _r, 5
    return None

def _to_kernel_RANGE_t(n, ctx, _st):
    # rule renumber at rules/kernel.rules:24
    #   renumber: RANGE as r if r.tag is None -> renumber_range(ctx, r)
    r = n
    _t = _st.start(6)
    _r = _as_uop(n, renumber_range(ctx, r)) if r.tag is None else None
    _st.stop(6, _t, _r, n)
    if _r is not None and _r is not n: return _r, 6
    return None

def _to_kernel_INDEX_t(n, ctx, _st):
    if len(n.src) == 2:
        n0 = n.src[0]
        n1 = n.src[1]
        if n0.op is Ops.BUFFER:
            # rule load_input at rules/kernel.rules:15
            #   load_input: INDEX(BUFFER as b, off) -> define_load(ctx, b, off)
            b = n0
            off = n1
            _t = _st.start(1)
            _r = _as_uop(n, define_load(ctx, b, off))
            _st.stop(1, _t, _r, n)
            if _r is not None and _r is not n: return _r, 1
    if len(n.src) >= 1:
        n0 = n.src[0]
        if n0.op is Ops.ASSIGN and len(n0.src) == 2:
            n0_0 = n0.src[0]
            n0_1 = n0.src[1]
            if n0_0.op is Ops.BUFFER and n0_1.op is Ops.KERNEL:
                # rule load_kernel at rules/kernel.rules:17
                #   load_kernel: INDEX(ASSIGN(BUFFER, KERNEL) as a, ...) as idx -> define_load_after(ctx, a, idx)
                a = n0
                idx = n
                _t = _st.start(2)
                _r = _as_uop(n, define_load_after(ctx, a, idx))
                _st.stop(2, _t, _r, n)
                if _r is not None and _r is not n: return _r, 2
    return None

def _to_kernel_STORE_t(n, ctx, _st):
    if len(n.src) >= 1:
        n0 = n.src[0]
        if n0.op is Ops.INDEX and len(n0.src) == 2:
            n0_0 = n0.src[0]
            if n0_0.op is Ops.BUFFER:
                # rule kernel_store at rules/kernel.rules:13
                #   kernel_store: STORE(INDEX(BUFFER, _), ...) as st -> define_store(ctx, st)
                st = n
                _t = _st.start(0)
                _r = _as_uop(n, define_store(ctx, st))
                _st.stop(0, _t, _r, n)
                if _r is not None and _r is not n: return _r, 0
    return None

def _to_kernel_INVALID_t(n, ctx, _st):
    # rule invalid_value at rules/kernel.rules:21
    #   invalid_value: INVALID -> 0
    _t = _st.start(4)
    _r = n.const_like(0)
    _st.stop(4, _t, _r, n)
    if _r is not None and _r is not n: return _r, 4
    return None

def _to_kernel_WHERE_t(n, ctx, _st):
    if len(n.src) == 3:
        n1 = n.src[1]
        n2 = n.src[2]
        if n2.op is Ops.INVALID:
            # rule unmask_value at rules/kernel.rules:20
            #   unmask_value: WHERE(_, e, INVALID) -> e
            e = n1
            _t = _st.start(3)
            _r = e
            _st.stop(3, _t, _r, n)
            if _r is not None and _r is not n: return _r, 3
    return None


_to_kernel_rules = (
    RuleInfo('kernel_store', 'rules/kernel.rules', 13, 'kernel_store: STORE(INDEX(BUFFER, _), ...) as st -> define_store(ctx, st)'),
    RuleInfo('load_input', 'rules/kernel.rules', 15, 'load_input: INDEX(BUFFER as b, off) -> define_load(ctx, b, off)'),
    RuleInfo('load_kernel', 'rules/kernel.rules', 17, 'load_kernel: INDEX(ASSIGN(BUFFER, KERNEL) as a, ...) as idx -> define_load_after(ctx, a, idx)'),
    RuleInfo('unmask_value', 'rules/kernel.rules', 20, 'unmask_value: WHERE(_, e, INVALID) -> e'),
    RuleInfo('invalid_value', 'rules/kernel.rules', 21, 'invalid_value: INVALID -> 0'),
    RuleInfo('strip_marker', 'rules/kernel.rules', 23, 'strip_marker: {CONTIGUOUS, NOOP, COPY}(x, ...) -> x'),
    RuleInfo('renumber', 'rules/kernel.rules', 24, 'renumber: RANGE as r if r.tag is None -> renumber_range(ctx, r)'),
)
_to_kernel_matcher = RuleMatcher(
    'to_kernel', _to_kernel_rules,
    {
        Ops.NOOP: _to_kernel_NOOP,
        Ops.CONTIGUOUS: _to_kernel_CONTIGUOUS,
        Ops.COPY: _to_kernel_COPY,
        Ops.RANGE: _to_kernel_RANGE,
        Ops.INDEX: _to_kernel_INDEX,
        Ops.STORE: _to_kernel_STORE,
        Ops.INVALID: _to_kernel_INVALID,
        Ops.WHERE: _to_kernel_WHERE,
    },
    {
        Ops.NOOP: _to_kernel_NOOP_t,
        Ops.CONTIGUOUS: _to_kernel_CONTIGUOUS_t,
        Ops.COPY: _to_kernel_COPY_t,
        Ops.RANGE: _to_kernel_RANGE_t,
        Ops.INDEX: _to_kernel_INDEX_t,
        Ops.STORE: _to_kernel_STORE_t,
        Ops.INVALID: _to_kernel_INVALID_t,
        Ops.WHERE: _to_kernel_WHERE_t,
    },
)
to_kernel = _to_kernel_matcher


# ======================================================================== rule set finish_kernel

def _finish_kernel_RANGE(n, ctx):
    # rule untag_range at rules/kernel.rules:29
    #   untag_range: RANGE as r if r.tag == "k" -> r.replace(tag=None)
    r = n
    if r.tag == 'k':
        _r = _as_uop(n, r.replace(tag=None))
        if _r is not None and _r is not n: return _r
    return None

def _finish_kernel_RANGE_t(n, ctx, _st):
    # rule untag_range at rules/kernel.rules:29
    #   untag_range: RANGE as r if r.tag == "k" -> r.replace(tag=None)
    r = n
    _t = _st.start(0)
    _r = _as_uop(n, r.replace(tag=None)) if r.tag == 'k' else None
    _st.stop(0, _t, _r, n)
    if _r is not None and _r is not n: return _r, 0
    return None


_finish_kernel_rules = (
    RuleInfo('untag_range', 'rules/kernel.rules', 29, 'untag_range: RANGE as r if r.tag == "k" -> r.replace(tag=None)'),
)
_finish_kernel_matcher = RuleMatcher(
    'finish_kernel', _finish_kernel_rules,
    {
        Ops.RANGE: _finish_kernel_RANGE,
    },
    {
        Ops.RANGE: _finish_kernel_RANGE_t,
    },
)
finish_kernel = _finish_kernel_matcher

MATCHERS = {
    'to_kernel': _to_kernel_matcher,
    'finish_kernel': _finish_kernel_matcher,
}
