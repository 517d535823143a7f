"""Measure what adding a registry entry costs (issue 34): "add a curve family", "add a reader", "add a device",
"add a speed model", each done for real on a throwaway branch of a scratch clone, then the files it touched
counted and the tests of its area run to count the tests it broke.

For each kind, from ``--ref`` (default ``HEAD``) in a ``git clone --shared`` of this repository made in a
temporary folder (this checkout is never changed): a branch ``scratch-add-<kind>``, the new entry's own module
written and the entry listed in its registry (the recipe of docs/extending.md: a curve family ``pow3-copy``, a
copy of pow3 under a new name; a speed model ``mean-step``, every step the mean measured step time; a reader
``ndjson``, JSON lines ``{"step": 1, "loss": 2.0}`` read through the CSV reader; a device ``L40``, NVIDIA's L40
card in the device table, which is its own registry and module), ``ruff check --fix`` on the touched files (the
import order), one commit. Then ``git diff --name-only`` against ``--ref`` counts the files, and pytest
(``-n 0 -p no:randomly``) runs that kind's tests: ``tests/contracts`` (where the ref has it), the area's tests
(``tests/core/curves`` and ``tests/core/prediction``; ``tests/core/plan`` and ``tests/core/library/test_speed.py``;
``tests/core/logs``; ``tests/core/devices``, ``tests/core/paleo`` and ``tests/core/transformer``), the doctests
of the area's modules, ``tests/test_architecture.py`` and ``tests/test_lint.py``. A test that fails there is
run again on ``--ref`` itself: only a test that passes on the ref counts as broken by the addition. The
report also says whether the contract tests collected the new entry (its name in a test id) although no test
names it. ``--kinds`` picks some of the four; ``--quick`` runs only the contract tests and the doctests.
Reads nothing outside this repository. Timings are not the point; the wall time of each kind is printed with
the load average. Usage: ``python bench/registry_additions.py [--ref REF] [--kinds curve,speed,reader,device]
[--quick]``.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CURVE_MODULE = '''"""pow3 under another name: a scratch family (bench/registry_additions.py)."""

from __future__ import annotations

import dataclasses

from core.curves.domhan import POW3

POW3_COPY = dataclasses.replace(POW3, name="pow3-copy", label="Power law (copy) a·k^(−c)+b")
'''

SPEED_MODULE = '''"""A speed model whose every step takes the mean measured step time: a scratch family
(bench/registry_additions.py)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from core.speed.family import FittedSpeed, SpeedFamily
from core.speed.table import normalise_speed_table


@dataclass(frozen=True, kw_only=True)
class SteadySpeed(FittedSpeed):
    """Every step takes ``seconds``, whatever the workers."""

    seconds: float = 1.0
    family = "mean-step"
    mode = "allreduce"
    time_unit = "s"

    def steps_per_s_at(self, p, w, global_batch):
        return np.broadcast_to(1.0 / self.seconds, np.broadcast_shapes(np.shape(p), np.shape(w))).astype(float)

    def steps_per_s(self, p, w):
        return self.steps_per_s_at(p, w, self.global_batch)

    def scaled(self, factor):
        return dataclasses.replace(self, seconds=self.seconds * factor)

    @property
    def named_params(self):
        return {"seconds": float(self.seconds)}

    def report(self):
        return "\\n".join(["[[Model]]", f"    seconds = {self.seconds:g}", *self.report_tail()])

    def to_dict(self):
        return {"family": self.family, "seconds": self.seconds}


def _seconds(table, global_batch, source):
    tab = normalise_speed_table(table, global_batch=global_batch, source=source)
    return 1.0 / tab["steps_per_s"].to_numpy(dtype=float)


def _fit(table, *, mode, global_batch=None, gpus_per_node=None, source="table"):
    t = _seconds(table, global_batch, source)
    return SteadySpeed(seconds=float(np.mean(t)), n_points=len(t), mape_pct=0.0, global_batch=global_batch)


def _loo(table, model, *, mode, global_batch=None, gpus_per_node=None, source="table"):
    t = _seconds(table, global_batch, source)
    return np.array([1.0 / np.mean(np.delete(t, i)) for i in range(len(t))]) if len(t) > 1 else None


STEADY_SPEED = SpeedFamily("mean-step", "Mean step", "every step takes the mean measured step time",
                           {"allreduce": "t = mean(t_i)"}, {"allreduce": r"t = \\bar t"}, _fit, _loo)
'''

READER_MODULE = '''"""JSON lines logs (``{"step": 1, "loss": 2.0}`` a line): a scratch reader
(bench/registry_additions.py)."""

from __future__ import annotations

import json

import pandas as pd

