# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The boot-time applier of roce_qos (pure): a POSIX sh script and the oneshot unit that runs it.

Nothing roce_qos sets survives a reboot: the rdma_cm configfs groups, the dcbnl APP table, PFC and
trust, mlnx_qos state and the ECN sysfs are all gone, so the kernel would fall back to ToS 0 while
NCCL still asks for 106.  The script is rendered from the *wanted* value of every runtime key the
planner considered (``_qos.plan_nic`` / ``plan_rdma_cm`` record them in plan order) and re-applies
each with the command its runtime ``write_value`` uses.  The files are ``file:`` keys, so the
journal records them and rollback (``tuning_state``) removes them.

An image bake (mode persist in a chroot, ``rdma_mode: bake``) has no data NIC and no RDMA device:
a ``name`` or ``driver`` selection that matches nothing there is *deferred* - :func:`deferred_lines`
renders, from the input alone, a part of the script that finds those NICs at boot and decides each
one's backend, DCB support, ECN sysfs and RDMA ports then, as roce_qos would have on that node.
"""
from __future__ import annotations

import posixpath
import shlex

from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _dcb
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _files
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _mlnx_qos
from ansible_collections.hpcnet.rdma.plugins.module_utils.qos import _domain as _qos
from ansible_collections.hpcnet.rdma.plugins.module_utils.qos import _keys as _qoskeys
from ansible_collections.hpcnet.rdma.plugins.module_utils.stack import _config as _stack_config
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._plan import Plan

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List, Optional, Tuple

SCRIPT = "/usr/local/lib/hpcnet-rdma/roce-qos.sh"
UNIT_FILE = "/etc/systemd/system/hpcnet-rdma-qos.service"
UNIT_LINK = "/etc/systemd/system/multi-user.target.wants/hpcnet-rdma-qos.service"
WAIT_SECONDS = 60
NET_SYSFS = "/sys/class/net"

_HEADER = """#!/bin/sh
# Managed by hpcnet.rdma (roce_qos); rollback (hpcnet.rdma.tuning_state) removes it.
# Run at boot by {unit}: re-applies the RoCE QoS that roce_qos set live
# (PFC, DSCP trust and map, ECN/CNP, RDMA CM ToS and mode), which the kernel does not keep across
# a reboot.  Every failing setting prints a line naming its key; the others are still applied and
# the exit status is 1.
rc=0
waited=0

fail() {{
    echo "hpcnet-rdma-qos: $1 failed: $2" >&2
    rc=1
}}

# wait_for PATH: NICs and RDMA devices may appear after udev settled; {wait} s in all
wait_for() {{
    while [ ! -e "$1" ] && [ "$waited" -lt {wait} ]; do
        sleep 1
        waited=$((waited + 1))
    done
    if [ ! -e "$1" ]; then
        echo "hpcnet-rdma-qos: $1 did not appear within {wait} s" >&2
        rc=1
    fi
}}

# run KEY COMMAND [ARG...]: a non-zero exit status fails KEY
run() {{
    key=$1
    shift
    out=$("$@" 2>&1)
    status=$?
    if [ "$status" -ne 0 ]; then
        fail "$key" "$* (rc=$status): $out"
    fi
}}

# run_dcb KEY COMMAND [ARG...]: dcb also reports some errors on stderr with exit status 0
run_dcb() {{
    key=$1
    shift
    err=$("$@" 2>&1 >/dev/null)
    status=$?
    if [ "$status" -ne 0 ] || [ -n "$err" ]; then
        fail "$key" "$* (rc=$status): $err"
    fi
}}

# put KEY VALUE PATH: one sysfs/configfs value
put() {{
    if ! echo "$2" > "$3"; then
        fail "$1" "echo $2 > $3"
    fi
}}
"""

_UNIT = """# Managed by hpcnet.rdma (roce_qos); rollback (hpcnet.rdma.tuning_state) removes it.
[Unit]
Description=hpcnet.rdma: re-apply RoCE QoS (PFC, DSCP trust and map, ECN, RDMA CM ToS and mode)
Wants=systemd-udev-settle.service
After=systemd-udev-settle.service sys-kernel-config.mount systemd-modules-load.service {rxe} network-pre.target
Before=network.target

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/sh {script}

