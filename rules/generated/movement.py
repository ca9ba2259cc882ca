# generated from rules/movement.rules by `rulegrad gen`; do not edit
# source sha256: 2e32f3d8ef1dbaa8750670902dcebcd491b0f134e184e7556fddf6752b5bcc70
'Matchers for the rule sets of rules/movement.rules: double_reshape, mop_cleanup.'

from math import prod  # noqa: F401

from rulegrad.runtime.dtype import DTYPE_CLASSES, dtypes  # noqa: F401
from rulegrad.runtime.matcher import RuleMatcher, compose, helper_from, match_stats  # noqa: F401
from rulegrad.runtime.matcher import as_uop as _as_uop  # noqa: F401
from rulegrad.runtime.ops import GroupOp, Ops  # noqa: F401
from rulegrad.runtime.rewrite import RewriteNotReady, RuleInfo  # noqa: F401
from rulegrad.runtime.uop import UNSET as _UNSET  # noqa: F401
from rulegrad.runtime.uop import UOp  # noqa: F401
from rulegrad.runtime.uop import new_uop as _new  # noqa: F401
from rulegrad.rules.movement_helpers import compose_flip
from rulegrad.rules.movement_helpers import compose_pad
from rulegrad.rules.movement_helpers import compose_permute
from rulegrad.rules.movement_helpers import compose_shrink
from rulegrad.rules.movement_helpers import is_identity
from rulegrad.rules.movement_helpers import no_padding

SOURCE = 'rules/movement.rules'
SOURCE_SHA256 = '2e32f3d8ef1dbaa8750670902dcebcd491b0f134e184e7556fddf6752b5bcc70'
DEPENDENCIES = ()
_EXPAND = Ops.EXPAND
_FLIP = Ops.FLIP
_PAD = Ops.PAD
_PERMUTE = Ops.PERMUTE
_RESHAPE = Ops.RESHAPE
_SHRINK = Ops.SHRINK


# ======================================================================== double_reshape
_double_reshape_rules = (
    RuleInfo('reshape_reshape', 'rules/movement.rules', 11, 'reshape_reshape: RESHAPE(RESHAPE(x)) as r -> x.reshape(r.arg)'),
)
_double_reshape_st = match_stats('double_reshape', _double_reshape_rules)  # None unless counting

