"""Communication schemes at n = 1, 2, 4 (and more), by hand."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import InputError
from core.paleo import PALEO_SCHEMES, get_network
from core.paleo.comm import comm_time_ms, link_time_ms, ps_scheme, tree_height

ETH = get_network("ethernet")                 # 10 Gbit/s = 1.25e9 B/s
ALEX_BYTES = 201_215_648                      # AlexNet v2 parameters, fp32
T = ALEX_BYTES / 1.25e9 * 1e3                 # one link: 160.9725184 ms


def test_link_time_alexnet_on_ethernet():
    assert link_time_ms(ALEX_BYTES, ETH) == pytest.approx(160.9725184, rel=1e-12)
    assert link_time_ms(ALEX_BYTES, ETH, ppp_comm=0.72) == pytest.approx(160.9725184 / 0.72)


@pytest.mark.parametrize("scheme, factors", [
    # multiples of t_link at n = 1, 2, 4 (h(1) = 0, h(2) = 1, h(4) = 2)
    ("OneToAll", (0, 2, 6)),                  # 2·(n-1)
    ("TreeAllReduce", (0, 2, 4)),             # 2·h(n)
    ("ButterflyAllReduce", (0, 1, 2)),        # h(n)
    ("ButterflyMixing", (1, 1, 1)),           # 1, even at n = 1 (Paleo's quirk)
    ("RingAllReduce", (0, 1, 1.5)),           # 2·(n-1)/n
    ("ParameterServer_p2", (2, 2, 4)),        # 2·max(1, n/2)
    ("ParameterServer_p4", (2, 2, 2)),        # 2·max(1, n/4)
])
def test_each_scheme_at_1_2_4_workers(scheme, factors):
    got = [comm_time_ms(scheme, n, ALEX_BYTES, ETH) for n in (1, 2, 4)]
    assert got == pytest.approx([f * T for f in factors], rel=1e-12)


def test_worked_example_values():
    # PALEO_MODEL.md: Tree(2) = 321.95, Tree(4) = 643.89, OneToAll(4) = 965.84 ms
    assert round(comm_time_ms("TreeAllReduce", 2, ALEX_BYTES, ETH), 2) == 321.95
    assert round(comm_time_ms("TreeAllReduce", 4, ALEX_BYTES, ETH), 2) == 643.89
    assert round(comm_time_ms("OneToAll", 4, ALEX_BYTES, ETH), 2) == 965.84


def test_tree_height_is_exact_ceil_log2_up_to_2_to_the_20():
    for n in range(1, 2 ** 12):
        assert tree_height(n) == (n - 1).bit_length()
    for k in range(1, 21):
        assert tree_height(2 ** k) == k and tree_height(2 ** k + 1) == k + 1


def test_parameter_servers_with_p_servers_and_n_workers():
    # 8 workers, 2 servers: each server carries 8/2 = 4 gradients each way -> 2·4·t
    assert comm_time_ms(ps_scheme(2), 8, ALEX_BYTES, ETH) == pytest.approx(8 * T)
    # more servers than workers: the worker's own link bounds it -> 2·t
    assert comm_time_ms(ps_scheme(16), 8, ALEX_BYTES, ETH) == pytest.approx(2 * T)


def test_ring_approaches_twice_the_link_time():
    ring = [comm_time_ms("RingAllReduce", n, ALEX_BYTES, ETH) / T for n in (8, 64, 1024)]
    assert ring == pytest.approx([2 * 7 / 8, 2 * 63 / 64, 2 * 1023 / 1024])
    assert all(math.isclose(r, 2, rel_tol=0.25) for r in ring)


def test_paleo_scheme_order():
    assert PALEO_SCHEMES == ("OneToAll", "TreeAllReduce", "ButterflyAllReduce", "ButterflyMixing")


@pytest.mark.parametrize("scheme", ["Ring", "ParameterServer_p0", "ParameterServer_px"])
def test_unknown_scheme_is_refused(scheme):
    with pytest.raises(InputError, match=rf"scheme: expected one of OneToAll.*got '{scheme}'"):
        comm_time_ms(scheme, 2, ALEX_BYTES, ETH)


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 4096), st.integers(1, 64), st.integers(1, 10 ** 10))
def test_scheme_orderings(n, p, n_bytes):
    def c(s: str) -> float:
        return comm_time_ms(s, n, n_bytes, ETH)

    # ring <= butterfly <= tree <= one-to-all for n >= 2; more servers never slower
    assert c("RingAllReduce") <= c("ButterflyAllReduce") * (1 + 1e-12)
    assert c("ButterflyAllReduce") <= c("TreeAllReduce") <= c("OneToAll") * (1 + 1e-12)
    assert c(ps_scheme(p + 1)) <= c(ps_scheme(p))
    # every scheme is linear in the bytes
    assert comm_time_ms("TreeAllReduce", n, 2 * n_bytes, ETH) == pytest.approx(2 * c("TreeAllReduce"))
