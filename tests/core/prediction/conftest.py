"""Real logs read once per module for the prediction tests."""

from __future__ import annotations

import pytest

from core.datasets import builtin_log_files
from core.logs import read_log_file
from tests.core.prediction import prediction_logs


@pytest.fixture(scope="module")
def mlperf_logs():
    return prediction_logs.mlperf_logs()


@pytest.fixture(scope="module")
def builtin_logs():
    return [read_log_file(p, source=n) for n, p in builtin_log_files("mnist1d")]
