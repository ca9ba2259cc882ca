"""An output path the system refuses (`gen --out` under a file, `viz -o` into a folder that is a
file) ended the command in a bare traceback (NotADirectoryError from mkdir or open). Now one
line with the system's reason and the path, exit 1; the same command with a good path works."""

from __future__ import annotations

from pathlib import Path

from rulegrad.cli import main

RULES = Path(__file__).parent / "dsl" / "pass"


def test_gen_into_a_folder_that_cannot_be_made(capsys, tmp_path):
    blocker = tmp_path / "afile"
    blocker.write_text("not a folder")
    rules = str(RULES / "symbolic.rules")
    assert main(["gen", rules, "--out", str(blocker / "sub")]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.startswith("rulegrad gen: ") and "afile" in err, err
    assert main(["gen", rules, "--out", str(tmp_path / "ok")]) == 0
    assert (tmp_path / "ok" / "symbolic.py").is_file()


def test_viz_page_into_a_folder_that_is_a_file(capsys, tmp_path):
    blocker = tmp_path / "afile"
    blocker.write_text("not a folder")
    script = tmp_path / "prog.py"
    script.write_text("from rulegrad import Tensor\n(Tensor([1.0, 2.0]) * 3).realize()\n")
    assert main(["viz", "-o", str(blocker / "page.html"), str(script)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.startswith("rulegrad viz: ") and "afile" in err, err
