"""The table of a backtest: one case (a log at an observed fraction, with its predictions), its row
(both routes' cells, the prior and posterior cells), and the typed table of many. The definitions
(status, error, coverage, routes) are in :mod:`core.prediction.backtest`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from core.logs import RunLog
from core.prediction.combined import PRIOR_COLUMNS, posterior_cells, prior_cells
from core.prediction.posterior import Posterior
from core.prediction.prior import Prior
from core.prediction.schedule import Schedule
from core.prediction.target_prediction import TargetPrediction
from core.targets import Target

#: the contract columns of ``python -m core backtest``, in order
BACKTEST_COLUMNS: tuple[str, ...] = (
    "file", "family", "observed_fraction", "epoch_pred", "epoch_low", "epoch_high",
    "epoch_actual", "error_pct", "covered",
)
#: the columns after them
EXTRA_COLUMNS: tuple[str, ...] = (
    "status", "target_acc", "target_definition", "n_epochs", "n_epochs_observed", "epoch_raw",
    "inflation", "beyond_log", "family_via_loss", "epoch_pred_via_loss", "epoch_low_via_loss",
    "epoch_high_via_loss", "error_pct_via_loss", "covered_via_loss", "loss_threshold",
    "inflation_via_loss", "note",
)
ROW_STATUSES = ("scored", "observed", "never", "too short", "no epochs", "no accuracy")
_SUFFIX = {"accuracy": "", "loss": "_via_loss"}


# --------------------------------------------------------------------------- one run
@dataclass(frozen=True, eq=False)
class BacktestCase:
    """One (log, fraction): the predictions of both routes and what the log shows."""

    log: RunLog
    fraction: float
    n_total: int
    n_observed: int
    target: Target
    target_definition: str
    actual: int | None
    status: str
    predictions: dict[str, TargetPrediction]
    family: str
    schedule: Schedule | None = None
    prior: Prior | None = None
    posterior: Posterior | None = None


def _route_cells(case: BacktestCase, route: str) -> dict:
    p = case.predictions.get(route)
    sfx = _SUFFIX[route]
    cells = {f"family{sfx}": None, f"epoch_pred{sfx}": None, f"epoch_low{sfx}": None,
             f"epoch_high{sfx}": None, f"error_pct{sfx}": None, f"covered{sfx}": None}
    if route == "accuracy":
        cells.update(epoch_raw=None, inflation=None, beyond_log=None, note="")
    else:
        cells.update(loss_threshold=None, inflation_via_loss=None)
    if p is None:
        return cells
    cells[f"family{sfx}"] = p.family
    cells[f"inflation{sfx}"] = p.inflation if p.status in ("predicted", "unreachable") else None
    if route == "loss":
        cells["loss_threshold"] = p.loss_threshold
    else:
        cells["epoch_raw"] = p.epoch_raw
        cells["note"] = p.reason
    if p.status not in ("predicted", "unreachable"):
        if route == "accuracy":
            cells["note"] = f"{p.status}: {p.reason}"
        return cells
    pred = p.epoch if p.epoch is not None else math.inf
    cells.update({f"epoch_pred{sfx}": pred, f"epoch_low{sfx}": p.epoch_low, f"epoch_high{sfx}": p.epoch_high})
    if case.status == "scored":
        cells[f"error_pct{sfx}"] = 100.0 * (pred - case.actual) / case.actual
        cells[f"covered{sfx}"] = bool(p.epoch_low <= case.actual <= p.epoch_high)
    if case.status == "never" and route == "accuracy":
        cells["beyond_log"] = bool(pred > case.n_total)
    return cells


def case_row(case: BacktestCase, with_priors: bool) -> dict:
    """The row of one case (see :mod:`core.prediction.backtest` for every definition)."""
    row = {"file": case.log.source, "family": None, "observed_fraction": case.fraction,
           "epoch_actual": case.actual, "status": case.status, "target_acc": case.target.value,
           "target_definition": case.target_definition, "n_epochs": case.n_total,
           "n_epochs_observed": case.n_observed}
    for route in ("accuracy", "loss"):
        row.update(_route_cells(case, route))
    for sfx in ("", "_via_loss"):
        row[f"family{sfx}"] = row[f"family{sfx}"] or case.family
    if with_priors:
        scored = case.status == "scored"
        row.update(prior_cells(case.prior, case.actual, scored))
        row.update(posterior_cells(case.posterior, case.actual, scored))
        row["schedule"] = case.schedule.describe() if case.schedule is not None else None
        p = case.predictions.get("accuracy")
        flags = (p.flags if p is not None else ()) + (case.posterior.flags if case.posterior is not None else ())
        row["flags"] = "; ".join(dict.fromkeys(flags))
    return row


def cases_table(cases: Sequence[BacktestCase], with_priors: bool = False) -> pd.DataFrame:
    """``BACKTEST_COLUMNS + EXTRA_COLUMNS`` (``+ PRIOR_COLUMNS`` with priors), one row per case, typed."""
    columns = BACKTEST_COLUMNS + EXTRA_COLUMNS + (PRIOR_COLUMNS if with_priors else ())
    table = pd.DataFrame([case_row(c, with_priors) for c in cases], columns=list(columns))
    for col in ("epoch_actual", "n_epochs", "n_epochs_observed"):
        table[col] = pd.array(table[col], dtype="Int64")
    for col in ("epoch_pred", "epoch_low", "epoch_high", "error_pct", "epoch_raw", "inflation",
                "epoch_pred_via_loss", "epoch_low_via_loss", "epoch_high_via_loss",
                "error_pct_via_loss", "loss_threshold", "inflation_via_loss"):
        table[col] = pd.to_numeric(table[col], errors="coerce").astype(float)
    for col in ("covered", "covered_via_loss", "beyond_log") + (("prior_covered", "posterior_covered")
                                                                  if with_priors else ()):
        table[col] = table[col].astype("boolean")
    if with_priors:
        for col in ("prior_epoch", "prior_low", "prior_high", "prior_error_pct", "posterior_epoch", "posterior_low",
                    "posterior_high", "posterior_error_pct"):
            table[col] = pd.to_numeric(table[col], errors="coerce").astype(float)
    return table
