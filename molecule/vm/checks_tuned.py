"""Testinfra checks of a tuned VM, shared by molecule `verify` (tests/) and `verify tests_switch`.

Values are read back from the VM's own kernel and driver.  The test modules import the test_*
functions from here (pytest collects them there); the helpers are used by every vm test module.
"""
import json

import pytest

PEER = {"vm1": "10.77.0.2", "vm2": "10.77.0.1"}
# The mpi profile, every key - the kernel-global ones included: a VM has its own kernel.
MPI = {
    "net.core.rmem_max": "268435456",
    "net.core.wmem_max": "268435456",
    "net.core.rmem_default": "16777216",
    "net.core.wmem_default": "16777216",
    "net.core.netdev_max_backlog": "250000",
    "net.ipv4.tcp_rmem": "4096 87380 268435456",
    "net.ipv4.tcp_wmem": "4096 65536 268435456",
    "net.ipv4.tcp_mtu_probing": "1",
    "net.ipv4.tcp_timestamps": "0",
    "net.ipv4.tcp_sack": "1",
    "vm.zone_reclaim_mode": "0",
    "kernel.numa_balancing": "0",
}
LINK_FILE = "/etc/systemd/network/10-hpcnet-rdma-data0.link"
PERSIST = "/etc/sysctl.d/90-hpcnet-rdma.conf"
# The offpeak profile that switch_reboot.yml switches to (tests_switch/)
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
# Every /proc/sys key a check reads (the `sysctl_now` fixture of conftest.py reads them at once)
READ_KEYS = sorted(set(MPI) | set(OFFPEAK))


def read_sysctls(host, keys):
    """{key: value, whitespace-normalised} of /proc/sys/KEY for every key, in one command (`grep -H`
    prints PATH:LINE; a missing key is missing from the result).  Each command costs a TCG guest about
    half a second of ssh session, so the parametrized checks share one read per host."""
    paths = dict(("/proc/sys/" + key.replace(".", "/"), key) for key in keys)
    out = host.run("grep -H '' %s" % " ".join(sorted(paths))).stdout
    lines = {}
    for line in out.splitlines():
        path, _sep, value = line.partition(":")
        if path in paths:
            lines.setdefault(paths[path], []).append(value)
    return dict((key, " ".join(" ".join(value).split())) for key, value in lines.items())


# Fixtures the parametrized checks share, read once per host and test module (a test module that
# imports a check using one imports the fixture too): nothing a check does changes what they read.
@pytest.fixture(scope="module")
def sysctl_now(host):
    """{key: value} of every /proc/sys key the checks read (READ_KEYS), in one command."""
    return read_sysctls(host, READ_KEYS)


@pytest.fixture(scope="module")
def sysctl_d(host):
    """The collection's sysctl.d file: {'mode': .., 'text': ..}."""
    f = host.file(PERSIST)
    return {"mode": f.mode, "text": f.content_string}


@pytest.fixture(scope="module")
def pristine_snapshot(host):
    """The snapshot prepare.yml saved on the node before anything was tuned."""
    return json.loads(host.file("/root/hpcnet-snapshot-pristine.json").content_string)


def rings(host, ifname):
    """{'max': {'RX': .., 'TX': ..}, 'current': {...}} from `ethtool -g`."""
    out = {"max": {}, "current": {}}
    section = None
    for line in host.check_output("ethtool -g %s" % ifname).splitlines():
        if line.startswith("Pre-set maximums"):
            section = "max"
        elif line.startswith("Current hardware settings"):
            section = "current"
        elif section and line.split(":")[0] in ("RX", "TX"):
            out[section][line.split(":")[0]] = line.split(":")[1].strip()
    return out


def assert_boot_unit_ran(host, unit):
    """`unit` (a oneshot the collection installed) ran at this boot and succeeded."""
    state = host.check_output("systemctl show -p ActiveState -p Result %s" % unit)
    assert "ActiveState=active" in state and "Result=success" in state, state


def pristine(host):
    return json.loads(host.file("/root/hpcnet-snapshot-pristine.json").content_string)


@pytest.mark.parametrize("key, value", sorted(MPI.items()))
def test_every_mpi_sysctl_is_set_in_the_kernel(sysctl_now, key, value):
    assert sysctl_now.get(key) == value


@pytest.mark.parametrize("key, value", sorted(MPI.items()))
def test_every_mpi_sysctl_is_persisted(sysctl_d, key, value):
    assert sysctl_d["mode"] == 0o644
    assert "%s = %s\n" % (key, value) in sysctl_d["text"]


