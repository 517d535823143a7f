"""Every device of the one device table (``core.devices.DEVICES``) and every network (``NETWORKS``) carries what
Paleo, the roofline, the transformer model and the pages read: a contract over the table itself, never a
hand-typed list of devices (issue 34).

A device: its key is its name; a label and a vendor; at least one peak, each of a known precision, positive and
finite in FLOP/s units, with a source; a positive memory bandwidth in GB/s with a source; a positive memory,
clock, scale-up bandwidth and network card where given, each with a source; a domain of at least one; its
link, where it names one, a network of the table. Its key and every alias resolve to it by the device-name
lookup, in any case and with spaces or hyphens for ``_``, and are recognised in text. A network: its key is its
name, a positive bandwidth, a source, found by its name.

The same checks run on a throwaway device (a copy of the first device with a network card under the name
``ZX_9000`` and the alias ``ZX9K``) and a throwaway network, registered for the test only; registered, the
device is found and recognised by its names, and ``python -m core transformer --device zx-9000`` plans with it,
without anyone naming it.
"""

from __future__ import annotations

import dataclasses
import math

import pytest

from core.cli import main
from core.devices import (
    DEVICES,
    NETWORKS,
    PEAK_PRECISIONS,
    DeviceSpec,
    Figure,
    Network,
    device_from_text,
    device_key,
    get_device,
    get_network,
)

ZX_9000 = dataclasses.replace(next(d for d in DEVICES.values() if d.scale_out_gbps is not None), name="ZX_9000",
                              label="ZX 9000 (a throwaway copy)", aliases=("ZX9K",), family="")
THROWAWAY_NETWORK = Network("zxlink", 3200.0, "a throwaway network (tests/contracts)")
FLOPS_UNITS = {"TFLOP/s": 1e12, "GFLOP/s": 1e9}


@pytest.fixture(params=[*DEVICES, ZX_9000.name])
def device(request, monkeypatch) -> DeviceSpec:
    """Each device of the table, and the throwaway one registered for this test only."""
    if request.param == ZX_9000.name:
        monkeypatch.setitem(DEVICES, ZX_9000.name, ZX_9000)
    return DEVICES[request.param]


@pytest.fixture(params=[*NETWORKS, THROWAWAY_NETWORK.name])
def network(request, monkeypatch) -> Network:
    if request.param == THROWAWAY_NETWORK.name:
        monkeypatch.setitem(NETWORKS, THROWAWAY_NETWORK.name, THROWAWAY_NETWORK)
    return NETWORKS[request.param]


def _cited(figure: Figure | None, units: set[str]) -> bool:
    return (figure is not None and figure.unit in units and figure.source.strip() != ""
            and math.isfinite(figure.value) and figure.value > 0)


# --------------------------------------------------------------------------- what every device carries
def test_every_figure_is_positive_with_its_unit_and_source(device):
    assert DEVICES[device.name] is device and device.label and device.vendor
    assert device.peaks and set(device.peaks) <= set(PEAK_PRECISIONS)
    assert all(_cited(f, set(FLOPS_UNITS)) for f in device.peaks.values())
    assert _cited(device.mem_bandwidth, {"GB/s"})
    for figure, units in ((device.memory_gb, {"GB"}), (device.boost_clock, {"MHz"}),
                          (device.scale_up_gbs, {"GB/s"}), (device.scale_out_gbps, {"Gb/s"})):
        assert figure is None or _cited(figure, units)
    assert isinstance(device.domain, int) and device.domain >= 1
    assert device.link is None or device.link in NETWORKS


@pytest.mark.parametrize("spelling", [str, str.lower, lambda n: n.replace("_", " "),
                                      lambda n: n.replace("_", "-").lower()], ids=["as is", "lower", "spaces", "-"])
def test_its_names_resolve_to_it(device, spelling):
    for name in (device.name, *device.aliases):
        assert device_key(spelling(name)) == device.name
        assert get_device(spelling(name)) is device and device_from_text(spelling(name)) is device


# --------------------------------------------------------------------------- what every network carries
def test_every_network_has_a_positive_cited_bandwidth_and_is_found_by_name(network):
    assert NETWORKS[network.name] is network and network.source.strip()
    assert math.isfinite(network.gbps) and network.gbps > 0
    assert get_network(network.name) is network and get_network(network.name.upper()) is network


# --------------------------------------------------------------------------- the product takes a new device
def test_a_registered_device_is_used_without_being_named(monkeypatch, capsys):
    monkeypatch.setitem(DEVICES, ZX_9000.name, ZX_9000)
    assert get_device("zx 9000") is ZX_9000 and get_device("zx9k") is ZX_9000
    assert device_from_text("ZX-9000") is ZX_9000
    with pytest.raises(SystemExit):
        main(["transformer", "--help"])
    assert "ZX_9000" in capsys.readouterr().out
    assert main(["transformer", "--config", "llama31_8b", "--seq-len", "8192", "--global-batch", "32",
                 "--device", "zx-9000", "--gpus", "8"]) == 0
    out = capsys.readouterr().out
    assert "\n8,ZX_9000,llama31_8b," in out
