"""MLCommons' reference convergence points read from the installed mlperf-logging: the rounds and
benchmarks it ships, each batch's points over its seeds, and the unit they count.

``mlperf-logging`` ships, per benchmark and round, the samples (or epochs) to target of
reference runs at several global batches, each over many seeds:
``mlperf_logging/rcp_checker/training_<round>/rcps_<benchmark>.json``.  Each record holds
``Benchmark``, ``BS`` (the global batch), ``Hyperparams`` (learning rate and the rest) and
the convergence points of every seed.  This module reads them from the installed package
(``importlib.resources``; nothing is copied into the project), takes each batch's mean as
the package's own checker does (``RCP_Checker``: the olympic mean, one lowest and one highest
seed dropped, four each for UNet3D).

The unit is the MLLOG field the checker compares (``mlperf_logging.rcp_checker``'s
``read_submission_file``): ``samples_count`` for the benchmarks it lists, ``step_num`` for
Stable Diffusion in round 3.1.0 (turned into samples here: steps × batch), ``epoch_num``
otherwise (which BERT fills with samples).  The shape of ``E(B)`` does not depend on it.
"""

from __future__ import annotations

import io
import json
import math
import re
from dataclasses import dataclass
from importlib import resources

import numpy as np

from core.errors import InputError

#: the package whose data this module reads
PACKAGE = "mlperf_logging.rcp_checker"
#: benchmarks whose RCPs count MLLOG ``samples_count`` (mlperf_logging.rcp_checker.read_submission_file)
_SAMPLES_COUNT = frozenset({"llama2_70b_lora", "flux1", "llama31_405b", "llama31_8b", "gpt_oss_20b",
                            "deepseekv3_671b", "qwen35_397b_grpo", "dlrmv4"})


# --------------------------------------------------------------------------- reading
@dataclass(frozen=True)
class RcpPoint:
    """One reference convergence point: a benchmark's seeds at one global batch.

    ``values`` are each seed's samples to target (in :attr:`RcpSet.unit`, step counts already
    turned into samples), ``mean`` the checker's olympic mean, ``learning_rate`` the record's
    ``opt_base_learning_rate`` (None when it has none).
    """

    global_batch: float
    values: tuple[float, ...]
    mean: float
    learning_rate: float | None = None
    record: str = ""

    @property
    def cv(self) -> float:
        """Relative standard deviation of the seeds."""
        v = np.asarray(self.values, dtype=float)
        return float(np.std(v) / np.mean(v)) if v.size > 1 and np.mean(v) > 0 else 0.0

    @property
    def resolution(self) -> float | None:
        """The spacing of the evaluations the seeds passed at: a seed crossed somewhere within one such step.

        The greatest common divisor of the differences between the seeds' (whole-number)
        values; when every seed passed at the same value, one optimiser step (the batch) if
        the values are whole steps; None when the values are not whole numbers.

        >>> RcpPoint(8, (3072.0, 2688.0, 3456.0), 3072.0).resolution        # LoRA evaluates every 384 samples
        384.0
        >>> RcpPoint(256, (4608.0, 4608.0), 4608.0).resolution               # 18 whole steps of 256
        256.0
        """
        v = np.asarray(self.values, dtype=float)
        if v.size == 0 or not np.all(np.abs(v - np.round(v)) < 1e-9):
            return None
        diffs = np.diff(np.unique(np.round(v).astype(np.int64)))
        if diffs.size:
            return float(np.gcd.reduce(diffs))
        b = int(round(self.global_batch))
        return float(b) if b > 0 and int(round(v[0])) % b == 0 else None

    @property
    def spread(self) -> float:
        """A new seed's relative scatter: the seeds' spread, never below a uniform step of :attr:`resolution`."""
        res = self.resolution
        floor = res / self.mean / math.sqrt(12) if res and self.mean > 0 else 0.0
        return max(self.cv, floor)


@dataclass(frozen=True)
class RcpSet:
    """A benchmark's RCPs in one round, sorted by global batch."""

    benchmark: str
    round: str
    unit: str
    points: tuple[RcpPoint, ...]

    @property
    def batches(self) -> np.ndarray:
        return np.array([p.global_batch for p in self.points], dtype=float)

    @property
    def means(self) -> np.ndarray:
        return np.array([p.mean for p in self.points], dtype=float)

    @property
    def spreads(self) -> np.ndarray:
        return np.array([p.spread for p in self.points], dtype=float)


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split("."))


def _root():
    """The installed package's RCP folder, or a one-line refusal when ``mlperf-logging`` is missing."""
    try:
        return resources.files(PACKAGE)
    except ModuleNotFoundError:
        raise InputError("--rcp: expected the mlperf-logging package, which ships the RCPs; got none installed. "
                         "pip install -r requirements.txt (mlperf-logging==4.1.68).") from None


def rcp_rounds(usage: str = "training") -> list[str]:
    """The rounds the installed ``mlperf-logging`` has RCPs for, oldest first.

    >>> rcp_rounds()[:2]
    ['1.0.0', '1.1.0']
    """
    root = _root()
    found = [m.group(1) for p in root.iterdir() if (m := re.fullmatch(rf"{usage}_(\d+(?:\.\d+)*)", p.name))]
    return sorted(found, key=_version)


