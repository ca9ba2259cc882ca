"""The `rulegrad` command line: one subcommand per daily job (gen, check, demo, ...).

Each subcommand lives beside the code it drives; this module only parses arguments and turns
the errors users can cause into a message and an exit status (never a bare traceback).
"""

from __future__ import annotations

import argparse
import sys

from rulegrad.tools.args import count


def _cmd_gen(args: argparse.Namespace) -> int:
    from rulegrad.generator.cli import run_gen

    return run_gen(args.paths, out=args.out, check=args.check)


def _cmd_fmt(args: argparse.Namespace) -> int:
    from rulegrad.dsl.format import run_fmt

    return run_fmt(args.paths or ["."], check=args.check)


def _cmd_lsp(args: argparse.Namespace) -> int:
    from rulegrad.lsp import serve

    return serve()


def _cmd_check(args: argparse.Namespace) -> int:
    from rulegrad.generator.soundness import run_check  # provided by the soundness issue

    return run_check(args.paths, examples=args.examples, seed=args.seed, rule=args.rule,
                     rlimit=args.rlimit, allow_unknown=args.allow_unknown,
                     hang_seconds=args.hang_timeout, max_ulp=args.max_ulp)


def _cmd_demo(args: argparse.Namespace) -> int:
    from rulegrad.tools.demo import run_demo

    return run_demo()


def _cmd_fuzz(args: argparse.Namespace) -> int:
    from rulegrad.tools.fuzz import main as fuzz_main

    return fuzz_main(args.passed_on)


def _cmd_viz(args: argparse.Namespace) -> int:
    from rulegrad.viz import run_viz

    if (args.script is None) == (args.example is None):
        print("rulegrad viz: give a script or --example (one of them)", file=sys.stderr)
        return 2
    mine = [a for a in args.script_args if a.split("=")[0] in ("-o", "--out", "--open")]
    if mine:  # (a likely slip: they go to the script, not to viz)
        print(f"rulegrad viz: {' '.join(mine)} after the script go to the script; viz's own "
              "options come before it (rulegrad viz -o PAGE script.py ARG...)", file=sys.stderr)
    return run_viz(args.script, args.example, args.out, args.open,
                   script_args=tuple(args.script_args))


def _cmd_cache(args: argparse.Namespace) -> int:
    from rulegrad.backends.c.cache import main as cache_main
    from rulegrad.backends.c.cache import max_bytes

    # The settings first, for every action, as a compile reads them: a bad RULEGRAD_CACHE_MAX
    # is one line naming it, exit 1 (as any command's bad variable), before `clear` deletes
    # anything. `info` had exit 2 (a usage error) only when the folder existed, `clear` none.
    max_bytes()
    return cache_main([args.action])


