"""The prior and the first epochs together: a posterior epoch at target with an interval.

Both the prior (``core.prediction.prior``) and the extrapolation of the first ``n`` epochs
(``core.prediction.predict``) are read as log-normal beliefs about the continuous epoch ``c``
at which the run passes its target (a whole epoch ``E`` stands for ``c = E − 1/2``; an
interval's ends likewise):

* prior ``ln c ~ N(μp, σp²)``; extrapolation ``ln c ~ N(μx, σx²)`` with ``μx = ln(E − 1/2)``
  and ``σx = ln(high/low) / (2·z)`` from its ``level`` interval (``σx = inf`` when the interval
  is open above, the curve never gets there, or the extrapolation was refused).
* **precision weighting** (``POSTERIOR_METHODS["precision"]``): ``1/σ² = 1/σp² + 1/σx²`` and
  ``μ = σ²·(μp/σp² + μx/σx²)``: the product of the two densities.  The variances are the
  intervals' own (each already calibrated: the calibration's by its leave-one-architecture-out
  conformal rule, the extrapolation's by the inflation learned on other runs), or
  (``POSTERIOR_METHODS["backtest"]``) the mean squared log errors of each source on other, finished runs
  at the same observed fraction (``backtest_variances``).
* **conditioning on the observed epochs**: the run has not passed the target in its ``n``
  epochs, so ``c > n``: the posterior is the normal above truncated at ``ln n``; its median
  and ``level`` interval are that truncated normal's quantiles.  A prior alone is conditioned
  the same way.
* **correlated** (``POSTERIOR_METHODS["correlated"]``; ``--posterior-method correlated``): precision
  weighting treats two errors that point the same way as independent and gives an interval
  narrower than both that misses where both cover.  Instead each source's log error
  ``e = ln(c_true) − μ`` is backtested on the *other* finished runs cut at the same observed
  fraction (leave-one-run-out); the prior's weight ``w = (σx² − ρσpσx)/(σp² + σx² − 2ρσpσx)``
  (clipped to [0, 1], ``core.prediction.conformal.correlated_weight``) minimises the combined
  error, ``μ = w·μp + (1 − w)·μx``, and the interval is ``μ`` plus the split-conformal quantiles
  of the combined errors (``conformal_quantiles``: order statistic ``⌈(n+1)(1−α)⌉``; with too
  few cases the extremes, flagged with the ``(n − 1)/(n + 1)`` coverage they promise).  When
  one source has no answer the other's errors alone give the interval; with fewer than
  ``MIN_VARIANCE_CASES`` cases it falls back to precision weighting and says so. With
  ``MIN_SHIFT_CASES`` cases or more, the combined errors' median is taken out of the estimate (a
  bias both sources share). The run has not passed the target in its
  ``n`` epochs: every end is at least ``n + 1``.
* no epochs (``n = 0``): the posterior is the prior; the target already passed in the
  observed epochs: the posterior is the measurement (``method="measured"``).

Whole epochs come back as ``ceil(c)``, never before ``n + 1``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from statistics import NormalDist

import numpy as np

from core.defaults import DEFAULT_LEVEL
from core.prediction.conformal import conformal_quantiles, correlated_weight, expected_coverage
from core.prediction.prior import Prior, z_of
from core.prediction.target_prediction import TargetPrediction
from core.validation import check_option

#: how the posterior can be made; the result's ``method`` names the one used
POSTERIOR_METHODS: dict[str, str] = {
    "precision": "precision weighting in log space, variances from the two intervals",
    "backtest": "precision weighting in log space, variances from the log errors of each source on other "
                "finished runs at the same observed fraction",
    "correlated": "the weight that minimises the combined log error of other finished runs at the same observed "
                  "fraction (their errors' correlation counted), the interval from the split-conformal quantiles "
                  "of those combined errors",
    "calibrated": "the prior, the extrapolation or their precision weighting, whichever other finished runs "
                  "at the same observed fraction calibrate to the narrowest interval, its interval scaled so that "
                  "it would have held their epochs at target at the level asked (normalised split-conformal, or "
                  "z × the rms of their normalised errors with 4-8 runs)",
    "prior": "the prior alone (conditioned on the observed epochs)",
    "extrapolation": "the extrapolation of the first epochs alone",
    "measured": "the measurement: the observed epochs already passed the target",
}
#: the fewest other-run cases a backtest variance is learned from
MIN_VARIANCE_CASES = 3
#: fewest backtest cases whose median combined error is taken out of the estimate
MIN_SHIFT_CASES = 12
_N = NormalDist()


@dataclass(frozen=True)
class Posterior:
    """The epoch at target from everything known, with its ``level`` interval.

    Attributes
    ----------
    epoch, epoch_low, epoch_high : float or None
        Whole epochs (``epoch_high`` may be ``inf``); None when there is nothing to predict from.
    median : float
        Continuous median (NaN when none).
    log_mu, log_sd : float
        The normal of ``ln c`` before the truncation at ``ln n``.
    method : str
        A key of ``POSTERIOR_METHODS`` (the one used; "prior" when the extrapolation said nothing).
    description : str
        In words: what was combined and how.
    n_epochs_observed : int
    level : float
    weight_prior : float
        Share of the precision that came from the prior (0..1; NaN without a combination).
    flags : tuple of str
    """

    epoch: float | None
    epoch_low: float | None
    epoch_high: float | None
    median: float
    log_mu: float
    log_sd: float
    method: str
    description: str
    n_epochs_observed: int
    level: float = DEFAULT_LEVEL
    weight_prior: float = math.nan
    flags: tuple[str, ...] = field(default=())

    @property
    def available(self) -> bool:
        return self.epoch is not None

    def to_dict(self) -> dict:
        out = asdict(self)
        out["flags"] = list(self.flags)
        return out


def extrapolation_belief(p: TargetPrediction | None) -> tuple[float, float, str]:
    """``(μx, σx, why)`` of an extrapolation: NaN/inf with the reason when it says nothing usable.

    >>> from core.prediction.intervals import Drift
    >>> p = TargetPrediction("r.csv", "accuracy", "exp3", 0.9, 10, "predicted", epoch=20.5, epoch_low=14.5,
    ...                      epoch_high=30.5, level=0.8)
    >>> mu, sd, _ = extrapolation_belief(p)
    >>> round(math.exp(mu), 2), round(sd, 4)        # exp(μ) = 20; σ = ln(30/14) / (2·1.2816) = 0.2974
    (20.0, 0.2974)
    """
    if p is None:
        return math.nan, math.inf, "no extrapolation"
    if p.status == "unreachable":
        return math.nan, math.inf, "the extrapolated curve never reaches the target"
    if p.status != "predicted" or p.epoch is None:
        return math.nan, math.inf, f"{p.status}: {p.reason}" if p.reason else p.status
    centre = p.epoch - 0.5
    lo, hi = (p.epoch_low or p.epoch) - 0.5, (p.epoch_high or p.epoch) - 0.5
    if not math.isfinite(hi) or lo <= 0:
        return math.log(centre), math.inf, "the extrapolation's interval is open above"
    if hi <= lo:
        return math.log(centre), math.inf, "the extrapolation has no interval"
    return math.log(centre), math.log(hi / lo) / (2.0 * z_of(p.level)), ""


def combine(prior: Prior | None, extrapolation: TargetPrediction | None, *, n_epochs_observed: int,
            level: float = DEFAULT_LEVEL, method: str = "precision",
            variances: tuple[float, float] | None = None, measured_epoch: float | None = None) -> Posterior:
    """Combine a prior and an extrapolation into a posterior (module docstring).

    Parameters
    ----------
    prior : Prior or None
    extrapolation : TargetPrediction or None
        The prediction from the first ``n_epochs_observed`` epochs (possibly flagged or refused).
    n_epochs_observed : int
        ``n``: the posterior is conditioned on ``c > n`` (nothing when 0).
    level : float, default 0.8
    method : {"precision", "backtest"}, default "precision"
        With ``"backtest"``, ``variances = (σp, σx)`` replace the intervals' own (NaN for one
        keeps that source's interval); without them, "precision" is used and said.
    measured_epoch : float, optional
        Where the observed epochs already passed the target: the posterior is that.

    Examples
    --------
    No epochs observed: the posterior is the prior; the target passed in the observed
    epochs: the measurement.

    >>> prior = Prior(30.0, 0.2, "given", "a prior")
    >>> p = combine(prior, None, n_epochs_observed=0)
    >>> p.method, round(p.median, 6), p.epoch, (p.epoch_low, p.epoch_high)   # 30·exp(∓1.2816·0.2)
    ('prior', 30.0, 30.0, (24.0, 39.0))
    >>> combine(prior, None, n_epochs_observed=12, measured_epoch=9).epoch
    9.0
    """
    check_option(method, "method", ("precision", "backtest"))
    n = int(n_epochs_observed)
    if measured_epoch is not None:
        e = float(measured_epoch)
        return Posterior(e, e, e, e - 0.5, math.nan, 0.0, "measured", POSTERIOR_METHODS["measured"], n, level)
    mu_p, sd_p = (math.log(prior.epoch), prior.log_sd) if prior is not None and prior.available else (math.nan,
                                                                                                       math.inf)
    mu_x, sd_x, why_x = extrapolation_belief(extrapolation) if n > 0 else (math.nan, math.inf, "no epochs observed")
    used = method
    if method == "backtest":
        if variances is None:
            used = "precision"
        else:
            sd_p = variances[0] if math.isfinite(variances[0]) and math.isfinite(sd_p) else sd_p
            sd_x = variances[1] if math.isfinite(variances[1]) and math.isfinite(sd_x) else sd_x
    flags = [f for f in (prior.flags if prior is not None else ())]
    if why_x and n > 0:
        flags.append(f"extrapolation not used: {why_x}")
    post = combine_beliefs((mu_p, sd_p), (mu_x, sd_x), n_epochs_observed=n, level=level, method=used)
    if post.method == "extrapolation" and prior is not None and not prior.informative and prior.available:
        flags.append("prior not used: its spread is unknown")
    return replace(post, flags=tuple(flags))


def combine_beliefs(prior: tuple[float, float], extrapolation: tuple[float, float], *, n_epochs_observed: int,
                    level: float = DEFAULT_LEVEL, method: str = "precision") -> Posterior:
    """The arithmetic of :func:`combine` on ``(μ, σ)`` pairs of ``ln c`` (σ = inf: no information).

    Two log-normal beliefs of equal spread, medians 20 and 80 epochs, nothing observed: the
    posterior median is their geometric mean 40 and the spread shrinks by √2:

    >>> post = combine_beliefs((math.log(20.0), 0.4), (math.log(80.0), 0.4), n_epochs_observed=0)
    >>> round(post.median, 6), round(post.log_sd, 6), post.epoch, post.weight_prior   # 0.4/√2 = 0.282843
    (40.0, 0.282843, 40.0, 0.5)
    """
    (mu_p, sd_p), (mu_x, sd_x) = prior, extrapolation
    has_p = math.isfinite(mu_p) and math.isfinite(sd_p) and sd_p > 0
    has_x = math.isfinite(mu_x) and math.isfinite(sd_x) and sd_x > 0
    n = int(n_epochs_observed)
    if has_p and has_x:
        wp, wx = 1.0 / sd_p**2, 1.0 / sd_x**2
        mu, sd, used, share = (wp * mu_p + wx * mu_x) / (wp + wx), (wp + wx) ** -0.5, method, wp / (wp + wx)
        desc = f"{POSTERIOR_METHODS[method]}; the prior carries {100 * share:.0f} % of the weight"
    elif has_p:
        mu, sd, used, share, desc = mu_p, sd_p, "prior", 1.0, POSTERIOR_METHODS["prior"]
    elif has_x:
        mu, sd, used, share, desc = mu_x, sd_x, "extrapolation", 0.0, POSTERIOR_METHODS["extrapolation"]
    else:
        return Posterior(None, None, None, math.nan, math.nan, math.inf, "none",
                         "neither a prior nor an extrapolation with an interval", n, level)
    median, lo, hi = truncated_quantiles(mu, sd, n, level)
    first = float(n + 1)
    whole = [max(float(math.ceil(v - 1e-9)), first) if math.isfinite(v) else v for v in (median, lo, hi)]
    alone = max(float(math.ceil(math.exp(mu) - 1e-9)), first)
    if used in ("prior", "extrapolation") and whole[0] != alone:
        desc += (f"; conditioned on the target not being passed in the {n} epochs seen, its median moves from "
                 f"epoch {alone:.0f} to {whole[0]:.0f}")
    return Posterior(whole[0], whole[1], whole[2], median, mu, sd, used, desc, n, level, share)


def truncated_quantiles(mu: float, sd: float, n: int, level: float) -> tuple[float, float, float]:
    """Median and ``level`` interval of ``exp(X)``, ``X ~ N(mu, sd²)`` conditioned on ``X > ln n``.

    >>> [round(v, 3) for v in truncated_quantiles(math.log(40.0), 0.2, 0, 0.8)]   # 40·exp(∓1.2816·0.2)
    [40.0, 30.956, 51.686]
    >>> # truncated at its median: the quantiles 0.75, 0.55, 0.95 of the whole, 40·exp(0.2·(0.674, 0.126, 1.645))
    >>> [round(v, 3) for v in truncated_quantiles(math.log(40.0), 0.2, 40, 0.8)]
    [45.777, 41.018, 55.581]
    """
    a = _N.cdf((math.log(n) - mu) / sd) if n > 0 else 0.0
    a = min(a, 1.0 - 1e-12)

    def q(p: float) -> float:
        return math.exp(mu + sd * _N.inv_cdf(min(a + p * (1.0 - a), 1.0 - 1e-15)))

    return q(0.5), q((1.0 - level) / 2.0), q((1.0 + level) / 2.0)


def backtest_variances(prior_errors: Sequence[float], extrapolation_errors: Sequence[float]) -> tuple[float, float]:
    """``(σp, σx)``: root mean squared log errors ``ln(actual/predicted)`` of each source (NaN with
    fewer than ``MIN_VARIANCE_CASES`` finite errors).

    >>> [round(v, 4) for v in backtest_variances([0.1, -0.1, 0.2], [0.3])]   # √((0.01 + 0.01 + 0.04)/3)
    [0.1414, nan]
    """
    def rms(v):
        v = np.asarray(v, dtype=float)
        v = v[np.isfinite(v)]
        return float(np.sqrt(np.mean(v**2))) if v.size >= MIN_VARIANCE_CASES else math.nan

    return rms(prior_errors), rms(extrapolation_errors)


def prior_belief(prior: Prior | None) -> tuple[float, float]:
    """``(μp, σp)`` of a prior (NaN/inf when it has none)."""
    if prior is None or not prior.available:
        return math.nan, math.inf
    return math.log(prior.epoch), prior.log_sd


def log_errors(actual: float, prior: Prior | None, extrapolation: TargetPrediction | None) -> tuple[float, float]:
    """``(ep, ex)``: ``ln(actual − ½) − μ`` of each source (NaN where it has no answer), the errors
    :func:`combine_correlated` learns from.

    >>> p = TargetPrediction("r.csv", "accuracy", "exp3", 0.9, 10, "predicted", epoch=20.5, level=0.8)
    >>> [round(v, 6) for v in log_errors(21, Prior(20.5, 0.2, "given", "a prior"), p)]   # ln(20.5/20.5), ln(20.5/20)
    [0.0, 0.024693]
    """
    mu_p, _ = prior_belief(prior)
    mu_x, _, _ = extrapolation_belief(extrapolation)
    c = math.log(actual - 0.5)
    return c - mu_p, c - mu_x


def combine_correlated(prior: Prior | None, extrapolation: TargetPrediction | None, *, n_epochs_observed: int,
                       errors: Sequence[tuple[float, float]], level: float = DEFAULT_LEVEL,
                       measured_epoch: float | None = None) -> Posterior:
    """The ``"correlated"`` posterior (module docstring) from the other runs' ``errors`` (pairs of
    :func:`log_errors` at the same observed fraction, NaN where a source had no answer).

    Prior 30 and extrapolation 20 epochs (continuous); on the other runs the prior erred
    exactly three times as far as the extrapolation, the same way (correlation 1): all the
    weight goes to the extrapolation, and four cases are too few for the 80 % order statistics,
    so the interval is their extremes, ``20·exp(∓0.1)`` (flagged: they cover about 3/5):

    >>> x = TargetPrediction("r.csv", "accuracy", "exp3", 0.9, 10, "predicted", epoch=20.5, epoch_low=16.5,
    ...                      epoch_high=26.5, level=0.8)
    >>> errs = [(0.3, 0.1), (-0.3, -0.1), (0.15, 0.05), (-0.15, -0.05)]
    >>> post = combine_correlated(Prior(30.0, 0.3, "given", "a prior"), x, n_epochs_observed=10, errors=errs)
    >>> post.method, post.weight_prior, round(post.median, 4), (post.epoch_low, post.epoch_high)   # 20·e^0.1
    ('correlated', 0.0, 20.0, (19.0, 23.0))
    """
    n = int(n_epochs_observed)
    if measured_epoch is not None:
        return combine(prior, extrapolation, n_epochs_observed=n, level=level, measured_epoch=measured_epoch)
    mu_p, sd_p = prior_belief(prior)
    mu_x, sd_x, why_x = extrapolation_belief(extrapolation) if n > 0 else (math.nan, math.inf, "no epochs observed")
    has_p = math.isfinite(mu_p) and math.isfinite(sd_p)
    has_x = math.isfinite(mu_x) and n > 0
    pairs = np.array([e for e in errors], dtype=float).reshape(-1, 2)
    flags = list(prior.flags if prior is not None else ())
    if why_x and n > 0 and not has_x:
        flags.append(f"extrapolation not used: {why_x}")
    if has_p and has_x:
        both = pairs[np.isfinite(pairs).all(axis=1)]
        if len(both) >= MIN_VARIANCE_CASES:
            w, vp, vx, cov = correlated_weight(both[:, 0], both[:, 1])
            combined = w * both[:, 0] + (1 - w) * both[:, 1]
            rho = cov / math.sqrt(max(vp * vx, 1e-24))
            desc = (f"{POSTERIOR_METHODS['correlated']}: {len(both)} cases (prior rms {math.sqrt(vp):.1%}, "
                    f"extrapolation rms {math.sqrt(vx):.1%}, correlation {rho:.2f}); the prior carries {100 * w:.0f} % "
                    "of the weight")
            return _from_errors(w * mu_p + (1 - w) * mu_x, combined, n, level, w, desc, flags)
    # one source alone: the one whose own backtest errors exist (the smaller rms when both do)
    alone = []
    for ok, col, mu, w, who in ((has_p, 0, mu_p, 1.0, "prior"), (has_x, 1, mu_x, 0.0, "extrapolation")):
        own = pairs[np.isfinite(pairs[:, col]), col]
        if ok and len(own) >= MIN_VARIANCE_CASES:
            alone.append((float(np.sqrt(np.mean(own ** 2))), col, mu, w, who, own))
    if alone:
        _, col, mu, w, who, own = min(alone, key=lambda a: a[0])
        other = "extrapolation" if who == "prior" else "prior"
        if has_p and has_x:
            flags.append(f"the {other} had no backtest errors on the other runs: not weighed in")
        desc = (f"the {who} alone, its interval from the split-conformal quantiles of its log errors on "
                f"{len(own)} other finished runs at the same observed fraction")
        return _from_errors(mu, own, n, level, w, desc, flags)
    post = combine(prior, extrapolation, n_epochs_observed=n, level=level)
    flags = list(post.flags) + [f"too few other finished runs at this fraction to backtest ({len(pairs)} cases, "
                                f"{MIN_VARIANCE_CASES} needed): precision weighting of the two intervals"]
    return replace(post, flags=tuple(flags))


def _from_errors(mu: float, errors: np.ndarray, n: int, level: float, weight: float, desc: str,
                 flags: list[str]) -> Posterior:
    """A posterior centred at ``exp(μ)`` (less the errors' median with enough cases) with the errors'
    conformal interval, every end at least ``n + 1`` whole epochs."""
    lo_q, hi_q = conformal_quantiles(errors, level, fallback="extremes")
    reach = expected_coverage(len(errors), level)
    if reach < level:
        flags = flags + [f"only {len(errors)} backtest cases: the interval spans their extremes, which cover about "
                         f"{100 * reach:.0f} % rather than {100 * level:.0f} %"]
    shift = float(np.median(errors)) if len(errors) >= MIN_SHIFT_CASES else 0.0
    first = float(n + 1)
    median = math.exp(mu + shift)
    ends = (median, math.exp(mu + lo_q), math.exp(mu + hi_q))
    whole = [max(float(math.ceil(v - 1e-9)), first) for v in ends]
    whole[1], whole[2] = min(whole[1], whole[0]), max(whole[2], whole[0])
    sd = (hi_q - lo_q) / (2.0 * z_of(level))
    return Posterior(whole[0], whole[1], whole[2], median, mu + shift, sd, "correlated", desc, n, level, weight,
                     tuple(flags))
