"""Data-parallel communication: time to synchronise the gradients once per iteration.

Every scheme is a function of (workers n, gradient bytes, link bandwidth, ``ppp_comm``).
The one-link time is Paleo's ``t_link(bytes) = bytes / (Gbps/8 · 1e9) · 1e3 / ppp_comm`` ms
(decimal GB, no latency term), and ``h(n) = ceil(log(n)/log(2))``.

Paleo's schemes (``paleo/comm.py``):

* ``OneToAll``           ``2 · t_link(bytes · (n-1))``  (one master sends and receives all)
* ``TreeAllReduce``      ``2 · h(n) · t_link(bytes)``   (reduce up a tree, broadcast down)
* ``ButterflyAllReduce`` ``h(n) · t_link(bytes)``
* ``ButterflyMixing``    ``t_link(bytes)``               (even at n = 1: Paleo's quirk)

Added here (modern mode):

* ``RingAllReduce``      ``2·(n-1)/n · t_link(bytes)``: reduce-scatter plus all-gather;
  each worker sends ``2(n-1)/n`` of the gradient, the bandwidth lower bound of all-reduce
  (Patarasuk & Yuan 2009).
* ``ParameterServer_p<p>`` ``2 · max(1, n/p) · t_link(bytes)``: p server machines each own
  1/p of the parameters; every worker pushes its gradient and pulls the new weights
  (2 phases); in each phase a server's link carries ``n·bytes/p`` and a worker's ``bytes``,
  the slower one sets the time.  Servers are separate machines with the same link, as in
  Optimus, so even one worker pays ``2·t_link(bytes)``.
"""

from __future__ import annotations

import math

from core.errors import InputError
from core.paleo.devices import Network

#: Paleo's four schemes, in its column order
PALEO_SCHEMES: tuple[str, ...] = ("OneToAll", "TreeAllReduce", "ButterflyAllReduce",
                                  "ButterflyMixing")
RING = "RingAllReduce"
PS_PREFIX = "ParameterServer_p"
#: schemes that do not give every worker the average of all gradients each iteration:
#: butterfly mixing (Zhao & Canny 2013) exchanges with one partner per iteration, so its cost
#: stays one link time at any n while the gradients spread over log2(n) iterations
APPROXIMATE_SCHEMES: tuple[str, ...] = ("ButterflyMixing",)


def ps_scheme(n_ps: int) -> str:
    """Column name of the parameter-server scheme with ``n_ps`` servers.

    >>> ps_scheme(2)
    'ParameterServer_p2'
    """
    return f"{PS_PREFIX}{n_ps}"


def link_time_ms(n_bytes: float, network: Network, ppp_comm: float = 1.0) -> float:
    """Time to send ``n_bytes`` over one link, ms (Paleo's ``_time_in_communication``).

    Examples
    --------
    AlexNet's 201,215,648 parameter bytes over 10 Gbit/s Ethernet: 201,215,648 / 1.25e9 s.

    >>> from core.paleo.devices import get_network
    >>> round(link_time_ms(201215648, get_network("ethernet")), 4)
    160.9725
    """
    bytes_per_second = network.gbps / 8 * 10 ** 9
    return n_bytes / bytes_per_second * 1000 / ppp_comm


def tree_height(n_workers: int) -> int:
    """``ceil(log(n)/log(2))`` as Paleo computes it (0 for one worker).

    >>> [tree_height(n) for n in (1, 2, 3, 4, 8, 9)]
    [0, 1, 2, 2, 3, 4]
    """
    return math.ceil(math.log(n_workers) / math.log(2))


def comm_time_ms(scheme: str, n_workers: int, params_bytes: int, network: Network,
                 ppp_comm: float = 1.0) -> float:
    """Gradient-synchronisation time of one iteration under ``scheme``, ms.

    Parameters
    ----------
    scheme : str
        One of :data:`PALEO_SCHEMES`, ``"RingAllReduce"`` or ``"ParameterServer_p<p>"``.
    n_workers : int
    params_bytes : int
        Bytes of the gradient (all parameters, fp32).
    network : Network
    ppp_comm : float, default=1.0
        Platform percent of peak of the network.

    Examples
    --------
    With t = 160.97 ms (AlexNet on 10 GbE), at 4 workers: Tree 2·2·t = 643.89 ms, OneToAll
    2·3·t = 965.84 ms, ring 2·3/4·t = 241.46 ms, two servers 2·(4/2)·t = 643.89 ms.

    >>> from core.paleo.devices import get_network
    >>> eth = get_network("ethernet")
    >>> [round(comm_time_ms(s, 4, 201215648, eth), 2) for s in
    ...  ("TreeAllReduce", "OneToAll", "RingAllReduce", "ParameterServer_p2")]
    [643.89, 965.84, 241.46, 643.89]
    """
    n = n_workers
    if scheme == "OneToAll":
        return 2 * link_time_ms(params_bytes * (n - 1), network, ppp_comm)
    if scheme == "TreeAllReduce":
        return 2 * tree_height(n) * link_time_ms(params_bytes, network, ppp_comm)
    if scheme == "ButterflyAllReduce":
        return tree_height(n) * link_time_ms(params_bytes, network, ppp_comm)
    if scheme == "ButterflyMixing":
        return link_time_ms(params_bytes, network, ppp_comm)
    if scheme == RING:
        return 2 * (n - 1) / n * link_time_ms(params_bytes, network, ppp_comm)
    if scheme.startswith(PS_PREFIX) and scheme[len(PS_PREFIX):].isdigit():
        n_ps = int(scheme[len(PS_PREFIX):])
        if n_ps >= 1:
            return 2 * max(1.0, n / n_ps) * link_time_ms(params_bytes, network, ppp_comm)
    raise InputError(f"scheme: expected one of {', '.join(PALEO_SCHEMES)}, {RING} or "
                     f"{PS_PREFIX}<p> with p >= 1; got {scheme!r}. Pick one of those.")