def _seconds(text: str) -> float:
    """An argparse type: a positive number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected more than 0, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    # (limits.py only: the checker, z3 and the rule front end load when `check` runs)
    from rulegrad import __version__
    from rulegrad.generator.limits import DEFAULT_RLIMIT, HANG_SECONDS, MAX_ULP

    p = argparse.ArgumentParser(prog="rulegrad", description=__doc__.splitlines()[0])
    p.add_argument("--version", action="version", version=f"rulegrad {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    g = sub.add_parser("gen", help="compile .rules files into Python matcher modules")
    g.add_argument("paths", nargs="*", help=".rules files (default: all of rulegrad's rules/)")
    g.add_argument("--out", help="write the modules to this folder instead")
    g.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 naming every committed module that is stale")
    g.set_defaults(func=_cmd_gen)
    fm = sub.add_parser("fmt", help="lay out .rules files canonically (every comment kept)")
    fm.add_argument("paths", nargs="*", help=".rules files or folders (default: the current "
                    "folder, recursively)")
    fm.add_argument("--check", action="store_true",
                    help="write nothing; exit 1 naming every file that would change")
    fm.set_defaults(func=_cmd_fmt)
    ls = sub.add_parser("lsp", help="a language server for .rules files, on stdin/stdout "
                        "(for an editor to start)")
    ls.set_defaults(func=_cmd_lsp)
    c = sub.add_parser("check", help="prove or property-test that every rule preserves meaning")
    c.add_argument("paths", nargs="*", help=".rules files or folders of them (default: all of "
                   "rules/)")
    c.add_argument("--examples", type=count, default=100, help="examples per rule (default 100)")
    c.add_argument("--seed", type=int, default=0, help="random seed, to reproduce a failure")
    c.add_argument("--rule", help="check only the rule with this name")
    c.add_argument("--rlimit", type=count, default=DEFAULT_RLIMIT,
                   help="z3 resource units one proof query may use (default "
                   f"{DEFAULT_RLIMIT:,}); past it: unknown. Deterministic, unlike a timeout")
    c.add_argument("--hang-timeout", type=_seconds, default=HANG_SECONDS,
                   help=f"CPU seconds one rule may take (default {HANG_SECONDS:g}); "
                   "past it (a helper that never returns): error")
    c.add_argument("--allow-unknown", action="store_true",
                   help="exit 0, not 3, when a rule is unknown, unchecked or an error")
    c.add_argument("--max-ulp", type=count, default=MAX_ULP,
                   help=f"the largest `# check: ulp N` honoured (default {MAX_ULP}); a rule "
                   "asking for more is checked within this")
    c.set_defaults(func=_cmd_check)
    # the fuzzer's options are its own parser's (tools/fuzz.py: its classes, `rulegrad fuzz -h`),
    # handed over whole, so the two never drift apart
    f = sub.add_parser("fuzz", add_help=False, help="random tensor programs against the numpy "
                       "oracle, per class (rulegrad fuzz -h)")
    f.set_defaults(func=_cmd_fuzz)
    v = sub.add_parser("viz", help="record a program's rewrite passes; write a page that shows "
                       "them (graphs, firings, why a rule did not fire)")
    v.add_argument("script", nargs="?", help="a Python script that builds and realizes tensors "
                   "(rulegrad viz's own options come before it)")
    # everything after the script is its own command line (sys.argv[1:] inside it)
    v.add_argument("script_args", nargs=argparse.REMAINDER, metavar="ARG",
                   help="arguments passed to the script")
    v.add_argument("--example", choices=("mlp", "attention"), help="a built-in program instead")
    v.add_argument("-o", "--out", default="rulegrad-viz.html", help="the page to write "
                   "(default rulegrad-viz.html)")
    v.add_argument("--open", action="store_true", help="open the page in a browser")
    v.set_defaults(func=_cmd_viz)
    k = sub.add_parser("cache", help="the compiled-kernel cache: `info` shows it, `clear` "
                       "empties it")
    k.add_argument("action", choices=("info", "clear"),
                   help="info: folder, entries, size and limit; clear: delete every entry")
    k.set_defaults(func=_cmd_cache)
    d = sub.add_parser("demo", help="schedule, compile and run a small model; compare with numpy")
    d.set_defaults(func=_cmd_demo)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, passed_on = parser.parse_known_args(argv)
    if passed_on and getattr(args, "command", None) != "fuzz":
        parser.error(f"unrecognized arguments: {' '.join(passed_on)}")
    args.passed_on = passed_on
    if not getattr(args, "func", None):  # (argparse's way for a missing argument: usage and
        # the error on stderr, exit 2; the help with exit 0 let a script's `rulegrad $CMD`
        # with an empty CMD pass)
        parser.error("a COMMAND is required (rulegrad --help lists them)")
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except _user_errors() as e:  # what the user's machine or files lack: one line, no traceback
        print(f"rulegrad {args.command}: {e}", file=sys.stderr)
        return 1
    except OSError as e:  # a path the user named that cannot be written or read (`gen --out`
        # under a file, `viz -o` into a missing folder): the system's words, no traceback
        print(f"rulegrad {args.command}: {e.strerror or e}"
              + (f": {e.filename}" if e.filename else ""), file=sys.stderr)
        return 1


def _user_errors() -> tuple[type[Exception], ...]:
    """The errors a command reports as a message: the user's setup is wrong (a RULEGRAD_*
    variable, the compiler, the cache, the matchers: tools/setup_errors.py) or their rules."""
    from rulegrad.generator.user import UserRulesError
    from rulegrad.tools.setup_errors import setup_errors

    return (*setup_errors(), UserRulesError)


if __name__ == "__main__":
    sys.exit(main())
