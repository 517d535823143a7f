"""Make ``data/builtin_fits.json``: the fitted loss curve of every built-in log (``core.datasets``), made
once when the data is produced instead of once per server.

Each entry is a log's name, its fingerprint (``RunLog.fingerprint``: the content and metadata as the pages
read it), the metric its default target fits (``core.runs.fit_metric``), and ``core.runs.fit_run``'s
result with the pages' default family (``core.datasets.BUILTIN_FIT_FAMILY``).  The product uses an
entry only for the very log it was made from (``core.datasets.fitted_run``: same fingerprint, family and
metric); any other log, an edited built-in one included, is fitted as before.

Run ``python data/make_builtin_fits.py`` (about 20 s on 2 cores) after any change to the built-in logs, to
their readers or to the curve fit; tests/core/test_builtin_fits.py reads every built-in log, refits it and
fails while the file is stale.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.datasets import (  # noqa: E402
    BUILTIN_FITS_FILE,
    BUILTIN_LOG_SETS,
    DATA_DIR,
    builtin_fit_entry,
    builtin_log_files,
)
from core.errors import LogFormatError  # noqa: E402
from core.logs import MIN_FIT_POINTS, read_log_file  # noqa: E402


def builtin_fit_entries() -> list[dict]:
    """One entry per readable built-in log, in the order of ``BUILTIN_LOG_SETS``."""
    entries = []
    for key in BUILTIN_LOG_SETS:
        for name, path in builtin_log_files(key):
            try:
                log = read_log_file(path, source=name, min_points=MIN_FIT_POINTS)   # as the pages read it
            except LogFormatError:
                continue
            entries.append({"set": key, **builtin_fit_entry(name, log)})
    return entries


def main() -> None:
    entries = builtin_fit_entries()
    lines = ",\n".join(json.dumps(e) for e in entries)        # one log a line: a change shows as its own line
    text = f'{{"made_by": "python data/make_builtin_fits.py",\n "fits": [\n{lines}\n]}}\n'
    (DATA_DIR / BUILTIN_FITS_FILE).write_text(text, encoding="utf-8")
    print(f"{len(entries)} fits written to data/{BUILTIN_FITS_FILE}")


if __name__ == "__main__":
    main()
