"""Memory per GPU of a parallel strategy: weights, gradients, optimizer state and activations, and
whether they fit the accelerator.

Memory per GPU (bytes): weights 2 per parameter held; trained parameters add bf16 gradients (2) and
Adam's fp32 master copy and two moments (12), i.e. the 16 bytes/parameter of mixed-precision Adam,
with the 12 sharded over ``dp·cp`` at ZeRO ≥ 1, the gradients too at ZeRO ≥ 2, the weights at ZeRO 3.
Activations per token and layer: ``2 × (6h + 2·kv_dim + 3f)`` bytes (gated MLP; ``2f`` ungated) over
``tp`` (sequence parallelism), or ``2h`` with full recomputation; the first pipeline stage holds
``pp`` micro-batches in flight (1F1B).  Usable memory is :data:`USABLE` of the HBM.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.transformer.config import TransformerConfig
from core.transformer.devices import Accelerator
from core.transformer.strategy import Strategy

#: share of HBM a training process can fill (CUDA/ROCm context, allocator fragmentation): assumed
USABLE = 0.9
BYTES = 2


@dataclass(frozen=True)
class Memory:
    """Bytes per GPU (on the most loaded GPU: the first pipeline stage)."""

    weights: float
    gradients: float
    optimizer: float
    activations: float

    @property
    def total(self) -> float:
        return self.weights + self.gradients + self.optimizer + self.activations


def memory_per_gpu(cfg: TransformerConfig, s: Strategy, seq_len: int) -> Memory:
    """Bytes each GPU of the first pipeline stage holds (see the module text).

    Llama 3.1 8B on one GPU, no parallelism: 16 bytes × 8.03 B parameters = 128 GB of state.

    >>> from core.transformer.config import load_config
    >>> m = memory_per_gpu(load_config("llama31_8b"), Strategy(zero=0), 8192)
    >>> round((m.weights + m.gradients + m.optimizer) / 1e9, 1)
    128.5
    """
    shard = s.tp * s.pp
    held = cfg.params / shard
    trained = cfg.trainable_params / shard
    dp = s.dp * s.cp
    weights = BYTES * held / (dp if s.zero >= 3 else 1)
    grads = BYTES * trained / (dp if s.zero >= 2 else 1)
    optimizer = 12 * trained / (dp if s.zero >= 1 else 1)
    tokens = s.micro_batch * seq_len / s.cp
    if s.recompute:
        per_token_layer = BYTES * cfg.hidden
    else:
        ffn_terms = 3 if cfg.gated_mlp else 2
        per_token_layer = BYTES * (6 * cfg.hidden + 2 * cfg.kv_dim + ffn_terms * cfg.ffn) / s.tp
    layers_here = cfg.layers / s.pp
    in_flight = s.pp  # 1F1B: the first stage holds pp micro-batches
    acts = per_token_layer * tokens * layers_here * in_flight
    if s.recompute:  # one layer's full working set while it is recomputed
        ffn_terms = 3 if cfg.gated_mlp else 2
        acts += BYTES * (6 * cfg.hidden + 2 * cfg.kv_dim + ffn_terms * cfg.ffn) / s.tp * tokens
    if s.pp == 1:  # the logits (fp32) of the last stage
        acts += 4 * tokens * cfg.vocab / s.tp
    return Memory(weights, grads, optimizer, acts)


def fits(memory: Memory, device: Accelerator) -> bool:
    return memory.total <= USABLE * device.memory_gb.value * 1e9


def memory_message(mem: Memory, device: Accelerator, s: Strategy) -> str:
    """``parallel dp=..: needs 93.1 GB per GPU (weights .., gradients .., optimizer .., activations ..);
    H100_SXM holds 72.0 GB usable (90 % of 80 GB): 21.1 GB too much. <fix>.``"""
    usable = USABLE * device.memory_gb.value
    gb = 1e9
    return (f"--parallel {s.text()}: expected at most {usable:.1f} GB per GPU ({USABLE:.0%} of {device.name}'s "
            f"{device.memory_gb.value:g} GB); got {mem.total / gb:.1f} GB (weights {mem.weights / gb:.1f}, gradients "
            f"{mem.gradients / gb:.1f}, optimizer {mem.optimizer / gb:.1f}, activations {mem.activations / gb:.1f}): "
            f"{mem.total / gb - usable:.1f} GB too much. Raise tp or pp, shard the optimizer (zero=1..3), recompute "
            "activations (recompute=1), shrink the micro-batch, or use more GPUs.")
