"""Bad command-line input gets a worded message and a non-zero exit, never a traceback."""

import pytest

from rulegrad.cli import main


@pytest.mark.parametrize("argv", [["fuzz", "--n", "-3"], ["fuzz", "--n", "x"],
                                  ["check", "--examples", "0"]])
def test_bad_counts_are_usage_errors(argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "error: argument" in err and "Traceback" not in err


def test_missing_rules_file_is_reported(capsys, tmp_path):
    assert main(["gen", str(tmp_path / "nope.rules"), "--out", str(tmp_path)]) == 2
    assert "nope.rules" in capsys.readouterr().err


def test_fuzz_offers_every_class_the_fuzzer_has(capsys):
    """`rulegrad fuzz` hands its options to the fuzzer's own parser: every class of
    tools/fuzz.py is a choice (the CLI kept a copy of the list, which lacked `opt` and `pick`)."""
    from rulegrad.tools.fuzz import CLASSES

    with pytest.raises(SystemExit) as exit_:
        main(["fuzz", "-h"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert all(c in out for c in CLASSES) and "pick" in CLASSES