from core.logs.csvlog import read_csv_log


def _records(data: bytes, limit: int | None = None) -> list[dict] | None:
    lines = [line for line in data.decode("utf-8", "replace").splitlines() if line.strip()][:limit]
    try:
        rows = [json.loads(line) for line in lines]
    except ValueError:
        return None
    return rows if rows and all(isinstance(r, dict) and "step" in r for r in rows) else None


def is_jsonl(data: bytes) -> bool:
    """Whether the first lines are JSON objects with a ``step``."""
    return _records(data[:4096].rsplit(b"\\n", 1)[0] if len(data) > 4096 else data, 5) is not None


def read_jsonl(data: bytes, source: str, options) -> object:
    """The run the JSON lines describe, read as the CSV of their keys."""
    rows = _records(data) or []
    return read_csv_log(pd.DataFrame(rows).to_csv(index=False).encode(), source, max_bytes=options.max_bytes)


def jsonl_sample() -> bytes:
    """Five JSON lines of a falling loss."""
    lines = [json.dumps({"step": s, "loss": 2.0 / (1 + s / 20) + 0.1}) for s in (10, 20, 30, 40, 50)]
    return "".join(line + "\\n" for line in lines).encode()
'''

DEVICE_ENTRY = '''    _gpu("L40", "NVIDIA L40 48GB", fp32=90.5, tf32=90.5, fp16=181, bf16=181, source=_L40,
         sparse_printed=False, memory_gb=48, bandwidth=864, clock=2490, link="pcie4", link_gbs=64,
         link_source=_PCIE.format(gen=4, gbs=64, gpu="L40"), family="L40"),
