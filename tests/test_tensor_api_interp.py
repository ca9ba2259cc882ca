"""The Tensor API suite (tests/test_tensor_api.py) through the scheduler and the kernel
interpreter (RULEGRAD_BACKEND=interp) instead of C; the tests are imported, not duplicated."""

import pytest
from test_tensor_api import *  # noqa: F403 - the suite's tests, collected again under interp


@pytest.fixture(autouse=True)
def _schedule_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RULEGRAD_BACKEND", "interp")
