"""Small core helpers the Throughput page uses: worker counts, PPP presets, loadable nets,
the fastest scheme, the headline numbers, the devices and networks of each mode, and the
communication-free throughput."""

from __future__ import annotations

import math

import pytest

from core.errors import InputError
from core.paleo import (
    MODERN_DEVICES,
    NETWORKS,
    PALEO_DEVICES,
    PALEO_NETWORKS,
    PPP_PRESETS,
    devices_for,
    list_nets,
    load_net,
    networks_for,
    settings_for_mode,
    simulate,
    worker_counts,
)


@pytest.mark.parametrize("max_workers, expected", [
    (1, (1,)),
    (2, (1, 2)),
    (8, (1, 2, 4, 8)),
    (12, (1, 2, 4, 8, 12)),          # not a power of 2: still the last count
    (1024, tuple(2 ** i for i in range(11))),
])
def test_worker_counts_double_up_to_the_maximum(max_workers, expected):
    assert worker_counts(max_workers) == expected


@pytest.mark.parametrize("bad, error, pattern", [
    (0, InputError, r"max_workers: expected an int >= 1; got 0"),
    (2.0, InputError, r"max_workers: expected an int >= 1; got 2.0 \(float\)"),
])
def test_worker_counts_refuses_bad_maximum(bad, error, pattern):
    with pytest.raises(error, match=pattern):
        worker_counts(bad)


def test_ppp_presets_are_paleos_web_demo_values():
    # PALEO_MODEL.md section 3: tensorflow = (0.62, 0.72), mxnet = (0.49, 0.72), caffe = (0.21, 0.56)
    assert PPP_PRESETS == {"tensorflow": (0.62, 0.72), "mxnet": (0.49, 0.72), "caffe": (0.21, 0.56)}


def test_loadable_nets_leave_out_the_model_parallel_specs():
    every = list_nets()["specs"]
    usable = list_nets(loadable_only=True)["specs"]
    assert set(every) - set(usable) == {"alex_v2_2gpu", "alex_v2_4gpu", "alex_v2_8gpu"}
    for name in usable:
        assert load_net(name).name == name
    with pytest.raises(InputError, match="ModelParallel"):
        load_net("alex_v2_2gpu")


def test_fastest_scheme_by_hand_for_alexnet_on_k80():
    # validation_sample.csv, 8 workers: throughput OneToAll 429.1, Tree 932.2,
    # ButterflyAllReduce 1663.5, ButterflyMixing 3487.5 images/s -> ButterflyMixing
    res = simulate(load_net("alex_v2"), device="K80", network="ethernet", workers=(1, 2, 8),
                   paleo_compatible=True)
    assert res.fastest_scheme(8) == "ButterflyMixing"
    assert res.fastest_scheme(8, exact_only=True) == "ButterflyAllReduce"
    # one worker: OneToAll, Tree and ButterflyAllReduce cost nothing and tie; the first wins
    assert res.fastest_scheme(1) == "OneToAll"
    with pytest.raises(InputError, match=r"n_workers: expected one of 1, 2, 8; got 4"):
        res.fastest_scheme(4)


def test_fastest_scheme_in_the_modern_mode_prefers_the_ring_over_the_tree():
    # ring 2(n-1)/n t < tree 2 ceil(log2 n) t for n >= 2; butterfly mixing t is cheaper still
    res = simulate(load_net("alex_v2"), device="V100", network="ethernet100", workers=(1, 4))
    row = res.rows[1]
    assert row.comm_ms["RingAllReduce"] < row.comm_ms["TreeAllReduce"]
    # 4 workers, t = one link time: ring 1.5 t, PS p=4 2 t, p=2 4 t, butterfly 2 t, tree 4 t, one-to-all 6 t
    assert res.fastest_scheme(4) == "ButterflyMixing"          # t: one partner only
    assert res.fastest_scheme(4, exact_only=True) == "RingAllReduce"


def test_no_comm_throughput_is_batch_over_compute_time():
    res = simulate(load_net("alex_v2"), device="K80", workers=(1, 4), scaling="weak",
                   paleo_compatible=True)
    one, four = res.rows
    # validation_sample.csv: 128 images in 132.64620401292055 ms -> 964.9729591020338 images/s
    assert one.no_comm_throughput_img_s == pytest.approx(964.9729591020338, rel=1e-15)
    assert one.no_comm_throughput_img_s == one.throughput_img_s["TreeAllReduce"]  # no comm at n = 1
    assert math.isclose(four.no_comm_throughput_img_s, 4 * one.no_comm_throughput_img_s)


def test_headline_is_the_one_worker_row_and_the_fastest_exact_scheme_at_the_largest_count():
    res = simulate(load_net("alex_v2"), device="K80", network="ethernet", workers=(1, 2, 8),
                   paleo_compatible=True)
    head = res.headline()
    assert (head.smallest, head.largest) == (res.rows[0], res.rows[-1])
    # butterfly mixing (3487.5 images/s) is left out: ButterflyAllReduce, 1663.5 images/s
    assert head.fastest_scheme == "ButterflyAllReduce" == res.fastest_scheme(8, exact_only=True)
    assert head.fastest_throughput_img_s == res.rows[-1].throughput_img_s["ButterflyAllReduce"]
    assert head.fastest_speedup == res.speedup("ButterflyAllReduce")[-1]


def test_headline_takes_the_smallest_and_largest_counts_whatever_their_order():
    res = simulate(load_net("alex_v2"), device="K80", workers=(8, 1, 4), paleo_compatible=True)
    head = res.headline()
    assert (head.smallest.workers, head.largest.workers) == (1, 8)


def test_each_mode_offers_its_devices_and_networks():
    assert devices_for(paleo_compatible=True) == PALEO_DEVICES
    modern = devices_for(paleo_compatible=False)
    assert list(modern) == [*MODERN_DEVICES, *PALEO_DEVICES]             # current GPUs listed first
    assert networks_for(paleo_compatible=True) == PALEO_NETWORKS
    assert networks_for(paleo_compatible=False) == NETWORKS


@pytest.mark.parametrize("paleo, given, expected, changes", [
    (True, ("H100", "nvlink4", True), ("K80", "ethernet", False),
     ("device H100 → K80", "network nvlink4 → ethernet", "overlap off")),
    (True, ("K40", "infiniband", False), ("K40", "infiniband", False), ()),      # Paleo's own: kept
    (False, ("K80", "aws", True), ("K80", "aws", True), ()),                   # modern mode offers all
])
def test_settings_for_mode_keep_what_the_mode_offers(paleo, given, expected, changes):
    device, network, overlap = given
    fitted = settings_for_mode(paleo_compatible=paleo, device=device, network=network, overlap=overlap)
    assert (fitted.device, fitted.network, fitted.overlap) == expected
    assert fitted.changes == changes
    if changes:
        assert fitted.note == ("Paleo-compatible mode has only Paleo's devices, networks and schemes: "
                               + ", ".join(changes) + ".")
    else:
        assert fitted.note is None
