# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The node health check (issue 27): the pure judges as tables, then the whole check read through the
shared readers on the SIMULATED node of fake_qos.py (soft-RoCE on data0), run twice so the counters
are judged against the previous run."""
from __future__ import annotations

import os

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.health import _check as _health
from ansible_collections.hpcnet.rdma.plugins.module_utils.health import _judges
from ansible_collections.hpcnet.rdma.plugins.module_utils.health import _manifest
from ansible_collections.hpcnet.rdma.plugins.modules import sysctl_tuning

from ....conftest import FakeModule, FakeNic
from ....fake_qos import FakeRdma, QosNode


def codes(found):
    return [(f["code"], f["severity"]) for f in found]


# ---------------------------------------------------------------------- judges
FABRIC_OK = {
    "devices": {"rxe0": {"driver": "rdma_rxe", "fw_ver": None, "ports": {1: {
        "state": "ACTIVE", "phys_state": "LINK_UP", "active_mtu": 1024, "link_layer": "Ethernet", "netdevs": ["data0"],
        "gids": [{"index": 0, "type": "RoCE v2"}, {"index": 1, "type": "RoCE v2"}, {"index": 2, "type": "IB/RoCE v1"}]}}}},
    "netdevs": {"data0": {"mtu": 1500, "operstate": "up", "driver": None, "counters": {}}},
}


def fabric(**changes):
    import copy
    f = copy.deepcopy(FABRIC_OK)
    port = f["devices"]["rxe0"]["ports"][1]
    for k, v in changes.items():
        if k in ("mtu", "operstate"):
            f["netdevs"]["data0"][k] = v
        else:
            port[k] = v
    return f


def nccl(index):
    return [{"key": "NCCL_IB_GID_INDEX", "file": "/etc/nccl.conf", "index": index}]


@pytest.mark.parametrize("fab, gid, expected", [
    (fabric(), None, []),
    (fabric(), nccl(1), []),
    (fabric(operstate="down"), None, [("link.down", "drain")]),
    (fabric(operstate="unknown"), None, []),                       # a veth without carrier info is not down
    (fabric(state="DOWN", phys_state="DISABLED"), None, [("port.down", "drain")]),
    (fabric(mtu=512), None, [("port.mtu", "drain")]),
    (fabric(active_mtu=None), None, []),                           # no ibv_devinfo: nothing to compare
    (fabric(), nccl(2), [("gid.version", "drain")]),               # RoCE v1 entry
    (fabric(), nccl(7), [("gid.missing", "drain")]),               # absent
])
def test_judge_links(fab, gid, expected):
    assert codes(_judges.judge_links(fab, ["data0"], gid)) == expected


S0 = {"time": 100.0, "netdevs": {"data0": {"carrier_changes": 2, "counters": {"rx_errors": 0, "rx_dropped": 5}}},
      "ports": {"rxe0/1": {"link_downed": 0, "symbol_error": 0}}}


def later(**kw):
    import copy
    s = copy.deepcopy(S0)
    s["time"] = 160.0
    for k, v in kw.items():
        if k == "carrier":
            s["netdevs"]["data0"]["carrier_changes"] = v
        elif k in ("rx_errors", "rx_dropped"):
            s["netdevs"]["data0"]["counters"][k] = v
        else:
            s["ports"]["rxe0/1"][k] = v
    return s


@pytest.mark.parametrize("now, before, flap_max, expected", [
    (S0, None, 0, [("counters.baseline", "info")]),
    (later(), S0, 0, []),
    (later(carrier=4), S0, 0, [("link.flap", "drain")]),
    (later(carrier=4), S0, 2, []),                                  # within the allowed flaps
    (later(carrier=0), S0, 0, []),                                  # went down = reset (reboot, driver reload)
    (later(rx_errors=3), S0, 0, [("counters.errors", "warn")]),
    (later(rx_dropped=4), S0, 0, []),
    (later(link_downed=1), S0, 0, [("link.flap", "drain")]),
    (later(symbol_error=9), S0, 0, [("counters.errors", "warn")]),
])
def test_judge_counters(now, before, flap_max, expected):
    found = _judges.judge_counters(now, before, flap_max)
    assert codes(found) == expected
    if expected and expected[0][0] == "link.flap":
        assert "since the last check 60s ago" in found[0]["evidence"]


def limits(kib, value):
    return {"group": "rdma", "soft": {"kib": kib, "value": value, "source": "/etc/security/limits.d/rdma.conf:1", "domain": "@rdma"},
            "hard": {"kib": kib, "value": value, "source": "/etc/security/limits.d/rdma.conf:1", "domain": "@rdma"}}


@pytest.mark.parametrize("memlock, required, expected", [
    (limits(-1, "unlimited"), -1, []),
    (limits(65536, "65536"), -1, [("memlock.low", "drain")]),
    (limits(65536, "65536"), 65536, []),
    (limits(1024, "1024"), 65536, [("memlock.low", "drain")]),
    (limits(-1, "unlimited"), 65536, []),
    ({"group": "rdma", "soft": None, "hard": None}, -1, [("memlock.low", "drain")]),
    ({"group": "rdma", "soft": None, "hard": None}, None, []),     # not checked
])
def test_judge_memlock(memlock, required, expected):
    assert codes(_judges.judge_memlock(memlock, required)) == expected


@pytest.mark.parametrize("values, fleet, expected", [
    ({"net.ipv4.neigh.default.gc_thresh2": "512", "net.ipv4.neigh.default.gc_thresh3": "1024"}, 0, []),
    ({"net.ipv4.neigh.default.gc_thresh2": "512", "net.ipv4.neigh.default.gc_thresh3": "1024"}, 256, []),
    ({"net.ipv4.neigh.default.gc_thresh2": "512", "net.ipv4.neigh.default.gc_thresh3": "1024"}, 513, [("neigh.gc_thresh", "warn")] * 2),
    ({"net.ipv4.neigh.default.gc_thresh2": "4096", "net.ipv4.neigh.default.gc_thresh3": "1024"}, 600, [("neigh.gc_thresh", "warn")]),
    ({"net.ipv4.neigh.default.gc_thresh2": None, "net.ipv4.neigh.default.gc_thresh3": None}, 600, []),
])
def test_judge_neigh(values, fleet, expected):
    assert codes(_judges.judge_neigh(values, fleet)) == expected


def link(cs, ms, cw, mw):
    return {"current_link_speed": cs, "max_link_speed": ms, "current_link_width": cw, "max_link_width": mw, "path": "p"}


@pytest.mark.parametrize("pcie, expected", [
    ({"mlx5_0": link("16.0 GT/s PCIe", "16.0 GT/s PCIe", "16", "16")}, []),
    ({"mlx5_0": link("8.0 GT/s PCIe", "16.0 GT/s PCIe", "16", "16")}, [("pcie.speed", "warn")]),
    ({"mlx5_0": link("16.0 GT/s PCIe", "16.0 GT/s PCIe", "8", "16")}, [("pcie.width", "drain")]),
    ({"mlx5_0": link("2.5 GT/s PCIe", "16.0 GT/s PCIe", "4", "16")}, [("pcie.width", "drain"), ("pcie.speed", "warn")]),
    ({"mlx5_0": link("Unknown", "16.0 GT/s PCIe", "0", "16")}, []),   # link down: no training state to judge
    ({}, []),
])
def test_judge_pcie(pcie, expected):
    assert codes(_judges.judge_pcie(pcie)) == expected


@pytest.mark.parametrize("gpus, rdma, modules, expected", [
    (0, 1, [], []), (8, 0, [], []), (8, 2, ["nvidia_peermem"], []), (8, 2, ["ib_core"], [("gpu.peermem", "drain")]),
])
def test_judge_gpu(gpus, rdma, modules, expected):
    assert codes(_judges.judge_gpu(gpus, rdma, modules)) == expected


@pytest.mark.parametrize("drift, expected", [
    (None, []),
    ({"drift": [], "interrupted": []}, []),
    ({"failed": True, "msg": "untrusted"}, [("drift.unreadable", "warn")]),
    ({"drift": [{"key": "sysctl:net.ipv4.tcp_sack", "applied": "0", "current": "1"}], "interrupted": []},
     [("drift.key", "drain")]),
    ({"drift": [{"key": "nic:data0:mtu", "applied": 9000, "error": "no such device"}],
      "interrupted": [{"id": 3, "module": "nic_tuning", "time": "t"}]}, [("drift.key", "drain"), ("drift.interrupted", "warn")]),
])
def test_judge_drift(drift, expected):
    assert codes(_judges.judge_drift(drift)) == expected


# ---------------------------------------------------------------------- manifest
ATTRS = {"n1": {"mtu": 9000, "driver": "mlx5_core", "kernel": "6.1.0-28-amd64", "firmware": "28.39.1002"},
         "n2": {"mtu": 9000, "driver": "mlx5_core", "kernel": "6.1.0-28-amd64", "firmware": "28.39.1002"},
         "n3": {"mtu": 1500, "driver": "mlx5_core", "kernel": "6.1.0-27-amd64", "firmware": "28.39.1002"}}


def test_manifest_is_the_majority_with_the_odd_hosts_named():
    m = _manifest.learn(ATTRS, ["n1", "n2", "n3"])
    assert m["items"]["mtu"] == {"value": 9000, "hosts": 2, "of": 3, "tie": False, "odd": {"n3": 1500}}
    assert m["items"]["driver"]["odd"] == {}
    assert "rdma_core" not in m["items"]                     # no host has it: not in the manifest
    assert m["hosts"] == ["n1", "n2", "n3"]


def test_a_tie_goes_to_the_first_host_and_says_so():
    m = _manifest.learn({"a": {"mtu": 1500}, "b": {"mtu": 9000}}, ["b", "a"])
    assert m["items"]["mtu"]["value"] == 9000 and m["items"]["mtu"]["tie"] is True


@pytest.mark.parametrize("host, expected", [("n1", []), ("n3", ["kernel", "mtu"])])
def test_the_odd_node_is_a_drain_finding_with_the_majority_as_evidence(host, expected):
    m = _manifest.learn(ATTRS, ["n1", "n2", "n3"])
    found = _judges.judge_manifest(ATTRS[host], m)
    assert [f["item"] for f in found] == expected
    assert all(f["severity"] == "drain" and f["code"] == "manifest.differs" for f in found)
    if found:
        assert found[1]["majority"] == 9000 and "the fleet's majority (2 of 3 hosts) has 9000" in found[1]["evidence"]


def test_no_manifest_is_information_only():
    assert codes(_judges.judge_manifest({}, None)) == [("manifest.missing", "info")]


# ---------------------------------------------------------------------- verdict
@pytest.mark.parametrize("found, rc, line", [
    ([], 0, None),
    ([_judges.finding("counters.baseline", "first")], 0, None),
    ([_judges.finding("port.mtu", "rxe0 port 1 active MTU 1024 is above data0's MTU 512")], 1,
     "ERROR: hpcnet-rdma: port.mtu rxe0 port 1 active MTU 1024 is above data0's MTU 512"),
    ([_judges.finding("link.down", "data0 operstate is down"), _judges.finding("memlock.low", "x")], 1,
     "ERROR: hpcnet-rdma: link.down data0 operstate is down (+1 more)"),
])
def test_verdict_follows_nhc(found, rc, line):
    v = _judges.verdict(found)
    assert (v["rc"], v["line"]) == (rc, line)
    if line:
        assert v["reason"] == line[len("ERROR: "):].replace("hpcnet-rdma: ", "hpcnet-rdma:", 1)


def test_every_code_has_a_known_severity_and_a_fix_or_says_why_not():
    for code, (severity, meaning, fix) in _judges.CODES.items():
        assert severity in _judges.SEVERITIES and meaning
        assert fix or code in ("counters.baseline", "manifest.differs", "read.failed"), code


# ---------------------------------------------------------------------- the whole check on a simulated node
def lab(tmp_path):
    n = QosNode(str(tmp_path / "root"))
    os.makedirs(n.root)
    n.add_nic(FakeNic("data0", "virtio_net", mtu=1500, mac="52:54:00:00:00:09"))
    n.add_rdma(FakeRdma("rxe0", "data0", active_mtu=1024))
    n.write("/sys/class/net/data0/operstate", "up\n")
    n.write("/sys/class/net/data0/carrier_changes", "2\n")
    n.write("/sys/class/net/data0/statistics/rx_errors", "0\n")
    n.write("/sys/class/infiniband/rxe0/ports/1/counters/link_downed", "0\n")
    n.write("/sys/class/infiniband/rxe0/ports/1/counters/port_rcv_packets", "5\n")   # not trouble: not kept
    n.write("/sys/module/ib_core/parameters/netns_mode", "Y\n")
    n.write("/etc/security/limits.d/rdma.conf", "@rdma - memlock unlimited\n")
    n.sysctl("net.ipv4.neigh.default.gc_thresh2", "512")
    n.sysctl("net.ipv4.neigh.default.gc_thresh3", "1024")
    n.sysctl("kernel.osrelease", "6.1.0-28-amd64")
    n.sysctl("net.ipv4.tcp_sack", "1")
    return n


OPTS = {"journal_dir": "/var/lib/hpcnet-rdma", "fleet_size": 64, "tools": ["ibv_devinfo"]}


def check(n, before=None, manifest=None, **opts):
    o = dict(OPTS)
    o.update(opts)
    return _health.run(n.host(), o, manifest, before)


def test_a_clean_node_passes_and_keeps_its_counters(tmp_path):
    n = lab(tmp_path)
    first = check(n)
    assert codes(first["findings"]) == [("counters.baseline", "info"), ("manifest.missing", "info")]
    assert first["verdict"]["rc"] == 0
    assert first["facts"]["data_interfaces"] == ["data0"]
    assert first["state"]["netdevs"]["data0"] == {"carrier_changes": 2, "counters": {"rx_errors": 0}}
    assert first["state"]["ports"] == {"rxe0/1": {"link_downed": 0}}
    assert set(first["facts"]["stages"]) == {"fabric", "drift", "limits", "hardware"}
    second = check(n, before=first["state"])
    assert codes(second["findings"]) == [("manifest.missing", "info")]


def test_faults_on_the_node_are_the_expected_codes(tmp_path):
    n = lab(tmp_path)
    base = check(n)["state"]
    n.write("/sys/class/net/data0/mtu", "512\n")                       # below the RDMA active MTU
    n.write("/sys/class/net/data0/carrier_changes", "4\n")             # one flap
    n.write("/etc/security/limits.d/rdma.conf", "@rdma - memlock 65536\n")
    n.sysctl("net.ipv4.neigh.default.gc_thresh3", "100")
    n.write("/etc/nccl.conf", "NCCL_IB_GID_INDEX=3\n")
    n.write("/sys/class/infiniband/rxe0/device/max_link_width", "16\n")
    n.write("/sys/class/infiniband/rxe0/device/current_link_width", "8\n")
    out = check(n, before=base)
    assert sorted(codes(out["findings"])) == sorted(
        [("gid.missing", "drain"), ("link.flap", "drain"), ("memlock.low", "drain"), ("pcie.width", "drain"),
         ("port.mtu", "drain"), ("neigh.gc_thresh", "warn"), ("manifest.missing", "info")])
    severities = [f["severity"] for f in out["findings"]]
    assert severities == sorted(severities, key=_judges.SEVERITIES.index)
    assert out["verdict"]["rc"] == 1 and out["verdict"]["line"].startswith("ERROR: hpcnet-rdma: gid.missing ")


def test_drift_from_the_journal_is_read_by_tuning_states_code(tmp_path):
    n = lab(tmp_path)
    sysctl_tuning.run(FakeModule(sysctl_tuning.ARGUMENT_SPEC, {"sysctls": {"net.ipv4.tcp_sack": "0"}, "context": "host"}),
                      n.host())
    assert codes(check(n)["findings"])[:1] == [("counters.baseline", "info")]
    n.sysctl("net.ipv4.tcp_sack", "1")                                  # behind the journal's back
    found = check(n)["findings"]
    assert codes(found)[0] == ("drift.key", "drain")
    assert found[0]["key"] == "sysctl:net.ipv4.tcp_sack" and "is 1, the collection set 0" in found[0]["evidence"]


def test_the_manifest_is_judged_on_the_attributes_the_controller_learns_from(tmp_path):
    n = lab(tmp_path)
    facts = check(n)["facts"]
    mine = _manifest.attributes(facts)
    assert mine["mtu"] == 1500 and mine["rdma_devices"] == ["rxe0"] and mine["kernel"] == "6.1.0-28-amd64"
    fleet = _manifest.learn({"a": dict(mine, mtu=9000), "b": dict(mine, mtu=9000), "me": mine}, ["a", "b", "me"])
    found = check(n, manifest=fleet)["findings"]
    assert [(f["code"], f.get("item")) for f in found if f["severity"] == "drain"] == [("manifest.differs", "mtu")]


def test_the_budget_skips_what_it_cannot_read_and_says_so(tmp_path, monkeypatch):
    """The fabric stage takes 2.5 s of a 2 s budget: limits and hardware (after it) are not read; drift, which
    runs beside it from the start, is."""
    n = lab(tmp_path)
    now = [0.0]
    gather = _health._fabric.gather

    def slow_gather(*args, **kwargs):
        out = gather(*args, **kwargs)
        now[0] = 2.5
        return out
    monkeypatch.setattr(_health._fabric, "gather", slow_gather)
    out = _health.run(n.host(), dict(OPTS, budget=2.0), None, None, clock=lambda: now[0])
    assert out["facts"]["skipped"] == ["limits", "hardware"]
    assert "drift" in out["facts"] and "fabric" in out["facts"]["stages"]
    budget = [f for f in out["findings"] if f["code"] == "budget.exceeded"]
    assert budget and budget[0]["severity"] == "warn" and "not read: limits, hardware" in budget[0]["evidence"]
    assert out["verdict"]["rc"] == 0                                  # an overrun is named, never a drain


def test_a_budget_spent_before_the_start_reads_nothing(tmp_path):
    n = lab(tmp_path)
    out = _health.run(n.host(), dict(OPTS, budget=2.0), None, None, clock=iter([0.0] + [2.0] * 10).__next__)
    assert out["facts"]["skipped"] == ["fabric", "drift", "limits", "hardware"]
    assert not out["facts"]["stages"] and "fabric" not in out["facts"]


def test_the_drift_stage_runs_beside_the_fabric_stage_and_a_cut_in_it_drops_only_its_own_facts(tmp_path, monkeypatch):
    """drift runs in a thread while fabric reads: fabric's tool run waits until drift's has started (it would
    wait forever, caught by the timeout, if they ran one after the other); the budget cutting drift's tool run
    off names drift as not read and keeps what the other stages read."""
    import threading
    n = lab(tmp_path)
    started = threading.Event()

    def spent_drift(*args):
        started.set()
        raise _health.BudgetSpent("dpkg-query not run: the time budget is spent")
    gather = _health._fabric.gather

    def waiting_gather(*args, **kwargs):
        assert started.wait(10), "the drift stage did not run beside the fabric stage"
        return gather(*args, **kwargs)
    monkeypatch.setattr(_health._status, "read", spent_drift)
    monkeypatch.setattr(_health._fabric, "gather", waiting_gather)
    out = _health.run(n.host(), OPTS, None, None)
    assert out["facts"]["skipped"] == ["drift"] and "drift" not in out["facts"]
    assert set(out["facts"]["stages"]) == {"fabric", "limits", "hardware"} and out["facts"]["data_interfaces"]


def test_a_bug_in_the_drift_thread_is_raised_not_lost(tmp_path, monkeypatch):
    n = lab(tmp_path)

    def broken(*args):
        raise KeyError("bug")
    monkeypatch.setattr(_health._status, "read", broken)
    with pytest.raises(KeyError):
        _health.run(n.host(), OPTS, None, None)


def test_a_missing_data_interface_is_a_read_failure_not_a_crash(tmp_path):
    n = lab(tmp_path)
    out = check(n, interfaces=["data9"])
    assert ("read.failed", "warn") in codes(out["findings"])


def test_verify_consistency_and_the_manifest_read_a_node_with_the_same_function(tmp_path):
    """Issue 27, item 4: plugin_utils/_findings_fleet's consistency items mtu, driver, kernel, rdma_core and
    firmware are _manifest.value_of / firmware_of - the node check, the manifest and verify agree by construction."""
    from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _findings_fleet
    facts = check(lab(tmp_path))["facts"]
    facts["fabric"]["devices"]["rxe0"]["fw_ver"] = "1.2.3"
    mine = _manifest.attributes(facts)
    for item in ("mtu", "driver", "kernel", "rdma_core", "firmware"):
        assert _findings_fleet._extract(item, {"info": facts})[0] == mine[item], item
    assert _findings_fleet._extract("mtu", {"info": facts}) == (1500, "/sys/class/net/data0/mtu")
    assert _manifest.one_value([9000, None, 1500, 9000]) == [1500, 9000] and _manifest.one_value([None]) is None


class _SpentAt(object):
    """A node whose reads of ``marker`` raise BudgetSpent, as the check's runner does once the budget is spent."""

    def __init__(self, host, marker):
        self._host, self._marker = host, marker

    def __getattr__(self, name):
        attr = getattr(self._host, name)
        if name not in ("read", "run"):
            return attr

        def cut(arg, *args, **kw):
            if self._marker in (arg if isinstance(arg, str) else " ".join(arg)):
                raise _health.BudgetSpent("%s not run: the time budget is spent" % self._marker)
            return attr(arg, *args, **kw)
        return cut


