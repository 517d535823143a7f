"""Data-parallel scaling simulation (Paleo's ``simulate_scaling``) and the per-layer table.

Per worker count n (Paleo ``simulation.simulate_scaling``):

* **weak** scaling: each worker keeps batch B, the iteration processes B·n images;
* **strong** scaling: each worker gets ``ceil(B/n)`` images, the iteration processes B;
* ``time_comp = time_fwd + time_bwd + time_apply`` (sums over layers, in topological
  order; with ``pipeline`` each layer counts ``max(comp, mem)`` instead of the sum);
* communication per scheme (``core.paleo.comm``) of all parameter bytes;
* iteration time ``total = time_comp + comm`` (Paleo's web demo: no overlap), or with
  ``overlap`` (modern mode only) ``fwd + max(bwd, comm) + apply``: the all-reduce runs
  behind the backward pass, as bucketed all-reduce does;
* throughput ``= effective batch / total``; speed-up = throughput(n) / throughput(1);
* naive bound ``= n · peak FLOP/s / FLOPs per image`` (forward + backward FLOPs, PPP 1).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import pandas as pd

from core.errors import InputError
from core.paleo.comm import PALEO_SCHEMES, RING, comm_time_ms, ps_scheme
from core.paleo.cost import apply_cost, layer_cost
from core.paleo.devices import Device, Network, get_device, get_network
from core.paleo.layers import Net
from core.paleo.results import PaleoScaling, WorkerEstimate
from core.validation import check_option, check_scalar

SCALINGS = ("weak", "strong")
BREAKDOWN_COLUMNS = ("layer", "type", "kind", "fwd_comp_ms", "fwd_mem_ms", "bwd_comp_ms",
                     "bwd_mem_ms", "total_ms", "fwd_flops", "bwd_flops", "params")


@dataclass(frozen=True)
class _PassTimes:
    fwd_ms: float
    bwd_ms: float
    fwd_flops: float
    bwd_flops: float


def check_positive(value, name: str, *, integer: bool = False) -> None:
    """Refuse a value that is not a positive finite number (an int >= 1 with ``integer``): ``check_scalar``.

    A value of the wrong kind (a float where an int is needed, a string) is an ``InputError`` too.

    >>> check_positive(0, "batch_size", integer=True)
    Traceback (most recent call last):
    ...
    core.errors.InputError: batch_size: expected an int >= 1; got 0. Give a positive value.
    >>> check_positive(12.5, "batch_size", integer=True)
    Traceback (most recent call last):
    ...
    core.errors.InputError: batch_size: expected an int >= 1; got 12.5 (float). Give a positive value.
    """
    if integer:
        check_scalar(value, name, int, min_val=1, fix="Give a positive value")
    else:
        check_scalar(value, name, float, min_val=0, include_boundaries="neither",
                     fix="PPP is a fraction of peak such as 0.62")


def _pass_times(net: Net, device: Device, batch_size: int, *, ppp_comp: float,
                paleo_compatible: bool, pipeline: bool) -> _PassTimes:
    fwd = bwd = 0.0
    fwd_flops = bwd_flops = 0.0
    for layer in net.with_batch(batch_size).layers:
        f = layer_cost(layer, device, direction="forward", ppp_comp=ppp_comp,
                       paleo_compatible=paleo_compatible)
        b = layer_cost(layer, device, direction="backward", ppp_comp=ppp_comp,
                       paleo_compatible=paleo_compatible)
        fwd += f.lowerbound_ms if pipeline else f.total_ms
        bwd += b.lowerbound_ms if pipeline else b.total_ms
        fwd_flops += f.flops
        bwd_flops += b.flops
    return _PassTimes(fwd, bwd, fwd_flops, bwd_flops)


def _apply_ms(net: Net, device: Device, *, ppp_comp: float, paleo_compatible: bool,
              pipeline: bool) -> float:
    cost = apply_cost(net.params_bytes, device, ppp_comp=ppp_comp,
                      paleo_compatible=paleo_compatible)
    return cost.lowerbound_ms if pipeline else cost.total_ms


def _check_simulation(batch_size, workers, scaling, ppp_comp, ppp_comm, n_ps, *,
                      overlap: bool, paleo_compatible: bool) -> None:
    check_positive(batch_size, "batch_size", integer=True)
    check_positive(ppp_comp, "ppp_comp")
    check_positive(ppp_comm, "ppp_comm")
    if not workers:
        raise InputError("workers: expected at least one worker count; got none. Give e.g. 1,2,4,8.")
    for n in workers:
        check_positive(n, "workers", integer=True)
    for p in n_ps:
        check_positive(p, "n_ps", integer=True)
    check_option(scaling, "scaling", SCALINGS, fix="Pick one")
    if overlap and paleo_compatible:
        raise InputError("overlap: expected False with paleo_compatible=True; got True. Paleo "
                         "never overlaps compute and communication; drop one of the two.")


def batch_split(batch_size: int, n: int, scaling: str) -> tuple[int, int]:
    """``(per-worker batch, images per iteration)`` at ``n`` workers: weak ``(B, B·n)``, strong ``(ceil(B/n), B)``.

    >>> batch_split(128, 3, "weak"), batch_split(128, 3, "strong")
    ((128, 384), (43, 128))
    """
    if scaling == "weak":
        return batch_size, batch_size * n
    return int(math.ceil(batch_size / n)), batch_size


def worker_estimate(n: int, *, effective: int, per_worker: int, fwd_ms: float, bwd_ms: float, apply_ms: float,
                    comm_ms: dict[str, float], overlap: bool, naive_img_s: float) -> WorkerEstimate:
    """One worker count's row: ``comp = fwd + bwd + apply``; total per scheme ``comp + comm`` (or with
    ``overlap`` ``fwd + max(bwd, comm) + apply``); throughput ``effective / total``; no speed-up yet.

    >>> row = worker_estimate(2, effective=256, per_worker=128, fwd_ms=30.0, bwd_ms=60.0, apply_ms=10.0,
    ...                       comm_ms={"RingAllReduce": 28.0}, overlap=False, naive_img_s=1e4)
    >>> row.time_comp_ms, row.total_ms["RingAllReduce"], row.throughput_img_s["RingAllReduce"]
    (100.0, 128.0, 2000.0)
    """
    comp = fwd_ms + bwd_ms + apply_ms
    if overlap:
        total = {s: fwd_ms + max(bwd_ms, c) + apply_ms for s, c in comm_ms.items()}
    else:
        total = {s: comp + c for s, c in comm_ms.items()}
    throughput = {s: effective / total[s] * 1000 for s in comm_ms}
    return WorkerEstimate(n, effective, per_worker, 1, fwd_ms, bwd_ms, apply_ms, comp, dict(comm_ms), total,
                          throughput, {}, naive_img_s)


def with_speedups(one: WorkerEstimate, rows: Sequence[WorkerEstimate]) -> tuple[WorkerEstimate, ...]:
    """``rows`` with each scheme's speed-up over the one-worker row ``one``."""
    return tuple(replace(r, speedup={s: r.throughput_img_s[s] / one.throughput_img_s[s] for s in r.throughput_img_s})
                 for r in rows)


