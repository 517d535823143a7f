"""Result types of a Paleo simulation (frozen dataclasses) and their tidy tables."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from core.paleo.comm import APPROXIMATE_SCHEMES
from core.validation import check_option

#: the leading columns of Paleo's validation table (``validation_sample.csv``), in order
CSV_LEAD_COLUMNS: tuple[str, ...] = (
    "net", "device", "network", "network_Gbps", "scaling", "batch_size_arg", "ppp_comp",
    "ppp_comm", "use_only_gemm", "use_pipeline", "workers", "effective_batch_size",
    "batch_per_worker", "iter", "time_fwd_ms", "time_bwd_ms", "time_apply_ms", "time_comp_ms")


@dataclass(frozen=True)
class WorkerEstimate:
    """One worker count of a scaling simulation (all times per iteration, ms).

    Attributes
    ----------
    workers : int
    effective_batch_size : int
        Images per iteration over all workers (weak: B·n; strong: B).
    batch_per_worker : int
        Weak: B; strong: ceil(B/n).
    iterations : int
        Always 1 (Paleo's per-worker cap is disabled).
    time_fwd_ms, time_bwd_ms, time_apply_ms : float
        Forward, backward and parameter-update time of one worker.
    time_comp_ms : float
        ``fwd + bwd + apply``.
    comm_ms : dict of str to float
        Gradient-synchronisation time per scheme.
    total_ms : dict of str to float
        Iteration time per scheme: ``comp + comm``, or with overlap
        ``fwd + max(bwd, comm) + apply``.
    throughput_img_s : dict of str to float
        ``effective_batch_size / total_ms · 1000``.
    speedup : dict of str to float
        Throughput over the one-worker throughput of the same scheme (weak:
        ``n·T(1)/T(n)``; strong: ``T(1)/T(n)``).
    naive_peak_img_s : float
        ``n · device FLOP/s / training FLOPs per image``: no memory, no communication, PPP 1.
    """

    workers: int
    effective_batch_size: int
    batch_per_worker: int
    iterations: int
    time_fwd_ms: float
    time_bwd_ms: float
    time_apply_ms: float
    time_comp_ms: float
    comm_ms: dict[str, float] = field(default_factory=dict)
    total_ms: dict[str, float] = field(default_factory=dict)
    throughput_img_s: dict[str, float] = field(default_factory=dict)
    speedup: dict[str, float] = field(default_factory=dict)
    naive_peak_img_s: float = 0.0

    @property
    def no_comm_throughput_img_s(self) -> float:
        """Images per second if communication were free: ``effective batch / time_comp``.

        At one worker this is the throughput of every scheme that costs nothing there
        (all but Paleo's ButterflyMixing and the parameter servers).

        Examples
        --------
        >>> WorkerEstimate(1, 128, 128, 1, 30.0, 60.0, 10.0, 100.0).no_comm_throughput_img_s
        1280.0
        """
        return self.effective_batch_size / self.time_comp_ms * 1000


@dataclass(frozen=True)
class PaleoScaling:
    """A data-parallel scaling simulation of one net on one device and network.

    Attributes
    ----------
    net, net_source : str
        Net name (``alex_v2``, ``torch:resnet50``) and where it was read from.
    device, network : str
        Table keys.
    network_gbps : float
    scaling : {"weak", "strong"}
    batch_size : int
        The batch argument B (per worker when weak, global when strong).
    ppp_comp, ppp_comm : float
    paleo_compatible, pipeline, overlap : bool
    schemes : tuple of str
        Communication schemes, in column order.
    params_bytes : int
        fp32 bytes of all parameters (what each scheme synchronises).
    flops_per_image : float
        Forward + backward FLOPs per image as the active mode counts them.
    peak_gflops : float
        The device's peak, for the naive bound.
    rows : tuple of WorkerEstimate
        One per worker count, in the order asked.
    """

    net: str
    net_source: str
    device: str
    network: str
    network_gbps: float
    scaling: str
    batch_size: int
    ppp_comp: float
    ppp_comm: float
    paleo_compatible: bool
    pipeline: bool
    overlap: bool
    schemes: tuple[str, ...]
    params_bytes: int
    flops_per_image: float
    peak_gflops: float
    rows: tuple[WorkerEstimate, ...]

    @property
    def workers(self) -> tuple[int, ...]:
        """Worker counts, in row order."""
        return tuple(r.workers for r in self.rows)

    def total_ms(self, scheme: str) -> tuple[float, ...]:
        """Iteration time under ``scheme`` for each worker count, ms."""
        return tuple(r.total_ms[scheme] for r in self.rows)

    def throughput(self, scheme: str) -> tuple[float, ...]:
        """Images per second under ``scheme`` for each worker count."""
        return tuple(r.throughput_img_s[scheme] for r in self.rows)

    def speedup(self, scheme: str) -> tuple[float, ...]:
        """Speed-up over one worker under ``scheme`` for each worker count."""
        return tuple(r.speedup[scheme] for r in self.rows)

    def fastest_scheme(self, n_workers: int, *, exact_only: bool = False) -> str:
        """The scheme with the highest throughput at ``n_workers`` (first in scheme order on a tie).

        Parameters
        ----------
        n_workers : int
            One of :attr:`workers`.
        exact_only : bool, default=False
            Leave out :data:`core.paleo.comm.APPROXIMATE_SCHEMES` (butterfly mixing: its one
            link time per iteration buys only a partial exchange of the gradients).

        Raises
        ------
        InputError
            If ``n_workers`` is not one of :attr:`workers`.

        Examples
        --------
        >>> from core.paleo import load_net, simulate
        >>> res = simulate(load_net("alex_v2"), device="K80", workers=(1, 8), paleo_compatible=True)
        >>> res.fastest_scheme(1), res.fastest_scheme(8)    # n = 1: no communication but Mixing's
        ('OneToAll', 'ButterflyMixing')
        >>> res.fastest_scheme(8, exact_only=True)
        'ButterflyAllReduce'
        """
        check_option(n_workers, "n_workers", self.workers, fix="Simulate it first")
        row = self.rows[self.workers.index(n_workers)]
        schemes = [s for s in self.schemes if not (exact_only and s in APPROXIMATE_SCHEMES)]
        return max(schemes, key=lambda s: row.throughput_img_s[s])

    def headline(self) -> PaleoHeadline:
        """The smallest and the largest worker count, and the fastest exact scheme at the largest.

        What the Throughput page's metrics show (its worker counts start at 1). The fastest
        scheme is :meth:`fastest_scheme` with ``exact_only=True``.

        Examples
        --------
        >>> from core.paleo import load_net, simulate
        >>> res = simulate(load_net("alex_v2"), device="K80", workers=(1, 8), paleo_compatible=True)
        >>> h = res.headline()
        >>> h.smallest.workers, h.largest.workers, h.fastest_scheme
        (1, 8, 'ButterflyAllReduce')
        >>> h.fastest_throughput_img_s == res.throughput("ButterflyAllReduce")[-1]
        True
        """
        smallest = min(self.rows, key=lambda r: r.workers)
        largest = max(self.rows, key=lambda r: r.workers)
        best = self.fastest_scheme(largest.workers, exact_only=True)
        return PaleoHeadline(smallest=smallest, largest=largest, fastest_scheme=best,
                             fastest_throughput_img_s=largest.throughput_img_s[best],
                             fastest_speedup=largest.speedup[best])

    def naive_peak(self) -> tuple[float, ...]:
        """The naive bound ``n · FLOP/s ÷ FLOPs per image`` for each worker count."""
        return tuple(r.naive_peak_img_s for r in self.rows)

    def to_frame(self) -> pd.DataFrame:
        """One row per worker count: the columns of Paleo's ``validation_sample.csv`` first
        (``comm_<scheme>_ms``, ``total_<scheme>_ms``, ``throughput_<scheme>_img_s``,
        ``params_bytes``), then ``speedup_<scheme>``, ``naive_peak_img_s``,
        ``flops_per_image``, ``paleo_compatible``, ``overlap`` and ``net_source``."""
        records = []
        for r in self.rows:
            rec = dict(zip(CSV_LEAD_COLUMNS, (
                self.net, self.device, self.network, float(self.network_gbps), self.scaling,
                self.batch_size, float(self.ppp_comp), float(self.ppp_comm), True, self.pipeline,
                r.workers, r.effective_batch_size, r.batch_per_worker, r.iterations,
                r.time_fwd_ms, r.time_bwd_ms, r.time_apply_ms, r.time_comp_ms)))
            for prefix, values, suffix in (("comm_", r.comm_ms, "_ms"), ("total_", r.total_ms, "_ms"),
                                           ("throughput_", r.throughput_img_s, "_img_s")):
                rec.update({f"{prefix}{s}{suffix}": values[s] for s in self.schemes})
            rec["params_bytes"] = self.params_bytes
            rec.update({f"speedup_{s}": r.speedup[s] for s in self.schemes})
            rec.update(naive_peak_img_s=r.naive_peak_img_s, flops_per_image=self.flops_per_image,
                       paleo_compatible=self.paleo_compatible, overlap=self.overlap,
                       net_source=self.net_source)
            records.append(rec)
        return pd.DataFrame.from_records(records)


@dataclass(frozen=True)
class PaleoHeadline:
    """The headline numbers of a :class:`PaleoScaling` (see :meth:`PaleoScaling.headline`).

    Attributes
    ----------
    smallest, largest : WorkerEstimate
        The rows of the smallest and the largest worker count.
    fastest_scheme : str
        The exact scheme (butterfly mixing left out) with the highest throughput at the
        largest worker count.
    fastest_throughput_img_s, fastest_speedup : float
        Its throughput (images/s) and speed-up there.
    """

    smallest: WorkerEstimate
    largest: WorkerEstimate
    fastest_scheme: str
    fastest_throughput_img_s: float
    fastest_speedup: float


@dataclass(frozen=True)
class PPPCalibration:
    """The compute PPP that makes the model's one-worker step time equal a measurement.

    Attributes
    ----------
    ppp_comp : float
        Solved platform percent of peak (compute and device memory).
    measured_step_ms : float
        The measured time of one training step on one worker, ms.
    model_step_ms_at_peak : float
        The model's ``fwd + bwd + apply`` at PPP 1, ms.
    device : str
    batch_size : int
    paleo_compatible : bool
    flags : tuple of str
        Warnings a page can show as they are (e.g. "PPP above 1 ...").
    """

    ppp_comp: float
    measured_step_ms: float
    model_step_ms_at_peak: float
    device: str
    batch_size: int
    paleo_compatible: bool
    flags: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {"ppp_comp": self.ppp_comp, "measured_step_ms": self.measured_step_ms,
                "model_step_ms_at_peak": self.model_step_ms_at_peak, "device": self.device,
                "batch_size": self.batch_size, "paleo_compatible": self.paleo_compatible,
                "flags": list(self.flags)}
