"""Where the shared reference data lies for a benchmark: ``../shared/reference`` beside the repository, found
from a worktree deeper down too. Benchmarks may read it; the product and its tests never do."""

from __future__ import annotations

from pathlib import Path

#: the shared reference folder (it may not exist on a user's machine: a benchmark that needs it says so)
SHARED = next((p / "shared" / "reference" for p in Path(__file__).resolve().parents
               if (p / "shared" / "reference").is_dir()), Path(__file__).resolve().parents[2] / "shared" / "reference")
