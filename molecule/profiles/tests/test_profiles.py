"""molecule `verify` of the profiles scenario: the user profile site_mpi (extends mpi) as applied."""
import json

import pytest

# site_mpi = mpi, minus net.ipv4.tcp_timestamps (null), tcp_mtu_probing overridden, one key added.
TUNED = {
    "net/ipv4/tcp_rmem": "4096 87380 268435456",          # inherited from mpi
    "net/ipv4/tcp_wmem": "4096 65536 268435456",          # inherited from mpi
    "net/ipv4/tcp_sack": "1",                             # inherited from mpi
    "net/ipv4/tcp_mtu_probing": "0",                      # overridden
    "net/ipv4/tcp_slow_start_after_idle": "0",            # added
}
PERSIST = "/etc/sysctl.d/90-hpcnet-rdma.conf"


def kernel(host, path):
    return " ".join(host.file("/proc/sys/" + path).content_string.split())


def pristine(host):
    return json.loads(host.file("/root/hpcnet-snapshot-pristine.json").content_string)


def journal(host):
    return json.loads(host.file("/var/lib/hpcnet-rdma/journal.json").content_string)


@pytest.mark.parametrize("path, value", sorted(TUNED.items()))
def test_the_resolved_profile_is_what_the_kernel_holds(host, path, value):
    assert kernel(host, path) == value


def test_a_null_in_the_user_profile_drops_the_inherited_key(host):
    assert kernel(host, "net/ipv4/tcp_timestamps") == \
        " ".join(pristine(host)["sysctl"]["net.ipv4.tcp_timestamps"].split())
    assert "net.ipv4.tcp_timestamps" not in host.file(PERSIST).content_string
    assert "net.ipv4.tcp_slow_start_after_idle = 0" in host.file(PERSIST).content_string


def test_the_applied_profile_is_recorded_on_the_node(host):
    record = json.loads(host.file("/etc/hpcnet-rdma/profile.json").content_string)
    assert record["name"] == "site_mpi"
    assert record["chain"] == ["site_mpi", "mpi"]
    assert record["digest"].startswith("sha256:") and len(record["digest"]) == len("sha256:") + 64
    assert record["sysctls"]["net.ipv4.tcp_mtu_probing"] == 0
    assert "net.ipv4.tcp_timestamps" not in record["sysctls"]


def test_one_run_one_id_and_a_release_scope_per_concern(host):
    gens = journal(host)["generations"]
    assert len({g["run"] for g in gens}) == 1
    scopes = {g["scope"] for g in gens}
    assert {"tuning.sysctl", "tuning.nic", "tuning.record"} <= scopes
    assert all(s.startswith("tuning.") for s in scopes)


def test_the_data_link_took_the_profile_mtu(host):
    assert host.file("/sys/class/net/data0/mtu").content_string.strip() == "9000"
