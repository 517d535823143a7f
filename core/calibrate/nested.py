"""Score the whole calibration procedure: nested leave-one-architecture-out.

Each architecture is held out in turn; the method is chosen on the *other* architectures
alone (``method="auto"``: its own leave-one-architecture-out inside them, exactly what
``python -m core calibrate FITS --holdout <arch> --method auto`` does) and its interval comes
from them; then the held-out architecture is predicted and compared with what its runs did.
Nothing about the held-out architecture reaches its own prediction.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from core.calibrate.evaluate import mape
from core.calibrate.holdout import calibrate
from core.calibrate.table import architectures, usable
from core.defaults import DEFAULT_LEVEL
from core.errors import InputError

#: the columns of ``python -m core calibrate --loao`` (the first six are the old contract)
NESTED_COLUMNS: tuple[str, ...] = ("model", "gpu", "method", "epoch_actual", "epoch_pred", "epoch_error_pct",
                                   "epoch_pred_low", "epoch_pred_high", "covered", "inside_calibration_set",
                                   "outside_reason")


def nested_loao(fits: pd.DataFrame, *, split: str = "train", method: str = "auto", level: float = DEFAULT_LEVEL,
                threshold: str = "curve") -> pd.DataFrame:
    """Hold out each architecture, choose the method and the interval on the others, predict it.

    Returns one row per held-out run, columns ``NESTED_COLUMNS`` (``covered``: the ``level``
    interval contains the actual epoch; NaN where there is no interval or no actual).

    Raises
    ------
    InputError
        Fewer than 3 architectures in ``split``.
    """
    rows = usable(fits, split=split)
    archs = architectures(rows)
    if len(archs) < 3:
        raise InputError(f"nested leave-one-architecture-out: expected at least 3 architectures in split "
                         f"{split!r}; got {len(archs)} ({', '.join(archs)}).")
    parts = []
    for arch in archs:
        cal = calibrate(fits, holdout=arch, split=split, method=method, level=level, threshold=threshold)
        p = cal.predictions
        lo, hi, actual = (p[c].to_numpy(float) for c in ("epoch_pred_low", "epoch_pred_high", "epoch_actual"))
        covered = pd.array([None if math.isnan(a) or math.isnan(x) else bool(x <= a <= y)
                            for a, x, y in zip(actual, lo, hi)], dtype="boolean")
        parts.append(pd.DataFrame({"model": p["model"], "gpu": p["gpu"], "method": cal.method,
                                   "epoch_actual": actual, "epoch_pred": p["epoch_pred"].to_numpy(float),
                                   "epoch_error_pct": p["epoch_error_pct"].to_numpy(float),
                                   "epoch_pred_low": lo, "epoch_pred_high": hi, "covered": covered,
                                   "inside_calibration_set": cal.inside,
                                   "outside_reason": "; ".join(cal.outside)}))
    return pd.concat(parts, ignore_index=True)[list(NESTED_COLUMNS)]


def nested_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per architecture and overall (last row ``all``): method, MAPE (%), interval coverage, runs.

    >>> t = pd.DataFrame({"model": ["a", "a", "b"], "method": ["m", "m", "k"], "epoch_actual": [10.0, 20.0, 40.0],
    ...                   "epoch_error_pct": [10.0, -30.0, 5.0], "covered": [True, False, True]})
    >>> nested_summary(t)[["model", "mape_pct", "coverage"]].values.tolist()
    [['a', 20.0, 0.5], ['b', 5.0, 1.0], ['all', 15.0, 0.6666666666666666]]
    """
    def row(model, part):
        cov = part["covered"].dropna().astype(bool)
        return {"model": model, "method": ", ".join(dict.fromkeys(part["method"])), "mape_pct": mape(part),
                "coverage": float(cov.mean()) if len(cov) else math.nan,
                "n_runs": int(np.isfinite(part["epoch_actual"].to_numpy(float)).sum())}

    out = [row(m, part) for m, part in table.groupby("model", sort=False)]
    out.append(row("all", table))
    return pd.DataFrame(out)
