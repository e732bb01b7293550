# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The boot-time applier of roce_qos (_qosboot): the script renderer as tables, the unit, and the
rendered script run by /bin/sh against a fake tree with stand-in tools."""
from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.qos import _domain as _qos
from ansible_collections.hpcnet.rdma.plugins.module_utils.qos import _check as _qoscheck
from ansible_collections.hpcnet.rdma.plugins.module_utils.qos import _boot as _qosboot
from ansible_collections.hpcnet.rdma.plugins.module_utils.qos import _plan as _qosplan
from ansible_collections.hpcnet.rdma.plugins.module_utils.stack import _config as _stack_config

BINS = {"dcb": "/usr/sbin/dcb", "mlnx_qos": "/usr/bin/mlnx_qos", "modprobe": "/usr/sbin/modprobe"}
NET = "wait_for /sys/class/net/%s"
RDMA = "wait_for /sys/class/infiniband/%s"
MODPROBE = "run rdma_cm /usr/sbin/modprobe -q rdma_cm"
MKDIR = "[ -d /sys/kernel/config/rdma_cm/{0} ] || run dir:/sys/kernel/config/rdma_cm/{0} mkdir /sys/kernel/config/rdma_cm/{0}"
CM = "/sys/kernel/config/rdma_cm/%s/ports/%d/default_roce_%s"


def body(script):
    """The lines after the shared functions: the waits and one block per key."""
    lines = script.splitlines()
    start = max(i for i, line in enumerate(lines) if line == "}") + 1
    return [line for line in lines[start:] if line]


@pytest.mark.parametrize("wanted, lines", [
    # dcb: PFC as all eight priorities, APP entries with replace (one priority) or add (several)
    ([("dcb:eth1:pfc", [3]), ("dcb:eth1:dscp.26", 3), ("dcb:eth1:dscp.48", [6, 7])],
     [NET % "eth1",
      "run_dcb dcb:eth1:pfc /usr/sbin/dcb pfc set dev eth1 prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off",
      "run_dcb dcb:eth1:dscp.26 /usr/sbin/dcb app replace dev eth1 dscp-prio 26:3",
      "run_dcb dcb:eth1:dscp.48 /usr/sbin/dcb app add dev eth1 dscp-prio 48:6 48:7"]),
    ([("dcb:swp1:pfc", []), ("dcb:swp1:trust", "dscp pcp")],
     [NET % "swp1",
      "run_dcb dcb:swp1:pfc /usr/sbin/dcb pfc set dev swp1 prio-pfc 0:off 1:off 2:off 3:off 4:off 5:off 6:off 7:off",
      "run_dcb dcb:swp1:trust /usr/sbin/dcb apptrust set dev swp1 order dscp pcp"]),
    # an absent DSCP entry is what a boot leaves: nothing, not even a wait for the NIC
    ([("dcb:eth1:dscp.26", None), ("dcb:eth1:dscp.46", None)], []),
    ([("dcb:eth1:dscp.26", None), ("dcb:eth2:pfc", [3, 4])],
     [NET % "eth2",
      "run_dcb dcb:eth2:pfc /usr/sbin/dcb pfc set dev eth2 prio-pfc 0:off 1:off 2:off 3:on 4:on 5:off 6:off 7:off"]),
    # mlnx_qos: trust first (plan order), dscp2prio per entry, PFC as a bit list
    ([("mlnx_qos:ens1:trust", "dscp"), ("mlnx_qos:ens1:dscp.26", 3), ("mlnx_qos:ens1:dscp.8", None),
      ("mlnx_qos:ens1:pfc", [3, 6])],
     [NET % "ens1",
      "run mlnx_qos:ens1:trust /usr/bin/mlnx_qos -i ens1 --trust dscp",
      "run mlnx_qos:ens1:dscp.26 /usr/bin/mlnx_qos -i ens1 --dscp2prio set,26,3",
      "run mlnx_qos:ens1:pfc /usr/bin/mlnx_qos -i ens1 --pfc 0,0,0,1,0,0,1,0"]),
    # ECN/CNP sysfs, through _qos.ecn_path
    ([("ecn:ens1:roce_np.3", 1), ("ecn:ens1:roce_rp.3", 0), ("ecn:ens1:cnp_dscp", 48),
      ("ecn:ens1:cnp_802p_prio", 6), ("ecn:ens1:roce_np.4", None)],
     [NET % "ens1",
      "put ecn:ens1:roce_np.3 1 /sys/class/net/ens1/ecn/roce_np/enable/3",
      "put ecn:ens1:roce_rp.3 0 /sys/class/net/ens1/ecn/roce_rp/enable/3",
      "put ecn:ens1:cnp_dscp 48 /sys/class/net/ens1/ecn/roce_np/cnp_dscp",
      "put ecn:ens1:cnp_802p_prio 6 /sys/class/net/ens1/ecn/roce_np/cnp_802p_prio"]),
    # rdma_cm: one modprobe, the configfs group once per device, then ToS and mode per port
    ([("rdmacm:mlx5_0:1:tos", 106), ("rdmacm:mlx5_0:1:mode", "RoCE v2"), ("rdmacm:mlx5_0:2:tos", 106),
      ("rdmacm:mlx5_0:2:mode", "IB/RoCE v1"), ("rdmacm:rxe0:1:tos", 98), ("rdmacm:rxe0:1:mode", None)],
     [RDMA % "mlx5_0", RDMA % "rxe0", MODPROBE,
      MKDIR.format("mlx5_0"),
      "put rdmacm:mlx5_0:1:tos 106 " + CM % ("mlx5_0", 1, "tos"),
      "put rdmacm:mlx5_0:1:mode 'RoCE v2' " + CM % ("mlx5_0", 1, "mode"),
      "put rdmacm:mlx5_0:2:tos 106 " + CM % ("mlx5_0", 2, "tos"),
      "put rdmacm:mlx5_0:2:mode 'IB/RoCE v1' " + CM % ("mlx5_0", 2, "mode"),
      MKDIR.format("rxe0"),
      "put rdmacm:rxe0:1:tos 98 " + CM % ("rxe0", 1, "tos")]),
    # a mode of None (the kernel default) needs no configfs at all
    ([("rdmacm:rxe0:1:mode", None)], []),
    # netdevs are waited for before RDMA devices, each once, keys stay in plan order
    ([("dcb:eth1:pfc", [3]), ("rdmacm:rxe0:1:tos", 106), ("ecn:eth1:cnp_dscp", 48)],
     [NET % "eth1", RDMA % "rxe0", MODPROBE,
      "run_dcb dcb:eth1:pfc /usr/sbin/dcb pfc set dev eth1 prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off",
      MKDIR.format("rxe0"),
      "put rdmacm:rxe0:1:tos 106 " + CM % ("rxe0", 1, "tos"),
      "put ecn:eth1:cnp_dscp 48 /sys/class/net/eth1/ecn/roce_np/cnp_dscp"]),
])
def test_render_script(wanted, lines):
    script = _qosboot.render_script(wanted, BINS)
    assert body(script) == lines + ['exit "$rc"']


def test_script_header_and_shell_functions():
    script = _qosboot.render_script([("dcb:eth1:pfc", [3])], BINS)
    assert script.startswith("#!/bin/sh\n# Managed by hpcnet.rdma (roce_qos); rollback (hpcnet.rdma.tuning_state) "
                             "removes it.\n")
    for fn in ("fail", "wait_for", "run", "run_dcb", "put"):
        assert re.search(r"^%s\(\) \{$" % fn, script, re.M), fn
    assert '[ "$waited" -lt 60 ]' in script


def test_tools_the_node_did_not_resolve_are_bare_names():
    script = _qosboot.render_script([("mlnx_qos:e:trust", "pcp"), ("rdmacm:rxe0:1:tos", 0)], {})
    assert "run mlnx_qos:e:trust mlnx_qos -i e --trust pcp" in body(script)
    assert "run rdma_cm modprobe -q rdma_cm" in body(script)


def test_every_argument_is_quoted_for_the_shell():
    odd = "e$(x)'1"       # not a name Linux accepts, but nothing may reach the shell unquoted
    script = _qosboot.render_script([("dcb:%s:pfc" % odd, [1]), ("rdmacm:d;x:1:mode", "RoCE v2")],
                                    {"dcb": "/opt/my tools/dcb", "modprobe": "/usr/sbin/modprobe"})
    lines = body(script)
    assert lines[0] == "wait_for '/sys/class/net/e$(x)'\"'\"'1'"
    assert lines[1] == "wait_for '/sys/class/infiniband/d;x'"
    assert lines[3].startswith("run_dcb 'dcb:e$(x)'\"'\"'1:pfc' '/opt/my tools/dcb' pfc set dev 'e$(x)'\"'\"'1' ")
    assert lines[4] == "[ -d '/sys/kernel/config/rdma_cm/d;x' ] || run 'dir:/sys/kernel/config/rdma_cm/d;x' " \
                       "mkdir '/sys/kernel/config/rdma_cm/d;x'"
    assert lines[5] == "put 'rdmacm:d;x:1:mode' 'RoCE v2' '/sys/kernel/config/rdma_cm/d;x/ports/1/default_roce_mode'"


@pytest.mark.parametrize("wanted, message", [
    ([("nic:eth1:mtu", 9000)], r"nic:eth1:mtu: no boot-time command"),
    ([("dcb:eth1:bogus", 1)], r"dcb:eth1:bogus: no boot-time command"),
    ([("mlnx_qos:eth1:trust", "none")], r"mlnx_qos can set trust dscp or pcp, not 'none'"),
])
def test_keys_without_a_boot_command_are_refused(wanted, message):
    with pytest.raises(ValueError, match=message):
        _qosboot.render_script(wanted, BINS)


def test_renderer_is_pure():
    wanted = [("dcb:eth1:pfc", [3]), ("rdmacm:rxe0:1:tos", 106)]
    copy = list(wanted)
    assert _qosboot.render_script(wanted, BINS) == _qosboot.render_script(copy, dict(BINS))
    assert wanted == copy


@pytest.mark.skipif(not os.path.exists("/bin/sh"), reason="no /bin/sh")
def test_rendered_scripts_are_valid_sh():
    wanted = [("mlnx_qos:ens1:trust", "dscp"), ("mlnx_qos:ens1:pfc", [3]), ("ecn:ens1:roce_np.3", 1),
              ("dcb:eth1:dscp.26", 3), ("rdmacm:rxe0:1:tos", 106), ("rdmacm:rxe0:1:mode", "RoCE v2")]
    for script in (_qosboot.render_script(wanted, BINS), _qosboot.render_script([], BINS)):
        done = subprocess.run(["/bin/sh", "-n"], input=script, text=True, capture_output=True, check=False)
        assert done.returncode == 0, done.stderr


# --------------------------------------------------------------------------- the script, run
TOOL = """#!/bin/sh
echo "$(basename "$0") $*" >> {log}
case "$*" in
  *{fail}*) echo "Attribute write: Invalid argument (stand-in)" >&2; exit {rc} ;;
