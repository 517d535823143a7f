"""The course's fit table, read once for the calibration tests."""

from __future__ import annotations

import pandas as pd
import pytest

from core.calibrate import read_fits_table
from tests.core.calibrate.helpers import COURSE


@pytest.fixture(scope="module")
def fits() -> pd.DataFrame:
    return read_fits_table(COURSE)