[Install]
WantedBy=multi-user.target
"""

_DEFERRED = """
# NICs selected by name or driver that were not present when the image was baked: found at boot.
# driver_nics DRIVER: the NICs the driver has bound now
driver_nics() {{
    for dev in /sys/class/net/*; do
        drv=$(readlink "$dev/device/driver" 2>/dev/null) || continue
        if [ "${{drv##*/}}" = "$1" ]; then
            echo "${{dev##*/}}"
        fi
    done
}}

# select_nics name|driver VALUE: sets $nics (waiting as wait_for does)
select_nics() {{
    nics=
    if [ "$1" = name ]; then
        wait_for "/sys/class/net/$2"
        if [ -e "/sys/class/net/$2" ]; then
            nics=$2
        fi
        return 0
    fi
    nics=$(driver_nics "$2")
    while [ -z "$nics" ] && [ "$waited" -lt {wait} ]; do
        sleep 1
        waited=$((waited + 1))
        nics=$(driver_nics "$2")
    done
    if [ -z "$nics" ]; then
        echo "hpcnet-rdma-qos: no NIC of driver $2 appeared within {wait} s" >&2
        rc=1
    fi
}}

# unsupported IF FEATURE REASON: what the NIC cannot do (roce_qos on_unsupported: {on_unsupported})
unsupported() {{
    echo "hpcnet-rdma-qos: $1: $2 not supported here: $3" >&2{fail}
}}
"""

if TYPE_CHECKING:
    Wanted = _qoskeys.Wanted
    Deferred = List[Tuple[str, str]]      # (selector, value) of each selection found only at boot
_NIC = "@IF@"                         # the NIC's name in the key commands of a deferred NIC


def _nic_lines(keys: Wanted, bins: Dict[str, str]) -> List[str]:
    """The commands of ``keys`` (of the NIC ``_NIC``) with the NIC's name taken from ``$nic``."""
    return [line.replace(_NIC, '"$nic"') for key, value in keys for line in _key_commands(key, value, bins)]