def worker_counts(max_workers: int) -> tuple[int, ...]:
    """Worker counts 1, 2, 4, 8, ... up to ``max_workers`` (included even when not a power of 2).

    Raises
    ------
    InputError
        If ``max_workers`` is below 1.

    Examples
    --------
    >>> worker_counts(8), worker_counts(12), worker_counts(1)
    ((1, 2, 4, 8), (1, 2, 4, 8, 12), (1,))
    """
    check_positive(max_workers, "max_workers", integer=True)
    counts = [1]
    while counts[-1] * 2 <= max_workers:
        counts.append(counts[-1] * 2)
    if counts[-1] != max_workers:
        counts.append(int(max_workers))
    return tuple(counts)


def default_schemes(*, paleo_compatible: bool, n_ps: Sequence[int] = (2, 4)) -> tuple[str, ...]:
    """Paleo's four schemes; the modern mode adds the ring and one PS scheme per ``n_ps``.

    >>> default_schemes(paleo_compatible=False, n_ps=(2, 4))[-3:]
    ('RingAllReduce', 'ParameterServer_p2', 'ParameterServer_p4')
    """
    if paleo_compatible:
        return PALEO_SCHEMES
    return (*PALEO_SCHEMES, RING, *dict.fromkeys(ps_scheme(p) for p in n_ps))