def test_a_value_the_budget_cut_off_is_not_read_never_a_drift_drain(tmp_path):
    # seen on a lab VM: the budget cut off ethtool and dpkg-query in the drift stage, and each key they would have
    # read became a drift.key drain ("cannot be read back", "absent, the collection set installed")
    n = lab(tmp_path)
    sysctl_tuning.run(FakeModule(sysctl_tuning.ARGUMENT_SPEC, {"sysctls": {"net.ipv4.tcp_sack": "0"}, "context": "host"}),
                      n.host())
    out = _health.run(_SpentAt(n.host(), "tcp_sack"), dict(OPTS), None, None)
    assert "drift" in out["facts"]["skipped"] and "drift" not in out["facts"] and "drift" not in out["facts"]["stages"]
    assert [f["code"] for f in out["findings"] if f["severity"] == "drain"] == []
    budget = [f for f in out["findings"] if f["code"] == "budget.exceeded"]
    assert budget and "not read: drift" in budget[0]["evidence"] and out["verdict"]["rc"] == 0


def test_a_stage_cut_off_half_way_leaves_nothing_half_read(tmp_path):
    n = lab(tmp_path)
    out = _health.run(_SpentAt(n.host(), "ibv_devinfo"), dict(OPTS), None, None)
    assert out["facts"]["skipped"] == ["fabric"]
    assert not set(out["facts"]) & {"fabric", "data_interfaces", "carrier", "port_counters", "gids"}
    assert out["state"] is None                                        # no counters kept from a half-read node
    assert [f["code"] for f in out["findings"] if f["severity"] == "drain"] == [] and out["verdict"]["rc"] == 0


