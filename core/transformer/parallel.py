"""Data × tensor × pipeline × context parallelism: collectives, bubble, step time, the best strategy.

Placement follows Megatron's order: tensor ranks innermost, then context, then data, pipeline
outermost.  A group of ``size`` ranks at ``stride`` stays on one scale-up fabric when
``stride × size <= domain`` (GPUs per NVLink/xGMI domain); otherwise it runs over the per-GPU NICs.

Collectives (ring algorithms, time = volume / one-direction bandwidth):

* **TP** (with sequence parallelism): per layer and micro-batch, 2 all-gathers + 2
  reduce-scatters forward and again backward, each of the ``b·s/cp × h`` activation: the
  all-reduce-equivalent volume per GPU is ``4 × 2(tp−1)/tp × b·s/cp·h·2`` bytes per layer.
* **CP** (ring attention): each layer gathers the other ranks' keys and values forward
  (``(cp−1)/cp`` of ``2·b·s·kv_dim/tp`` elements) and reduce-scatters their gradients backward.
* **PP**: each micro-batch sends its ``b·s/cp·h/tp`` activation to the next stage forward and its
  gradient back: ``2 × that × 2`` bytes per micro-batch.
* **DP**: the trained parameters' gradients (bf16), all-reduced over ``dp·cp`` ranks —
  ``2(n−1)/n × 2·P/(tp·pp)`` bytes per GPU; a distributed optimizer (ZeRO-1) does a reduce-scatter
  and an all-gather instead: the same volume.
* **Latency** (:class:`Latency`): every collective also pays NCCL's fixed ring cost, base + per-step
  hops (NVLink or network), ``n−1`` steps per reduce-scatter/all-gather: TP 8 per layer and
  micro-batch, CP 3, PP 2 sends per micro-batch and virtual stage, DP 2 per Megatron gradient bucket
  (``max(40 M, 1 M × dp·cp)`` parameters).  It does not shrink with the tokens per GPU.
* **Overlap**: a declared fraction of each collective (:class:`Overlap`) hides behind compute, never
  more than the compute there is: DP's reduction only behind the last micro-batch's backward pass.
* **Bubble** of 1F1B: ``(pp−1)/(m·v + pp−1)`` of the pipeline time for ``m`` micro-batches and ``v``
  virtual stages per GPU (interleaving).

The strategy itself is in :mod:`core.transformer.strategy`; the memory per GPU in
:mod:`core.transformer.memory`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from core.errors import InputError
from core.transformer.config import TransformerConfig
from core.transformer.devices import Accelerator
from core.transformer.flops import step_work
from core.transformer.memory import BYTES, Memory, fits, memory_message, memory_per_gpu
from core.transformer.strategy import Strategy, candidates

#: Megatron-core's default gradient bucket: max(40 M, 1 M × data-parallel size) parameters
#: (``DistributedDataParallelConfig.bucket_size``; one reduce-scatter and one all-gather per bucket)
BUCKET_MIN, BUCKET_PER_RANK = 40e6, 1e6


@dataclass(frozen=True)
class Latency:
    """Fixed cost (seconds) of one collective, independent of its size: NCCL's own cost model for a ring
    with the Simple protocol (``src/graph/tuning.cc``: ``baseLat`` 8.4 µs, ``hwLat`` 3.4 µs per step on
    NVLink and 9.6 µs per step over the network).  A ring reduce-scatter or all-gather over ``n`` ranks
    takes ``n−1`` steps (``nodes−1`` of them across the network); an all-reduce twice that; a
    point-to-point send one.  ``zero()`` turns the term off."""

    base: float = 8.4e-6
    hop_scale_up: float = 3.4e-6
    hop_scale_out: float = 9.6e-6
    source: str = "NCCL src/graph/tuning.cc ring/Simple latencies (baseLat 8.4 us, NVLink 3.4 us, NET 9.6 us/step)"

    @classmethod
    def zero(cls) -> Latency:
        return cls(0.0, 0.0, 0.0, "none")

    def ring(self, size: int, local: int, steps_per_rank: int = 1) -> float:
        """One ring collective over ``size`` ranks, ``local`` of them per scale-up domain:
        ``base + (steps − inter)·hop_up + inter·hop_out`` with ``steps = k(size−1)``, ``inter = k(domains−1)``.

        >>> round(Latency().ring(8, 8) * 1e6, 1)        # reduce-scatter over 8 GPUs on NVLink
        32.2
        >>> round(Latency().ring(16, 8, 2) * 1e6, 1)    # all-reduce over 2 nodes of 8
        122.8
        """
        if size <= 1:
            return 0.0
        steps = steps_per_rank * (size - 1)
        inter = steps_per_rank * (math.ceil(size / max(local, 1)) - 1)
        return self.base + (steps - inter) * self.hop_scale_up + inter * self.hop_scale_out


@dataclass(frozen=True)
class Overlap:
    """Declared fraction of each collective hidden behind compute (assumed, stated in every answer)."""

    dp: float = 0.8
    tp: float = 0.3
    cp: float = 0.7
    pp: float = 0.5


#: the tensor precisions a transformer's matmuls can be counted against (``Efficiency.precision``)
TENSOR_PRECISIONS: tuple[str, ...] = ("bf16", "fp8")


@dataclass(frozen=True)
class Efficiency:
    """Achieved fraction of the datasheet peak per op class.

    ``matmul`` of the tensor peak at ``precision``, ``attention`` of the BF16 peak (attention stays in
    16 bits when the matmuls run in FP8), ``memory`` of HBM bandwidth,
    ``comm`` of the link bandwidth.  The defaults are priors (assumed) until :mod:`.calibrate` fixes them.
    """

    matmul: float = 0.6
    attention: float = 0.4
    memory: float = 0.7
    comm: float = 0.7
    precision: str = "bf16"
    source: str = "assumed prior"


@dataclass(frozen=True)
class Comm:
    """One kind of collective of a step: bytes per GPU, the link, its time and the exposed part."""

    kind: str
    bytes: float
    link: str
    time: float
    exposed: float


@dataclass(frozen=True)
class StepEstimate:
    """A step's predicted time and its parts (seconds)."""

    strategy: Strategy
    compute: dict[str, float]
    comms: tuple[Comm, ...]
    bubble: float
    memory: Memory
    model_flops: float
    tokens: float
    notes: tuple[str, ...] = field(default=())

    @property
    def compute_time(self) -> float:
        return sum(self.compute.values())

    @property
    def comm_exposed(self) -> float:
        return sum(c.exposed for c in self.comms)

    @property
    def time(self) -> float:
        return self.compute_time + self.bubble + self.comm_exposed


