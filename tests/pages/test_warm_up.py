"""The server's warm-up (``serve.py`` → ``pages.shared.warm``, issue 35): it analyses the default built-in runs
into the caches every session shares, so a first visit finds them there."""

from __future__ import annotations

import re

from core.datasets import builtin_log_files
from pages.shared.state import DEFAULT_BUILTIN_SETS
from pages.shared.warm import warm_up
from tests.pages.conftest import open_page


def test_the_warm_up_analyses_the_default_builtin_runs_and_a_first_visit_shows_them():
    said = warm_up()
    n = sum(len(builtin_log_files(key)) for key in DEFAULT_BUILTIN_SETS)
    assert DEFAULT_BUILTIN_SETS == ("mnist1d",) and n == 12                    # data/logs: 6 ResNets x train, val
    assert re.fullmatch(rf"warm-up: {n} built-in runs of mnist1d analysed in \d+\.\d s", said), said
    at = open_page()                                                            # then a session: the same runs
    assert len(at.dataframe[0].value) == n and not at.error
