"""Collective volumes on hand values, the 1F1B bubble, memory per GPU and the refusal of what does not fit."""

from __future__ import annotations

import pytest

from core.errors import InputError
from core.transformer import Efficiency, Overlap, Strategy, estimate_step, parse_strategy
from core.transformer.config import TransformerConfig, load_config
from core.transformer.devices import get_accelerator
from core.transformer.memory import memory_per_gpu
from core.transformer.parallel import Latency, best_strategy

# 4 layers, hidden 64, 8 heads (2 key-value heads of 8), ffn 128, vocab 100: 4×(64·(64+16+16+64) + 3·64·128)
# + 2·100·64 = 4·(10240 + 24576) + 12800 = 152,064 parameters
C = TransformerConfig("tiny", 4, 64, 8, 2, 128, 100)
H100 = get_accelerator("H100")
NO_OVERLAP = Overlap(dp=0, tp=0, cp=0, pp=0)


def _comm(est, kind):
    return next(c for c in est.comms if c.kind == kind)


def test_parameter_count_by_hand():
    assert C.params == 152_064


def test_dp_all_reduce_volume():
    est = estimate_step(C, H100, Strategy(dp=4), global_batch=8, seq_len=16, overlap=NO_OVERLAP)
    # ring all-reduce of bf16 gradients: 2(n-1)/n × 2 bytes × P = 1.5 × 2 × 152,064
    assert _comm(est, "DP").bytes == pytest.approx(1.5 * 2 * 152_064)
    assert _comm(est, "DP").link == "scale-up"


def test_tp_volume_per_layer_and_micro_batch():
    est = estimate_step(C, H100, Strategy(dp=1, tp=2), global_batch=4, seq_len=16, overlap=NO_OVERLAP)
    # 4 micro-batches of 1 sequence × 16 tokens; per layer 4 collectives of the 16×64 bf16 activation
    # at the ring factor 2(tp-1)/tp = 1: 4 × 4 layers × 4 × 1 × 16·64·2 bytes
    assert _comm(est, "TP").bytes == pytest.approx(4 * 4 * 4 * 16 * 64 * 2)
    assert not any(c.kind == "DP" for c in est.comms)  # dp = 1: no gradient reduction


def test_pp_point_to_point_volume_and_link_across_nodes():
    est = estimate_step(C, H100, Strategy(dp=8, pp=2), global_batch=16, seq_len=16, overlap=NO_OVERLAP, domain=8)
    # 2 micro-batches per pipeline; each sends a 16×64 bf16 activation forward and its gradient back
    assert _comm(est, "PP").bytes == pytest.approx(2 * 2 * 16 * 64 * 2)
    # stage neighbours are dp×tp×cp = 8 GPUs apart: the next node, over the NIC
    assert _comm(est, "PP").link == "scale-out"


def test_cp_gathers_keys_and_values():
    est = estimate_step(C, H100, Strategy(dp=1, cp=2), global_batch=1, seq_len=32, overlap=NO_OVERLAP)
    # per layer 3 × (cp-1)/cp × (keys + values of the whole sequence: 32 tokens × 2 × 16 × 2 bytes)
    assert _comm(est, "CP").bytes == pytest.approx(4 * 3 * 0.5 * 32 * 2 * 16 * 2)


@pytest.mark.parametrize("pp,m,vp", [(4, 12, 1), (8, 24, 1), (4, 8, 2)])
def test_bubble_is_the_1f1b_fraction(pp, m, vp):
    cfg = TransformerConfig("deep", 16, 64, 8, 8, 256, 100)
    s = Strategy(dp=1, pp=pp, vp=vp)
    est = estimate_step(cfg, H100, s, global_batch=m, seq_len=64, overlap=Overlap(dp=1, tp=1, cp=1, pp=1),
                        latency=Latency.zero())
    fraction = est.bubble / (est.compute_time + est.bubble)
    assert fraction == pytest.approx((pp - 1) / (m * vp + pp - 1))


def test_memory_adam_mixed_precision_and_zero():
    cfg = load_config("llama31_8b")
    plain = memory_per_gpu(cfg, Strategy(dp=8, zero=0), 8192)
    zero1 = memory_per_gpu(cfg, Strategy(dp=8, zero=1), 8192)
    assert plain.weights + plain.gradients + plain.optimizer == pytest.approx(16 * cfg.params)
    assert zero1.optimizer == pytest.approx(12 * cfg.params / 8)
    tuned = cfg.with_lora(16)
    lora = memory_per_gpu(tuned, Strategy(dp=1), 8192)
    assert lora.weights == pytest.approx(2 * cfg.params)
    # rank 16 on q, k, v, o of 32 layers: 32 × 16 × ((4096+4096) + 2·(4096+1024) + (4096+4096)) = 13,631,488
    assert tuned.lora_params == 13_631_488
    assert lora.optimizer == pytest.approx(12 * 13_631_488)


def test_impossible_strategy_is_refused_with_the_shortfall():
    cfg = load_config("llama31_405b")
    with pytest.raises(InputError, match=r"expected at most 72\.0 GB per GPU .* GB too much\. Raise tp or pp"):
        estimate_step(cfg, H100, Strategy(dp=8), global_batch=8, seq_len=8192)