def _check_fit(cfg: TransformerConfig, s: Strategy, gpus: int, global_batch: int, seq_len: int) -> None:
    if s.gpus != gpus:
        raise InputError(f"--parallel: expected dp×tp×pp×cp = {gpus} GPUs; got {s.dp}×{s.tp}×{s.pp}×{s.cp} = "
                         f"{s.gpus}. Make the product equal the GPU count.")
    if cfg.heads % s.tp:
        raise InputError(f"--parallel: expected tp dividing the {cfg.heads} attention heads; got tp={s.tp}.")
    if s.pp * s.vp > cfg.layers:
        raise InputError(f"--parallel: expected pp×vp <= the {cfg.layers} layers; got {s.pp}×{s.vp}.")
    if seq_len % s.cp:
        raise InputError(f"--parallel: expected cp dividing the sequence length {seq_len}; got cp={s.cp}.")
    if global_batch % (s.dp * s.micro_batch):
        raise InputError(f"--global-batch: expected a multiple of dp×micro-batch = {s.dp}×{s.micro_batch}; got "
                         f"{global_batch} sequences. Change the batch, dp or the micro-batch.")


def _link(stride: int, size: int, domain: int, device: Accelerator) -> tuple[str, float, int]:
    """The link a group of ``size`` ranks ``stride`` apart runs over, its one-direction bandwidth, and how
    many of its ranks share one scale-up domain (``size`` when it fits in one)."""
    if size <= 1:
        return "none", math.inf, 1
    if stride * size <= domain:
        return "scale-up", device.scale_up_bw, size
    local = max(1, min(size, domain // stride)) if stride < domain else 1
    return ("scale-out" if local == 1 else "hierarchical"), device.scale_out_bw, local


def ring_time(volume: float, size: int, local: int, device: Accelerator, comm_eff: float) -> float:
    """Seconds for an all-reduce-like collective moving ``volume`` bytes per GPU over a ring of ``size``:
    a hierarchical one (NCCL on several nodes) reduces over the ``local`` ranks of a domain on the
    scale-up link, then exchanges ``1/local`` of it across domains on the NICs.

    ``volume`` already carries the ring factor ``2(n−1)/n`` for the whole group; the split is
    proportional: ``local`` ranks on NVLink/xGMI, ``size/local`` domains over the network.

    >>> from core.transformer.devices import get_accelerator
    >>> h100 = get_accelerator("H100")
    >>> round(ring_time(1e9, 8, 8, h100, 1.0) * 1e3, 3)   # inside the node: 1 GB at 450 GB/s
    2.222
    >>> round(ring_time(1e9, 16, 1, h100, 1.0) * 1e3, 1)  # one GPU per node: 1 GB at 50 GB/s
    20.0
    """
    if size <= 1:
        return 0.0
    if local >= size:
        return volume / (device.scale_up_bw * comm_eff)
    base = volume / (2 * (size - 1) / size)  # the message itself
    nodes = size / local
    inside = 2 * (local - 1) / local * base / (device.scale_up_bw * comm_eff) if local > 1 else 0.0
    across = 2 * (nodes - 1) / nodes * base / local / (device.scale_out_bw * comm_eff)
    return inside + across


def estimate_step(cfg: TransformerConfig, device: Accelerator, s: Strategy, *, global_batch: int, seq_len: int,
                  domain: int | None = None, eff: Efficiency | None = None, overlap: Overlap | None = None,
                  check_memory: bool = True, latency: Latency | None = None) -> StepEstimate:
    """The time of one optimizer step of ``global_batch`` sequences of ``seq_len`` tokens.

    Compute: each op class's FLOPs (or bytes, for the memory-bound class) on one GPU over the
    achieved fraction of the peak; collectives over their link at ``eff.comm`` of its bandwidth,
    minus the declared overlap; the bubble from the 1F1B formula.

    Raises
    ------
    InputError
        If the strategy does not match the GPUs, the model or the batch, or (``check_memory``) does
        not fit in the device's memory: the message says what does not fit and by how much.
    """
    eff = eff or Efficiency()
    overlap = overlap or Overlap()
    lat = latency or Latency()
    domain = domain or device.domain
    gpus = s.gpus
    _check_fit(cfg, s, gpus, global_batch, seq_len)
    mem = memory_per_gpu(cfg, s, seq_len)
    if check_memory and not fits(mem, device):
        raise InputError(memory_message(mem, device, s))
    m = global_batch // (s.dp * s.micro_batch)  # micro-batches per pipeline per step
    tokens_mb = s.micro_batch * seq_len / s.cp
    layers_here = cfg.layers / s.pp
    # the head's work spread over the stages (balanced pipelines give the last stage fewer layers)
    work = step_work(cfg, tokens_mb, seq_len, tp=s.tp, layers=layers_here, with_head=False, recompute=s.recompute)
    head = step_work(cfg, tokens_mb, seq_len, tp=s.tp, layers=0, with_head=True)
    # context parallelism: a rank's b·s/cp query tokens attend over the whole sequence (seq_len), so its
    # share of the (load-balanced, causal) score matrix is already 1/cp of the sequence's
    flops = {k: work.flops[k] + head.flops[k] / s.pp for k in work.flops}
    moved = {k: work.bytes[k] + head.bytes[k] / s.pp for k in work.bytes}
    peak = device.peak_flops(eff.precision)
    # attention runs in BF16 even where the matmuls run in FP8 (FlashAttention; NVIDIA's MLPerf FP8
    # configs keep attention in 16 bits): its fraction is of the BF16 peak
    compute = {"matmul": m * flops["matmul"] / (peak * eff.matmul),
               "attention": m * flops["attention"] / (device.peak_flops("bf16") * eff.attention),
               "memory": m * moved["memory"] / (device.hbm_bw * eff.memory)}
    # optimizer update: memory-bound, reads and writes the sharded fp32 state and bf16 weights/grads
    trained = cfg.trainable_params / (s.tp * s.pp)
    shard = s.dp * s.cp if s.zero >= 1 else 1
    compute["memory"] += (2 * 16 * trained / shard) / (device.hbm_bw * eff.memory)
    pipeline_compute = sum(compute.values())
    act = BYTES * tokens_mb * cfg.hidden
    comms = []
    if s.tp > 1:
        volume = m * layers_here * 4 * 2 * (s.tp - 1) / s.tp * act * (1.5 if s.recompute else 1.0)
        # 2 all-gathers + 2 reduce-scatters forward, again backward (+ forward again when recomputing)
        count = m * layers_here * 8 * (1.5 if s.recompute else 1.0)
        comms.append(_comm("TP", volume, 1, s.tp, domain, device, eff, overlap.tp, lat, count))
    if s.cp > 1:
        kv = BYTES * s.micro_batch * seq_len * 2 * cfg.kv_dim / s.tp
        volume = m * layers_here * 3 * (s.cp - 1) / s.cp * kv
        comms.append(_comm("CP", volume, s.tp, s.cp, domain, device, eff, overlap.cp, lat, m * layers_here * 3))
    if s.pp > 1:
        # point-to-point: each send is one hop, no ring; a stage sends and receives, forward and backward
        volume = m * 2 * act / s.tp
        link, bw, _ = _link(s.tp * s.cp * s.dp, s.pp, domain, device)
        hop = lat.hop_scale_up if link == "scale-up" else lat.hop_scale_out
        time = volume / (bw * eff.comm) + m * s.vp * 2 * (lat.base + hop)
        comms.append(Comm("PP", volume, link, time, time * (1 - overlap.pp)))
    n = s.dp * s.cp
    if n > 1:
        volume = 2 * (n - 1) / n * BYTES * trained
        # distributed optimizer: one reduce-scatter and one all-gather per gradient bucket
        buckets = math.ceil(trained / max(BUCKET_MIN, BUCKET_PER_RANK * n))
        comms.append(_comm("DP", volume, s.tp, n, domain, device, eff, overlap.dp, lat, 2 * buckets))
    # overlap: the declared fraction of a collective hides behind compute, but never more than the
    # compute there is to hide behind: DP's gradient reduction runs bucket by bucket behind the backward
    # pass of the last micro-batch only (gradients accumulate over the others): 2/3 of 1/m of the compute
    window = {"TP": pipeline_compute, "CP": compute["attention"], "PP": pipeline_compute,
              "DP": pipeline_compute * 2 / 3 / m}
    declared = {"TP": overlap.tp, "CP": overlap.cp, "PP": overlap.pp, "DP": overlap.dp}
    comms = [replace(c, exposed=c.time - min(declared[c.kind] * c.time, window[c.kind])) for c in comms]
    in_pipeline = sum(c.exposed for c in comms if c.kind in ("TP", "CP", "PP"))
    bubble = (pipeline_compute + in_pipeline) * (s.pp - 1) / (m * s.vp) if s.pp > 1 else 0.0
    model_flops = step_work(cfg, global_batch * seq_len, seq_len).model_flops
    return StepEstimate(s, compute, tuple(comms), bubble, mem, model_flops, global_batch * seq_len)


def _comm(kind: str, volume: float, stride: int, size: int, domain: int, device: Accelerator, eff: Efficiency,
          overlap: float, latency: Latency | None = None, count: float = 0.0) -> Comm:
    """A ring collective's bandwidth time plus ``count`` reduce-scatter/all-gather latencies."""
    link, _bw, local = _link(stride, size, domain, device)
    time = ring_time(volume, size, local, device, eff.comm)
    if latency is not None:
        time += count * latency.ring(size, local)
    return Comm(kind, volume, link, time, time * (1 - overlap))


def best_strategy(cfg: TransformerConfig, device: Accelerator, gpus: int, *, global_batch: int, seq_len: int,
                  domain: int | None = None, eff: Efficiency | None = None,
                  overlap: Overlap | None = None, latency: Latency | None = None) -> StepEstimate:
    """The fastest strategy that fits in memory, or an ``InputError`` naming the smallest shortfall."""
    domain = domain or device.domain
    best: StepEstimate | None = None
    closest = None
    for s in candidates(cfg, gpus, global_batch=global_batch, seq_len=seq_len, domain=domain):
        mem = memory_per_gpu(cfg, s, seq_len)
        if not fits(mem, device):
            if closest is None or mem.total < closest[0].total:
                closest = (mem, s)
            continue
        est = estimate_step(cfg, device, s, global_batch=global_batch, seq_len=seq_len, domain=domain, eff=eff,
                            overlap=overlap, check_memory=False, latency=latency)
        if best is None or est.time < best.time:
            best = est
    if best is None:
        if closest is None:
            raise InputError(f"--gpus: expected a GPU count that divides into data × tensor × pipeline × context "
                             f"degrees for global batch {global_batch}; got {gpus}. Pick a count such as a multiple "
                             "of 8 that divides the batch.")
        raise InputError("no strategy fits; the closest: " + memory_message(closest[0], device, closest[1]))
    return best