def _deferred_nic(desired: Dict[str, Any], backend: str, bins: Dict[str, str]) -> List[str]:
    """The shell function ``qos_nic IF``: the NIC side and the RDMA CM side of one deferred NIC."""
    dmap, trust, pfc = desired["dscp_map"], desired["trust"], desired["pfc"]
    mlnx: Wanted = [("mlnx_qos:%s:trust" % _NIC, trust)] if trust else []
    mlnx += [("mlnx_qos:%s:dscp.%d" % (_NIC, d), p) for d, p in sorted(dmap.items())]
    dcb: Wanted = [("dcb:%s:dscp.%d" % (_NIC, d), p) for d, p in sorted(dmap.items())]
    if pfc is not None:
        mlnx.append(("mlnx_qos:%s:pfc" % _NIC, pfc))
        dcb.append(("dcb:%s:pfc" % _NIC, pfc))
    body = ["qos_nic() {", "    nic=$1", '    drv=$(readlink "/sys/class/net/$nic/device/driver" 2>/dev/null)',
            '    dcb_says=$(%s -j pfc show dev "$nic" 2>&1 >/dev/null)' % _q(_bin(bins, "dcb"))]
    use_mlnx = {"auto": '[ "${drv##*/}" = mlx5_core ] && command -v %s >/dev/null 2>&1' % _q(_bin(bins, "mlnx_qos")),
                "mlnx_qos": "true", "dcb": "false"}[backend]
    body += ["    if %s; then" % use_mlnx] + ["        " + x for x in _nic_lines(mlnx, bins)]
    body += ['    elif [ -z "$dcb_says" ]; then'] + ["        " + x for x in _nic_lines(dcb, bins)]
    if trust:
        # dcb apptrust needs iproute2 6.3 and a driver with it; mlx5 and ice switch to DSCP trust
        # with the first DSCP APP entry instead (and back to PCP with none, as a boot leaves them)
        argv = _dcb.DCB.argv("set_apptrust", ifname=_NIC, order=[trust])
        apply = _q(_bin(bins, "dcb"), *argv[1:]).replace(_NIC, '"$nic"')
        body += ["        if ! %s >/dev/null 2>&1; then" % apply]
        if trust == "pcp" or dmap:
            body += ['            echo "hpcnet-rdma-qos: $nic: no dcb apptrust; the driver trusts %s by its DSCP '
                     'entries" >&2' % trust]
        else:
            body += ['            fail "dcb:$nic:trust" "dcb apptrust set dev $nic order dscp: no apptrust here, '
                     'and trust dscp without a dscp_map needs it"']
        body += ["        fi"]
    body += ["    else", '        unsupported "$nic" dcb "$dcb_says"', "    fi"]
    ecn = desired["ecn"]
    for role, on in (("roce_np", ecn and ecn["np"]), ("roce_rp", ecn and ecn["rp"])):
        for p in ecn_priorities(desired) if ecn else []:
            body += _if_exists(_qos.ecn_path(_NIC, "%s.%d" % (role, p)), "ecn:%s:%s.%d" % (_NIC, role, p),
                               1 if on else 0)
    for field, value in (("cnp_dscp", (desired["cnp"] or {}).get("dscp")),
                         ("cnp_802p_prio", (desired["cnp"] or {}).get("priority"))):
        if value is not None:
            body += _if_exists(_qos.ecn_path(_NIC, field), "ecn:%s:%s" % (_NIC, field), value)
    body += ["    ports=0", "    for port in %s/*/ports/*; do" % _qos.IB_SYSFS,
             '        if [ "$(cat "$port/gid_attrs/ndevs/0" 2>/dev/null)" != "$nic" ]; then', "            continue",
             "        fi", "        ports=$((ports + 1))", '        dev=${port%/ports/*}', "        dev=${dev##*/}",
             "        p=${port##*/}", '        group=%s/"$dev"' % _qos.CONFIGFS,
             '        [ -d "$group" ] || run "dir:$group" mkdir "$group"',
             '        put "rdmacm:$dev:$p:tos" %s "$group/ports/$p/default_roce_tos"' % _q(desired["tos"]),
             '        put "rdmacm:$dev:$p:mode" %s "$group/ports/$p/default_roce_mode"'
             % _q(_qos.ROCE_MODES[desired["roce_mode"]]),
             "    done",
             '    if [ "$ports" -eq 0 ]; then',
             '        echo "hpcnet-rdma-qos: $nic has no RDMA port: no RDMA CM ToS/mode to set" >&2', "    fi", "}"]
    return body


def _if_exists(path: str, key: str, value: Any) -> List[str]:
    """Set one ECN/CNP sysfs value of a deferred NIC where its driver exposes it."""
    where = _q(path).replace(_NIC, '"$nic"')
    return ["    if [ -e %s ]; then" % where, "        put %s %s %s" % (key.replace(_NIC, '"$nic"'), _q(value), where),
            "    else", '        unsupported "$nic" ecn "no %s"' % path.replace(_NIC, "$nic"), "    fi"]


def ecn_priorities(desired: Dict[str, Any]) -> List[int]:
    """The priorities ECN is set on at boot: ``ecn.priorities``, else the data priority the input
    gives (its DSCP in ``dscp_map``); ValueError when neither names one (the NIC's table is unknown)."""
    ecn = desired["ecn"] or {}
    if ecn.get("priorities") is not None:
        return ecn["priorities"]
    if desired["dscp"] in desired["dscp_map"]:
        return [desired["dscp_map"][desired["dscp"]]]
    raise ValueError("ecn.priorities: required for a NIC that is not present (mode persist, a bake): the RoCE "
                     "priority of tos %d (DSCP %d) is not in dscp_map and the NIC's table is not known here; "
                     "allowed: a list of priorities 0..7, or dscp_map: {%d: P}"
                     % (desired["tos"], desired["dscp"], desired["dscp"]))


