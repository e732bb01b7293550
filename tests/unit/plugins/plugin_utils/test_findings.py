# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every verify finding rule on the recorded fabric_info outputs (mlx5, ice, virtio, rxe) and on
synthetic mixes; the majority logic, the ring of probes, the gate and the option checks."""
from __future__ import annotations

import copy
import json
import os
from typing import Any, Dict, List

import pytest

from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _findings as F
from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _findings_catalogue as C
from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _findings_path as P

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "fabric_info")
DATA_IF = {"mlx5_core": "ens1f0np0", "ice": "ens2f0", "virtio_net": "data0", "rxe": "data0"}
PROFILE = {"name": "mpi", "digest": "sha256:aa", "nic": {"mtu": 9000}, "irq": {"policy": "spread-local"},
           "qos": {"pfc": [3], "trust": "dscp", "tos": 106}}


def fabric(kind: str) -> Dict[str, Any]:
    with open(os.path.join(FIXTURES, kind + ".json"), encoding="utf-8") as f:
        return json.load(f)


def app_files(device: Any, tc: str = "106", gid: str = "3", nccl_hca: Any = None, ucx_devices: Any = None) -> Dict[str, Any]:
    """verify_info's apps as fabric_app_config writes them (NCCL and UCX told the ToS, a RoCE v2 GID, the HCA)."""
    from ansible_collections.hpcnet.rdma.plugins.module_utils.facts import _findings as _facts
    out = {}
    for app, option, keys in _facts.APP_KEYS:
        hca = nccl_hca if app == "nccl" else ucx_devices
        if hca is None:
            hca = device if app == "nccl" else "%s:1" % device
        text = "".join("%s=%s\n" % (key, value) for key, value in zip((k for _f, k in keys), (tc, gid, hca)) if value)
        out[app] = _facts.app_settings(text if device else None, "/etc/%s.conf" % app, keys)
    return out


def node(kind: str = "rxe", address: str = "10.77.0.1", **over: Any) -> Dict[str, Any]:
    """A host's verify data around a recorded fabric_info output: a clean, tuned node."""
    fab = fabric(kind)
    ifname = DATA_IF[kind]
    info = {
        "fabric": fab, "data_interfaces": [ifname], "missing_interfaces": [], "addresses": {ifname: [address]},
        "delta": {"interval": 2.0, "netdevs": {ifname: {"counters": {}, "ethtool_counters": {}, "irqs_per_cpu": []}},
                  "softnet": {"dropped": 0, "time_squeeze": 0}, "tcp": {"out_segs": 100, "retrans_segs": 0}},
        "kernel": "6.1.0-57-amd64", "rdma_core": {"version": "44.0-2", "source": "/var/lib/dpkg/status"},
        "irqs": {ifname: {"numa_node": -1, "local_cpus": "0-1", "online_cpus": "0-1",
                          "irqs": [{"irq": 38, "name": "virtio2-input.0", "affinity": "0", "effective": "0"},
                                   {"irq": 39, "name": "virtio2-output.0", "affinity": "1", "effective": "1"}]}},
        "irqbalance": {"installed": True, "service": {"active": True, "enabled": "enabled"}, "policyscript": True},
        "coalesce": {ifname: None},
        "memlock": {"group": "rdma", "soft": {"domain": "@rdma", "kib": -1, "value": "unlimited", "source": "x:1"},
                    "hard": {"domain": "@rdma", "kib": -1, "value": "unlimited", "source": "x:1"}},
        "devnodes": {"uverbs0": {"gid": 106, "group": "rdma", "mode": "0660"}},
        "apps": app_files(sorted(fab["devices"])[0] if fab["devices"] else None),
        "profile": copy.deepcopy(PROFILE),
    }
    qos = {"interfaces": {ifname: {"driver": fab["netdevs"][ifname]["driver"], "dcb": False}},
           "rdma_ports": [{"device": d, "port": 1, "netdev": ifname, "tos": 106, "mode": "RoCE v2"}
                          for d in fab["devices"]]}
    if kind in ("mlx5_core", "ice"):
        qos["interfaces"][ifname].update(dcb=True, trust="dscp", pfc=[3])
    out = {"info": info, "state": {"drift": [], "profile": {"name": "mpi"}, "interrupted": []}, "qos": qos,
           "ping": {"rc": 0, "stdout": "2 packets transmitted, 2 received, 0% packet loss", "stderr": ""},
           "interfaces": []}
    for path, value in over.items():
        target = out
        keys = path.split("__")
        for k in keys[:-1]:
            target = target[k]
        target[keys[-1]] = value
    return out


