"""The Tensor-op property suite (tests/test_tensor_ops.py), run through the scheduler: every
`.numpy()` goes schedule -> kernel interpreter (RULEGRAD_BACKEND=interp) instead of the oracle.
The suite itself is not duplicated: its tests are imported and re-collected here."""

import pytest
from test_tensor_ops import *  # noqa: F403 - the suite's tests, collected again under interp


@pytest.fixture(autouse=True)
def _schedule_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RULEGRAD_BACKEND", "interp")
