# generated from rules/movement.rules by `rulegrad gen`; do not edit
# source sha256: f8bf9f2fe732c1ccb65d44edf7f96b6168635bd35d4bde2a57c0ae03a9efb226
"""Matchers for the rule sets of rules/movement.rules: double_reshape, mop_cleanup."""

from math import prod  # noqa: F401

from rulegrad.runtime.dtype import DTYPE_CLASSES, dtypes  # noqa: F401
from rulegrad.runtime.matcher import RuleMatcher, helper_from  # noqa: F401
from rulegrad.runtime.matcher import as_uop as _as_uop  # noqa: F401
from rulegrad.runtime.ops import GroupOp, Ops  # noqa: F401
from rulegrad.runtime.rewrite import RewriteNotReady, RuleInfo  # noqa: F401
from rulegrad.runtime.uop import UOp  # noqa: F401
from rulegrad.rules.movement_helpers import compose_flip
from rulegrad.rules.movement_helpers import compose_pad
from rulegrad.rules.movement_helpers import compose_permute
from rulegrad.rules.movement_helpers import compose_shrink
from rulegrad.rules.movement_helpers import is_identity
from rulegrad.rules.movement_helpers import no_padding

SOURCE = 'rules/movement.rules'
SOURCE_SHA256 = 'f8bf9f2fe732c1ccb65d44edf7f96b6168635bd35d4bde2a57c0ae03a9efb226'
DEPENDENCIES = ()


# ======================================================================== rule set double_reshape

def _double_reshape_RESHAPE(n, ctx):
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
    return None

def _double_reshape_RESHAPE_t(n, ctx, _st):
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
    return None


_double_reshape_rules = (
    RuleInfo('reshape_reshape', 'rules/movement.rules', 11, 'reshape_reshape: RESHAPE(RESHAPE(x)) as r -> x.reshape(r.arg)'),
)
_double_reshape_matcher = RuleMatcher(
    'double_reshape', _double_reshape_rules,
    {
        Ops.RESHAPE: _double_reshape_RESHAPE,
    },
    {
        Ops.RESHAPE: _double_reshape_RESHAPE_t,
    },
)
double_reshape = _double_reshape_matcher


# ======================================================================== rule set mop_cleanup

def _mop_cleanup_RESHAPE(n, ctx):
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
        # rule reshape_noop at rules/movement.rules:16
        #   reshape_noop: RESHAPE(x) as r if x.shape == r.arg -> x
        r = n
        x = n0
        if x.shape == r.arg:
            return x
    return None