def deferred_lines(deferred: Deferred, desired: Dict[str, Any], backend: str, on_unsupported: str,
                   bins: Optional[Dict[str, str]] = None) -> List[str]:
    """The part of the boot script for the selections found only at boot; none when ``deferred`` is empty."""
    if not deferred:
        return []
    bins = bins or {}
    fail = "" if on_unsupported == "warn" else "\n    rc=1"
    lines = [_DEFERRED.format(wait=WAIT_SECONDS, on_unsupported=on_unsupported, fail=fail)]
    lines += _deferred_nic(desired, backend, bins)
    lines.append("run rdma_cm " + _q(_bin(bins, "modprobe"), "-q", "rdma_cm"))
    for kind, value in deferred:
        lines += ["select_nics %s" % _q(kind, value), "for nic in $nics; do", '    qos_nic "$nic"', "done"]
    return lines


def _q(*args: Any) -> str:
    return " ".join(shlex.quote(str(a)) for a in args)


def _bin(bins: Dict[str, str], name: str) -> str:
    return bins.get(name) or name


def _key_commands(key: str, value: Any, bins: Dict[str, str]) -> List[str]:
    """The script lines that bring one key to ``value`` from the state a boot leaves."""
    domain, target = key.split(":", 1)
    if domain == "dcb":
        ifname, field = _qos._split(target)
        dcb = _bin(bins, "dcb")
        if field == "pfc":
            on = set(_qos._as_list(value))
            prios = ["%d:%s" % (p, "on" if p in on else "off") for p in _qos.PRIORITIES]
            return ["run_dcb " + _q(key, dcb, *_dcb.DCB.argv("set_pfc", ifname=ifname, prios=prios)[1:])]
        if field == "trust":
            argv = _dcb.DCB.argv("set_apptrust", ifname=ifname, order=str(value or "").split())
            return ["run_dcb " + _q(key, dcb, *argv[1:])]
        if field.startswith("dscp."):
            dscp = int(field[5:])
            if value is None:
                return []          # the APP table is empty after a boot
            if isinstance(value, list):
                pairs = ["%d:%d" % (dscp, p) for p in _qos._as_list(value)]
                return ["run_dcb " + _q(key, dcb, *_dcb.DCB.argv("add_app", ifname=ifname, pairs=pairs)[1:])]
            pair = "%d:%d" % (dscp, int(value))
            return ["run_dcb " + _q(key, dcb, *_dcb.DCB.argv("replace_app", ifname=ifname, pairs=[pair])[1:])]
    elif domain == "mlnx_qos":
        ifname, field = _qos._split(target)
        tool = _bin(bins, "mlnx_qos")
        if field == "pfc":
            on = set(_qos._as_list(value))
            bits = ",".join("1" if p in on else "0" for p in _qos.PRIORITIES)
            return ["run " + _q(key, tool, *_mlnx_qos.MLNX_QOS.argv("set_pfc", ifname=ifname, pfc=bits)[1:])]
        if field == "trust":
            if value not in ("dscp", "pcp"):
                raise ValueError("%s: mlnx_qos can set trust dscp or pcp, not %r" % (key, value))
            return ["run " + _q(key, tool, *_mlnx_qos.MLNX_QOS.argv("set_trust", ifname=ifname, trust=value)[1:])]
        if field.startswith("dscp."):
            if value is None:
                return []          # the firmware default mapping after a boot
            argv = _mlnx_qos.MLNX_QOS.argv("set_dscp2prio", ifname=ifname, op="set", dscp=int(field[5:]),
                                           prio=int(value))
            return ["run " + _q(key, tool, *argv[1:])]
    elif domain == "ecn":
        ifname, field = _qos._split(target)
        if value is None:
            return []
        return ["put " + _q(key, int(value), _qos.ecn_path(ifname, field))]
    elif domain == "rdmacm":
        device, port, field = _qos.RDMACM._parse(target)
        if value is None:
            return []              # the kernel's own default
        return ["put " + _q(key, value, _qos.cm_path(device, port, field))]
    raise ValueError("%s: no boot-time command for this key" % key)


