"""Testinfra checks of a rolled-back VM, shared by `verify tests_rollback` (right after the
rollback) and `verify tests_rollback_reboot` (after the next reboot): the originals are back."""
import json

import pytest

from checks_tuned import MPI, PEER, rings

GONE = ["/etc/sysctl.d/90-hpcnet-rdma.conf", "/etc/systemd/network/10-hpcnet-rdma-data0.link",
        "/var/lib/hpcnet-rdma/journal.json"]


def pristine(host):
    return json.loads(host.file("/root/hpcnet-snapshot-pristine.json").content_string)


@pytest.mark.parametrize("key", sorted(MPI))
def test_every_mpi_sysctl_is_back(sysctl_now, pristine_snapshot, key):
    assert sysctl_now.get(key) == pristine_snapshot["sysctl"][key]


def test_data0_is_back(host):
    before = pristine(host)["interfaces"]["data0"]
    assert host.file("/sys/class/net/data0/mtu").content_string.strip() == before["mtu"] == "1500"
    assert rings(host, "data0")["current"] == {"RX": "256", "TX": "128"}
    assert host.check_output("ethtool -g data0") == before["-g"].strip()


@pytest.mark.parametrize("path", GONE)
def test_created_files_are_gone(host, path):
    assert not host.file(path).exists


def test_data_link_is_back_to_standard_frames(host):
    peer = PEER[host.check_output("hostname")]
    assert host.run("ping -c 2 -W 3 -M do -s 1472 %s" % peer).rc == 0
    assert host.run("ping -c 1 -W 3 -M do -s 8972 %s" % peer).rc != 0
