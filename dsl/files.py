"""Reading a `.rules` file: the only way the DSL front end reads one from disk.

In: a path (a file given to `gen`/`check`, or the target of `from "f.rules" import s`). Out: its
text, or `RulesFileError` saying plainly why not. Only a regular file is read (not a device, a
FIFO, a /proc file whose size the system does not know), at most `MAX_BYTES`, and it must be
UTF-8: an import can never make rulegrad read, print or hang on something that is not a rules
file (`from "/proc/self/environ" import s`, `from "/dev/zero" import s`).
"""

from __future__ import annotations

import os
import stat

MAX_BYTES = 16 * 1024 * 1024  # 16 MiB: a hundred times rulegrad's largest rules file


class RulesFileError(OSError):
    """A rules file that cannot be read as one (the message says why)."""


def read_rules_file(path: str) -> str:
    """The text of the rules file at `path`; RulesFileError when it is not one."""
    # O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused just below); a
    # missing file raises the usual FileNotFoundError
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise RulesFileError(f"{path} is not a regular file (a rules file must be one)")
        if st.st_size > MAX_BYTES:
            raise RulesFileError(f"{path} is {st.st_size:,} bytes, more than a rules file may "
                                 f"be ({MAX_BYTES:,})")
        data = f.read(MAX_BYTES + 1)
    if len(data) != st.st_size:
        # a file whose contents are not what the system says they are (/proc, a file still
        # being written): not a rules file we can report errors against
        raise RulesFileError(f"{path} is not a regular file (its size changes as it is read)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise RulesFileError(f"{path}:{line}:{col}: error: not UTF-8 text (byte "
                             f"0x{data[e.start]:02x}); a rules file must be UTF-8") from None
