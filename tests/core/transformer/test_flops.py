"""The FLOP count of core.transformer.flops against torch's own counter on small models built from the config."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from core.transformer.config import TransformerConfig
from core.transformer.flops import layer_ops, step_work


class _Layer(nn.Module):
    def __init__(self, c: TransformerConfig):
        super().__init__()
        self.c = c
        h, kv = c.hidden, c.kv_dim
        self.q, self.k, self.v, self.o = nn.Linear(h, h, False), nn.Linear(h, kv, False), nn.Linear(h, kv, False), \
            nn.Linear(h, h, False)
        self.gate = nn.Linear(h, c.ffn, False) if c.gated_mlp else None
        self.up, self.down = nn.Linear(h, c.ffn, False), nn.Linear(c.ffn, h, False)
        self.lora = nn.ModuleDict()
        for t in c.lora_targets:
            i, o = c.projection_shapes()[t]
            self.lora[t] = nn.Sequential(nn.Linear(i, c.lora_rank, False), nn.Linear(c.lora_rank, o, False))

    def _proj(self, name: str, x: torch.Tensor) -> torch.Tensor:
        y = getattr(self, name)(x)
        return y + self.lora[name](x) if name in self.lora else y

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c = self.c
        b, s, _ = x.shape
        q = self._proj("q", x).view(b, s, c.heads, c.head_dim).transpose(1, 2)
        k = self._proj("k", x).view(b, s, c.kv_heads, c.head_dim).transpose(1, 2)
        v = self._proj("v", x).view(b, s, c.kv_heads, c.head_dim).transpose(1, 2)
        rep = c.heads // c.kv_heads
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        p = torch.softmax(q @ k.transpose(-1, -2) / c.head_dim ** 0.5, dim=-1)  # explicit products, no mask
        x = x + self._proj("o", (p @ v).transpose(1, 2).reshape(b, s, c.hidden))
        u = self._proj("up", x)
        a = nn.functional.silu(self._proj("gate", x)) * u if c.gated_mlp else torch.relu(u) ** 2
        return x + self._proj("down", a)


def _torch_flops(c: TransformerConfig, batch: int, seq: int) -> int:
    torch.manual_seed(0)
    layers = nn.ModuleList(_Layer(c) for _ in range(c.layers))
    head = nn.Linear(c.hidden, c.vocab, False)
    if c.lora_rank:
        for m in [*layers, head]:
            for name, p in m.named_parameters():
                p.requires_grad_(name.startswith("lora."))
    x = torch.randn(batch, seq, c.hidden, requires_grad=True)
    target = torch.randint(0, c.vocab, (batch * seq,))
    with FlopCounterMode(display=False) as counter:
        y = x
        for layer in layers:
            y = layer(y)
        loss = nn.functional.cross_entropy(head(y).view(-1, c.vocab), target)
        loss.backward()
    return counter.get_total_flops()


CONFIGS = {
    "gpt2-like": TransformerConfig("g", 2, 64, 4, 4, 256, 97, gated_mlp=False),
    "llama-like GQA": TransformerConfig("l", 2, 64, 8, 2, 160, 101),
    "llama-like LoRA": TransformerConfig("l", 2, 64, 8, 2, 160, 101, lora_rank=4, lora_targets=("q", "k", "v", "o")),
    "LoRA on the MLP": TransformerConfig("l", 1, 32, 4, 4, 96, 50, lora_rank=2, lora_targets=("gate", "up", "down")),
}


@pytest.mark.parametrize("name", CONFIGS)
def test_training_flops_match_torch_counter(name):
    c = CONFIGS[name]
    batch, seq = 2, 16
    ours = step_work(c, batch * seq, seq, causal=False, flash=False).model_flops
    assert ours == pytest.approx(_torch_flops(c, batch, seq), rel=1e-9)


def test_frozen_weights_have_no_weight_gradient():
    full = TransformerConfig("l", 2, 64, 8, 2, 160, 101)
    lora = full.with_lora(4, ("q",))
    f = {o.name: o for o in layer_ops(full, 10, 10)}
    lo = {o.name: o for o in layer_ops(lora, 10, 10)}
    # full: backward = activation + weight gradient (2× forward); frozen: the activation gradient only
    assert f["mlp_up"].bwd_flops == 2 * f["mlp_up"].fwd_flops
    assert lo["mlp_up"].bwd_flops == lo["mlp_up"].fwd_flops
    # the adapter of q: A (64 -> 4) and B (4 -> 64), 10 tokens, trained
    assert lo["lora_q_a"].fwd_flops == 2 * 10 * 64 * 4 and lo["lora_q_a"].bwd_flops == 2 * 2 * 10 * 64 * 4


def test_causal_attention_is_half_and_scales_with_sequence():
    c = TransformerConfig("g", 1, 64, 4, 4, 256, 97, gated_mlp=False)
    full = {o.name: o for o in layer_ops(c, 100, 1000, causal=False)}["attention"]
    causal = {o.name: o for o in layer_ops(c, 100, 1000, causal=True)}["attention"]
    longer = {o.name: o for o in layer_ops(c, 100, 2000, causal=True)}["attention"]
    assert full.fwd_flops == 4 * 100 * 1000 * 64
    assert causal.fwd_flops == full.fwd_flops / 2
    assert longer.fwd_flops == 2 * causal.fwd_flops
    assert causal.bwd_flops == 2.5 * causal.fwd_flops  # FlashAttention recomputes the scores


def test_tensor_parallel_rank_does_a_tp_th_of_the_layer_matmuls():
    c = TransformerConfig("l", 2, 64, 8, 2, 160, 101)
    one = step_work(c, 32, 16, with_head=False)
    four = step_work(c, 32, 16, tp=4, with_head=False)
    assert four.flops["matmul"] == pytest.approx(one.flops["matmul"] / 4)
    assert four.flops["attention"] == pytest.approx(one.flops["attention"] / 4)