def ids(found: List[Dict[str, Any]]) -> List[str]:
    return sorted(f["id"] for f in found)


def pair(a: Dict[str, Any], b: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    return {"h1": a, "h2": b}


ALL = list(C.FAMILIES)


# ---------------------------------------------------------------------- every recorded NIC, clean
@pytest.mark.parametrize("kind,expected", [
    ("rxe", []),
    ("virtio_net", ["rdma.no_device", "rdma.no_device"]),   # no RDMA device on either: info only
    ("mlx5_core", []),
    ("ice", []),
])
def test_a_clean_pair_of_each_recorded_nic(kind, expected):
    nodes = pair(node(kind, "10.0.0.1"), node(kind, "10.0.0.2"))
    assert ids(F.evaluate(nodes, ["h1", "h2"], ALL)) == expected


# ---------------------------------------------------------------------- checklist rules, one per row
def _ice_irqs_off_numa(n):
    n["info"]["irqs"] = {"ens2f0": {"numa_node": 1, "local_cpus": "16-31", "online_cpus": "0-31",
                                    "irqs": [{"irq": 90, "name": "ice-ens2f0-TxRx-0", "affinity": "0", "effective": "0"},
                                             {"irq": 91, "name": "ice-ens2f0-TxRx-1", "affinity": "1", "effective": "1"}]}}


def _concentrated(n):
    for i in n["info"]["irqs"]["data0"]["irqs"]:
        i["affinity"] = i["effective"] = "0"


def _concentrated_move_pending(n):
    # both masks written to CPU 0; the idle queue's effective CPU moves only at its next interrupt
    # (x86 MSI), so effective_affinity_list still says 1 - the mask is where it will run
    irqs = n["info"]["irqs"]["data0"]["irqs"]
    for i in irqs:
        i["affinity"] = "0"
    irqs[0]["effective"], irqs[1]["effective"] = "1", "0"


def _default_mask_one_cpu(n):
    # no pinning (mask = every CPU) but the kernel serves every queue on CPU 0: concentrated too
    for i in n["info"]["irqs"]["data0"]["irqs"]:
        i["affinity"], i["effective"] = "0-1", "0"


def _port_down(n):
    n["info"]["fabric"]["devices"]["rxe0"]["ports"]["1"]["state"] = "DOWN"


def _no_v2(n):
    p = n["info"]["fabric"]["devices"]["rxe0"]["ports"]["1"]
    p["gids"] = [g for g in p["gids"] if g["type"] != "RoCE v2"]


def _rdma_mtu_above(n):
    n["info"]["fabric"]["netdevs"]["data0"]["mtu"] = 1500


def _softnet(n):
    n["info"]["delta"]["softnet"] = {"dropped": 12, "time_squeeze": 40}


def _errors(n):
    n["info"]["delta"]["netdevs"]["ens1f0np0"]["ethtool_counters"] = {"rx_crc_errors_phy": 3, "rx_discards_phy": 50}


def _pfc_pause(n):
    n["info"]["delta"]["netdevs"]["ens1f0np0"]["ethtool_counters"] = {"rx_prio3_pause": 10}


def _global_pause_with_pfc(n):
    n["info"]["delta"]["netdevs"]["ens1f0np0"]["ethtool_counters"] = {"rx_pause_ctrl_phy": 10}


def _pfc_pause_without_pfc(n):
    n["qos"]["interfaces"]["ens1f0np0"]["pfc"] = []
    n["info"]["delta"]["netdevs"]["ens1f0np0"]["ethtool_counters"] = {"rx_prio3_pause": 10}


def _retrans(n):
    n["info"]["delta"]["tcp"] = {"out_segs": 1000, "retrans_segs": 5}


def _coalesce(n):
    n["info"]["profile"]["nic"]["coalesce"] = {"rx_usecs": 8, "adaptive_rx": False}
    n["info"]["coalesce"]["ens1f0np0"] = {"adaptive_rx": True, "adaptive_tx": True, "rx_usecs": 8}


def _memlock(n):
    n["info"]["memlock"] = {"group": "rdma", "soft": {"domain": "*", "kib": 8192, "value": "8192", "source": "l:3"},
                            "hard": None}


def _memlock_missing(n):
    n["info"]["memlock"] = {"group": "rdma", "soft": None, "hard": None}


def _devnode(n):
    n["info"]["devnodes"]["uverbs0"]["mode"] = "0666"


def _missing(n):
    n["info"]["missing_interfaces"] = ["data1"]


def _down(n):
    n["info"]["fabric"]["netdevs"]["data0"]["operstate"] = "down"


def _apps(**kw):
    def change(n):
        n["info"]["apps"] = app_files("rxe0", **kw)
    return change


def _irqbalance(n):
    n["info"]["irqbalance"]["policyscript"] = False


def _single_policy(n):
    _concentrated(n)
    n["info"]["profile"]["irq"]["policy"] = "single"


@pytest.mark.parametrize("kind,change,expected", [
    ("rxe", _port_down, ["port.not_active"]),
    ("rxe", _no_v2, ["app.gid", "app.gid", "roce.no_v2_gid"]),   # and the apps' GID is gone with it
    ("rxe", _rdma_mtu_above, ["consistency.mtu", "path_mtu.failed", "rdma.mtu_above_netdev"]),
    ("rxe", _concentrated, ["irq.concentrated"]),
    ("rxe", _concentrated_move_pending, ["irq.concentrated"]),
    ("rxe", _default_mask_one_cpu, ["irq.concentrated"]),
    ("rxe", _single_policy, []),                       # one CPU is what the profile asks for
    ("ice", _ice_irqs_off_numa, ["irq.off_numa"]),
    ("rxe", _softnet, ["softnet.drops", "softnet.squeeze"]),
    ("mlx5_core", _errors, ["netdev.drops", "netdev.errors"]),
    ("mlx5_core", _pfc_pause, ["netdev.pause"]),
    ("mlx5_core", _global_pause_with_pfc, ["flow_control.mismatch", "netdev.pause"]),
    ("mlx5_core", _pfc_pause_without_pfc, ["consistency.pfc", "flow_control.mismatch", "netdev.pause"]),
    ("rxe", _retrans, ["tcp.retransmits"]),
    ("mlx5_core", _coalesce, ["coalesce.profile_mismatch"]),
    ("rxe", _memlock, ["memlock.too_low"]),
    ("rxe", _memlock_missing, ["memlock.too_low"]),
    ("rxe", _devnode, ["devnode.too_open"]),
    ("rxe", _missing, ["interface.missing"]),
    ("rxe", _down, ["netdev.down"]),
    ("rxe", _irqbalance, ["irqbalance.not_banned"]),
    # what NCCL and UCX are told, against the node (fabric_app_config's files, verify_info's apps)
    ("rxe", _apps(tc="96"), ["app.tc", "app.tc", "consistency.nccl_tc", "consistency.ucx_tc"]),
    ("rxe", _apps(gid="2"), ["app.gid", "app.gid"]),              # index 2 is a RoCE v1 GID
    ("rxe", _apps(gid="7"), ["app.gid", "app.gid"]),              # no GID at index 7
    ("rxe", _apps(gid="auto"), ["app.gid", "app.gid"]),
    ("rxe", _apps(ucx_devices="rxe1:1"), ["app.device"]),
    ("rxe", _apps(ucx_devices="rxe0:2,data0"), ["app.device"]),   # port 2 is not there; a netdev is fine
    ("rxe", _apps(ucx_devices="all", nccl_hca="^mlx5"), []),
    ("rxe", _apps(ucx_devices="data0", nccl_hca="rxe"), []),       # NCCL matches a prefix
    ("rxe", _apps(nccl_hca="=rxe"), ["app.device"]),              # ... not with '='
    ("rxe", _apps(nccl_hca="=rxe0:1"), []),
])
def test_checklist_rule_on_the_second_node(kind, change, expected):
    a, b = node(kind, "10.0.0.1"), node(kind, "10.0.0.2")
    change(b)
    if expected and "path_mtu.failed" in expected:
        b["ping"] = {"rc": 1, "stdout": "", "stderr": "ping: local error: message too long, mtu=1500"}
    found = F.evaluate(pair(a, b), ["h1", "h2"], ALL)
    assert ids(found) == sorted(expected)
    for f in found:
        assert "h2" in f["nodes"]
        assert f["fix"] and f["title"]
        assert f["severity"] in C.SEVERITIES


def test_counters_are_about_growth_not_boot_totals():
    """mlx5's recorded totals (rx_discards_phy=317, rx_prio3_pause=2741) are no finding when they do not grow."""
    a, b = node("mlx5_core", "10.0.0.1"), node("mlx5_core", "10.0.0.2")
    assert a["info"]["fabric"]["netdevs"]["ens1f0np0"]["ethtool_counters"]["rx_discards_phy"] == 317
    assert F.evaluate(pair(a, b), ["h1", "h2"], ["checklist"]) == []


def test_node_rules():
    nodes = {"h1": node(), "h2": {"info": {"failed": True, "msg": "python3: not found"}}}
    found = F.evaluate(nodes, ["h1", "h2"], ALL, hosts_all=["h1", "h2", "h3"])
    by = dict((f["id"], f) for f in found)
    assert by["node.unreadable"]["nodes"] == ["h2"] and "python3" in by["node.unreadable"]["title"]
    assert by["node.unreachable"]["nodes"] == ["h3"]
    assert "path_mtu.single_host" in by


# ---------------------------------------------------------------------- consistency
@pytest.mark.parametrize("item,path,odd_value,severity", [
    ("mtu", "info__fabric__netdevs__data0__mtu", 1500, "error"),
    ("kernel", "info__kernel", "6.12.0-1-amd64", "warning"),
    ("rdma_core", "info__rdma_core", {"version": "50.0-1", "source": "/var/lib/dpkg/status"}, "warning"),
    ("nccl_tc", "info__apps__nccl", {"file": "/etc/nccl.conf", "key": "NCCL_IB_TC", "present": True, "value": "41"}, "error"),
    ("ucx_tc", "info__apps__ucx", {"file": "/etc/ucx/ucx.conf", "key": "UCX_IB_TRAFFIC_CLASS", "present": True, "value": "0"}, "error"),
    ("profile", "info__profile", dict(PROFILE, name="offpeak", digest="sha256:bb"), "warning"),
])
def test_consistency_names_the_odd_node_and_the_majority(item, path, odd_value, severity):
    hosts = ["h1", "h2", "h3"]
    nodes = dict((h, node("rxe", "10.0.0.%d" % i)) for i, h in enumerate(hosts, 1))
    nodes["h2"] = node("rxe", "10.0.0.2", **{path: odd_value})
    found = [f for f in F.evaluate(nodes, hosts, ["consistency"]) if f["id"] == "consistency." + item]
    assert len(found) == 1
    f = found[0]
    assert f["nodes"] == ["h2"] and f["severity"] == severity
    assert f["majority"]["hosts"] == 2 and f["majority"]["of"] == 3 and not f["majority"]["tie"]
    assert f["evidence"][0]["node"] == "h2" and f["evidence"][0]["source"]


@pytest.mark.parametrize("item,change", [
    ("tos", lambda n: n["qos"]["rdma_ports"][0].update(tos=0)),
    ("roce_mode", lambda n: n["qos"]["rdma_ports"][0].update(mode="IB/RoCE v1")),
    ("rdma_mtu", lambda n: n["info"]["fabric"]["devices"]["rxe0"]["ports"]["1"].update(active_mtu=1024)),
    ("firmware", lambda n: n["info"]["fabric"]["devices"]["rxe0"].update(fw_ver="0.0.1")),
    ("rdma_ports", lambda n: n["info"]["fabric"].update(devices={})),
])
def test_consistency_of_rdma_and_qos_items(item, change):
    hosts = ["h1", "h2", "h3"]
    nodes = dict((h, node("rxe", "10.0.0.%d" % i)) for i, h in enumerate(hosts, 1))
    change(nodes["h3"])
    found = [f for f in F.evaluate(nodes, hosts, ["consistency"]) if f["id"] == "consistency." + item]
    assert [f["nodes"] for f in found] == [["h3"]]


def test_consistency_of_pfc_trust_and_driver_on_a_mixed_fabric():
    hosts = ["a", "b", "c"]
    nodes = {"a": node("mlx5_core"), "b": node("mlx5_core"), "c": node("ice")}
    nodes["c"]["qos"]["interfaces"]["ens2f0"].update(pfc=[4], trust="pcp")
    found = dict((f["id"], f) for f in F.evaluate(nodes, hosts, ["consistency"]))
    for item in ("pfc", "trust", "driver", "firmware"):
        assert found["consistency." + item]["nodes"] == ["c"], item
    assert found["consistency.pfc"]["majority"]["value"] == [3]
    assert "consistency.mtu" not in found


@pytest.mark.parametrize("values,expected,win,odd,tie", [
    ({"a": 9000, "b": 9000, "c": 1500}, None, 9000, ["c"], False),
    ({"a": 9000, "b": 1500}, None, 9000, ["b"], True),            # tie: the first host in play order
    ({"a": 1500, "b": 9000}, 9000, 9000, ["a"], True),            # tie: the recorded profile's value
    ({"a": 1500, "b": 9000}, 4000, 1500, ["b"], True),            # expected value held by nobody: play order
    ({"a": [1, 2], "b": [1, 2]}, None, [1, 2], [], False),
])
def test_majority(values, expected, win, odd, tie):
    from collections import OrderedDict
    assert C.majority(OrderedDict(values), expected) == (win, odd, tie)


def test_a_two_node_mtu_tie_names_the_node_the_profile_disagrees_with():
    """vm1 at 1500 and vm2 at 9000: one each, but the recorded profile asks 9000, so vm1 is odd."""
    nodes = {"vm1": node("rxe", "10.77.0.1", info__fabric__netdevs__data0__mtu=1500), "vm2": node("rxe", "10.77.0.2")}
    f = [x for x in F.evaluate(nodes, ["vm1", "vm2"], ["consistency"]) if x["id"] == "consistency.mtu"][0]
    assert f["nodes"] == ["vm1"] and f["majority"]["value"] == 9000 and f["majority"]["tie"]
    assert "broken by the recorded profile" in f["title"]


# ---------------------------------------------------------------------- drift
def test_drift_findings_by_domain_and_irqbalance():
    a, b = node(), node("rxe", "10.0.0.2")
    b["state"]["drift"] = [{"key": "irq:virtio2-output.0", "applied": "1", "current": "0-1", "since_generation": 4},
                           {"key": "sysctl:net.core.rmem_max", "applied": "268435456", "current": "212992"},
                           {"key": "rdmacm:rxe0:1:tos", "applied": 106, "current": None}]
    a["state"]["drift"] = [{"key": "sysctl:net.core.rmem_max", "applied": "268435456", "current": "4096"}]
    found = F.evaluate(pair(a, b), ["h1", "h2"], ["drift"])
    by = dict((f["id"], f) for f in found)
    assert sorted(by) == ["drift.irq", "drift.qos", "drift.sysctl"]
    assert by["drift.sysctl"]["nodes"] == ["h1", "h2"] and len(by["drift.sysctl"]["evidence"]) == 2
    assert by["drift.irq"]["nodes"] == ["h2"] and "irqbalance (running on h2)" in by["drift.irq"]["fix"]
    assert by["drift.irq"]["evidence"][0]["value"]["current"] == "0-1"


@pytest.mark.parametrize("state,expected", [
    ({"failed": True, "msg": "journal dir is group-writable"}, ["drift.unavailable"]),
    ({"drift": [], "profile": None, "interrupted": []}, ["drift.no_profile"]),
    ({"drift": [], "profile": {"name": "mpi"}, "interrupted": [{"id": 4, "module": "sysctl_tuning"}]}, ["drift.interrupted"]),
    ({"drift": [{"key": "weird:x", "applied": 1, "current": 2}], "profile": {}}, ["drift.other"]),
    ({"skipped": True}, []),
])
def test_drift_states(state, expected):
    a = node()
    a["state"] = state
    assert ids(F.evaluate({"h1": a, "h2": node("rxe", "10.0.0.2")}, ["h1", "h2"], ["drift"])) == expected


# ---------------------------------------------------------------------- path MTU
def test_probes_form_a_ring_of_n_pings():
    hosts = ["h%d" % i for i in range(5)]
    nodes = dict((h, node("rxe", "10.0.0.%d" % i)) for i, h in enumerate(hosts))
    nodes["h3"]["info"]["addresses"] = {"data0": []}
    probes = P.plan_probes(nodes, hosts)
    ring = [h for h in hosts if "argv" in probes[h]]
    assert ring == ["h0", "h1", "h2", "h4"]
    assert [probes[h]["peer"] for h in ring] == ["h1", "h2", "h4", "h0"]
    assert probes["h2"]["argv"] == ["ping", "-M", "do", "-s", "8972", "-c", "2", "-W", "1", "-I", "data0", "10.0.0.4"]
    assert "no IPv4 address" in probes["h3"]["skip"]
    found = P.path_mtu(nodes, hosts, probes)
    assert [(f["id"], f["nodes"]) for f in found] == [("path_mtu.no_address", ["h3"])]


@pytest.mark.parametrize("mtus,path_mtu,size", [
    ((9000, 1500), None, 8972),     # the larger end's MTU: a pair that disagrees fails one way
    ((1500, 1500), None, 1472),
    ((9000, 9000), 4200, 4172),
])
def test_probe_size(mtus, path_mtu, size):
    nodes = {"a": node("rxe", "10.0.0.1", info__fabric__netdevs__data0__mtu=mtus[0]),
             "b": node("rxe", "10.0.0.2", info__fabric__netdevs__data0__mtu=mtus[1])}
    probes = P.plan_probes(nodes, ["a", "b"], path_mtu)
    assert probes["a"]["size"] == probes["b"]["size"] == size


@pytest.mark.parametrize("ping,expected,limit", [
    ({"rc": 1, "stdout": "2 packets transmitted, 0 received, +2 errors, 100% packet loss",
      "stderr": "ping: local error: message too long, mtu=1500"}, ["path_mtu.failed"], 1500),
    ({"rc": 1, "stdout": "2 packets transmitted, 0 received, 100% packet loss", "stderr": ""}, ["path_mtu.failed"], None),
    ({"rc": 0, "stdout": "2 received", "stderr": ""}, [], None),
    ({"failed": True, "msg": "[Errno 2] No such file or directory: b'ping'"}, ["path_mtu.no_ping"], None),
    ({"skipped": True}, [], None),
])
def test_ping_results(ping, expected, limit):
    nodes = pair(node(), node("rxe", "10.0.0.2"))
    nodes["h2"]["ping"] = ping
    found = F.evaluate(nodes, ["h1", "h2"], ["path_mtu"])
    assert ids(found) == expected
    if expected == ["path_mtu.failed"]:
        assert found[0]["nodes"] == ["h2", "h1"] and found[0]["limit"] == limit
        assert found[0]["evidence"][0]["source"].startswith("ping -M do -s 8972")


# ---------------------------------------------------------------------- severity, gate, options
def test_severity_override_and_ignore():
    a, b = node(), node("rxe", "10.0.0.2")
    _devnode(b)
    _concentrated(b)
    found = F.evaluate(pair(a, b), ["h1", "h2"], ["checklist"],
                       severity={"devnode.too_open": "error", "irq.concentrated": "ignore"})
    assert [(f["id"], f["severity"]) for f in found] == [("devnode.too_open", "error")]


@pytest.mark.parametrize("severities,fail_on,failed,worst", [
    (["error", "info"], "error", True, "error"),
    (["warning"], "error", False, "warning"),
    (["warning"], "warning", True, "warning"),
    (["info"], "warning", False, "info"),
    (["info"], "info", True, "info"),
    (["error"], "never", False, "error"),
    ([], "info", False, None),
])
def test_gate(severities, fail_on, failed, worst):
    found = [dict(C.finding("rdma.no_device", ["h"], "t", [], "f"), severity=s) for s in severities]
    g = F.gate(found, fail_on)
    assert (g["failed"], g["worst"]) == (failed, worst)
    assert len(g["reached"]) == (sum(1 for s in severities if C.RANK[s] >= C.RANK[fail_on]) if fail_on != "never" else 0)


@pytest.mark.parametrize("kwargs,message", [
    (dict(families=["drift", "bogus"]), "unknown check family 'bogus'; allowed: drift, consistency, path_mtu, checklist"),
    (dict(fail_on="fatal"), "rdma_verify_fail_on: 'fatal' is not a severity; allowed: error, warning, info, never"),
    (dict(severity={"no.such": "error"}), "rdma_verify_severity: unknown finding id 'no.such'"),
    (dict(severity={"port.not_active": "critical"}), "rdma_verify_severity[port.not_active]: 'critical' is not a severity"),
    (dict(memlock="lots"), "rdma_verify_memlock: 'lots' is neither 'unlimited' nor a size in KiB"),
    (dict(device_mode="rw"), "rdma_verify_device_mode: 'rw' is not an octal mode"),
    (dict(retrans_ratio=2), "rdma_verify_retrans_ratio: 2 is not a ratio between 0 and 1"),
])
def test_bad_options_are_named(kwargs, message):
    args = dict(families=list(C.FAMILIES), fail_on="error", severity={})
    args.update(kwargs)
    errors = C.validate_options(**args)
    assert len(errors) == 1 and message in errors[0]


def test_good_options():
    assert C.validate_options(C.FAMILIES, "never", {"port.not_active": "ignore"}, "65536", "0600", 0.01) == []


def test_every_rule_has_a_family_severity_and_meaning():
    for rule, (family, severity, meaning) in C.RULES.items():
        assert family in C.FAMILIES + ("node",) and severity in C.SEVERITIES and meaning
        assert rule.split(".")[0] and rule == rule.lower()


def test_families_restrict_the_rules():
    a, b = node(), node("rxe", "10.0.0.2", info__fabric__netdevs__data0__mtu=1500)
    b["ping"] = {"rc": 1, "stdout": "100% packet loss", "stderr": ""}
    b["state"]["drift"] = [{"key": "nic:data0:mtu", "applied": 9000, "current": 1500}]
    for fam, expected in (("drift", ["drift.nic"]), ("path_mtu", ["path_mtu.failed"]),
                          ("checklist", ["rdma.mtu_above_netdev"]), ("consistency", ["consistency.mtu"])):
        assert ids(F.evaluate(pair(a, b), ["h1", "h2"], [fam])) == expected, fam