esac
exit 0
"""
# configfs makes a group's default subdirectories itself (cma_configfs.c: ports/N)
MKDIR = """#!/bin/sh
echo "mkdir $*" >> {log}
{real} "$1" && {real} -p "$1/ports/1"
"""


def _run_script(tmp_path, wanted, fail="no-such-argument", rc=2, devices=("eth1", "rxe0"), wait=60, absent=(), groups=()):
    """Render, point every absolute node path into tmp_path, run it with /bin/sh; stand-in tools log argv."""
    root = tmp_path / "node"
    tools = tmp_path / "bin"
    tools.mkdir(parents=True)
    log = tmp_path / "calls"
    for name in ("dcb", "mlnx_qos", "modprobe"):
        (tools / name).write_text(TOOL.format(log=log, fail=fail, rc=rc))
        (tools / name).chmod(0o755)
    (tools / "mkdir").write_text(MKDIR.format(log=log, real=shutil.which("mkdir")))
    (tools / "mkdir").chmod(0o755)
    for d in devices:
        (root / ("sys/class/infiniband/" + d if d.startswith("rxe") else "sys/class/net/" + d)).mkdir(parents=True)
    (root / "sys/kernel/config/rdma_cm").mkdir(parents=True)
    for g in groups:
        (root / "sys/kernel/config/rdma_cm" / g / "ports/1").mkdir(parents=True)
    for path in ("sys/class/net/eth1/ecn/roce_np/enable", "sys/class/net/eth1/ecn/roce_rp/enable"):
        if path not in absent:
            (root / path).mkdir(parents=True, exist_ok=True)
    script = _qosboot.render_script(wanted, dict((n, str(tools / n)) for n in ("dcb", "mlnx_qos", "modprobe")))
    script = script.replace(" /sys/", " %s/sys/" % root).replace(" '/sys/", " '%s/sys/" % root)
    script = script.replace("-lt 60 ]", "-lt %d ]" % wait)
    env = dict(os.environ, PATH="%s:%s" % (tools, os.environ.get("PATH", "/usr/bin:/bin")))
    done = subprocess.run(["/bin/sh", "-c", script], text=True, capture_output=True, check=False, env=env)
    calls = log.read_text().splitlines() if log.exists() else []
    return done, calls, root


@pytest.mark.skipif(shutil.which("sh") is None, reason="no sh")
def test_script_applies_every_key(tmp_path):
    wanted = [("dcb:eth1:dscp.26", 3), ("dcb:eth1:pfc", [3]), ("ecn:eth1:roce_np.3", 1),
              ("ecn:eth1:cnp_dscp", 48), ("rdmacm:rxe0:1:tos", 106), ("rdmacm:rxe0:1:mode", "RoCE v2")]
    done, calls, root = _run_script(tmp_path, wanted)
    assert (done.returncode, done.stderr) == (0, "")
    group = root / "sys/kernel/config/rdma_cm/rxe0"
    assert calls == ["modprobe -q rdma_cm", "dcb app replace dev eth1 dscp-prio 26:3",
                     "dcb pfc set dev eth1 prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off",
                     "mkdir %s" % group]
    assert (root / "sys/class/net/eth1/ecn/roce_np/enable/3").read_text() == "1\n"
    assert (root / "sys/class/net/eth1/ecn/roce_np/cnp_dscp").read_text() == "48\n"
    assert (group / "ports/1/default_roce_tos").read_text() == "106\n"
    assert (group / "ports/1/default_roce_mode").read_text() == "RoCE v2\n"
    # a group that exists (created by hand before the unit ran) is used as it is
    done, calls, root = _run_script(tmp_path / "again", wanted, groups=("rxe0",))
    assert (done.returncode, done.stderr) == (0, "")
    assert not any(c.startswith("mkdir") for c in calls)
    assert (root / "sys/kernel/config/rdma_cm/rxe0/ports/1/default_roce_tos").read_text() == "106\n"


@pytest.mark.skipif(shutil.which("sh") is None, reason="no sh")
def test_script_names_each_failing_key_and_goes_on(tmp_path):
    wanted = [("dcb:eth1:pfc", [3]), ("dcb:eth1:dscp.26", 3), ("rdmacm:rxe0:1:tos", 106)]
    done, calls, root = _run_script(tmp_path, wanted, fail="prio-pfc")
    assert done.returncode == 1
    assert "hpcnet-rdma-qos: dcb:eth1:pfc failed:" in done.stderr
    assert "Attribute write: Invalid argument (stand-in)" in done.stderr
    assert "hpcnet-rdma-qos: dcb:eth1:dscp.26" not in done.stderr
    assert calls[2:] == ["dcb app replace dev eth1 dscp-prio 26:3", "mkdir %s/sys/kernel/config/rdma_cm/rxe0" % root]
    assert (root / "sys/kernel/config/rdma_cm/rxe0/ports/1/default_roce_tos").read_text() == "106\n"


@pytest.mark.skipif(shutil.which("sh") is None, reason="no sh")
def test_script_treats_dcb_stderr_as_failure(tmp_path):
    done, _calls, _root = _run_script(tmp_path, [("dcb:eth1:dscp.26", 3)], fail="replace", rc=0)
    assert done.returncode == 1 and "dcb:eth1:dscp.26 failed" in done.stderr


@pytest.mark.skipif(shutil.which("sh") is None, reason="no sh")
def test_script_names_a_sysfs_write_that_fails(tmp_path):
    wanted = [("ecn:eth1:roce_rp.3", 1), ("ecn:eth1:cnp_dscp", 48)]
    done, _calls, root = _run_script(tmp_path, wanted, absent=("sys/class/net/eth1/ecn/roce_rp/enable",))
    assert done.returncode == 1
    assert "hpcnet-rdma-qos: ecn:eth1:roce_rp.3 failed: echo 1 > %s/sys/class/net/eth1/ecn/roce_rp/enable/3" % root \
        in done.stderr
    assert (root / "sys/class/net/eth1/ecn/roce_np/cnp_dscp").read_text() == "48\n"      # went on


@pytest.mark.skipif(shutil.which("sh") is None, reason="no sh")
def test_script_waits_a_bounded_time_for_a_missing_device(tmp_path):
    done, calls, _root = _run_script(tmp_path, [("mlnx_qos:ens9:trust", "dscp")], devices=(), wait=1)
    assert done.returncode == 1
    assert "/sys/class/net/ens9 did not appear within 60 s" in done.stderr
    assert calls == ["mlnx_qos -i ens9 --trust dscp"]                  # still tried


# --------------------------------------------------------------------------- the unit
def _directives(text):
    out = {}
    for line in text.splitlines():
        if "=" in line and not line.startswith("#"):
            k, v = line.split("=", 1)
            out.setdefault(k, []).extend(v.split())
    return out


def test_unit():
    unit = _qosboot.render_unit()
    assert unit.startswith("# Managed by hpcnet.rdma (roce_qos); rollback (hpcnet.rdma.tuning_state) removes it.\n")
    d = _directives(unit)
    assert d["Type"] == ["oneshot"] and d["RemainAfterExit"] == ["yes"]
    assert d["Wants"] == ["systemd-udev-settle.service"]
    assert d["After"] == ["systemd-udev-settle.service", "sys-kernel-config.mount", "systemd-modules-load.service",
                          os.path.basename(_stack_config.RXE_UNIT), "network-pre.target"]
    assert d["ExecStart"] == ["/bin/sh", _qosboot.SCRIPT]
    assert d["WantedBy"] == ["multi-user.target"]
    assert os.path.basename(_qosboot.UNIT_LINK) == os.path.basename(_qosboot.UNIT_FILE)
    assert _qosboot.UNIT_LINK.startswith("/etc/systemd/system/multi-user.target.wants/")


def test_unit_ordering_has_no_cycle_with_the_soft_roce_unit():
    """We start after the rxe unit; ordering ourselves before network.target is only safe while the
    rxe unit does not start after the network."""
    ours = _directives(_qosboot.render_unit())
    rxe = _directives(_stack_config.rxe_unit([{"name": "rxe0", "netdev": "data0"}], "/usr/bin/rdma"))
    assert os.path.basename(_stack_config.RXE_UNIT) in ours["After"]
    assert os.path.basename(_qosboot.UNIT_FILE) not in rxe.get("After", []) + rxe.get("Before", [])
    for target in ours.get("Before", []):
        assert target not in rxe.get("After", []) and target not in rxe.get("Wants", []), target
        assert target in rxe.get("Before", []), target


def test_planned_paths():
    assert _qosboot.planned_paths("runtime") == []
    assert _qosboot.planned_paths("persist") == _qosboot.planned_paths("both") == \
        [_qosboot.SCRIPT, _qosboot.UNIT_FILE, _qosboot.UNIT_LINK]


# --------------------------------------------------------------------------- a bake: NICs found at boot
BAKED = {"pfc": [3], "dscp_map": {26: 3}, "tos": 106, "trust": "dscp", "roce_mode": "v2",
         "ecn": {"np": True, "rp": False}, "cnp": {"dscp": 48}}
PRIO_OFF = "0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off"


def _run_deferred(tmp_path, deferred, nics, fail="no-such-argument", on_unsupported="warn", backend="auto", ecn=()):
    """A script with only deferred selections, run against a fake boot: ``nics`` name -> driver,
    soft-RoCE rxe0 on the first; ``ecn`` the NICs whose driver exposes ECN sysfs."""
    root, tools, log = tmp_path / "node", tmp_path / "bin", tmp_path / "calls"
    tools.mkdir(parents=True)
    for name in ("dcb", "mlnx_qos", "modprobe"):
        (tools / name).write_text(TOOL.format(log=log, fail=fail, rc=1))
        (tools / name).chmod(0o755)
    (tools / "mkdir").write_text(MKDIR.format(log=log, real=shutil.which("mkdir")))
    (tools / "mkdir").chmod(0o755)
    for nic, driver in nics.items():
        (root / "sys/bus/pci/drivers" / driver).mkdir(parents=True, exist_ok=True)
        (root / "sys/class/net" / nic / "device").mkdir(parents=True)
        os.symlink(str(root / "sys/bus/pci/drivers" / driver), str(root / "sys/class/net" / nic / "device/driver"))
    for nic in ecn:     # the driver's ECN sysfs files (set to 0)
        for role in ("roce_np", "roce_rp"):
            (root / "sys/class/net" / nic / "ecn" / role / "enable").mkdir(parents=True)
            (root / "sys/class/net" / nic / "ecn" / role / "enable/3").write_text("0\n")
        (root / "sys/class/net" / nic / "ecn/roce_np/cnp_dscp").write_text("0\n")
    port = root / "sys/class/infiniband/rxe0/ports/1/gid_attrs/ndevs"
    port.mkdir(parents=True)
    (port / "0").write_text(sorted(nics)[0] + "\n")
    (root / "sys/kernel/config/rdma_cm").mkdir(parents=True)
    bins = dict((n, str(tools / n)) for n in ("dcb", "mlnx_qos", "modprobe"))
    lines = _qosboot.deferred_lines(deferred, _qoscheck.validate(BAKED), backend, on_unsupported, bins)
    script = _qosboot.render_script([], bins, lines).replace("/sys/", "%s/sys/" % root).replace("-lt 60 ]", "-lt 0 ]")
    env = dict(os.environ, PATH="%s:%s" % (tools, os.environ.get("PATH", "/usr/bin:/bin")))
    done = subprocess.run(["/bin/sh", "-c", script], text=True, capture_output=True, check=False, env=env)
    calls = [c for c in (log.read_text().splitlines() if log.exists() else []) if " show " not in c]
    cm = root / "sys/kernel/config/rdma_cm/rxe0/ports/1"
    got = dict((f, (cm / ("default_roce_" + f)).read_text() if (cm / ("default_roce_" + f)).exists() else None)
               for f in ("tos", "mode"))
    return done, calls, got, root


@pytest.mark.skipif(shutil.which("sh") is None, reason="no sh")
@pytest.mark.parametrize("on_unsupported, rc", [("warn", 0), ("fail", 1)])
def test_baked_script_on_a_nic_without_dcb_sets_only_the_rdma_cm(tmp_path, on_unsupported, rc):
    """The lab VM: virtio-net data0 (no DCB, no ECN sysfs) with soft-RoCE rxe0 on it."""
    done, calls, cm, _root = _run_deferred(tmp_path, [("name", "data0")], {"data0": "virtio_net"}, fail='"pfc show"',
                                           on_unsupported=on_unsupported)
    assert done.returncode == rc, done.stderr
    assert "hpcnet-rdma-qos: data0: dcb not supported here: Attribute write: Invalid argument" in done.stderr
    assert "hpcnet-rdma-qos: data0: ecn not supported here: no /" in done.stderr
    assert calls == ["modprobe -q rdma_cm", "mkdir %s/node/sys/kernel/config/rdma_cm/rxe0" % tmp_path]
    assert cm == {"tos": "106\n", "mode": "RoCE v2\n"}


@pytest.mark.skipif(shutil.which("sh") is None, reason="no sh")
@pytest.mark.parametrize("deferred, nics, backend, nic_calls", [
    # a NIC with DCB (ice): dcb, APP entries first, then PFC and apptrust
    ([("driver", "ice")], {"ens1": "ice", "eth0": "virtio_net"}, "auto",
     ["dcb app replace dev ens1 dscp-prio 26:3", "dcb pfc set dev ens1 prio-pfc " + PRIO_OFF,
      "dcb apptrust set dev ens1 order dscp"]),
    # mlx5 with mlnx_qos installed: mlnx_qos, trust first
    ([("name", "ens2")], {"ens2": "mlx5_core"}, "auto",
     ["mlnx_qos -i ens2 --trust dscp", "mlnx_qos -i ens2 --dscp2prio set,26,3", "mlnx_qos -i ens2 --pfc 0,0,0,1,0,0,0,0"]),
    # backend dcb forces dcb on mlx5 too; every NIC of the driver
    ([("driver", "mlx5_core")], {"ens2": "mlx5_core", "ens3": "mlx5_core"}, "dcb",
     ["dcb app replace dev ens2 dscp-prio 26:3", "dcb pfc set dev ens2 prio-pfc " + PRIO_OFF,
      "dcb apptrust set dev ens2 order dscp",
      "dcb app replace dev ens3 dscp-prio 26:3", "dcb pfc set dev ens3 prio-pfc " + PRIO_OFF,
      "dcb apptrust set dev ens3 order dscp"]),
])
def test_baked_script_finds_its_nics_and_backend_at_boot(tmp_path, deferred, nics, backend, nic_calls):
    done, calls, cm, root = _run_deferred(tmp_path, deferred, nics, backend=backend, ecn=nics)
    kind, value = deferred[0]
    selected = [n for n in sorted(nics) if (n if kind == "name" else nics[n]) == value]
    assert done.returncode == 0, done.stderr
    # only an informational line for a selected NIC without an RDMA port (rxe0 sits on the first NIC)
    assert done.stderr.splitlines() == ["hpcnet-rdma-qos: %s has no RDMA port: no RDMA CM ToS/mode to set" % n
                                        for n in selected[1:]]
    assert [c for c in calls if not c.startswith(("modprobe", "mkdir"))] == nic_calls
    for nic in selected:
        ecn = root / "sys/class/net" / nic / "ecn"
        assert (ecn / "roce_np/enable/3").read_text() == "1\n" and (ecn / "roce_rp/enable/3").read_text() == "0\n"
        assert (ecn / "roce_np/cnp_dscp").read_text() == "48\n"
    assert cm == {"tos": "106\n", "mode": "RoCE v2\n"}      # rxe0 sits on the first of the NICs


@pytest.mark.skipif(shutil.which("sh") is None, reason="no sh")
@pytest.mark.parametrize("deferred, message", [
    ([("name", "data0")], "hpcnet-rdma-qos: /NODE/sys/class/net/data0 did not appear within 60 s"),
    ([("driver", "mlx5_core")], "hpcnet-rdma-qos: no NIC of driver mlx5_core appeared within 60 s"),
])
def test_baked_script_fails_when_its_nic_never_appears(tmp_path, deferred, message):
    done, calls, _cm, _root = _run_deferred(tmp_path, deferred, {"eth0": "virtio_net"})
    assert done.returncode == 1
    assert message.replace("/NODE", "%s/node" % tmp_path) in done.stderr
    assert calls == ["modprobe -q rdma_cm"]


@pytest.mark.parametrize("params, message", [
    (dict(BAKED, ecn={"np": True}, dscp_map={}), r"ecn.priorities: required for a NIC that is not present"),
    (dict(BAKED, dscp_map={26: 5}), r"tos: 106 \(DSCP 26\) lands in priority 5 on name=data0"),
])
def test_a_bake_refuses_what_the_input_alone_makes_incoherent(params, message):
    seen = {"nics": {}, "ports": [], "files": {}, "bins": {}, "backend": "auto", "deferred": [("name", "data0")]}
    with pytest.raises(ValueError, match=message):
        _qosplan.plan(_qoscheck.validate(params), seen, "warn", "persist")


def test_a_bake_plans_the_boot_files_alone_and_names_the_deferred_nic():
    seen = {"nics": {}, "ports": [], "files": {}, "bins": {}, "backend": "auto", "deferred": [("name", "data0")]}
    planned = _qosplan.plan(_qoscheck.validate(BAKED), seen, "warn", "persist")
    assert [c.key for c in planned["plan"].changes] == ["file:" + p for p in _qosboot.planned_paths("persist")]
    assert planned["app"]["netdevs"] == ["data0"] and planned["app"]["hcas"] == []
    assert any("name=data0 is not present here" in w for w in planned["warnings"])
    assert _qosboot.deferred_lines([], _qoscheck.validate(BAKED), "auto", "warn") == []