def test_the_check_reads_the_fabric_without_the_irqs_it_does_not_judge(tmp_path, monkeypatch):
    """fabric_info's netdevs carry their queue interrupts per CPU; the check judges none of them and reads the
    fabric without (/proc/interrupts unread, each netdev's irqs None) - every other fact the same."""
    from ansible_collections.hpcnet.rdma.plugins.module_utils.facts import _fabric
    n = lab(tmp_path)
    n.write("/proc/interrupts", "           CPU0       CPU1\n 25:         10         20   PCI-MSI 512000-edge      virtio0-input.0\n")
    host = n.host()
    reads = []
    real = host.read
    monkeypatch.setattr(host, "read", lambda path: reads.append(path) or real(path))
    full = _fabric.gather(host, ["data0"], ["ibv_devinfo"], False)
    assert "/proc/interrupts" in reads
    del reads[:]
    facts = _health.run(host, dict(OPTS), None, None)["facts"]
    assert "/proc/interrupts" not in reads and facts["fabric"]["netdevs"]["data0"]["irqs"] is None
    for fab in (full, facts["fabric"]):
        fab["netdevs"]["data0"].pop("irqs")
    assert (facts["fabric"]["netdevs"], facts["fabric"]["devices"]) == (full["netdevs"], full["devices"])


