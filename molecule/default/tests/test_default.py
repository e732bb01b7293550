"""Testinfra checks of the tuned lab nodes (molecule `verify`): values read back from the kernel."""
import json

import pytest

PEER = {"node1": "10.77.0.2", "node2": "10.77.0.1"}
# The mpi profile's per-network-namespace keys: settable in a container, so tuned at runtime.
RUNTIME = {
    "net/ipv4/tcp_rmem": "4096 87380 268435456",
    "net/ipv4/tcp_wmem": "4096 65536 268435456",
    "net/ipv4/tcp_mtu_probing": "1",
    "net/ipv4/tcp_timestamps": "0",
    "net/ipv4/tcp_sack": "1",
}
# Kernel-global keys: persisted for boot, never written at runtime inside a container.
GLOBAL = ["net.core.rmem_max", "net.core.wmem_max", "net.core.netdev_max_backlog",
          "vm.zone_reclaim_mode", "kernel.numa_balancing"]


def kernel(host, path):
    return " ".join(host.file("/proc/sys/" + path).content_string.split())


def pristine(host):
    return json.loads(host.file("/root/hpcnet-snapshot-pristine.json").content_string)


@pytest.mark.parametrize("path, value", sorted(RUNTIME.items()))
def test_per_netns_sysctls_are_tuned(host, path, value):
    assert kernel(host, path) == value


@pytest.mark.parametrize("key", GLOBAL)
def test_global_sysctls_are_untouched_at_runtime_but_persisted(host, key):
    path = key.replace(".", "/")
    now = kernel(host, path) if host.file("/proc/sys/" + path).exists else None
    assert now == pristine(host)["sysctl"].get(key)   # absent in a child netns stays absent
    assert host.file("/etc/sysctl.d/90-hpcnet-rdma.conf").contains("^%s = " % key.replace(".", "\\."))


def test_data_link_mtu_and_channels(host):
    assert host.file("/sys/class/net/data0/mtu").content_string.strip() == "9000"
    current = host.check_output("ethtool -l data0").split("Current hardware settings:")[1]
    assert "RX:\t\t2" in current and "TX:\t\t2" in current


def test_jumbo_frames_cross_the_data_link(host):
    name = host.check_output("hostname")
    # 8972 bytes of ICMP payload + 28 bytes of headers = 9000, with fragmentation forbidden
    assert host.run("ping -c 2 -W 2 -M do -s 8972 %s" % PEER[name]).rc == 0
    assert host.run("ping -c 1 -W 2 -M do -s 8973 %s" % PEER[name]).rc != 0


def test_link_file_persists_the_nic_settings(host):
    f = host.file("/etc/systemd/network/10-hpcnet-rdma-data0.link")
    assert f.exists and f.mode == 0o644
    body = f.content_string
    # a veth gets a new random MAC whenever it is created: matched by the name it is created under
    for line in ("[Match]", "OriginalName=data0", "Name=data0", "MTUBytes=9000", "RxChannels=2", "TxChannels=2"):
        assert line + "\n" in body
    assert "MACAddress=" not in body


def test_journal_holds_the_originals(host):
    journal = json.loads(host.file("/var/lib/hpcnet-rdma/journal.json").content_string)
    assert journal["schema"] == 2
    # the targets of every scope of the run (the in-sync fast path's proof), the record's stored last
    targets = journal["targets"]
    assert sorted(targets) == ["tuning.irq", "tuning.nic", "tuning.qos", "tuning.record", "tuning.services",
                               "tuning.sysctl"]
    assert targets["tuning.nic"]["nic_tuning"]["keys"]["nic:data0:mtu"] == 9000
    seqs = dict((s, e["seq"]) for s, entries in targets.items() for e in entries.values())
    assert max(seqs.values()) == seqs["tuning.record"]
    # one tuning run: sysctls, the NIC, then the applied profile recorded (managed_files)
    assert [g["module"] for g in journal["generations"]] == ["sysctl_tuning", "nic_tuning", "managed_files"]
    assert len({g["run"] for g in journal["generations"]}) == 1
    assert [g["scope"] for g in journal["generations"]] == ["tuning.sysctl", "tuning.nic", "tuning.record"]
    originals = journal["originals"]
    assert originals["sysctl:net.ipv4.tcp_rmem"]["value"] == pristine(host)["sysctl"]["net.ipv4.tcp_rmem"]
    assert originals["nic:data0:mtu"]["value"] == 1500
    assert originals["file:/etc/sysctl.d/90-hpcnet-rdma.conf"]["value"] is None
    assert host.file("/var/lib/hpcnet-rdma").mode == 0o700
