"""Where the shared reference data lies for a benchmark: ``../shared/reference`` beside the repository, found
from a worktree deeper down too. Benchmarks may read it; the product and its tests never do."""

from __future__ import annotations

from pathlib import Path

#: the shared reference folder (it may not exist on a user's machine: a benchmark that needs it says so)
SHARED = next((p / "shared" / "reference" for p in Path(__file__).resolve().parents
               if (p / "shared" / "reference").is_dir()), Path(__file__).resolve().parents[2] / "shared" / "reference")


def require_shared(*parts: str, bench: str) -> Path:
    """``SHARED / parts``, or stop with a message saying what the benchmark needs (a fresh clone has no
    ``../shared``): the benchmark measures nothing rather than failing on a missing file."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        raise SystemExit(f"{bench} needs ../shared/reference/{'/'.join(parts)} (reference data beside the "
                         f"repository, not part of a clone); not found at {path}. Nothing measured.")
    return path
