"""The ``"calibrated"`` posterior: a source chosen, and its interval scaled, by the other runs' backtest.

``POSTERIOR_METHODS["calibrated"]`` (issue 23, "intervals that mean what they say").  For a run
cut after ``n`` epochs, the *other* finished runs cut at the same observed fraction (never the
run itself, nor its train/val twin) each carry what was predicted for them and where they
passed: an :data:`OtherCase` ``(actual, μp, σp, μx, σx)`` (whole epoch at target; the prior's
and the extrapolation's ``ln c`` belief, NaN/inf where a source had no answer).  Then:

1. **The candidates** the run itself has: ``prior`` ``(μp, σp)``, ``extrapolation``
   ``(μx, σx)`` and, when it has both, their ``precision`` weighting
   (``1/σ² = 1/σp² + 1/σx²``, ``μ = σ²(μp/σp² + μx/σx²)``).
2. **The choice**: only a candidate with at least ``⌈level/(1 − level)⌉`` other cases to calibrate
   it on (4 at 80 %: :func:`min_cases`) counts.  With that many other cases that have both
   sources, the candidate with the smallest median ``|ln(a − ½) − μ|`` over them wins (ties in
   this order: precision, prior, extrapolation); with fewer, the combination cannot be judged
   and ``precision`` is used (the product's default weighting), its interval calibrated as
   below.  (For the other cases ``precision`` is the one source they have when they have one.)
3. **The interval** (normalised split-conformal): each other case where the chosen candidate
   exists gets the score ``s = max((μ − ln a)/σ, (ln(a − 1) − μ)/σ, 0)``: the smallest multiple
   ``q`` of its own ``σ`` for which ``[exp(μ − qσ), exp(μ + qσ)]`` in whole epochs (``ceil``)
   holds its whole epoch ``a``.  ``q`` is the ``⌈(m + 1)·level⌉``-th smallest of the ``m``
   scores, and the posterior is ``ln c ~ N(μ, (qσ/z)²)`` (so its ``level`` interval is
   ``μ ± qσ``), conditioned on ``c > n`` as every posterior is.  Scoring ``|e|/σ`` (one order
   statistic of absolute scores) needs only ``m ≥ 4`` cases at 80 %, where the two-sided
   quantiles of ``"correlated"`` need 9; with fewer it falls back to the ``"precision"`` posterior
   (the two intervals as they are) and says so.

Left out from the run ``i`` of ``N`` exchangeable runs, the rule covers exactly ``⌈N·level⌉``
of them when the scores differ: 5 of 6, 6 of 7, 8 of 10, 20 of 25 at 80 %.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from core.defaults import DEFAULT_LEVEL
from core.prediction.posterior import (
    POSTERIOR_METHODS,
    Posterior,
    combine,
    extrapolation_belief,
    prior_belief,
    truncated_quantiles,
)
from core.prediction.prior import Prior, z_of
from core.prediction.target_prediction import TargetPrediction

#: one other finished run cut at the same fraction: ``(actual whole epoch, μp, σp, μx, σx)``
OtherCase = tuple[float, float, float, float, float]
#: the order in which equally good candidates are preferred
CANDIDATES: tuple[str, ...] = ("precision", "prior", "extrapolation")


def candidates(prior: tuple[float, float], extrapolation: tuple[float, float]) -> dict[str, tuple[float, float]]:
    """``{name: (μ, σ)}`` of the candidates two ``(μ, σ)`` beliefs of ``ln c`` give (σ = inf: none).

    ``precision`` is their precision weighting, or the one source there is:

    >>> c = candidates((math.log(20.0), 0.4), (math.log(80.0), 0.4))
    >>> list(c), round(math.exp(c["precision"][0]), 6), round(c["precision"][1], 6)   # √(0.16/2)
    (['precision', 'prior', 'extrapolation'], 40.0, 0.282843)
    >>> candidates((math.log(20.0), 0.4), (math.nan, math.inf)) == {"precision": (math.log(20.0), 0.4),
    ...                                                               "prior": (math.log(20.0), 0.4)}
    True
    """
    out = {}
    (mu_p, sd_p), (mu_x, sd_x) = prior, extrapolation
    has_p = math.isfinite(mu_p) and math.isfinite(sd_p) and sd_p > 0
    has_x = math.isfinite(mu_x) and math.isfinite(sd_x) and sd_x > 0
    if has_p and has_x:
        wp, wx = sd_p ** -2, sd_x ** -2
        out["precision"] = ((wp * mu_p + wx * mu_x) / (wp + wx), (wp + wx) ** -0.5)
    elif has_p or has_x:
        out["precision"] = (mu_p, sd_p) if has_p else (mu_x, sd_x)
    if has_p:
        out["prior"] = (mu_p, sd_p)
    if has_x:
        out["extrapolation"] = (mu_x, sd_x)
    return out


def whole_epoch_score(actual: float, mu: float, sd: float) -> float:
    """The smallest ``q`` for which ``[ceil(exp(μ − qσ)), ceil(exp(μ + qσ))]`` holds the whole epoch ``actual``.

    ``ceil(exp(μ − qσ)) ≤ a`` needs ``q ≥ (μ − ln a)/σ``; ``ceil(exp(μ + qσ)) ≥ a`` needs
    ``exp(μ + qσ) > a − 1``, ``q > (ln(a − 1) − μ)/σ``.

    >>> round(whole_epoch_score(12, math.log(10.0), 0.1), 4)    # ln(11/10)/0.1: 10·e^0.0953 = 11 → ceil 11 < 12
    0.9531
    >>> whole_epoch_score(10, math.log(9.5), 0.1)               # ceil(9.5) = 10: inside already
    0.0
    """
    up = (math.log(actual - 1) - mu) / sd if actual > 1 else -math.inf
    return max((mu - math.log(actual)) / sd, up, 0.0)


def conformal_scale(scores: Sequence[float], level: float) -> float | None:
    """The ``⌈(m + 1)·level⌉``-th smallest of ``m`` scores (None when that exceeds ``m``).

    >>> conformal_scale([0.5, 2.0, 1.0, 3.0], 0.8)     # ⌈5·0.8⌉ = 4: the largest
    3.0
    >>> conformal_scale([0.5, 2.0, 1.0, 3.0, 0.1, 0.2, 0.3, 0.4, 0.6], 0.8)   # ⌈10·0.8⌉ = 8th of 9
    2.0
    >>> conformal_scale([0.5, 2.0, 1.0], 0.8) is None  # ⌈4·0.8⌉ = 4 > 3
    True
    """
    s = np.sort(np.asarray(list(scores), dtype=float))
    k = math.ceil((len(s) + 1) * level - 1e-9)
    return float(s[k - 1]) if 1 <= k <= len(s) else None


def scores_of(name: str, others: Sequence[OtherCase]) -> list[float]:
    """:func:`whole_epoch_score` of candidate ``name`` on every other case that has it.

    >>> [round(v, 4) for v in scores_of("prior", [(11, math.log(10.0), 0.1, math.nan, math.inf),
    ...                                            (12, math.nan, math.inf, math.log(10.0), 0.1)])]
    [0.0]
    """
    out = []
    for a, mu_p, sd_p, mu_x, sd_x in others:
        theirs = candidates((mu_p, sd_p), (mu_x, sd_x)).get(name)
        if theirs is not None:
            out.append(whole_epoch_score(a, *theirs))
    return out


def choose(own: Sequence[str], others: Sequence[OtherCase], level: float = DEFAULT_LEVEL) -> tuple[str | None, str]:
    """``(name, why)``: the candidate to use among ``own`` (the run's own candidates), and why.

    Only candidates whose interval can be calibrated count (at least :func:`min_cases` other
    cases with them).  With that many other cases that have *both* sources, the candidate with the
    smallest median ``|ln(a − ½) − μ|`` over them wins (ties: ``CANDIDATES`` order); with fewer,
    the combination cannot be judged and ``precision`` is used (the product's default weighting, its
    interval still calibrated).  None: no candidate can be calibrated.

    Four other runs with both sources, prior errors ln(a − ½) − μp = 0.1, −0.1, 0.3, 0.0 (median
    |e| 0.1) and extrapolation errors 0.4, −0.2, 0.1, 0.2 (median |e| 0.2); equal σ, so precision's
    errors are their means 0.25, −0.15, 0.2, 0.1 (median |e| 0.175): the prior wins.

    >>> others = [(a, math.log(a - 0.5) - ep, 0.2, math.log(a - 0.5) - ex, 0.2)
    ...           for a, ep, ex in ((11, 0.1, 0.4), (21, -0.1, -0.2), (31, 0.3, 0.1), (41, 0.0, 0.2))]
    >>> choose(["precision", "prior", "extrapolation"], others)[0]
    'prior'
    >>> choose(["precision", "prior", "extrapolation"], others[:3])[0] is None   # 3 cases: none can be calibrated
    True
    """
    need = min_cases(level)
    eligible = [c for c in CANDIDATES if c in own and len(scores_of(c, others)) >= need]
    if not eligible:
        return None, ""
    if len(eligible) == 1:
        return eligible[0], "the only candidate with enough other runs to calibrate it" if len(own) > 1 \
            else "the only source"
    errs: dict[str, list[float]] = {c: [] for c in eligible}
    for a, mu_p, sd_p, mu_x, sd_x in others:
        theirs = candidates((mu_p, sd_p), (mu_x, sd_x))
        if "prior" in theirs and "extrapolation" in theirs:
            for c in eligible:
                errs[c].append(abs(math.log(a - 0.5) - theirs[c][0]))
    m = len(errs[eligible[0]])
    if m < need:
        # too few cases with both sources to judge the combination: precision weighting, as the
        # product's default would (its interval still calibrated; it has at least the cases of either source)
        return ("precision" if "precision" in eligible else None), \
            f"only {m} other finished runs with both sources: too few to judge the combination"
    medians = {c: float(np.median(v)) for c, v in errs.items()}
    best = min(medians, key=lambda c: (medians[c], CANDIDATES.index(c)))
    return best, (f"median |log error| on the {m} other finished runs with both: "
                  + ", ".join(f"{c} {v:.3f}" for c, v in medians.items()))


def min_cases(level: float) -> int:
    """The fewest other cases a candidate is calibrated and chosen on: ``⌈level/(1 − level)⌉``
    (the order statistic ``⌈(m + 1)·level⌉`` exists from there).

    >>> min_cases(0.8), min_cases(0.9)
    (4, 9)
    """
    return math.ceil(level / (1 - level) - 1e-9)


def combine_calibrated(prior: Prior | None, extrapolation: TargetPrediction | None, *, n_epochs_observed: int,
                       others: Sequence[OtherCase], level: float = DEFAULT_LEVEL,
                       measured_epoch: float | None = None) -> Posterior:
    """The ``"calibrated"`` posterior (module docstring) from the other runs' cases ``others``.

    Prior 20 (σ 0.2) and no extrapolation; four other runs whose priors said 10 (σ 0.1) and which
    passed in epochs 11, 12, 10 and 13: scores ``ln(10/10)/0.1 = 0``, ``ln(11/10)/0.1 = 0.953``,
    0 and ``ln(12/10)/0.1 = 1.823``; ``⌈5·0.8⌉ = 4``: q = 1.823, so the interval is
    ``20·exp(∓1.823·0.2)``, 13.9 to 28.8, whole epochs 14 to 29:

    >>> others = [(a, math.log(10.0), 0.1, math.nan, math.inf) for a in (11, 12, 10, 13)]
    >>> post = combine_calibrated(Prior(20.0, 0.2, "given", "a prior"), None, n_epochs_observed=0, others=others)
    >>> post.method, post.epoch, (post.epoch_low, post.epoch_high)
    ('calibrated', 20.0, (14.0, 29.0))
    """
    n = int(n_epochs_observed)
    if measured_epoch is not None:
        return combine(prior, extrapolation, n_epochs_observed=n, level=level, measured_epoch=measured_epoch)
    b_x = extrapolation_belief(extrapolation) if n > 0 else (math.nan, math.inf, "no epochs observed")
    own = candidates(prior_belief(prior), b_x[:2])
    flags = list(prior.flags if prior is not None else ())
    if b_x[2] and n > 0:
        flags.append(f"extrapolation not used: {b_x[2]}")
    if not own:
        return combine(prior, extrapolation, n_epochs_observed=n, level=level)
    names = list(own) if "prior" in own and "extrapolation" in own else [n_ for n_ in own if n_ != "precision"]
    name, why = choose(names, others, level)
    scores = scores_of(name, others) if name is not None else []
    q = conformal_scale(scores, level)
    if name is None or q is None:
        post = combine(prior, extrapolation, n_epochs_observed=n, level=level)
        flags = list(post.flags) + [f"too few other finished runs at this fraction to calibrate on (at most "
                                    f"{max((len(scores_of(c, others)) for c in names), default=0)} cases, "
                                    f"{min_cases(level)} needed): precision weighting of the "
                                    "two intervals"]
        return replace(post, flags=tuple(flags))
    mu, sd = own[name]
    sd_new = max(q * sd / z_of(level), 1e-9)
    share = {"prior": 1.0, "extrapolation": 0.0}.get(name, math.nan)
    if name == "precision":
        share = own["prior"][1] ** -2 / (own["prior"][1] ** -2 + own["extrapolation"][1] ** -2)
    desc = (f"{POSTERIOR_METHODS['calibrated']}: {name} ({why}); its interval scaled by {q:.2f} "
            f"(split-conformal over {len(scores)} other finished runs at the same observed fraction)")
    median, lo, hi = truncated_quantiles(mu, sd_new, n, level)
    first = float(n + 1)
    whole = [max(float(math.ceil(v - 1e-9)), first) if math.isfinite(v) else v for v in (median, lo, hi)]
    return Posterior(whole[0], whole[1], whole[2], median, mu, sd_new, "calibrated", desc, n, level, share,
                     tuple(flags))