def _double_reshape_RESHAPE(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is _RESHAPE and len(n0.src) == 1:
            n0_0 = n0.src[0]
            # rule reshape_reshape at rules/movement.rules:11
            #   reshape_reshape: RESHAPE(RESHAPE(x)) as r -> x.reshape(r.arg)
            #+ if _double_reshape_st: _double_reshape_st.attempts[0] += 1
            # r = n, x = n0_0
            _r = n0_0.reshape(n.arg)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _double_reshape_rules[0]
    return None


_double_reshape_part = RuleMatcher('double_reshape', _double_reshape_rules, {
    Ops.RESHAPE: _double_reshape_RESHAPE,
}, home=(globals(), '_double_reshape_st'))


# ======================================================================== mop_cleanup
_mop_cleanup_rules = (
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
_mop_cleanup_st = match_stats('mop_cleanup', _mop_cleanup_rules)  # None unless counting

def _mop_cleanup_RESHAPE(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        if n0.op is _RESHAPE and len(n0.src) == 1:
            n0_0 = n0.src[0]
            # rule reshape_reshape at rules/movement.rules:11
            #   reshape_reshape: RESHAPE(RESHAPE(x)) as r -> x.reshape(r.arg)
            #+ if _double_reshape_st: _double_reshape_st.attempts[0] += 1
            # r = n, x = n0_0
            _r = n0_0.reshape(n.arg)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _double_reshape_rules[0]
        # rule reshape_noop at rules/movement.rules:16
        #   reshape_noop: RESHAPE(x) as r if x.shape == r.arg -> x
        #+ if _mop_cleanup_st: _mop_cleanup_st.attempts[0] += 1
        # r = n, x = n0
        if n0.shape == n.arg:
            return n0, _mop_cleanup_rules[0]
    return None

def _mop_cleanup_PERMUTE(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule permute_noop at rules/movement.rules:18
        #   permute_noop: PERMUTE(x) as p if is_identity(p.arg) -> x
        #+ if _mop_cleanup_st: _mop_cleanup_st.attempts[2] += 1
        # p = n, x = n0
        if is_identity(n.arg):
            return n0, _mop_cleanup_rules[2]
        if n0.op is _PERMUTE and len(n0.src) == 1:
            n0_0 = n0.src[0]
            # rule permute_permute at rules/movement.rules:25
            #   permute_permute: PERMUTE(PERMUTE(x) as p) as q -> x.permute(compose_permute(p.arg, q.arg))
            #+ if _mop_cleanup_st: _mop_cleanup_st.attempts[6] += 1
            # p = n0, q = n, x = n0_0
            _r = n0_0.permute(compose_permute(n0.arg, n.arg))
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _mop_cleanup_rules[6]
    return None

def _mop_cleanup_EXPAND(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule expand_noop at rules/movement.rules:17
        #   expand_noop: EXPAND(x) as e if x.shape == e.arg -> x
        #+ if _mop_cleanup_st: _mop_cleanup_st.attempts[1] += 1
        # e = n, x = n0
        if n0.shape == n.arg:
            return n0, _mop_cleanup_rules[1]
        if n0.op is _EXPAND and len(n0.src) == 1:
            n0_0 = n0.src[0]
            # rule expand_expand at rules/movement.rules:27
            #   expand_expand: EXPAND(EXPAND(x)) as e -> x.expand(e.arg)
            #+ if _mop_cleanup_st: _mop_cleanup_st.attempts[7] += 1
            # e = n, x = n0_0
            _r = n0_0.expand(n.arg)
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _mop_cleanup_rules[7]
    return None

def _mop_cleanup_PAD(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule pad_noop at rules/movement.rules:20
        #   pad_noop: PAD(x) as p if no_padding(p.arg) -> x
        #+ if _mop_cleanup_st: _mop_cleanup_st.attempts[4] += 1
        # p = n, x = n0
        if no_padding(n.arg):
            return n0, _mop_cleanup_rules[4]
        if n0.op is _PAD and len(n0.src) == 1:
            n0_0 = n0.src[0]
            # rule pad_pad at rules/movement.rules:29
            #   pad_pad: PAD(PAD(x) as a) as b -> x.pad(compose_pad(a.arg, b.arg))
            #+ if _mop_cleanup_st: _mop_cleanup_st.attempts[9] += 1
            # a = n0, b = n, x = n0_0
            _r = n0_0.pad(compose_pad(n0.arg, n.arg))
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _mop_cleanup_rules[9]
    return None

def _mop_cleanup_SHRINK(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule shrink_noop at rules/movement.rules:19
        #   shrink_noop: SHRINK(x) as s if s.shape == x.shape -> x
        #+ if _mop_cleanup_st: _mop_cleanup_st.attempts[3] += 1
        # s = n, x = n0
        if n.shape == n0.shape:
            return n0, _mop_cleanup_rules[3]
        if n0.op is _SHRINK and len(n0.src) == 1:
            n0_0 = n0.src[0]
            # rule shrink_shrink at rules/movement.rules:28
            #   shrink_shrink: SHRINK(SHRINK(x) as a) as b -> x.shrink(compose_shrink(a.arg, b.arg))
            #+ if _mop_cleanup_st: _mop_cleanup_st.attempts[8] += 1
            # a = n0, b = n, x = n0_0
            _r = n0_0.shrink(compose_shrink(n0.arg, n.arg))
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _mop_cleanup_rules[8]
    return None

def _mop_cleanup_FLIP(n, ctx):
    if len(n.src) == 1:
        n0 = n.src[0]
        # rule flip_noop at rules/movement.rules:21
        #   flip_noop: FLIP(x) as f if not any(f.arg) -> x
        #+ if _mop_cleanup_st: _mop_cleanup_st.attempts[5] += 1
        # f = n, x = n0
        if not any(n.arg):
            return n0, _mop_cleanup_rules[5]
        if n0.op is _FLIP and len(n0.src) == 1:
            n0_0 = n0.src[0]
            # rule flip_flip at rules/movement.rules:30
            #   flip_flip: FLIP(FLIP(x) as a) as b -> x.flip(compose_flip(a.arg, b.arg))
            #+ if _mop_cleanup_st: _mop_cleanup_st.attempts[10] += 1
            # a = n0, b = n, x = n0_0
            _r = n0_0.flip(compose_flip(n0.arg, n.arg))
            if _r is not None:
                if _r.__class__ is not UOp: _r = _as_uop(n, _r)
                if _r is not n: return _r, _mop_cleanup_rules[10]
    return None


_mop_cleanup_part = RuleMatcher('mop_cleanup', _mop_cleanup_rules, {
    Ops.RESHAPE: _mop_cleanup_RESHAPE,
    Ops.PERMUTE: _mop_cleanup_PERMUTE,
    Ops.EXPAND: _mop_cleanup_EXPAND,
    Ops.PAD: _mop_cleanup_PAD,
    Ops.SHRINK: _mop_cleanup_SHRINK,
    Ops.FLIP: _mop_cleanup_FLIP,
}, home=(globals(), '_mop_cleanup_st'), over=True)


# ======================================================================== the rule sets
_S_double_reshape = compose('double_reshape', _double_reshape_part)
double_reshape = _S_double_reshape
_S_mop_cleanup = compose('mop_cleanup', _S_double_reshape, _mop_cleanup_part)
mop_cleanup = _S_mop_cleanup

MATCHERS = {
    'double_reshape': _S_double_reshape,
    'mop_cleanup': _S_mop_cleanup,
}

PIPELINES = {}