def _device(key: str) -> Tuple[str, str]:
    """("net", IF) or ("rdma", DEV): the device a key belongs to."""
    domain, target = key.split(":", 1)
    if domain == "rdmacm":
        return "rdma", _qos.RDMACM._parse(target)[0]
    return "net", _qos._split(target)[0]


def render_script(wanted: Wanted, bins: Optional[Dict[str, str]] = None, deferred: Optional[List[str]] = None) -> str:
    """The boot script for ``wanted`` ((key, wanted value) in plan order); ``bins`` maps a tool
    (dcb, mlnx_qos, modprobe) to its absolute path on the node (a bare name when unknown).

    A key whose wanted value is what a boot leaves (an absent DSCP entry) adds nothing, not even a
    wait for its device, so the script does not depend on what the node held before the tune.
    ``deferred``: the lines of :func:`deferred_lines`, run after those of ``wanted``."""
    steps = [(key, cmds) for key, cmds in ((k, _key_commands(k, v, bins or {})) for k, v in wanted) if cmds]
    devices: List[Tuple[str, str]] = []
    for key, _cmds in steps:
        if _device(key) not in devices:
            devices.append(_device(key))
    lines = [_HEADER.format(unit=posixpath.basename(UNIT_FILE), wait=WAIT_SECONDS)]
    for kind, name in sorted(devices, key=lambda d: d[0] == "rdma"):
        lines.append("wait_for " + _q("%s/%s" % (NET_SYSFS if kind == "net" else _qos.IB_SYSFS, name)))
    if any(kind == "rdma" for kind, _name in devices):
        lines.append("run rdma_cm " + _q(_bin(bins or {}, "modprobe"), "-q", "rdma_cm"))
    groups: List[str] = []
    for key, cmds in steps:
        kind, name = _device(key)
        if kind == "rdma" and _qos.cm_dir(name) not in groups:
            group = _qos.cm_dir(name)
            groups.append(group)
            lines.append("[ -d %s ] || run %s mkdir %s" % (_q(group), _q("dir:" + group), _q(group)))
        lines.extend(cmds)
    lines.extend(deferred or [])
    lines.append('exit "$rc"')
    return "\n".join(lines) + "\n"


def render_unit() -> str:
    return _UNIT.format(rxe=posixpath.basename(_stack_config.RXE_UNIT), script=SCRIPT)


def planned_paths(mode: str) -> List[str]:
    """The files roce_qos may plan in ``mode``: read their state before planning."""
    return [SCRIPT, UNIT_FILE, UNIT_LINK] if mode in ("persist", "both") else []


def plan_files(wanted: Wanted, bins: Dict[str, str], files: Dict[str, Any], plan: Plan,
               previous: Dict[str, Any], deferred: Optional[List[str]] = None) -> None:
    """Add the script, the unit and its wants link as ``file:`` keys; nothing when no key is wanted
    and nothing is deferred (every setting unsupported on this node).  ``files``: path → current
    FileState; ``deferred``: the lines of :func:`deferred_lines`."""
    if not wanted and not deferred:
        return
    for path, after in ((SCRIPT, _files.owned(render_script(wanted, bins, deferred), "0755")),
                        (UNIT_FILE, _files.owned(render_unit())),
                        (UNIT_LINK, {"link": UNIT_FILE})):
        before = files.get(path)
        previous["file:" + path] = before
        plan.add("file:" + path, before, after)