def rcp_benchmarks(round_: str | None = None, usage: str = "training") -> list[str]:
    """Benchmarks with RCPs in ``round_`` (None: in any round), sorted.

    >>> "llama2_70b_lora" in rcp_benchmarks("5.0.0"), "resnet" in rcp_benchmarks("5.0.0")
    (True, False)
    """
    rounds = rcp_rounds(usage) if round_ is None else [round_]
    names = set()
    for r in rounds:
        folder = _root() / f"{usage}_{r}"
        if folder.is_dir():
            names |= {m.group(1) for p in folder.iterdir() if (m := re.fullmatch(r"rcps_(.+)\.json", p.name))}
    return sorted(names)


def latest_round(benchmark: str, usage: str = "training") -> str:
    """The newest round with RCPs for ``benchmark``.

    Raises
    ------
    InputError
        No round has it (the message lists the benchmarks there are).
    """
    for r in reversed(rcp_rounds(usage)):
        if benchmark in rcp_benchmarks(r, usage):
            return r
    raise InputError(f"--rcp: expected an MLPerf {usage} benchmark with reference convergence points; got "
                     f"{benchmark!r}. Known: {', '.join(rcp_benchmarks(None, usage))}.")


def parse_rcp_spec(spec: str) -> tuple[str, str | None]:
    """``BENCHMARK[:ROUND]`` → ``(benchmark, round or None)``.

    >>> parse_rcp_spec("llama2_70b_lora:5.0.0"), parse_rcp_spec("bert")
    (('llama2_70b_lora', '5.0.0'), ('bert', None))
    """
    name, _, round_ = spec.strip().partition(":")
    if not name or (round_ and not re.fullmatch(r"\d+(\.\d+)*", round_)):
        raise InputError(f"--rcp: expected BENCHMARK or BENCHMARK:ROUND (e.g. llama2_70b_lora:5.0.0); got {spec!r}.")
    if round_ and round_.count(".") == 1:
        round_ += ".0"
    return name, round_ or None


def rcp_unit(benchmark: str, round_: str) -> str:
    """The MLLOG field the RCP counts (see the module docstring)."""
    if benchmark == "stable_diffusion" and round_ == "3.1.0":
        return "step_num"
    return "samples_count" if benchmark in _SAMPLES_COUNT else "epoch_num"


def load_rcps(benchmark: str, round_: str | None = None, usage: str = "training") -> RcpSet:
    """The RCPs of ``benchmark`` in ``round_`` (None: the newest round that has them).

    Each record goes through ``mlperf_logging``'s ``RCP_Checker``, which picks the record's
    convergence list and computes its mean as the submission checker does.

    >>> s = load_rcps("llama2_70b_lora", "5.0.0")
    >>> s.unit, s.batches.tolist(), len(s.points[0].values)
    ('samples_count', [8.0, 16.0, 32.0, 128.0], 20)
    >>> round(s.points[0].mean, 1)          # the olympic mean of the 20 seeds at batch 8
    3178.7
    """
    from mlperf_logging.rcp_checker.rcp_checker import RCP_Checker, submission_runs

    round_ = round_ or latest_round(benchmark, usage)
    path = _root() / f"{usage}_{round_}" / f"rcps_{benchmark}.json"
    if not path.is_file():
        have = [r for r in rcp_rounds(usage) if benchmark in rcp_benchmarks(r, usage)]
        raise InputError(f"--rcp: expected a round with RCPs for {benchmark}; got {round_}. "
                         + (f"Rounds with it: {', '.join(have)}." if have else
                            f"Known benchmarks: {', '.join(rcp_benchmarks(None, usage))}."))
    text = path.read_text(encoding="utf-8")
    raw = json.loads(text)
    if benchmark in submission_runs.get(usage, {}):
        data = RCP_Checker(usage, round_, benchmark, False, rcp_file=io.StringIO(text)).rcp_data
    else:       # a retired benchmark the checker no longer knows: the same olympic mean by hand
        data = {k: {"BS": v["BS"], "Epochs to converge": sorted(v.get("samples to converge")
                                                                 or v["Epochs to converge"])} for k, v in raw.items()}
        for v in data.values():
            kept = v["Epochs to converge"][1:-1] if len(v["Epochs to converge"]) > 2 else v["Epochs to converge"]
            v["RCP Mean"] = float(np.mean(kept))
    unit = rcp_unit(benchmark, round_)
    points = []
    for record, content in data.items():
        batch = float(content["BS"])
        scale = batch if unit == "step_num" else 1.0
        lr = raw[record].get("Hyperparams", {}).get("opt_base_learning_rate")
        points.append(RcpPoint(batch, tuple(float(v) * scale for v in content["Epochs to converge"]),
                               float(content["RCP Mean"]) * scale,
                               float(lr) if isinstance(lr, (int, float)) else None, record))
    points.sort(key=lambda p: p.global_batch)
    return RcpSet(benchmark, round_, "samples_count" if unit == "step_num" else unit, tuple(points))
