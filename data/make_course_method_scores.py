"""Make ``data/course_method_scores.csv``: every calibration method's leave-one-architecture-out score
(``core.calibrate.method_scores``) on the built-in course table, for each held-out architecture, split
and loss threshold, with the digest of the table (``core.tables.frame_digest``) they were computed on.

Run ``python data/make_course_method_scores.py`` (about 2 minutes on 2 cores) after any change to the
course table, the calibration methods or their pinned libraries; ``core.calibrate.stored_scores``
uses the file only while the digest matches, and tests/core/calibrate/test_stored_scores.py recomputes
one row set and compares.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pandas as pd  # noqa: E402

from core.calibrate import architectures, method_scores, read_fits_table, usable  # noqa: E402
from core.calibrate.stored_scores import KEY_COLUMNS  # noqa: E402
from core.datasets import course_fits_path, course_method_scores_path  # noqa: E402
from core.tables import frame_digest  # noqa: E402

#: how the Calibrate page reads the course table (the digest is of this frame)
COURSE_SOURCE = "course table"


def main() -> None:
    fits = read_fits_table(course_fits_path(), source=COURSE_SOURCE)
    digest = frame_digest(fits)
    frames = []
    for split in ("train", "val"):
        for holdout in architectures(usable(fits, split=split)):
            for threshold in ("curve", "measured"):
                scores = method_scores(fits, split=split, holdout=holdout, threshold=threshold)
                keys = pd.DataFrame({"fits_digest": digest, "split": split, "holdout": holdout,
                                     "threshold": threshold}, index=scores.index)
                frames.append(pd.concat([keys, scores], axis=1))
                print(split, holdout, threshold, flush=True)
    table = pd.concat(frames, ignore_index=True)
    table = table[[*KEY_COLUMNS, *[c for c in table.columns if c not in KEY_COLUMNS]]]
    table.to_csv(course_method_scores_path(), index=False, float_format="%.17g")
    print(f"wrote {len(table)} rows to {course_method_scores_path()}")


if __name__ == "__main__":
    main()
