"""Old against new: the C text outside the kernels, as the compiler reads it after the
preprocessor, one token stream per text and target.

    python bench/c_tokens.py OLD_TREE

bench/render_hashes.py hashes every kernel's printed function, but not the texts built beside
it: the prelude (render.py's PRELUDE and every function on demand, vexp.py's and vlog.py's
cores among them), the vector helpers, the block library (blocks.py: register blocks, panel
copies, row reductions; vexp.SOURCE + vlog.SOURCE) and launch.py's region. A change that only
rewrites such text (a macro for two copies of the same steps) is the same program when
`gcc -E -P` gives the same tokens under each target's flags: x86-64, AVX2 + FMA, AVX + F16C
and AVX-512 (each `#if` of a target taken). Prints each text whose tokens differ under some
flags, and exits 1 if any does; a text that changed as text only is named as such.

OLD_TREE is a checkout of the other commit (`git archive main | tar -x -C /tmp/old`), read
through the editable install's path finder as bench/ab.py's workers read it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from ab import USE_TREE

HERE = str(Path(__file__).resolve().parent.parent)
TARGETS = (["-march=x86-64"], ["-mavx2", "-mfma"], ["-mavx", "-mf16c"],
           ["-mavx512f", "-mavx512vl", "-mavx512dq", "-mfma", "-mf16c"])
_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|\w+|[^\s\w]')

# a worker: the texts of one tree, as JSON (name -> text)
_WORKER = r'''
import json, sys
root, here = sys.argv[1:3]
''' + USE_TREE + r'''
from rulegrad.backends.c import blocks, ctext, launch, render, vexp, vlog
from rulegrad.runtime.dtype import dtypes
assert render.__file__.startswith(root), render.__file__
every = set().union(*(names for names, _ in render._ON_DEMAND))  # (every function on demand)
texts = {
    "prelude": "#define RG_MVEC 1\n" + render.prelude(every),
    "vector helpers": ctext.VECTOR_HELPERS,
    "exp and log library": vexp.SOURCE + vlog.SOURCE,
    "launch region": launch.SOURCE,
}
for dt in (dtypes.float32, dtypes.float64):
    for width in (32, 64):
        for k in blocks.kernels(dt, width // dt.itemsize):
            texts[k.cname] = k.source
for k in blocks.reductions():
    texts[k.cname] = k.source
print(json.dumps(texts))
'''


def texts(root: str) -> dict[str, str]:
    out = subprocess.run([sys.executable, "-c", _WORKER, root, HERE], capture_output=True,
                         text=True, env={**os.environ, "RULEGRAD_VECTOR_BYTES": "32"})
    if out.returncode:
        sys.exit(f"the texts of {root} could not be read:\n{out.stderr}")
    return json.loads(out.stdout)


def tokens(text: str, flags: list[str]) -> list[str]:
    out = subprocess.run(["gcc", "-E", "-P", "-x", "c", *flags, "-"], input=text,
                         capture_output=True, text=True)
    return _TOKEN.findall(out.stdout) if out.returncode == 0 else ["(error)", out.stderr]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", help="the other tree")
    args = parser.parse_args(argv)
    old, new = texts(str(Path(args.old).resolve())), texts(HERE)
    differ = 0
    for name in sorted(old.keys() | new.keys()):
        a, b = old.get(name), new.get(name)
        if a == b:
            continue
        bad = [f for f in TARGETS if a is None or b is None or tokens(a, f) != tokens(b, f)]
        differ += bool(bad)
        print(f"{name}: " + (f"tokens differ under {' '.join(bad[0])}" if bad
                             else "text changed, the same tokens under every target"))
    print(f"{differ} of {len(old.keys() | new.keys())} texts differ as tokens")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
