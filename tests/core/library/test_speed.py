"""Measured-speed tables in the library: checked, stored byte for byte, found by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import InputError, LogFormatError
from core.library import Library, add_speed_table, speed_table_bytes
from core.library.speed import speed_tables

ROOT = Path(__file__).resolve().parents[3]
POLLUX = ROOT / "data" / "pollux_traces" / "cifar10" / "scalability.csv"


def test_a_speed_table_is_stored_once_and_comes_back_byte_for_byte(db):
    lib = Library(db)
    data = POLLUX.read_bytes()
    assert add_speed_table(lib, "cifar10.csv", data) == (1, True)
    assert add_speed_table(lib, "copy.csv", data) == (1, False)
    assert speed_tables(lib)["name"].tolist() == ["cifar10.csv"]
    assert speed_table_bytes(lib, "cifar10.csv") == ("cifar10.csv", data)
    assert speed_table_bytes(lib, "1")[1] == data


def test_a_table_the_planner_cannot_read_is_refused_and_an_unknown_name_is_named(db):
    lib = Library(db)
    with pytest.raises(LogFormatError, match="notes.csv"):
        add_speed_table(lib, "notes.csv", b"a,b\nx,y\n")
    with pytest.raises(InputError, match="nope: expected the name or id of a speed table"):
        speed_table_bytes(lib, "nope")