def _mop_cleanup_PERMUTE(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule permute_noop at rules/movement.rules:18
        #   permute_noop: PERMUTE(x) as p if is_identity(p.arg) -> x
        p = n
        x = n0
        if is_identity(p.arg):
            return x
        if n0.op is Ops.PERMUTE and len(n0.src) == 1:
            n0_0 = n0.src[0]
            # rule permute_permute at rules/movement.rules:25
            #   permute_permute: PERMUTE(PERMUTE(x) as p) as q -> x.permute(compose_permute(p.arg, q.arg))
            p = n0
            q = n
            x = n0_0
            _r = _as_uop(n, x.permute(compose_permute(p.arg, q.arg)))
            if _r is not None and _r is not n: return _r
    return None

def _mop_cleanup_EXPAND(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule expand_noop at rules/movement.rules:17
        #   expand_noop: EXPAND(x) as e if x.shape == e.arg -> x
        e = n
        x = n0
        if x.shape == e.arg:
            return x
        if n0.op is Ops.EXPAND and len(n0.src) == 1:
            n0_0 = n0.src[0]
            # rule expand_expand at rules/movement.rules:27
            #   expand_expand: EXPAND(EXPAND(x)) as e -> x.expand(e.arg)
            e = n
            x = n0_0
            _r = _as_uop(n, x.expand(e.arg))
            if _r is not None and _r is not n: return _r
    return None

def _mop_cleanup_PAD(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule pad_noop at rules/movement.rules:20
        #   pad_noop: PAD(x) as p if no_padding(p.arg) -> x
        p = n
        x = n0
        if no_padding(p.arg):
            return x
        if n0.op is Ops.PAD and len(n0.src) == 1:
            n0_0 = n0.src[0]
            # rule pad_pad at rules/movement.rules:29
            #   pad_pad: PAD(PAD(x) as a) as b -> x.pad(compose_pad(a.arg, b.arg))
            a = n0
            b = n
            x = n0_0
            _r = _as_uop(n, x.pad(compose_pad(a.arg, b.arg)))
            if _r is not None and _r is not n: return _r
    return None

def _mop_cleanup_SHRINK(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule shrink_noop at rules/movement.rules:19
        #   shrink_noop: SHRINK(x) as s if s.shape == x.shape -> x
        s = n
        x = n0
        if s.shape == x.shape:
            return x
        if n0.op is Ops.SHRINK and len(n0.src) == 1:
            n0_0 = n0.src[0]
            # rule shrink_shrink at rules/movement.rules:28
            #   shrink_shrink: SHRINK(SHRINK(x) as a) as b -> x.shrink(compose_shrink(a.arg, b.arg))
            a = n0
            b = n
            x = n0_0
            _r = _as_uop(n, x.shrink(compose_shrink(a.arg, b.arg)))
            if _r is not None and _r is not n: return _r
    return None

def _mop_cleanup_FLIP(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule flip_noop at rules/movement.rules:21
        #   flip_noop: FLIP(x) as f if not any(f.arg) -> x
        f = n
        x = n0
        if not any(f.arg):
            return x
        if n0.op is Ops.FLIP and len(n0.src) == 1:
            n0_0 = n0.src[0]
            # rule flip_flip at rules/movement.rules:30
            #   flip_flip: FLIP(FLIP(x) as a) as b -> x.flip(compose_flip(a.arg, b.arg))
            a = n0
            b = n
            x = n0_0
            _r = _as_uop(n, x.flip(compose_flip(a.arg, b.arg)))
            if _r is not None and _r is not n: return _r
    return None

def _mop_cleanup_RESHAPE_t(n, ctx, _st):
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
        # rule reshape_noop at rules/movement.rules:16
        #   reshape_noop: RESHAPE(x) as r if x.shape == r.arg -> x
        r = n
        x = n0
        _t = _st.start(1)
        _r = x if x.shape == r.arg else None
        _st.stop(1, _t, _r, n)
        if _r is not None and _r is not n: return _r, 1
    return None

def _mop_cleanup_PERMUTE_t(n, ctx, _st):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule permute_noop at rules/movement.rules:18
        #   permute_noop: PERMUTE(x) as p if is_identity(p.arg) -> x
        p = n
        x = n0
        _t = _st.start(3)
        _r = x if is_identity(p.arg) else None
        _st.stop(3, _t, _r, n)
        if _r is not None and _r is not n: return _r, 3
        if n0.op is Ops.PERMUTE and len(n0.src) == 1:
            n0_0 = n0.src[0]
            # rule permute_permute at rules/movement.rules:25
            #   permute_permute: PERMUTE(PERMUTE(x) as p) as q -> x.permute(compose_permute(p.arg, q.arg))
            p = n0
            q = n
            x = n0_0
            _t = _st.start(7)
            _r = _as_uop(n, x.permute(compose_permute(p.arg, q.arg)))
            _st.stop(7, _t, _r, n)
            if _r is not None and _r is not n: return _r, 7
    return None

def _mop_cleanup_EXPAND_t(n, ctx, _st):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule expand_noop at rules/movement.rules:17
        #   expand_noop: EXPAND(x) as e if x.shape == e.arg -> x
        e = n
        x = n0
        _t = _st.start(2)
        _r = x if x.shape == e.arg else None
        _st.stop(2, _t, _r, n)
        if _r is not None and _r is not n: return _r, 2
        if n0.op is Ops.EXPAND and len(n0.src) == 1:
            n0_0 = n0.src[0]
            # rule expand_expand at rules/movement.rules:27
            #   expand_expand: EXPAND(EXPAND(x)) as e -> x.expand(e.arg)
            e = n
            x = n0_0
            _t = _st.start(8)
            _r = _as_uop(n, x.expand(e.arg))
            _st.stop(8, _t, _r, n)
            if _r is not None and _r is not n: return _r, 8
    return None

def _mop_cleanup_PAD_t(n, ctx, _st):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule pad_noop at rules/movement.rules:20
        #   pad_noop: PAD(x) as p if no_padding(p.arg) -> x
        p = n
        x = n0
        _t = _st.start(5)
        _r = x if no_padding(p.arg) else None
        _st.stop(5, _t, _r, n)
        if _r is not None and _r is not n: return _r, 5
        if n0.op is Ops.PAD and len(n0.src) == 1:
            n0_0 = n0.src[0]
            # rule pad_pad at rules/movement.rules:29
            #   pad_pad: PAD(PAD(x) as a) as b -> x.pad(compose_pad(a.arg, b.arg))
            a = n0
            b = n
            x = n0_0
            _t = _st.start(10)
            _r = _as_uop(n, x.pad(compose_pad(a.arg, b.arg)))
            _st.stop(10, _t, _r, n)
            if _r is not None and _r is not n: return _r, 10
    return None

def _mop_cleanup_SHRINK_t(n, ctx, _st):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule shrink_noop at rules/movement.rules:19
        #   shrink_noop: SHRINK(x) as s if s.shape == x.shape -> x
        s = n
        x = n0
        _t = _st.start(4)
        _r = x if s.shape == x.shape else None
        _st.stop(4, _t, _r, n)
        if _r is not None and _r is not n: return _r, 4
        if n0.op is Ops.SHRINK and len(n0.src) == 1:
            n0_0 = n0.src[0]
            # rule shrink_shrink at rules/movement.rules:28
            #   shrink_shrink: SHRINK(SHRINK(x) as a) as b -> x.shrink(compose_shrink(a.arg, b.arg))
            a = n0
            b = n
            x = n0_0
            _t = _st.start(9)
            _r = _as_uop(n, x.shrink(compose_shrink(a.arg, b.arg)))
            _st.stop(9, _t, _r, n)
            if _r is not None and _r is not n: return _r, 9
    return None

def _mop_cleanup_FLIP_t(n, ctx, _st):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule flip_noop at rules/movement.rules:21
        #   flip_noop: FLIP(x) as f if not any(f.arg) -> x
        f = n
        x = n0
        _t = _st.start(6)
        _r = x if not any(f.arg) else None
        _st.stop(6, _t, _r, n)
        if _r is not None and _r is not n: return _r, 6
        if n0.op is Ops.FLIP and len(n0.src) == 1:
            n0_0 = n0.src[0]
            # rule flip_flip at rules/movement.rules:30
            #   flip_flip: FLIP(FLIP(x) as a) as b -> x.flip(compose_flip(a.arg, b.arg))
            a = n0
            b = n
            x = n0_0
            _t = _st.start(11)
            _r = _as_uop(n, x.flip(compose_flip(a.arg, b.arg)))
            _st.stop(11, _t, _r, n)
            if _r is not None and _r is not n: return _r, 11
    return None


_mop_cleanup_rules = (
    RuleInfo('reshape_reshape', 'rules/movement.rules', 11, 'reshape_reshape: RESHAPE(RESHAPE(x)) as r -> x.reshape(r.arg)'),
    RuleInfo('reshape_noop', 'rules/movement.rules', 16, 'reshape_noop: RESHAPE(x) as r if x.shape == r.arg -> x'),
    RuleInfo('expand_noop', 'rules/movement.rules', 17, 'expand_noop: EXPAND(x) as e if x.shape == e.arg -> x'),
    RuleInfo('permute_noop', 'rules/movement.rules', 18, 'permute_noop: PERMUTE(x) as p if is_identity(p.arg) -> x'),
    RuleInfo('shrink_noop', 'rules/movement.rules', 19, 'shrink_noop: SHRINK(x) as s if s.shape == x.shape -> x'),
    RuleInfo('pad_noop', 'rules/movement.rules', 20, 'pad_noop: PAD(x) as p if no_padding(p.arg) -> x'),
    RuleInfo('flip_noop', 'rules/movement.rules', 21, 'flip_noop: FLIP(x) as f if not any(f.arg) -> x'),
    RuleInfo('permute_permute', 'rules/movement.rules', 25, 'permute_permute: PERMUTE(PERMUTE(x) as p) as q -> x.permute(compose_permute(p.arg, q.arg))'),
    RuleInfo('expand_expand', 'rules/movement.rules', 27, 'expand_expand: EXPAND(EXPAND(x)) as e -> x.expand(e.arg)'),
    RuleInfo('shrink_shrink', 'rules/movement.rules', 28, 'shrink_shrink: SHRINK(SHRINK(x) as a) as b -> x.shrink(compose_shrink(a.arg, b.arg))'),
    RuleInfo('pad_pad', 'rules/movement.rules', 29, 'pad_pad: PAD(PAD(x) as a) as b -> x.pad(compose_pad(a.arg, b.arg))'),
    RuleInfo('flip_flip', 'rules/movement.rules', 30, 'flip_flip: FLIP(FLIP(x) as a) as b -> x.flip(compose_flip(a.arg, b.arg))'),
)
_mop_cleanup_matcher = RuleMatcher(
    'mop_cleanup', _mop_cleanup_rules,
    {
        Ops.RESHAPE: _mop_cleanup_RESHAPE,
        Ops.PERMUTE: _mop_cleanup_PERMUTE,
        Ops.EXPAND: _mop_cleanup_EXPAND,
        Ops.PAD: _mop_cleanup_PAD,
        Ops.SHRINK: _mop_cleanup_SHRINK,
        Ops.FLIP: _mop_cleanup_FLIP,
    },
    {
        Ops.RESHAPE: _mop_cleanup_RESHAPE_t,
        Ops.PERMUTE: _mop_cleanup_PERMUTE_t,
        Ops.EXPAND: _mop_cleanup_EXPAND_t,
        Ops.PAD: _mop_cleanup_PAD_t,
        Ops.SHRINK: _mop_cleanup_SHRINK_t,
        Ops.FLIP: _mop_cleanup_FLIP_t,
    },
)
mop_cleanup = _mop_cleanup_matcher

MATCHERS = {
    'double_reshape': _double_reshape_matcher,
    'mop_cleanup': _mop_cleanup_matcher,
}