def simulate(net: Net, *, device: str | Device = "V100", network: str | Network = "ethernet",
             batch_size: int = 128, workers: Sequence[int] = (1, 2, 4, 8),
             scaling: str = "weak", ppp_comp: float = 1.0, ppp_comm: float = 1.0,
             paleo_compatible: bool = False, pipeline: bool = False, overlap: bool = False,
             n_ps: Sequence[int] = (2, 4)) -> PaleoScaling:
    """Per-iteration time, throughput and speed-up of data-parallel training over workers.

    Parameters
    ----------
    net : Net
        From :func:`core.paleo.load_net`, :func:`~core.paleo.spec.parse_spec` or the torch bridge.
    device : str or Device, default="V100"
    network : str or Network, default="ethernet"
    batch_size : int, default=128
        Per-worker batch (weak) or global batch (strong).
    workers : sequence of int, default=(1, 2, 4, 8)
    scaling : {"weak", "strong"}, default="weak"
    ppp_comp, ppp_comm : float, default=1.0
        Platform percent of peak of the device and of the network (Paleo's CLI defaults).
    paleo_compatible : bool, default=False
        Reproduce the original program exactly (see ``core.paleo.cost``).
    pipeline : bool, default=False
        Per-layer ``max(comp, mem)`` (Paleo's ``--use_pipeline``).
    overlap : bool, default=False
        Hide communication behind the backward pass (modern mode only).
    n_ps : sequence of int, default=(2, 4)
        Parameter-server counts to add as schemes (modern mode only).

    Returns
    -------
    PaleoScaling

    Raises
    ------
    InputError
        For an unknown device, network or scaling, a non-positive batch, worker count or
        PPP, or ``overlap`` together with ``paleo_compatible``.

    Examples
    --------
    AlexNet on a K80, 10 GbE, weak scaling, batch 128 (validation_sample.csv): one worker
    computes for 132.646 ms; two workers add a tree all-reduce of 2·160.97 ms.

    >>> from core.paleo import load_net
    >>> res = simulate(load_net("alex_v2"), device="K80", network="ethernet", workers=(1, 2),
    ...                paleo_compatible=True)
    >>> [round(t, 3) for t in res.total_ms("TreeAllReduce")]
    [132.646, 454.591]
    """
    device, network = get_device(device), get_network(network)
    workers = tuple(workers)
    _check_simulation(batch_size, workers, scaling, ppp_comp, ppp_comm, n_ps,
                      overlap=overlap, paleo_compatible=paleo_compatible)
    schemes = default_schemes(paleo_compatible=paleo_compatible, n_ps=n_ps)
    opts = dict(ppp_comp=ppp_comp, paleo_compatible=paleo_compatible, pipeline=pipeline)
    cache: dict[int, _PassTimes] = {}

    def passes(batch: int) -> _PassTimes:
        if batch not in cache:
            cache[batch] = _pass_times(net, device, batch, **opts)
        return cache[batch]

    apply_ms = _apply_ms(net, device, **opts)
    ref = passes(batch_size)
    flops_per_image = (ref.fwd_flops + ref.bwd_flops) / batch_size

    def estimate(n: int) -> WorkerEstimate:
        per_worker, effective = batch_split(batch_size, n, scaling)
        t = passes(per_worker)
        comm = {s: comm_time_ms(s, n, net.params_bytes, network, ppp_comm) for s in schemes}
        naive = n * device.peak_gflops * 1e9 / flops_per_image
        return worker_estimate(n, effective=effective, per_worker=per_worker, fwd_ms=t.fwd_ms, bwd_ms=t.bwd_ms,
                               apply_ms=apply_ms, comm_ms=comm, overlap=overlap, naive_img_s=naive)

    rows = with_speedups(estimate(1), [estimate(n) for n in workers])
    return PaleoScaling(
        net=net.name, net_source=net.source, device=device.name, network=network.name,
        network_gbps=network.gbps, scaling=scaling, batch_size=batch_size, ppp_comp=ppp_comp,
        ppp_comm=ppp_comm, paleo_compatible=paleo_compatible, pipeline=pipeline,
        overlap=overlap, schemes=schemes, params_bytes=net.params_bytes,
        flops_per_image=flops_per_image, peak_gflops=float(device.peak_gflops), rows=tuple(rows))


def step_time_ms(net: Net, *, device: str | Device, batch_size: int, ppp_comp: float = 1.0,
                 paleo_compatible: bool = False, pipeline: bool = False) -> float:
    """One worker's compute time per iteration, ``fwd + bwd + apply``, ms.

    Examples
    --------
    >>> from core.paleo import load_net
    >>> round(step_time_ms(load_net("alex_v2"), device="K80", batch_size=128,
    ...                    paleo_compatible=True), 4)
    132.6462
    """
    device = get_device(device)
    check_positive(batch_size, "batch_size", integer=True)
    check_positive(ppp_comp, "ppp_comp")
    opts = dict(ppp_comp=ppp_comp, paleo_compatible=paleo_compatible, pipeline=pipeline)
    t = _pass_times(net, device, batch_size, **opts)
    return t.fwd_ms + t.bwd_ms + _apply_ms(net, device, **opts)


def layer_breakdown(net: Net, *, device: str | Device = "V100", batch_size: int = 128,
                    ppp_comp: float = 1.0, paleo_compatible: bool = False) -> pd.DataFrame:
    """Per-layer forward and backward compute and memory time, FLOPs and parameters.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`BREAKDOWN_COLUMNS`, one row per layer in topological order
        (zero-cost layers included); ``total_ms`` is fwd + bwd comp + mem.

    Examples
    --------
    >>> from core.paleo import load_net
    >>> df = layer_breakdown(load_net("alex_v2"), device="K80", paleo_compatible=True)
    >>> df.loc[df.layer == "conv1", ["fwd_comp_ms", "fwd_flops"]].round(4).values.tolist()
    [[3.0969, 17342595072.0]]
    """
    device = get_device(device)
    check_positive(batch_size, "batch_size", integer=True)
    check_positive(ppp_comp, "ppp_comp")
    rows = []
    for layer in net.with_batch(batch_size).layers:
        f, b = (layer_cost(layer, device, direction=d, ppp_comp=ppp_comp,
                           paleo_compatible=paleo_compatible) for d in ("forward", "backward"))
        rows.append((layer.name, layer.type, layer.kind, f.comp_ms, f.mem_ms, b.comp_ms, b.mem_ms,
                     f.total_ms + b.total_ms, float(f.flops), float(b.flops), layer.params))
    frame = pd.DataFrame(rows, columns=list(BREAKDOWN_COLUMNS))
    return frame.astype({c: float for c in BREAKDOWN_COLUMNS[3:10]})
