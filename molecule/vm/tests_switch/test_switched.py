"""molecule `verify tests_switch`: after mpi -> offpeak (switch_profile.yml) and a reboot, the kernel
holds offpeak's values, the keys only mpi set are back at their pre-tuning originals, and the
boot-time files carry offpeak."""
import json

import pytest

OFFPEAK = {
    "net.core.rmem_max": "16777216",
    "net.core.wmem_max": "16777216",
    "net.ipv4.tcp_rmem": "4096 131072 16777216",
    "net.ipv4.tcp_wmem": "4096 16384 16777216",
    "net.ipv4.tcp_mtu_probing": "1",
    "net.core.busy_poll": "0",
    "net.core.busy_read": "0",
}
# mpi set these, offpeak does not: the switch returned them to their originals
MPI_ONLY = ["net.core.rmem_default", "net.core.wmem_default", "net.core.netdev_max_backlog",
            "net.ipv4.tcp_timestamps", "vm.zone_reclaim_mode", "kernel.numa_balancing"]
PERSIST = "/etc/sysctl.d/90-hpcnet-rdma.conf"


def kernel(host, key):
    return " ".join(host.file("/proc/sys/" + key.replace(".", "/")).content_string.split())


def pristine(host):
    return json.loads(host.file("/root/hpcnet-snapshot-pristine.json").content_string)["sysctl"]


def test_the_vm_rebooted_after_the_switch(host):
    assert float(host.file("/proc/uptime").content_string.split()[0]) < 900


@pytest.mark.parametrize("key, value", sorted(OFFPEAK.items()))
def test_offpeak_values_came_back_at_boot(host, key, value):
    assert kernel(host, key) == value
    assert "%s = %s" % (key, value) in host.file(PERSIST).content_string


@pytest.mark.parametrize("key", MPI_ONLY)
def test_keys_only_mpi_set_are_at_their_originals(host, key):
    assert kernel(host, key) == " ".join(pristine(host)[key].split())
    assert key + " =" not in host.file(PERSIST).content_string


def test_the_record_names_offpeak(host):
    record = json.loads(host.file("/etc/hpcnet-rdma/profile.json").content_string)
    assert record["name"] == "offpeak" and record["digest"].startswith("sha256:")


def test_data0_keeps_jumbo_frames(host):
    assert host.file("/sys/class/net/data0/mtu").content_string.strip() == "9000"
