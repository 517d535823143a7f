"""Backtest of the progress prediction: each finished run cut at fractions of its evaluations and
predicted from the others, and the table's summary per fraction.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.defaults import DEFAULT_LEVEL
from core.logs import RunLog
from core.prediction.progress import predict_progress
from core.prediction.progress_estimates import ProgressCache
from core.targets import Target, target_for

#: columns of :func:`backtest_progress`
PROGRESS_BACKTEST_COLUMNS: tuple[str, ...] = (
    "file", "observed_fraction", "unit", "actual", "prior", "prior_low", "prior_high", "extrapolation",
    "extrapolation_low", "extrapolation_high", "posterior", "posterior_low", "posterior_high", "method",
    "prior_error_pct", "extrapolation_error_pct", "posterior_error_pct", "prior_covered", "extrapolation_covered",
    "posterior_covered",
)


def backtest_progress(logs: Sequence[RunLog], target: Target | None = None, *,
                      fractions: Sequence[float] = (0.25, 0.5), others: Sequence[RunLog] | None = None,
                      level: float = DEFAULT_LEVEL, cache: ProgressCache | None = None):
    """Every finished log cut at each fraction of its evaluations and predicted from the rest.

    The prior and the backtest of each prediction use ``others`` (default: the other ``logs``),
    never the log itself. Errors are ``predicted / actual − 1`` in percent; ``covered`` whether the
    ``level`` interval holds the actual progress. Logs that never met their target are left out.
    One :class:`ProgressCache` serves every prediction (each run's work is done once).
    """
    import pandas as pd

    cache = ProgressCache() if cache is None else cache
    rows = []
    for log in logs:
        t = target_for(log, target)
        truth = cache.truth(log, t)
        if truth is None:
            continue
        pool = [o for o in (logs if others is None else others) if o is not log and o.source != log.source]
        for fraction in fractions:
            f = predict_progress(log, pool, t, observe=fraction, level=level, cache=cache)
            row = {"file": log.source, "observed_fraction": fraction, "unit": f.unit, "actual": truth,
                   "method": f.method}
            for est in (f.prior, f.extrapolation, f.posterior):
                name = est.source
                row.update({name: est.value, f"{name}_low": est.low, f"{name}_high": est.high})
                ok = est.available
                row[f"{name}_error_pct"] = 100 * (est.value / truth - 1) if ok else None
                row[f"{name}_covered"] = (est.low <= truth <= est.high) if ok and est.low is not None \
                    and est.high is not None else None
            if f.status == "reached":
                row["posterior_error_pct"], row["posterior_covered"] = 0.0, True
            rows.append(row)
    return pd.DataFrame(rows, columns=list(PROGRESS_BACKTEST_COLUMNS))


def progress_backtest_summary(table) -> str:
    """Per fraction and source: median |error|, p90 |error| and 80 % coverage, in one line."""
    parts = []
    for fraction, g in table.groupby("observed_fraction", sort=True):
        bits = []
        for name in ("prior", "extrapolation", "posterior"):
            err = g[f"{name}_error_pct"].dropna().abs()
            cov = g[f"{name}_covered"].dropna()
            if err.empty:
                bits.append(f"{name} n/a")
                continue
            bits.append(f"{name} {err.median():.1f} % (p90 {err.quantile(0.9):.1f} %"
                        + (f", {100 * cov.astype(bool).mean():.0f} % covered" if len(cov) else "") + ")")
        parts.append(f"f={fraction:g} ({len(g)} runs): " + "; ".join(bits))
    return "summary [prior, extrapolation, posterior], median |error|: " + " | ".join(parts)
