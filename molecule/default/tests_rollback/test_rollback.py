"""Testinfra checks after rollback.yml (molecule `verify tests_rollback`): the originals are back."""
import json

import pytest


def pristine(host):
    return json.loads(host.file("/root/hpcnet-snapshot-pristine.json").content_string)


@pytest.mark.parametrize("key", ["net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", "net.ipv4.tcp_mtu_probing",
                                 "net.ipv4.tcp_timestamps"])
def test_sysctls_are_back(host, key):
    value = " ".join(host.file("/proc/sys/" + key.replace(".", "/")).content_string.split())
    assert value == pristine(host)["sysctl"][key]


def test_data_link_is_back(host):
    assert host.file("/sys/class/net/data0/mtu").content_string.strip() == pristine(host)["interfaces"]["data0"]["mtu"]
    assert host.check_output("ethtool -l data0") == pristine(host)["interfaces"]["data0"]["-l"].strip()


@pytest.mark.parametrize("path", ["/etc/sysctl.d/90-hpcnet-rdma.conf",
                                  "/etc/systemd/network/10-hpcnet-rdma-data0.link",
                                  "/var/lib/hpcnet-rdma/journal.json"])
def test_created_files_are_gone(host, path):
    assert not host.file(path).exists
