"""Testinfra checks of the tuned lab nodes (molecule `verify`).  PLACEHOLDER content (owner)."""

import pytest

DATA0 = {"node1": "10.77.0.1/24", "node2": "10.77.0.2/24"}


@pytest.fixture(name="hostname")
def fixture_hostname(host):
    return host.check_output("hostname")


def test_data0_is_up_with_its_address(host, hostname):
    link = host.interface("data0")
    assert link.exists
    assert DATA0[hostname] in host.check_output("ip -o -4 addr show dev data0")
    assert "state UP" in host.check_output("ip link show data0")