def test_data0_mtu_and_rings(host):
    assert host.file("/sys/class/net/data0/mtu").content_string.strip() == "9000"
    r = rings(host, "data0")
    assert r["max"] == {"RX": "1024", "TX": "256"}
    assert r["current"] == {"RX": "1024", "TX": "256"}


def test_link_file_persists_mtu_and_rings(host):
    f = host.file(LINK_FILE)
    assert f.exists and f.mode == 0o644
    body = f.content_string
    # matched by the PCI slot udev sees (the same on every VM of this layout) and the driver, never by
    # the MAC address a VLAN or bond on data0 would share
    udev = dict(line.split("=", 1) for line in
                host.check_output("udevadm info -q property -p /sys/class/net/data0").splitlines() if "=" in line)
    assert udev["ID_PATH"].startswith("pci-")
    for line in ("[Match]", "Path=" + udev["ID_PATH"], "Driver=virtio_net",
                 "Name=data0", "MTUBytes=9000", "RxBufferSize=1024", "TxBufferSize=256"):
        assert line + "\n" in body
    assert "MACAddress=" not in body


def coalesce(host, ifname):
    """{'rx-usecs': .., ...} from `ethtool -c` (the lines of NAME: VALUE)."""
    pairs = (line.split(":", 1) for line in host.check_output("ethtool -c %s" % ifname).splitlines()[1:] if ":" in line)
    return dict((k.strip(), v.strip()) for k, v in pairs if v.strip())


def test_data1_e1000e_mtu_rings_and_coalescing(host):
    """A second real driver, tuned for real: e1000e's own maxima (not virtio's), its fixed-usecs
    coalescing, read back from the driver; before the tune it was at the driver's defaults."""
    assert host.check_output("ethtool -i data1").splitlines()[0] == "driver: e1000e"
    assert host.file("/sys/class/net/data1/mtu").content_string.strip() == "9000"
    r = rings(host, "data1")
    assert r["max"] == {"RX": "4096", "TX": "4096"}
    assert r["current"] == {"RX": "2048", "TX": "1024"}
    assert coalesce(host, "data1")["rx-usecs"] == "50"
    before = pristine(host)["interfaces"]["data1"]
    assert before["mtu"] == "1500" and "RX:\t\t256" in before["-g"].split("Current")[1]
    body = host.file("/etc/systemd/network/10-hpcnet-rdma-data1.link").content_string
    for line in ("Driver=e1000e", "Name=data1", "MTUBytes=9000", "RxBufferSize=2048", "TxBufferSize=1024",
                 "RxCoalesceSec=50us"):
        assert line + "\n" in body, body


def test_management_nic_is_untouched(host):
    before = pristine(host)["interfaces"]["mgmt0"]
    assert host.file("/sys/class/net/mgmt0/mtu").content_string.strip() == before["mtu"] == "1500"
    assert host.check_output("ethtool -g mgmt0") == before["-g"].strip()


def devinfo(host, dev="rxe0"):
    """`ibv_devinfo -d DEV` as {field: value} (whitespace-normalised; one port)."""
    out = {}
    for line in host.check_output("ibv_devinfo -d %s" % dev).splitlines():
        if ":" in line:
            field, value = line.split(":", 1)
            out[field.strip()] = " ".join(value.split())
    return out


def test_soft_roce_port_is_active(host):
    info = devinfo(host)
    assert info["hca_id"] == "rxe0"
    assert info["state"] == "PORT_ACTIVE (4)"
    assert info["link_layer"] == "Ethernet"
    # the RoCE MTU follows data0: at 9000 the largest IB MTU (4096) fits
    assert info["active_mtu"] == "4096 (5)"


def test_jumbo_frames_cross_the_data_link(host):
    peer = PEER[host.check_output("hostname")]
    # 8972 bytes of ICMP payload + 28 bytes of headers = 9000, fragmentation forbidden
    assert host.run("ping -c 2 -W 3 -M do -s 8972 %s" % peer).rc == 0
    assert host.run("ping -c 1 -W 3 -M do -s 8973 %s" % peer).rc != 0


def test_journal_holds_the_originals(host):
    journal = json.loads(host.file("/var/lib/hpcnet-rdma/journal.json").content_string)
    originals = journal["originals"]
    snap = pristine(host)
    for key in MPI:
        if snap["sysctl"][key] != MPI[key]:
            assert str(originals["sysctl:" + key]["value"]) == snap["sysctl"][key]
    assert originals["nic:data0:mtu"]["value"] == 1500
    assert originals["nic:data0:ring.rx"]["value"] == 256
    assert originals["nic:data0:ring.tx"]["value"] == 128
    assert originals["file:" + LINK_FILE]["value"] is None
