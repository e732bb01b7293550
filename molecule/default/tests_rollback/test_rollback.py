"""Testinfra checks after rollback.yml (molecule `verify tests_rollback`).  PLACEHOLDER (owner)."""

DATA0 = {"node1": "10.77.0.1/24", "node2": "10.77.0.2/24"}


def test_rollback_keeps_the_data_link(host):
    hostname = host.check_output("hostname")
    assert DATA0[hostname] in host.check_output("ip -o -4 addr show dev data0")
