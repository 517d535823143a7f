"""Method scores of the built-in course table, computed once and shipped (``data/course_method_scores.csv``).

Scoring every calibration method by leave-one-architecture-out (:func:`core.calibrate.method_scores`)
takes 5–10 s on 2 cores, most of it the Gaussian-process methods, and the Calibrate page needs it
before it can say which method it recommends.  For the course table, which never changes, the scores
of every held-out architecture, split and threshold are computed by ``python
data/make_course_method_scores.py`` and stored with the digest of the table they were computed on;
:func:`method_scores_for` returns them when the table given is that table (same content, same
digest) and computes otherwise.  ``tests/core/calibrate/test_stored_scores.py`` recomputes one of them
and compares.
"""

from __future__ import annotations

from functools import lru_cache

import pandas as pd

from core.calibrate.evaluate import method_scores
from core.calibrate.methods import CALIBRATION_METHODS
from core.datasets import course_method_scores_path
from core.tables import frame_digest

#: the columns that say which scores a row is (the rest are ``method_scores``' own columns)
KEY_COLUMNS = ("fits_digest", "split", "holdout", "threshold")


@lru_cache(maxsize=1)
def _stored() -> pd.DataFrame:
    path = course_method_scores_path()
    if not path.is_file():
        return pd.DataFrame(columns=[*KEY_COLUMNS, "method"])
    return pd.read_csv(path, dtype={"fits_digest": str, "note": str}, keep_default_na=False,
                       na_values={"loao_mape_pct": ["", "nan", "NaN"]})


def stored_method_scores(fits: pd.DataFrame, *, split: str, holdout: str, threshold: str = "curve"
                         ) -> pd.DataFrame | None:
    """The shipped scores of ``fits`` (``method_scores``' frame), or None when none were stored for this
    table (content digest), split, held-out architecture and threshold, or not for every method."""
    table = _stored()
    rows = table[(table["fits_digest"] == frame_digest(fits)) & (table["split"] == split)
                 & (table["holdout"] == holdout) & (table["threshold"] == threshold)]
    if list(rows["method"]) != list(CALIBRATION_METHODS):
        return None
    out = rows.drop(columns=list(KEY_COLUMNS)).reset_index(drop=True)
    out["n_runs"] = out["n_runs"].astype(int)
    if "note" in out and not out["note"].astype(bool).any():
        out = out.drop(columns="note")
    return out


def method_scores_for(fits: pd.DataFrame, *, split: str = "train", holdout: str | None = None,
                      threshold: str = "curve") -> pd.DataFrame:
    """:func:`core.calibrate.method_scores` of every method, read from the shipped table when ``fits`` is
    the table they were computed on, computed otherwise."""
    if holdout is not None:
        stored = stored_method_scores(fits, split=split, holdout=holdout, threshold=threshold)
        if stored is not None:
            return stored
    return method_scores(fits, split=split, holdout=holdout, threshold=threshold)