'''


@dataclass(frozen=True)
class Addition:
    """One kind of entry: the files written, the edits of its registry, its name and its tests."""

    kind: str
    name: str
    files: dict[str, str]
    edits: tuple[tuple[str, str, str], ...]      # (path, regex, replacement), each must match once
    tests: tuple[str, ...]
    doctests: tuple[str, ...]


ADDITIONS = {
    "curve": Addition(
        "curve", "pow3-copy", {"core/curves/pow3_copy.py": CURVE_MODULE},
        (("core/curves/registry.py", r"(\nfrom core\.curves\.family import)",
          r"\nfrom core.curves.pow3_copy import POW3_COPY\1"),
         ("core/curves/registry.py", r"(FAMILIES: dict\[str, CurveFamily\] = \{f\.name: f for f in \([^)]*)\)",
          r"\1, POW3_COPY)")),
        ("tests/core/curves", "tests/core/prediction"), ("core/curves", "core/prediction")),
    "speed": Addition(
        "speed", "mean-step", {"core/speed/mean_step.py": SPEED_MODULE},
        (("core/speed/registry.py", r"(\nfrom core\.speed\.family import)",
          r"\nfrom core.speed.mean_step import STEADY_SPEED\1"),
         ("core/speed/registry.py", r"(\*LOG_SPEED_FAMILIES, PALEO_SPEED)", r"\1, STEADY_SPEED")),
        ("tests/core/plan", "tests/core/library/test_speed.py"), ("core/speed", "core/plan")),
    "reader": Addition(
        "reader", "ndjson", {"core/logs/ndjson.py": READER_MODULE},
        (("core/logs/reader.py", r"(\nfrom core\.logs\.csvlog import)", r"\nfrom core.logs.ndjson import is_jsonl, "
          r"jsonl_sample, read_jsonl\1"),
         ("core/logs/reader.py", r"(\n    Reader\(\"csv\", )",
          r'\n    Reader("ndjson", is_jsonl, read_jsonl, "JSON lines (`{\\"step\\": 1, \\"loss\\": 2.0}`)", '
          r'("ndjson",)@SAMPLE@),\1')),
        ("tests/core/logs",), ("core/logs",)),
    "device": Addition(
        "device", "L40", {},
        (("core/devices/table.py", r"(\n_L40S = )", '\n_L40 = "NVIDIA L40 datasheet (scratch entry)"\\1'),
         ("core/devices/table.py", r"(\n    _gpu\(\"L40S\", )", "\n" + DEVICE_ENTRY.rstrip("\n").replace("\\", "\\\\")
          + r"\1")),
        ("tests/core/devices", "tests/core/paleo", "tests/core/transformer"), ("core/devices",)),
}

COMMON_TESTS = ("tests/test_architecture.py", "tests/test_lint.py")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def pytest_failures(repo: Path, targets: list[str]) -> tuple[list[str], int, str]:
    """The failing test ids, the number run and pytest's last line."""
    cmd = [sys.executable, "-m", "pytest", *targets, "-q", "-n", "0", "-p", "no:randomly", "-p", "no:cacheprovider",
           "-rfE"]
    out = subprocess.run(cmd, cwd=repo, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(repo)})
    text = out.stdout + out.stderr
    failed = sorted(set(re.findall(r"^(?:FAILED|ERROR) (\S+)", text, flags=re.M)))
    counts = re.findall(r"(\d+) (passed|failed|error|errors|skipped)", text.splitlines()[-1] if text else "")
    n = sum(int(c) for c, _ in counts)
    return failed, n, (text.strip().splitlines() or [""])[-1]


def collected_ids(repo: Path, path: str) -> list[str]:
    out = subprocess.run([sys.executable, "-m", "pytest", path, "--collect-only", "-q", "-n", "0",
                          "-p", "no:randomly"], cwd=repo, capture_output=True, text=True)
    return [line for line in out.stdout.splitlines() if "::" in line]


def add(repo: Path, ref: str, spec: Addition, quick: bool) -> dict:
    git(repo, "checkout", "-q", "-B", f"scratch-add-{spec.kind}", ref)
    for path, text in spec.files.items():
        (repo / path).write_text(text, encoding="utf-8")
    for path, pattern, replacement in spec.edits:
        source = (repo / path).read_text(encoding="utf-8")
        # a reader's label and sample (the recipe of docs/extending.md) where the ref's Reader has them
        sample = ',\n           label="NDJSON", sample=jsonl_sample' if "sample: Callable" in source else ""
        replacement = replacement.replace("@SAMPLE@", sample)
        changed, n = re.subn(pattern, replacement, source, count=1)
        if n != 1:
            raise SystemExit(f"{spec.kind}: the registry edit found nothing to change in {path} ({pattern!r})")
        (repo / path).write_text(changed, encoding="utf-8")
    touched = sorted({*spec.files, *(p for p, _, _ in spec.edits)})
    subprocess.run([sys.executable, "-m", "ruff", "check", "--fix", "-q", *touched], cwd=repo, capture_output=True)
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=scratch", "-c", "user.email=scratch@example.invalid", "commit", "-q", "-m",
        f"scratch: add the {spec.kind} {spec.name}")
    files = git(repo, "diff", "--name-only", ref, "HEAD").split()
    contracts = ["tests/contracts"] if (repo / "tests/contracts").is_dir() else []
    targets = [*contracts, *spec.doctests] + ([] if quick else [*spec.tests, *COMMON_TESTS])
    start = time.perf_counter()
    failed, n_run, last = pytest_failures(repo, targets)
    seconds = time.perf_counter() - start
    broken = failed
    if failed:                                            # only what passes without the addition counts
        git(repo, "checkout", "-q", ref)
        before, _, _ = pytest_failures(repo, failed)
        broken = [t for t in failed if t not in before]
    ids = collected_ids(repo if not failed else _back(repo, spec), "tests/contracts") if contracts else []
    named = [i for i in ids if re.search(r"\[" + re.escape(spec.name) + r"[\]-]", i)]
    return {"kind": spec.kind, "name": spec.name, "files": files, "run": n_run, "broken": broken, "last": last,
            "contract_ids": len(named), "seconds": seconds}


def _back(repo: Path, spec: Addition) -> Path:
    git(repo, "checkout", "-q", f"scratch-add-{spec.kind}")
    return repo


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ref", default="HEAD", help="the commit the additions start from (default HEAD)")
    parser.add_argument("--kinds", default="curve,speed,reader,device", help="some of curve,speed,reader,device")
    parser.add_argument("--quick", action="store_true", help="only the contract tests and the doctests")
    args = parser.parse_args(argv)
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in ADDITIONS]
    if unknown:
        parser.error(f"--kinds: expected some of {', '.join(ADDITIONS)}; got {', '.join(unknown)}")
    ref = git(ROOT, "rev-parse", args.ref).strip()
    with tempfile.TemporaryDirectory(prefix="registry-additions-") as tmp:
        repo = Path(tmp) / "repo"
        subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", str(ROOT), str(repo)], check=True)
        print(f"ref {ref[:10]}  ({git(ROOT, 'log', '-1', '--format=%s', ref).strip()[:80]})")
        for kind in kinds:
            r = add(repo, ref, ADDITIONS[kind], args.quick)
            print(f"\nadd a {r['kind']} ({r['name']}): {len(r['files'])} files touched: {', '.join(r['files'])}")
            print(f"  tests run {r['run']}, broken by the addition {len(r['broken'])}; pytest: {r['last']}")
            for test in r["broken"]:
                print(f"    broken: {test}")
            print(f"  contract tests that check it without naming it: {r['contract_ids']}")
            print(f"  {r['seconds']:.0f} s, load average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