@pytest.mark.parametrize("tools, run", [
    (["ibv_devinfo", "rdma"], ["ibv_devinfo"]), (["rdma", "ibstat", "nvidia-smi"], []), ([], []),
])
def test_the_fabric_stage_runs_only_the_tools_whose_facts_it_judges(tmp_path, monkeypatch, tools, run):
    """ibv_devinfo gives the active MTU and the GID indexes (sysfs has neither); rdma, ibstat and nvidia-smi give
    facts the check does not judge, and are not run for the fabric (of the configured tools, only)."""
    asked = []
    gather = _health._fabric.gather

    def recording(host, interfaces, wanted, *args, **kwargs):
        asked.append(list(wanted))
        return gather(host, interfaces, wanted, *args, **kwargs)
    monkeypatch.setattr(_health._fabric, "gather", recording)
    check(lab(tmp_path), tools=tools)
    assert asked == [run]


def test_the_budget_ends_the_drift_stage_at_any_checkpoint_between_its_domains_and_directories(tmp_path):
    """File reads never ask the runner, so the check's budget ends the drift stage at Host.checkpoint: before
    each of the journal's domains and each directory of its files.  Cut at every one of them in turn, the stage
    is named as not read and nothing it half read is judged."""
    n = lab(tmp_path)
    params = {"sysctls": {"net.ipv4.tcp_sack": "0"}, "context": "host", "mode": "both"}
    sysctl_tuning.run(FakeModule(sysctl_tuning.ARGUMENT_SPEC, params), n.host())
    n.sysctl("net.ipv4.tcp_sack", "1")                                  # a drift any completed read would drain on
    host = n.host()
    seen = []
    host.on_checkpoint = lambda: seen.append(len(seen))
    whole = _health.run(host, dict(OPTS), None, None)
    assert ("drift.key", "drain") in codes(whole["findings"])
    assert len(seen) == 4                     # before the domains dir, file and sysctl, and the directory /etc/sysctl.d
    for cut in range(len(seen)):
        host = n.host()
        host.on_checkpoint = _spent_after(cut)
        out = _health.run(host, dict(OPTS), None, None)
        assert out["facts"]["skipped"] == ["drift"] and "drift" not in out["facts"], cut
        assert [f["code"] for f in out["findings"] if f["severity"] == "drain"] == [], cut
        assert "not read: drift" in [f for f in out["findings"] if f["code"] == "budget.exceeded"][0]["evidence"]


def _spent_after(calls):
    """A checkpoint that lets ``calls`` checkpoints pass, then says the budget is spent."""
    passed = []

    def checkpoint():
        if len(passed) >= calls:
            raise _health.BudgetSpent("the rest of the read not done: the time budget is spent")
        passed.append(1)
    return checkpoint
