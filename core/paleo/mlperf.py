"""The per-accelerator throughput of an MLPerf Training run, from its MLLOG result file.

Only what the transfer check needs (the general MLLOG reader belongs to ``core.logs``):
every ``:::MLLOG {json}`` line is read; ``global_batch_size`` and ``d_batch_size`` (the
batch on one accelerator) give the number of accelerators; ``tracked_stats`` events carry
the throughput of each epoch in samples/s over all accelerators (``value.throughput``, or
``value.imgs_sec`` in older NVIDIA-derived submissions).  The steady throughput is the
**median over the epochs after the first** (the first epoch includes start-up: cuDNN
autotuning, DALI warm-up; it runs at 35-70 % of the others in the v3.0 ResNet-50 logs).
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass

from core.errors import LogFormatError

PREFIX = ":::MLLOG "
_THROUGHPUT_KEYS = ("throughput", "imgs_sec")


@dataclass(frozen=True)
class MlperfThroughput:
    """Throughput of one MLPerf run.

    Attributes
    ----------
    source : str
        File name.
    platform : str
        ``submission_platform`` (e.g. ``"1xNVIDIA DGX H100"``).
    global_batch, local_batch : int
        Samples per step over all accelerators, and on one.
    epochs_img_s : tuple of float
        Throughput of each epoch over all accelerators, samples/s.
    """

    source: str
    platform: str
    global_batch: int
    local_batch: int
    epochs_img_s: tuple[float, ...]

    @property
    def n_accelerators(self) -> int:
        """``global_batch / local_batch``."""
        return self.global_batch // self.local_batch

    @property
    def steady_img_s(self) -> float:
        """Median throughput over the epochs after the first, all accelerators, samples/s."""
        return float(statistics.median(self.epochs_img_s[1:]))

    @property
    def per_accelerator_img_s(self) -> float:
        """Steady throughput of one accelerator, samples/s."""
        return self.steady_img_s / self.n_accelerators

    @property
    def step_time_s(self) -> float:
        """Seconds per step on one accelerator: ``local_batch / per_accelerator_img_s``."""
        return self.local_batch / self.per_accelerator_img_s


def read_mlperf_throughput(text: str | bytes, source: str) -> MlperfThroughput:
    """Read batch sizes and per-epoch throughput from an MLLOG result file.

    Raises
    ------
    LogFormatError
        If a needed key is missing or fewer than two epochs carry a throughput.

    Examples
    --------
    >>> log = "\\n".join([
    ...     ':::MLLOG {"key": "submission_platform", "value": "1xToy"}',
    ...     ':::MLLOG {"key": "global_batch_size", "value": 800}',
    ...     ':::MLLOG {"key": "d_batch_size", "value": 100}',
    ...     *[f':::MLLOG {{"key": "tracked_stats", "value": {{"throughput": {t}}}}}' for t in (100, 800, 820, 810)]])
    >>> r = read_mlperf_throughput(log, "toy.txt")
    >>> r.n_accelerators, r.steady_img_s, r.per_accelerator_img_s, r.step_time_s
    (8, 810.0, 101.25, 0.9876543209876543)
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    values: dict[str, object] = {}
    epochs: list[float] = []
    for line in text.splitlines():
        if not line.startswith(PREFIX):
            continue
        try:
            event = json.loads(line[len(PREFIX):])
        except json.JSONDecodeError:
            continue                       # interleaved output of several ranks; the others are enough
        key, value = event.get("key"), event.get("value")
        if key == "tracked_stats" and isinstance(value, dict):
            found = [value[k] for k in _THROUGHPUT_KEYS if k in value]
            if found:
                epochs.append(float(found[0]))
        elif key in ("submission_platform", "global_batch_size", "d_batch_size"):
            values[key] = value
    missing = [k for k in ("global_batch_size", "d_batch_size") if k not in values]
    if missing:
        raise LogFormatError(source, f"expected MLLOG events {', '.join(missing)}; got none. Give an MLPerf "
                                     "Training result file (result_<n>.txt).")
    if len(epochs) < 2:
        raise LogFormatError(source, f"expected tracked_stats throughput for at least 2 epochs; got {len(epochs)}. "
                                     "The steady throughput leaves out the first epoch.")
    return MlperfThroughput(source=source, platform=str(values.get("submission_platform", "")),
                            global_batch=int(values["global_batch_size"]), local_batch=int(values["d_batch_size"]),
                            epochs_img_s=tuple(epochs))
