"""Measurement 4 of issue 12 (interim): the MLPerf v3.0 ResNet-50 logs, prior × first evaluations.

Until issue 11's MLLOG reader (``core/logs/mllog.py``) and batch-scaling model (``core.plan.batch``)
are merged, this script reads the logs with a *tiny local parser* (``_mllog`` below: the
``:::MLLOG`` JSON events ``eval_accuracy`` with ``metadata.epoch_num``, ``global_batch_size``
and the LARS/SGD polynomial-decay settings; nothing else) and uses the **per-job fallback
prior**: the epochs to 75.9 % of the runs of the *other systems*, batch ignored.  For every run
(26 runs: seeds 0 and 1 of 13 systems, ``tests.conftest.SHARED / "mlperf_v3.0_resnet50"``):

* observed: its first half of evaluations (``floor(k/2)`` of ``k``; evaluations come every 4
  epochs), cut with ``first_epochs``;
* prior: ``prior_from_other_runs`` over the other systems' epochs to target;
* extrapolation: ``predict_epoch_at_target`` (family auto, target 0.759) with the run's own
  declared schedule ``poly:END:POWER`` (LARS decay steps and power from its log; the warm-up
  is not modelled);
* posterior: ``combine`` (precision weighting, conditioned on the observed epochs);
* actual: the first evaluation at or above 0.759 (MLPerf's criterion; the runs stop there).

Prints the runs and the median |error| / 80 %-interval coverage of the three.  After the
issue-11 merge: read with ``core.logs.mllog`` and make the prior with the batch-scaling fit
(``prior_from_other_runs(predicted, lows=..., highs=..., source="batch scaling")``).

Usage: ``python bench/mlperf_prior.py`` (needs ``../shared/reference``; about half a minute).
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.logs import read_log  # noqa: E402 (after the path set-up)
from core.prediction import combine, first_epochs, predict_epoch_at_target, prior_from_other_runs  # noqa: E402
from tests.conftest import SHARED  # noqa: E402

TARGET = 0.759
KEYS = ("global_batch_size", "lars_opt_learning_rate_decay_steps", "lars_opt_learning_rate_decay_poly_power",
        "sgd_opt_learning_rate_decay_poly_power", "lars_opt_learning_rate_warmup_epochs")
FOLDER = SHARED / "mlperf_v3.0_resnet50"


def _mllog(path: Path) -> dict:
    """The few events this measurement needs, from one MLLOG file (a local stand-in for issue 11's reader)."""
    evals, keys = [], {}
    for line in path.read_text(errors="replace").splitlines():
        at = line.find(":::MLLOG ")
        if at < 0:
            continue
        try:
            event = json.loads(line[at + len(":::MLLOG "):])
        except json.JSONDecodeError:
            continue
        key = event.get("key")
        if key == "eval_accuracy":
            evals.append((float(event["metadata"]["epoch_num"]), float(event["value"])))
        elif key in KEYS:
            keys.setdefault(key, event["value"])
    return {"evals": sorted(evals), **keys}


def runs() -> list[dict]:
    out = []
    for path in sorted(FOLDER.glob("*/*/result_*.txt")):
        info = _mllog(path)
        system = f"{path.parent.parent.name}/{path.parent.name}"
        csv = "epoch,acc\n" + "".join(f"{e:g},{a}\n" for e, a in info["evals"])
        log = read_log(csv.encode(), f"{system}/{path.name}", roles={"loss": None})
        reached = [e for e, a in info["evals"] if a >= TARGET]
        power = info.get("lars_opt_learning_rate_decay_poly_power",
                         info.get("sgd_opt_learning_rate_decay_poly_power", 2))
        out.append({"system": system, "seed": path.stem, "batch": info.get("global_batch_size"), "log": log,
                    "evals": info["evals"], "actual": reached[0] if reached else None,
                    "schedule": f"poly:{info['lars_opt_learning_rate_decay_steps']}:{power}"})
    return out


def main() -> None:
    t0 = time.perf_counter()
    if not FOLDER.is_dir():
        sys.exit(f"{FOLDER}: expected the MLPerf logs (../shared/reference); not found.")
    rs = runs()
    rows = []
    for r in rs:
        k = len(r["evals"])
        n = int(r["evals"][k // 2 - 1][0])                      # the first half of the evaluations
        others = [o["actual"] - 0.5 for o in rs if o["system"] != r["system"] and o["actual"] is not None]
        prior = prior_from_other_runs(others)
        p = predict_epoch_at_target(first_epochs(r["log"], n), target_acc=TARGET, schedule=r["schedule"])
        post = combine(prior, p, n_epochs_observed=n)
        lo, hi = prior.interval()
        ext = p.epoch if p.status == "predicted" else None
        rows.append({"system": r["system"], "seed": r["seed"], "batch": r["batch"], "evals": k, "observed": n,
                     "actual": r["actual"], "prior": math.ceil(prior.epoch), "prior_low": math.ceil(lo),
                     "prior_high": math.ceil(hi), "extrapolated": ext,
                     "extrap_low": p.epoch_low if ext else None, "extrap_high": p.epoch_high if ext else None,
                     "extrap_status": p.status, "posterior": post.epoch, "post_low": post.epoch_low,
                     "post_high": post.epoch_high, "method": post.method})
    t = pd.DataFrame(rows)
    print(t.to_string(index=False))
    never = t[t["actual"].isna()]
    if len(never):
        print(f"\nnot scored (never at {TARGET} in the log): " + ", ".join(never["system"] + " " + never["seed"]))
    t = t[t["actual"].notna()]
    print("\n| prediction | median abs error | 80 % coverage | answered |\n|---|---|---|---|")
    for what, mid, lo, hi in (("prior (other systems, batch ignored)", "prior", "prior_low", "prior_high"),
                              ("extrapolation (first half of the evaluations)", "extrapolated", "extrap_low",
                               "extrap_high"),
                              ("posterior", "posterior", "post_low", "post_high")):
        ok = t[mid].notna()
        err = 100 * (t.loc[ok, mid].astype(float) - t.loc[ok, "actual"]) / t.loc[ok, "actual"]
        actual = t.loc[ok, "actual"]
        cov = (t.loc[ok, lo].astype(float) <= actual) & (actual <= t.loc[ok, hi].astype(float))
        med = f"{np.median(np.abs(err)):.1f} %" if ok.any() else "–"
        print(f"| {what} | {med} | {100 * cov.mean():.0f} % | {int(ok.sum())} of {len(t)} |" if ok.any()
              else f"| {what} | – | – | 0 of {len(t)} |")
    print(f"\n(measured in {time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
