# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""roce_qos / roce_qos_info through run() on the SIMULATED node of fake_qos.py: check mode writes
nothing, idempotence, exact rollback through tuning_state, the unsupported path, revert, bad input."""
from __future__ import annotations

import os
import re

import pytest
import yaml

from ansible_collections.hpcnet.rdma.plugins.module_utils.qos import _boot as _qosboot
from ansible_collections.hpcnet.rdma.plugins.modules import roce_qos, roce_qos_info, tuning_state

from ...conftest import Failed, FakeModule, FakeNic, mlx5
from ...fake_qos import FakeQos, FakeRdma, QosNode

J = "/var/lib/hpcnet-rdma"
FULL = {"pfc": [3], "dscp_map": {26: 3, 48: 6}, "ecn": {}, "cnp": {"dscp": 48, "priority": 6}, "rdma_mtu": 4096}
# the boot-time applier of mode=both/persist, in plan order (after every runtime key)
BOOT_FILES = ["file:" + _qosboot.SCRIPT, "file:" + _qosboot.UNIT_FILE, "file:" + _qosboot.UNIT_LINK]
# ... with the directories the engine journals for them on a node that has none of /usr and /etc (the labs)
BOOT_DIRS = ["/usr", "/usr/local", "/usr/local/lib", "/usr/local/lib/hpcnet-rdma", "/etc", "/etc/systemd",
             "/etc/systemd/system", "/etc/systemd/system/multi-user.target.wants"]
BOOT_CHANGES = ["dir:/usr", "dir:/usr/local", "dir:/usr/local/lib", "dir:/usr/local/lib/hpcnet-rdma", BOOT_FILES[0],
                "dir:/etc", "dir:/etc/systemd", "dir:/etc/systemd/system", BOOT_FILES[1],
                "dir:/etc/systemd/system/multi-user.target.wants", BOOT_FILES[2]]


def _node(tmp_path):
    n = QosNode(str(tmp_path / "root"))
    os.makedirs(n.root)
    return n


def lab_mlnx(n):
    """ConnectX port, MLNX_OFED tools: auto picks mlnx_qos; ECN sysfs present; no rdma_cm group yet."""
    n.add_nic(mlx5(mtu=9000))
    n.add_qos("ens1f0np0", FakeQos("mlx5"), ecn=True, ecn_on=0, cnp=(46, 5))
    n.add_rdma(FakeRdma("mlx5_0", "ens1f0np0", active_mtu=4096))
    return {"interfaces": [{"driver": "mlx5_core"}]}


def lab_dcb(n):
    """ConnectX port with only iproute2 6.1 (no mlnx_qos, no dcb apptrust): dcb, trust implicit."""
    n.missing.add("mlnx_qos")
    lab_mlnx(n)
    return {"interfaces": [{"name": "ens1f0np0"}]}


def lab_apptrust(n):
    """A driver with dcb apptrust and the generic IEEE APP table, iproute2 >= 6.3."""
    n.dcb_apptrust = True
    n.add_nic(FakeNic("swp1", "sparx5", mtu=9000, mac="02:00:00:00:01:01"))
    n.add_qos("swp1", FakeQos("ieee", apptrust=["pcp"], default_prio=[0]))
    return {"interfaces": [{"glob": "swp*"}]}


def lab_virtio(n):
    """The VM lab: soft-RoCE rxe0 on virtio-net data0, which has no DCB."""
    n.add_nic(FakeNic("data0", "virtio_net", mtu=1500, mac="52:54:00:00:00:09"))
    n.add_rdma(FakeRdma("rxe0", "data0", active_mtu=1024))
    return {"interfaces": [{"name": "data0"}]}


LABS = {"mlnx_qos": (lab_mlnx, FULL), "dcb": (lab_dcb, FULL),
        "apptrust": (lab_apptrust, {"pfc": [3], "dscp_map": {26: 3, 48: 6}}),
        "virtio": (lab_virtio, {"pfc": [3]})}


@pytest.fixture(params=sorted(LABS))
def lab(request, tmp_path):
    n = _node(tmp_path)
    setup, params = LABS[request.param]
    base = setup(n)
    base.update(params)
    n.params = base
    n.kind = request.param
    return n


def qos(node, check=False, **params):
    p = dict(node.params)
    p.update(params)
    return roce_qos.run(FakeModule(roce_qos.ARGUMENT_SPEC, p, check_mode=check), node.host())


def state(node, check=False, **params):
    return tuning_state.run(FakeModule(tuning_state.ARGUMENT_SPEC, params, check_mode=check), node.host())


def outside_journal(node, snap):
    jdir = node.path(J)
    return dict((k, v) for k, v in snap["files"].items() if not k.startswith(jdir))


# --------------------------------------------------------------------------- check, apply, idempotence
def test_check_mode_writes_nothing_and_predicts_exactly(lab):
    before = lab.snapshot()
    predicted = qos(lab, check=True)
    assert lab.snapshot() == before
    assert lab.setters() == []
    assert predicted["changed"] is True
    real = qos(lab)
    assert real["changes"] == predicted["changes"]
    assert real["current"] == predicted["current"]
    again = qos(lab)
    assert again["changed"] is False and again["changes"] == []
    assert again["app"] == real["app"] == predicted["app"]


def test_values_are_read_back_from_the_node(lab):
    out = qos(lab)
    for device in lab.rdma:
        assert lab.read("/sys/kernel/config/rdma_cm/%s/ports/1/default_roce_tos" % device) == "106"
    if lab.kind in ("mlnx_qos", "dcb"):
        q = lab.qos["ens1f0np0"]
        assert (q.trust, sorted(q.pfc), q.apps[26], q.apps[48]) == ("dscp", [3], [3], [6])
        assert lab.read("/sys/class/net/ens1f0np0/ecn/roce_np/enable/3") == "1"
        assert lab.read("/sys/class/net/ens1f0np0/ecn/roce_rp/enable/3") == "1"
        assert lab.read("/sys/class/net/ens1f0np0/ecn/roce_rp/enable/4") == "0\n"     # untouched
        assert lab.read("/sys/class/net/ens1f0np0/ecn/roce_np/cnp_dscp") == "48"
        assert lab.read("/sys/class/net/ens1f0np0/ecn/roce_np/cnp_802p_prio") == "6"
        assert lab.read("/sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_mode") == "RoCE v2"
        assert out["interfaces"]["ens1f0np0"]["priority"] == 3
        assert out["app"] == {"tos": 106, "dscp": 26, "priority": 3, "roce_mode": "v2", "rdma_mtu": 4096,
                              "hcas": ["mlx5_0:1"], "netdevs": ["ens1f0np0"], "gid_index": 1}
    if lab.kind == "mlnx_qos":
        assert len(lab.qos["ens1f0np0"].apps) == 64          # --trust dscp loaded the firmware table
        assert all(k.startswith(("mlnx_qos:", "ecn:", "rdmacm:", "dir:", "file:")) for k in out["current"])
    if lab.kind == "dcb":
        assert sorted(lab.qos["ens1f0np0"].apps) == [26, 48]  # trust followed the first DSCP entry
        assert "dcb:ens1f0np0:trust" not in out["current"]
        assert out["interfaces"]["ens1f0np0"]["trust_control"] == "implicit"
    if lab.kind == "apptrust":
        q = lab.qos["swp1"]
        assert (q.apptrust, q.apps, sorted(q.pfc)) == (["dscp"], {26: [3], 48: [6]}, [3])
        assert out["current"]["dcb:swp1:trust"] == "dscp"


def test_rollback_restores_the_node_exactly(lab):
    pristine = lab.snapshot()
    qos(lab)
    qos(lab, tos=98, dscp_map={24: 3, 26: 3, 48: 6})       # a second tune: originals stay the first ones
    assert lab.snapshot() != pristine
    predicted = state(lab, check=True, action="rollback")
    assert predicted["changed"] is True
    done = state(lab, action="rollback")
    assert done["changes"] == predicted["changes"]
    after = lab.snapshot()
    assert outside_journal(lab, after) == outside_journal(lab, pristine)
    assert after["qos"] == pristine["qos"]
    assert after["nics"] == pristine["nics"]
    # the configfs group we created is gone; the kernel keeps its values, so they were reset first
    assert sorted(lab.cm_kernel) == sorted(lab.rdma)
    for device, kept in lab.cm_kernel.items():
        assert not os.path.exists(lab.path("/sys/kernel/config/rdma_cm/" + device))
        assert kept == {"tos": "0", "mode": "RoCE v2"}, device
    assert state(lab, action="status")["tuned"] == {}
    assert state(lab, action="rollback")["changed"] is False


def test_rollback_last_undoes_only_the_second_tune(tmp_path):
    n = _node(tmp_path)
    n.params = lab_dcb(n)
    n.params.update(FULL)
    qos(n)
    qos(n, pfc=[3, 4], dscp_map={26: 3, 48: 6, 32: 4})
    assert sorted(n.qos["ens1f0np0"].pfc) == [3, 4] and n.qos["ens1f0np0"].apps[32] == [4]
    state(n, action="rollback", scope="last")
    q = n.qos["ens1f0np0"]
    assert sorted(q.pfc) == [3] and 32 not in q.apps and q.apps[26] == [3]


# --------------------------------------------------------------------------- boot-time applier (mode)
def script_keys(node):
    """The keys the boot script re-applies, in its order (the run/run_dcb/put lines)."""
    text = node.read(_qosboot.SCRIPT)
    return [m.group(1) for m in re.finditer(r"^(?:run|run_dcb|put) (\S+) ", text, re.M) if m.group(1) != "rdma_cm"]


def runtime_keys(out):
    return [c["key"] for c in out["changes"] if not c["key"].startswith(("file:", "dir:"))]


def boot_changes(out):
    """The changes of the boot files and their parent directories, in plan order."""
    return [c for c in out["changes"] if c["key"] in BOOT_CHANGES]


def after(out, key):
    return [c["after"] for c in out["changes"] if c["key"] == key][0]


def test_mode_both_plans_the_boot_files(lab):
    predicted = qos(lab, check=True)
    assert [c["key"] for c in predicted["changes"]][-len(BOOT_CHANGES):] == BOOT_CHANGES
    assert lab.read(_qosboot.SCRIPT) is None                      # check mode wrote nothing
    headers = [d["after_header"] for d in predicted["diff"]]
    assert headers[0] == "runtime (after)" and headers[1:] == [_qosboot.SCRIPT, _qosboot.UNIT_FILE, _qosboot.UNIT_LINK]
    out = qos(lab)
    assert out["changes"] == predicted["changes"]
    host = lab.host()
    script = host.file_state(_qosboot.SCRIPT)
    assert script["mode"] == "0755" and script == after(predicted, BOOT_FILES[0])
    assert host.file_state(_qosboot.UNIT_FILE) == {"content": _qosboot.render_unit(), "mode": "0644"}
    assert os.readlink(lab.path(_qosboot.UNIT_LINK)) == _qosboot.UNIT_FILE
    # every live key, in plan order (on a pristine lab every one of them changes)
    assert script_keys(lab) == runtime_keys(out)
    text = lab.read(_qosboot.SCRIPT)
    if lab.kind == "mlnx_qos":
        assert "run mlnx_qos:ens1f0np0:trust /usr/sbin/mlnx_qos -i ens1f0np0 --trust dscp\n" in text
        assert "--pfc 0,0,0,1,0,0,0,0\n" in text and "--dscp2prio set,26,3\n" in text
        assert "put ecn:ens1f0np0:cnp_dscp 48 /sys/class/net/ens1f0np0/ecn/roce_np/cnp_dscp\n" in text
    if lab.kind == "dcb":
        assert "run_dcb dcb:ens1f0np0:dscp.26 /usr/sbin/dcb app replace dev ens1f0np0 dscp-prio 26:3\n" in text
    if lab.kind == "apptrust":
        assert "run_dcb dcb:swp1:trust /usr/sbin/dcb apptrust set dev swp1 order dscp\n" in text
        assert "rdma_cm" not in text                                # no RDMA device on swp1
    if lab.kind == "virtio":
        assert script_keys(lab) == ["rdmacm:rxe0:1:tos", "rdmacm:rxe0:1:mode"]
    for device in lab.rdma:
        assert "put rdmacm:%s:1:tos 106 /sys/kernel/config/rdma_cm/%s/ports/1/default_roce_tos\n" % (device, device) \
            in text
        assert "run rdma_cm /usr/sbin/modprobe -q rdma_cm\n" in text
    again = qos(lab)
    assert again["changed"] is False and again["changes"] == []


def test_mode_runtime_plans_no_files(lab):
    predicted = qos(lab, check=True, mode="runtime")
    out = qos(lab, mode="runtime")
    assert out["changes"] == predicted["changes"] and out["changed"] is True
    assert not any(c["key"].startswith("file:") for c in out["changes"])
    assert not any(k.startswith("file:") for k in list(out["previous"]) + list(out["current"]))
    for path in (_qosboot.SCRIPT, _qosboot.UNIT_FILE, _qosboot.UNIT_LINK):
        assert not os.path.lexists(lab.path(path)), path
    assert qos(lab, mode="runtime")["changed"] is False


def test_mode_persist_plans_only_files(lab):
    pristine = lab.snapshot()
    both = qos(lab, check=True)                                    # what mode=both would install
    predicted = qos(lab, check=True, mode="persist")
    out = qos(lab, mode="persist")
    assert [c["key"] for c in out["changes"]] == BOOT_CHANGES
    assert out["changes"] == predicted["changes"] == boot_changes(both)
    assert sorted(out["previous"]) == sorted(BOOT_CHANGES)
    assert lab.setters() == []                                     # no live value changed
    after = lab.snapshot()
    assert after["qos"] == pristine["qos"] and after["cm_kernel"] == pristine["cm_kernel"]
    boot = set(lab.path(p) for p in (_qosboot.SCRIPT, _qosboot.UNIT_FILE, _qosboot.UNIT_LINK))
    assert dict((k, v) for k, v in outside_journal(lab, after).items() if k not in boot) \
        == outside_journal(lab, pristine)
    again = qos(lab, mode="persist")
    assert again["changed"] is False
    state(lab, action="rollback")
    assert outside_journal(lab, lab.snapshot()) == outside_journal(lab, pristine)
    assert not any(os.path.exists(lab.path(d)) for d in BOOT_DIRS)


def test_keys_already_at_their_value_are_still_in_the_boot_script(lab):
    fresh = after(qos(lab, check=True), BOOT_FILES[0])           # script a first mode=both run installs
    live = qos(lab, mode="runtime")
    out = qos(lab)                                                 # every live key is at its value now
    assert [c["key"] for c in out["changes"]] == BOOT_CHANGES
    assert lab.host().file_state(_qosboot.SCRIPT) == fresh
    assert script_keys(lab) == runtime_keys(live)


def test_rollback_removes_the_boot_files(lab):
    pristine = lab.snapshot()
    qos(lab)
    predicted = state(lab, check=True, action="rollback")
    # files first, then the directories created for them (newest first)
    assert [c["key"] for c in boot_changes(predicted)] == list(reversed(BOOT_CHANGES))
    done = state(lab, action="rollback")
    assert boot_changes(done) == boot_changes(predicted)
    for path in (_qosboot.SCRIPT, _qosboot.UNIT_FILE, _qosboot.UNIT_LINK):
        assert not os.path.lexists(lab.path(path)), path
    assert not any(os.path.exists(lab.path(d)) for d in BOOT_DIRS)
    assert outside_journal(lab, lab.snapshot()) == outside_journal(lab, pristine)


def test_boot_files_that_existed_are_restored_on_rollback(tmp_path):
    n = _node(tmp_path)
    n.params = lab_virtio(n)
    n.params["pfc"] = [3]
    n.write(_qosboot.UNIT_FILE, "# a unit someone wrote\n", 0o600)
    pristine = n.snapshot()
    out = qos(n)
    assert out["previous"]["file:" + _qosboot.UNIT_FILE] == {"content": "# a unit someone wrote\n", "mode": "0600"}
    state(n, action="rollback")
    assert outside_journal(n, n.snapshot()) == outside_journal(n, pristine)
    assert n.read(_qosboot.UNIT_FILE) == "# a unit someone wrote\n"


@pytest.mark.parametrize("configfs", [True, False])
def test_nothing_settable_plans_no_boot_files(tmp_path, configfs):
    """virtio-net has no DCB; without an RDMA device on it (or without rdma_cm configfs) no key is left."""
    n = _node(tmp_path)
    n.add_nic(FakeNic("data0", "virtio_net", mtu=1500, mac="52:54:00:00:00:09"))
    if not configfs:
        n.add_rdma(FakeRdma("rxe0", "data0", active_mtu=1024), configfs=False)
    n.params = {"interfaces": [{"name": "data0"}], "pfc": [3]}
    for mode in ("both", "persist"):
        out = qos(n, mode=mode)
        assert out["changed"] is False and out["changes"] == [] and out["previous"] == {}
    assert [u["feature"] for u in out["unsupported"]] == ["dcb"] + ([] if configfs else ["rdma_cm"])
    assert not os.path.lexists(n.path(_qosboot.SCRIPT))


# --------------------------------------------------------------------------- unsupported
def test_nic_without_dcb_is_a_named_result_and_only_rdma_cm_changes(tmp_path):
    n = _node(tmp_path)
    n.params = lab_virtio(n)
    n.params["pfc"] = [3]
    m = FakeModule(roce_qos.ARGUMENT_SPEC, n.params)
    out = roce_qos.run(m, n.host())
    assert out["unsupported"] == [{"interface": "data0", "feature": "dcb",
                                   "reason": "dcb -j pfc show dev data0: Attribute read: Operation not supported"}]
    assert n.setters() == []
    assert [c["key"] for c in out["changes"]] == ["dir:/sys/kernel/config/rdma_cm/rxe0", "rdmacm:rxe0:1:tos",
                                                  "rdmacm:rxe0:1:mode"] + BOOT_CHANGES
    assert n.read("/sys/kernel/config/rdma_cm/rxe0/ports/1/default_roce_tos") == "106"
    assert out["interfaces"]["data0"]["dcb"] is False
    assert out["app"]["hcas"] == ["rxe0:1"] and out["app"]["gid_index"] == 1
    assert any("data0: dcb not supported here" in w for w in m.warnings)
    state(n, action="rollback")
    assert not os.path.exists(n.path("/sys/kernel/config/rdma_cm/rxe0"))
    assert n.cm_kernel["rxe0"]["tos"] == "0"            # reset before the group was removed


def test_on_unsupported_fail_changes_nothing(tmp_path):
    n = _node(tmp_path)
    n.params = lab_virtio(n)
    before = n.snapshot()
    with pytest.raises(Failed, match=r"not supported here: data0 dcb \(dcb -j pfc show dev data0: Attribute read: "
                                     r"Operation not supported\); set on_unsupported: warn"):
        qos(n, on_unsupported="fail", pfc=[3])
    assert n.snapshot() == before


def test_ecn_not_exposed_is_reported(tmp_path):
    n = _node(tmp_path)
    n.add_nic(mlx5(mtu=9000))
    n.add_qos("ens1f0np0", FakeQos("mlx5", trust="dscp"))       # upstream mlx5_core: no ecn sysfs
    n.params = {"interfaces": [{"name": "ens1f0np0"}]}
    out = qos(n, pfc=[3], ecn={})
    assert [(u["interface"], u["feature"]) for u in out["unsupported"]] == [("ens1f0np0", "ecn")]
    with pytest.raises(Failed, match="ens1f0np0 ecn"):
        qos(n, pfc=[3], ecn={}, on_unsupported="fail")


def test_rdma_cm_group_that_exists_is_kept_on_rollback(tmp_path):
    n = _node(tmp_path)
    n.params = lab_virtio(n)
    host = n.host()
    host.mkdir("/sys/kernel/config/rdma_cm/rxe0")             # someone created it before us
    host.write_proc("/sys/kernel/config/rdma_cm/rxe0/ports/1/default_roce_tos", "32")
    out = qos(n, pfc=[3])
    assert [(c["key"], c["before"], c["after"]) for c in out["changes"]][:1] == [("rdmacm:rxe0:1:tos", 32, 106)]
    assert [c["key"] for c in out["changes"]][1:] == BOOT_CHANGES
    state(n, action="rollback")
    assert n.read("/sys/kernel/config/rdma_cm/rxe0/ports/1/default_roce_tos") == "32"


def test_roce_mode_the_port_cannot_do_fails_and_reverts(tmp_path):
    n = _node(tmp_path)
    n.params = lab_virtio(n)                                   # rxe: RoCE v2 only
    before = n.snapshot()
    with pytest.raises(Failed) as e:
        qos(n, pfc=[3], roce_mode="v1")
    assert "rdmacm:rxe0:1:mode" in e.value.msg and "Invalid argument" in e.value.msg
    assert "changed nothing" in e.value.msg
    after = n.snapshot()
    assert outside_journal(n, after) == outside_journal(n, before)
    assert state(n, action="status")["generations"] == []


# --------------------------------------------------------------------------- revert and backends
@pytest.mark.parametrize("kind, fail_on, key", [
    ("mlnx_qos", "--pfc", "mlnx_qos:ens1f0np0:pfc"),
    ("dcb", "prio-pfc", "dcb:ens1f0np0:pfc"),
])
def test_failed_apply_reverts_this_call_and_names_the_key(tmp_path, kind, fail_on, key):
    n = _node(tmp_path)
    setup, params = LABS[kind]
    n.params = setup(n)
    n.params.update(params)
    before = n.snapshot()
    n.fail_on = fail_on
    with pytest.raises(Failed) as e:
        qos(n)
    assert key in e.value.msg and "changed nothing" in e.value.msg
    after = n.snapshot()
    assert after["qos"] == before["qos"]
    assert outside_journal(n, after) == outside_journal(n, before)
    assert state(n, action="status")["generations"] == []


def test_backend_override_and_rollback_use_the_recorded_tool(tmp_path):
    n = _node(tmp_path)
    n.params = lab_mlnx(n)
    n.params.update(FULL)
    out = qos(n, backend="dcb")
    assert "dcb:ens1f0np0:dscp.26" in out["current"] and out["interfaces"]["ens1f0np0"]["backend"] == "dcb"
    n.calls[:] = []
    state(n, action="rollback")
    assert not any(c[0] == "mlnx_qos" for c in n.calls)      # restored through dcb, as recorded
    assert n.qos["ens1f0np0"].apps == {} and n.qos["ens1f0np0"].trust == "pcp"


def test_trust_pcp_with_dcb_removes_the_dscp_entries(tmp_path):
    n = _node(tmp_path)
    n.missing.add("mlnx_qos")
    n.add_nic(mlx5(mtu=9000))
    n.add_qos("ens1f0np0", FakeQos("mlx5", dscp={26: [3], 46: [5]}, pfc=(3,)))
    n.params = {"interfaces": [{"driver": "mlx5_core"}]}
    pristine = n.snapshot()
    out = qos(n, trust="pcp")
    assert [(c["key"], c["after"]) for c in out["changes"]][:2] \
        == [("dcb:ens1f0np0:dscp.26", None), ("dcb:ens1f0np0:dscp.46", None)]
    assert [c["key"] for c in out["changes"]][2:] == BOOT_CHANGES
    # an absent DSCP entry is what a boot leaves: the boot script has nothing to do for this NIC
    assert "ens1f0np0" not in n.read(_qosboot.SCRIPT)
    assert n.qos["ens1f0np0"].trust == "pcp"
    state(n, action="rollback")
    assert n.snapshot()["qos"] == pristine["qos"]


def test_dcb_needs_a_dscp_map_for_dscp_trust_without_apptrust(tmp_path):
    n = _node(tmp_path)
    n.params = lab_dcb(n)
    before = n.snapshot()
    with pytest.raises(Failed, match=r"trust: dscp on ens1f0np0 needs DSCP entries: dcb apptrust is not available"):
        qos(n, pfc=[3])
    assert n.snapshot() == before


# --------------------------------------------------------------------------- bad input, each its own test
def _refused(n, message, **params):
    before = n.snapshot()
    for check in (True, False):
        with pytest.raises(Failed, match=message):
            qos(n, check=check, **params)
    assert n.snapshot() == before
    assert n.setters() == []


@pytest.fixture
def dcb_lab(tmp_path):
    n = _node(tmp_path)
    n.params = lab_dcb(n)
    return n


def test_bad_input_priority_8_changes_nothing(dcb_lab):
    _refused(dcb_lab, r"^pfc: 8 is not a priority; allowed: 0..7$", pfc=[3, 8], dscp_map={26: 3})


def test_bad_input_dscp_64_changes_nothing(dcb_lab):
    _refused(dcb_lab, r"^dscp_map: 64 is not a DSCP; allowed: 0..63$", pfc=[3], dscp_map={26: 3, 64: 3})


def test_bad_input_tos_above_255_changes_nothing(dcb_lab):
    _refused(dcb_lab, r"^tos: 300 is not a ToS byte; allowed: 0..255$", pfc=[3], dscp_map={26: 3}, tos=300)


def test_bad_input_pfc_on_a_priority_no_dscp_maps_to_changes_nothing(dcb_lab):
    _refused(dcb_lab, r"pfc: priority 5 is lossless on ens1f0np0 but no DSCP maps to it", pfc=[3, 5], dscp_map={26: 3})


def test_bad_input_trust_pcp_with_a_dscp_map_changes_nothing(dcb_lab):
    _refused(dcb_lab, r"^trust: pcp with a dscp_map \(26: 3\)", trust="pcp", pfc=[3], dscp_map={26: 3})


@pytest.mark.parametrize("params, message", [
    ({"pfc": [4], "dscp_map": {26: 3}}, r"tos: 106 \(DSCP 26\) lands in priority 3 on ens1f0np0"),
    ({"pfc": [3], "dscp_map": {26: 3}, "cnp": {"priority": 3}}, r"cnp.priority: 3 \(cnp.priority\) on ens1f0np0"),
    ({"pfc": [3], "dscp_map": {26: 3}, "rdma_mtu": 4096, "interfaces": [{"name": "nope0"}]},
     r"interfaces\[0\].name: unknown interface 'nope0'"),
    ({"pfc": [3], "dscp_map": {26: 3}, "backend": "fancy"}, "value of backend must be one of: auto, dcb, mlnx_qos"),
    ({"pfc": [3], "dscp_map": {26: 3}, "rdma_mtu": 3000}, "value of rdma_mtu must be one of"),
    ({"pfc": [3], "dscp_map": {26: 3}, "journal_dir": "/var/lib/notadir/j"}, "journal_dir: /var/lib/notadir/j cannot hold"),
])
def test_more_bad_input_changes_nothing(dcb_lab, params, message):
    dcb_lab.write("/var/lib/notadir", "a file\n")
    _refused(dcb_lab, message, **params)


def test_mtu_below_the_rdma_mtu_is_refused(tmp_path):
    n = _node(tmp_path)
    n.params = lab_virtio(n)
    _refused(n, r"rdma_mtu: 2048 exceeds the active MTU 1024 of rxe0 port 1 \(derived from data0's MTU 1500\)",
             pfc=[3], rdma_mtu=2048)


@pytest.mark.parametrize("on_unsupported", ["warn", "fail"])
def test_incoherent_input_on_a_nic_without_dcb_is_refused_before_the_capability(tmp_path, on_unsupported):
    """virtio-net has no DCB: the tos/pfc mismatch is still the answer, and nothing is touched."""
    n = _node(tmp_path)
    n.params = lab_virtio(n)
    _refused(n, r"^tos: 106 \(DSCP 26\) lands in priority 3 on data0 \(dscp_map: \{26: 3\}\), but PFC is on only "
                r"for 4 \(pfc\)", pfc=[4], dscp_map={26: 3}, on_unsupported=on_unsupported)
    _refused(n, r"^cnp.priority: 3 \(cnp.priority\) on data0 is the RoCE data priority",
             pfc=[3], dscp_map={26: 3}, cnp={"priority": 3}, on_unsupported=on_unsupported)


@pytest.mark.parametrize("lab_of, backend, tool", [(lab_mlnx, "mlnx_qos", "mlnx_qos"), (lab_virtio, "dcb", "dcb")])
def test_explicit_backend_without_its_tool_names_backend(tmp_path, lab_of, backend, tool):
    n = _node(tmp_path)
    n.missing.add(tool)
    n.params = lab_of(n)
    _refused(n, r"^backend: %s, but the %s command is not on the node \(.*provides it\); allowed: install it, or "
                r"backend auto or " % (backend, tool), pfc=[3], dscp_map={26: 3}, backend=backend)


def test_an_interface_selected_twice_is_planned_once(tmp_path):
    """roce_qos entries only select (its values are the module's): two selections of one NIC cannot
    conflict, it is planned once and both selections are named."""
    n = _node(tmp_path)
    n.params = lab_dcb(n)
    once = qos(n, check=True, **FULL)
    twice = qos(n, check=True, **dict(FULL, interfaces=[{"name": "ens1f0np0"}, {"driver": "mlx5_core"}]))
    assert twice["changes"] == once["changes"]
    assert twice["interfaces"]["ens1f0np0"]["selected_by"] == ["name=ens1f0np0", "driver=mlx5_core"]


def test_missing_dcb_tool_is_a_clear_error(tmp_path):
    n = _node(tmp_path)
    n.missing.add("dcb")
    n.params = lab_virtio(n)
    with pytest.raises(Failed, match="required command 'dcb' not found on the node"):
        qos(n, pfc=[3])


# --------------------------------------------------------------------------- roce_qos_info
def info(node, **params):
    return roce_qos_info.run(FakeModule(roce_qos_info.ARGUMENT_SPEC, params), node.host())


def test_info_reads_and_reports_findings(tmp_path):
    n = _node(tmp_path)
    n.params = lab_mlnx(n)
    n.params.update(FULL)
    before = n.snapshot()
    out = info(n)
    assert n.snapshot() == before and n.setters() == []
    assert out["interfaces"]["ens1f0np0"]["trust"] == "pcp" and out["findings"] == []
    qos(n)
    out = info(n, interfaces=[{"driver": "mlx5_core"}])
    iface = out["interfaces"]["ens1f0np0"]
    assert (iface["backend"], iface["trust"], iface["pfc"], iface["priority"]) == ("mlnx_qos", "dscp", [3], 3)
    assert out["rdma_ports"][0]["tos"] == 106 and out["findings"] == []
    out = info(n, tos=184)                                    # DSCP 46 -> priority 5, no PFC there
    assert out["findings"][0].startswith("tos: 184 (DSCP 46) lands in priority 5 on ens1f0np0")


def test_info_on_the_vm_lab(tmp_path):
    n = _node(tmp_path)
    lab_virtio(n)
    out = info(n)
    assert out["unsupported"][0]["interface"] == "data0"
    assert out["rdma_ports"][0]["device"] == "rxe0" and out["rdma_ports"][0]["active_mtu"] == 1024
    assert out["findings"] == []


def test_with_a_release_scope_a_second_tune_changes_nothing(lab):
    """The rdma_cm group a first call created is managed by the next call too (in ``previous``), so a
    release_scope call (the tuning role's) neither removes nor re-creates it: idempotent."""
    first = qos(lab, release_scope="tuning.qos", journal_run="r1")
    assert first["changed"] is True
    again = qos(lab, release_scope="tuning.qos", journal_run="r2")
    assert again["changed"] is False and again["changes"] == []
    # every key but the parent directories of created files (the engine keeps those, as parents of managed files)
    kept = [k for k in first["previous"] if not k.startswith("dir:") or k.startswith("dir:/sys/kernel/config/")]
    assert kept and all(k in again["previous"] for k in kept)


def test_info_returns_only_documented_interface_keys(tmp_path):
    """What roce_qos_info returns per interface (supported and not) is what its RETURN documents."""
    documented = set(yaml.safe_load(roce_qos_info.RETURN)["interfaces"]["contains"])
    n = _node(tmp_path)
    n.params = lab_mlnx(n)
    n.params.update(FULL)
    qos(n)
    iface = info(n)["interfaces"]["ens1f0np0"]
    assert {"ets", "buffer", "priority", "cnp"} <= set(iface) <= documented
    v = _node(tmp_path / "vm")
    lab_virtio(v)
    assert set(info(v)["interfaces"]["data0"]) <= documented