def test_no_strategy_fits_names_the_closest():
    with pytest.raises(InputError, match=r"no strategy fits; the closest: .*GB too much"):
        best_strategy(load_config("llama31_405b"), H100, 8, global_batch=8, seq_len=8192)


def test_strategy_must_match_the_gpus_and_batch():
    with pytest.raises(InputError, match="dp×tp×pp×cp = 16 GPUs"):
        _check(Strategy(dp=4, tp=2), 16)
    with pytest.raises(InputError, match="--global-batch: expected a multiple of dp×micro-batch"):
        estimate_step(C, H100, Strategy(dp=3), global_batch=8, seq_len=16)


def _check(s, gpus):
    from core.transformer.parallel import _check_fit

    _check_fit(C, s, gpus, 8, 16)


def test_search_picks_a_fitting_strategy_and_model_parallelism_when_needed():
    cfg = load_config("llama2_70b")
    est = best_strategy(cfg, H100, 64, global_batch=64, seq_len=4096, eff=Efficiency())
    assert est.memory.total <= 0.9 * 80e9
    assert est.strategy.gpus == 64 and est.strategy.tp * est.strategy.pp > 1  # 70B × 16 B does not fit unsplit


def test_parse_strategy_round_trip():
    s = parse_strategy("dp=4,tp=8,pp=8,cp=2,vp=8,recompute=1")
    assert parse_strategy(s.text()) == s


def test_context_parallelism_splits_attention_evenly():
    cfg = TransformerConfig("cp", 4, 256, 8, 8, 512, 100)
    one = estimate_step(cfg, H100, Strategy(dp=1), global_batch=2, seq_len=8192, overlap=NO_OVERLAP)
    two = estimate_step(cfg, H100, Strategy(dp=1, cp=2), global_batch=2, seq_len=8192, overlap=NO_OVERLAP)
    # each of the 2 ranks computes half of every sequence's causal attention: half the time, not a quarter
    assert two.compute["attention"] == pytest.approx(one.compute["attention"] / 2)
    assert two.compute["matmul"] == pytest.approx(one.compute["matmul"] / 2)


# --- collective latency (NCCL's ring/Simple cost model: 8.4 µs base, 3.4 µs per NVLink step, 9.6 per network step)

def test_ring_latency_by_hand():
    lat = Latency()
    # 72 GPUs of one NVL72 rack: 71 NVLink steps
    assert lat.ring(72, 72) == pytest.approx(8.4e-6 + 71 * 3.4e-6)
    # 256 ranks, 36 per rack: 255 steps, 8 racks so 7 of them across the network
    assert lat.ring(256, 36) == pytest.approx(8.4e-6 + 248 * 3.4e-6 + 7 * 9.6e-6)
    assert lat.ring(1, 1) == 0.0
    assert Latency.zero().ring(64, 8) == 0.0


def _extra(kind, strategy, cfg=C, global_batch=8, seq_len=16, device=H100):
    """Seconds the latency term adds to one kind of collective (no overlap)."""
    with_lat = estimate_step(cfg, device, strategy, global_batch=global_batch, seq_len=seq_len, overlap=NO_OVERLAP,
                             check_memory=False)
    without = estimate_step(cfg, device, strategy, global_batch=global_batch, seq_len=seq_len, overlap=NO_OVERLAP,
                            check_memory=False, latency=Latency.zero())
    return _comm(with_lat, kind).time - _comm(without, kind).time


def test_dp_latency_is_two_collectives_per_megatron_bucket():
    # the tiny model is one bucket: one reduce-scatter and one all-gather over 4 GPUs: 2 × (8.4 + 3 × 3.4) µs
    assert _extra("DP", Strategy(dp=4)) == pytest.approx(2 * 18.6e-6)
    # Llama 3.1 8B (8.03 B parameters) on 72 GB200: buckets of max(40 M, 72 M) -> 112 buckets, 71 NVLink steps
    cfg = load_config("llama31_8b")
    buckets = -(-cfg.params // 72e6)
    assert buckets == 112
    extra = _extra("DP", Strategy(dp=72), cfg, 72, 8192, get_accelerator("GB200"))
    assert extra == pytest.approx(2 * 112 * (8.4e-6 + 71 * 3.4e-6))


def test_tp_latency_per_layer_and_micro_batch():
    # tp=2, 4 layers, 4 micro-batches: 8 collectives (2 all-gathers + 2 reduce-scatters, forward and backward)
    # per layer and micro-batch, each 8.4 + 1 × 3.4 µs
    assert _extra("TP", Strategy(dp=1, tp=2), global_batch=4) == pytest.approx(4 * 4 * 8 * 11.8e-6)


def test_pp_latency_per_send():
    # pp=2 across nodes (domain 8, stride 8): 2 sends per micro-batch, each 8.4 + 9.6 µs; 2 micro-batches per pipeline
    s = Strategy(dp=8, pp=2)
    with_lat = estimate_step(C, H100, s, global_batch=16, seq_len=16, overlap=NO_OVERLAP, domain=8)
    without = estimate_step(C, H100, s, global_batch=16, seq_len=16, overlap=NO_OVERLAP, domain=8,
                            latency=Latency.zero())
    assert _comm(with_lat, "PP").time - _comm(without, "PP").time == pytest.approx(2 * 2 * 18.0e-6)
