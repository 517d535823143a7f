"""The work of one training step of a transformer: FLOPs forward and backward, and bytes moved, per op.

Conventions
-----------
* A multiply-add is **2 FLOPs** (as vendor peaks and ``torch.utils.flop_counter`` count).
* A matrix product ``(t × i) @ (i × o)`` costs ``2·t·i·o`` forward.  Backward costs the same
  again for the activation gradient, and again for the weight gradient **only if the weight is
  trained**: with LoRA the frozen base weights get no weight gradient, so their backward is
  ``2·t·i·o`` (the activation gradient the adapters below them need), not ``4·t·i·o``.
* Attention's sequence term: per token and layer, ``QKᵀ`` and ``PV`` cost ``2·s·h`` each
  (``h`` = query heads × head size; grouped key-value heads do not change it), so ``4·s·h``
  forward.  With a causal mask a fused kernel (FlashAttention) skips the masked half:
  ``causal=True`` halves it.  Backward: 5 products (the score recomputation, ``dV``, ``dP``,
  ``dQ``, ``dK``) = 2.5× forward for a fused kernel, as torch's counter rates SDPA; 2× for
  attention written as explicit products (``flash=False``), which keep the scores.
* Bytes: bf16 (2 bytes) activations and weights.  A product moves its weight and its input and
  output activations; the element-wise ops (RMSNorm, residual adds, rotary embedding, the
  activation function, the loss) move their inputs and outputs and do no FLOPs worth counting:
  they are the *memory-bound* class.  Backward moves about twice the forward bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.errors import InputError
from core.transformer.config import TransformerConfig

#: op classes whose achieved fraction of peak is calibrated separately
KINDS = ("matmul", "attention", "memory")
BYTES = 2  # bf16


@dataclass(frozen=True)
class Op:
    """One op of one layer (or of the head), for ``tokens`` tokens.

    Attributes
    ----------
    name : str
    kind : {"matmul", "attention", "memory"}
    fwd_flops, bwd_flops : float
    fwd_bytes, bwd_bytes : float
    repeat : int
        How many times it occurs in the model (the layer count for layer ops, 1 for the head).
    """

    name: str
    kind: str
    fwd_flops: float
    bwd_flops: float
    fwd_bytes: float
    bwd_bytes: float
    repeat: int = 1


def _matmul(name: str, tokens: float, i: float, o: float, *, trained: bool, repeat: int) -> Op:
    fwd = 2.0 * tokens * i * o
    move = BYTES * (i * o + tokens * i + tokens * o)
    # backward: dX = dY Wᵀ (reads W, dY, writes dX); dW = Xᵀ dY (reads X, dY, writes dW)
    bwd_bytes = move + (move if trained else 0.0)
    return Op(name, "matmul", fwd, fwd * (2.0 if trained else 1.0), move, bwd_bytes, repeat)


def layer_ops(cfg: TransformerConfig, tokens: float, seq_len: int, *, tp: int = 1, causal: bool = True,
              flash: bool = True) -> list[Op]:
    """The ops of one layer for ``tokens`` tokens of ``seq_len``-token sequences, on one of ``tp``
    tensor-parallel ranks (Megatron split: q, k, v, gate, up by output columns; o, down by input rows;
    heads divided among ranks; element-wise ops on the ``1/tp`` sequence shard of sequence parallelism).

    Examples
    --------
    GPT-2-small shape, one token of a 1,024-token sequence, full training (backward 2× forward):

    >>> from core.transformer.config import TransformerConfig
    >>> c = TransformerConfig("t", 12, 768, 12, 12, 3072, 50304, gated_mlp=False)
    >>> ops = {o.name: o for o in layer_ops(c, 1, 1024, causal=False)}
    >>> ops["qkv"].fwd_flops == 2 * 768 * 3 * 768, ops["attention"].fwd_flops == 4 * 1024 * 768
    (True, True)
    >>> ops["mlp_up"].bwd_flops / ops["mlp_up"].fwd_flops
    2.0
    """
    if tp < 1 or cfg.heads % tp:
        raise InputError(f"tp: expected a divisor of the {cfg.heads} attention heads; got {tp}. Pick another tp.")
    lora = cfg.lora_rank > 0
    full = not lora
    h, f, kv, r, n = cfg.hidden, cfg.ffn, cfg.kv_dim, cfg.lora_rank, cfg.layers
    ops = [
        _matmul("qkv", tokens, h, (h + 2 * kv) / tp, trained=full, repeat=n),
        _matmul("attn_out", tokens, h / tp, h, trained=full, repeat=n),
        _matmul("mlp_up", tokens, h, (2 if cfg.gated_mlp else 1) * f / tp, trained=full, repeat=n),
        _matmul("mlp_down", tokens, f / tp, h, trained=full, repeat=n),
    ]
    if lora:
        shapes = cfg.projection_shapes()
        for target in cfg.lora_targets:
            if target not in shapes:
                continue
            i, o = shapes[target]
            # adapters A (i -> r) and B (r -> o), both trained; sharded like their base weight
            ops.append(_matmul(f"lora_{target}_a", tokens, i, r, trained=True, repeat=n))
            ops.append(_matmul(f"lora_{target}_b", tokens, r, o / tp, trained=True, repeat=n))
    attn = 4.0 * tokens * seq_len * h / tp * (0.5 if causal else 1.0)
    qkv_bytes = BYTES * tokens * (h + 2 * kv) / tp
    out_bytes = BYTES * tokens * h / tp
    ops.append(Op("attention", "attention", attn, attn * (2.5 if flash else 2.0), qkv_bytes + out_bytes,
                  2 * (qkv_bytes + out_bytes), n))
    # element-wise ops on the sequence-parallel shard: 2 norms (read h, write h), 2 residual adds
    # (read 2h, write h), rotary on q and k, the activation (SwiGLU reads 2f writes f; GELU/ReLU² f, f)
    act = (3 * f if cfg.gated_mlp else 2 * f) / tp
    elementwise = BYTES * tokens * (2 * 2 * h / tp + 2 * 3 * h / tp + 2 * (h + kv) / tp + act)
    ops.append(Op("elementwise", "memory", 0.0, 0.0, elementwise, 2 * elementwise, n))
    return ops


def head_ops(cfg: TransformerConfig, tokens: float, *, tp: int = 1) -> list[Op]:
    """The output head (a ``hidden × vocab`` product, frozen under LoRA) and the loss (fp32 logits
    read and written twice: softmax and its gradient), for ``tokens`` tokens on one of ``tp`` ranks."""
    head = _matmul("lm_head", tokens, cfg.hidden, cfg.vocab / tp, trained=cfg.lora_rank == 0, repeat=1)
    loss = 4.0 * tokens * cfg.vocab / tp * 2
    return [head, Op("loss", "memory", 0.0, 0.0, loss, loss, 1)]


@dataclass(frozen=True)
class Work:
    """Totals of a step's ops per class.

    Attributes
    ----------
    flops : dict of str to float
        Forward + backward (+ recomputation) FLOPs per class.
    bytes : dict of str to float
        Bytes moved per class.
    model_flops : float
        Forward + backward FLOPs without recomputation (what utilisation, MFU, counts).
    """

    flops: dict[str, float]
    bytes: dict[str, float]
    model_flops: float

    @property
    def total_flops(self) -> float:
        return sum(self.flops.values())


def step_work(cfg: TransformerConfig, tokens: float, seq_len: int, *, tp: int = 1, layers: float | None = None,
              with_head: bool = True, causal: bool = True, flash: bool = True, recompute: bool = False) -> Work:
    """The FLOPs and bytes of a training step over ``tokens`` tokens on one tensor-parallel rank.

    ``layers`` (default: all) is how many layers this rank runs (a pipeline stage holds
    ``layers / pp``); ``recompute`` (full activation recomputation) runs each layer's forward twice.

    Examples
    --------
    Llama 3.1 8B, one 8,192-token sequence: 6·N·D over the matrices (not the input embedding,
    a lookup), plus the causal attention term, 14 % of it:

    >>> from core.transformer.config import load_config
    >>> w = step_work(load_config("llama31_8b"), 8192, 8192)
    >>> round(w.model_flops / 1e15, 3), round(w.flops["attention"] / w.model_flops, 3)
    (0.43, 0.143)
    """
    n_layers = cfg.layers if layers is None else layers
    flops = dict.fromkeys(KINDS, 0.0)
    moved = dict.fromkeys(KINDS, 0.0)
    model = 0.0
    ops = [(o, n_layers) for o in layer_ops(cfg, tokens, seq_len, tp=tp, causal=causal, flash=flash)]
    if with_head:
        ops += [(o, 1) for o in head_ops(cfg, tokens, tp=tp)]
    for op, times in ops:
        extra = op.fwd_flops if (recompute and op.repeat > 1) else 0.0
        extra_bytes = op.fwd_bytes if (recompute and op.repeat > 1) else 0.0
        flops[op.kind] += times * (op.fwd_flops + op.bwd_flops + extra)
        moved[op.kind] += times * (op.fwd_bytes + op.bwd_bytes + extra_bytes)
        model += times * (op.fwd_flops + op.bwd_flops)
    return Work(flops, moved, model)
