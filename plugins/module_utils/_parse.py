# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

# Pure text -> dict parsers for the output of ethtool and iproute2.
#
# Nothing here runs a command or touches the system: every function takes the text a
# tool printed and returns plain Python data, or raises ParseError.
#
# Parsing is by field name ("RX:", "Combined:", "rx-usecs:" ...), never by column or line
# position, so the ioctl-era layout (ethtool < 5.6), the netlink layout of ethtool 5.x/6.1
# and the tab-aligned layout of newer ethtool 6.x all parse the same way.  Lines a parser
# does not know are ignored (ring extras are kept under "extra"), so newer tool versions
# do not break it.

import json
import re
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.hpcnet.rdma.plugins.module_utils._parsing import (  # noqa: F401
    NA as _NA, ParseError, int_or_none as _int_or_none, is_not_supported, lines as _lines,
    load_json_list, load_json_object as _load_json_object, snake as _snake, split_field as _split_field)

__all__ = [
    "ParseError",
    "is_not_supported",
]


# --------------------------------------------------------------------------- DCB / RoCE tools
#
# iproute2 `dcb -j` prints one JSON object per command (dcb/dcb_pfc.c, dcb_app.c,
# dcb_apptrust.c): booleans for on/off values (json_print's print_on_off), arrays for the
# per-priority maps.  `mlnx_qos -i IF` (NVIDIA mlnx-tools, python/mlnx_qos) has no JSON mode; it
# is parsed by its labels ("Priority trust state:", "PFC configuration:", "prio:N dscp:...").
# `ibv_devinfo` (rdma-core) is parsed by its "name: value" labels as well.

__all__ += [
    "IB_MTU_BYTES",
    "parse_ibv_devinfo",
]

# IB MTU enum (enum ib_mtu / ibv_mtu) -> bytes
IB_MTU_BYTES = {1: 256, 2: 512, 3: 1024, 4: 2048, 5: 4096}

def parse_ibv_devinfo(text: str) -> Dict[str, Dict[str, Any]]:
    """Parse ``ibv_devinfo`` (rdma-core) into ``{hca_id: {"transport", "fw_ver", "node_guid",
    "ports": {port: {"state", "max_mtu", "active_mtu", "link_layer"}}}}``.

    ``max_mtu``/``active_mtu`` are bytes (``4096 (5)`` -> 4096; the enum in parentheses must agree
    with the bytes, see :data:`IB_MTU_BYTES`); ``state`` is the name (``PORT_ACTIVE``).
    """
    tool = "ibv_devinfo"
    out = {}  # type: Dict[str, Dict[str, Any]]
    dev = None  # type: Optional[Dict[str, Any]]
    port = None  # type: Optional[Dict[str, Any]]
    for line in _lines(text, tool):
        field = _split_field(line)
        if field is None:
            continue
        label, value = field
        if label == "hca_id":
            dev = {"ports": {}}
            out[value] = dev
            port = None
        elif dev is None:
            continue
        elif label == "port":
            try:
                number = int(value)
            except ValueError:
                raise ParseError("%s: bad port number in line %r" % (tool, line)) from None
            port = {"state": None, "max_mtu": None, "active_mtu": None, "link_layer": None}
            dev["ports"][number] = port
        elif port is not None and label in ("max_mtu", "active_mtu"):
            m = re.match(r"^(\d+)\s*\((\d+)\)$", value)
            if not m or IB_MTU_BYTES.get(int(m.group(2))) != int(m.group(1)):
                raise ParseError("%s: %s must read like '4096 (5)' in line %r" % (tool, label, line))
            port[label] = int(m.group(1))
        elif port is not None and label == "state":
            port["state"] = value.split()[0]
        elif port is not None and label == "link_layer":
            port["link_layer"] = value
        elif port is None and label in ("transport", "fw_ver", "node_guid"):
            dev[label] = value
    if not out:
        raise ParseError("%s: no 'hca_id:' line in output" % tool)
    return out


# --------------------------------------------------------------------------- RDMA stack and fabric facts
#
# rdma-core's ``ibv_devinfo -v`` and infiniband-diags' ``ibstat`` print "label: value" lines;
# iproute2's ``rdma -j link`` prints JSON; ``nvidia-smi topo -m`` prints a tab-separated matrix;
# /proc/net/softnet_stat is hex columns, /proc/net/snmp header/value line pairs.  Package tools:
# ``apt-cache policy``, ``apt-get -s install``, ``apt-cache depends``, ``dpkg-query -W`` and dnf's
# transaction table.  Kernel module metadata: modules.dep, modules.builtin, modules.softdep.

__all__ += [
    "kmod_name",
    "parse_apt_cache_depends",
    "parse_apt_cache_policy",
    "parse_apt_simulate",
    "parse_dnf_transaction",
    "parse_dpkg_query_status",
    "parse_ibstat",
    "parse_ibv_devinfo_verbose",
    "parse_modules_builtin",
    "parse_modules_dep",
    "parse_modules_softdep",
    "parse_nvidia_smi_topo",
    "parse_proc_net_snmp",
    "parse_rdma_link_json",
    "parse_softnet_stat",
]

# "PORT_ACTIVE (4)", "4096 (5)", "2.5 Gbps (1)": value, then the enum in parentheses
_ENUM_VALUE = re.compile(r"^(?P<text>.*?)\s*\((?P<enum>\d+)\)$")
_IB_MTU = {1: 256, 2: 512, 3: 1024, 4: 2048, 5: 4096}
# "GID[  0]:  fe80::5054:ff:fe12:3456, RoCE v2" (rdma-core >= 25) or the bare GID (older)
_GID_LINE = re.compile(r"^GID\[\s*(?P<index>\d+)\]:\s*(?P<gid>[0-9a-fA-F:.]+)(?:,\s*(?P<type>.+))?$")


def _enum_field(value: str) -> Tuple[str, Optional[int]]:
    m = _ENUM_VALUE.match(value)
    if not m:
        return value, None
    return m.group("text"), int(m.group("enum"))


def parse_ibv_devinfo_verbose(text: str) -> Dict[str, Dict[str, Any]]:
    """Parse ``ibv_devinfo -v`` (also plain ``ibv_devinfo``) into ``{hca_id: device}``.

    device: ``transport``, ``fw_ver``, ``node_guid``, ``sys_image_guid``, ``vendor_id``,
    ``vendor_part_id``, ``hw_ver``, ``board_id``, ``phys_port_cnt`` (int), ``ports``:
    ``{port: {"state", "phys_state", "max_mtu", "active_mtu" (bytes), "link_layer",
    "active_width", "active_speed", "sm_lid", "port_lid", "gids": [{"index", "gid", "type"}]}}``.
    MTUs must read like ``4096 (5)`` with the enum agreeing with the bytes.
    """
    tool = "ibv_devinfo -v"
    devices = {}  # type: Dict[str, Dict[str, Any]]
    dev = None  # type: Optional[Dict[str, Any]]
    port = None  # type: Optional[Dict[str, Any]]
    device_fields = ("transport", "fw_ver", "node_guid", "sys_image_guid", "vendor_id",
                     "vendor_part_id", "hw_ver", "board_id")
    for line in _lines(text, tool):
        gid = _GID_LINE.match(line)
        if gid and port is not None:
            port["gids"].append({"index": int(gid.group("index")), "gid": gid.group("gid").lower(),
                                 "type": gid.group("type").strip() if gid.group("type") else None})
            continue
        field = _split_field(line)
        if field is None:
            continue
        label, value = field
        if label == "hca_id":
            dev = {"ports": {}, "phys_port_cnt": None}
            dev.update(dict.fromkeys(device_fields))
            devices[value] = dev
            port = None
        elif dev is None:
            continue
        elif label == "port":
            if not value.isdigit():
                raise ParseError("%s: bad port number in line %r" % (tool, line))
            port = {"state": None, "phys_state": None, "max_mtu": None, "active_mtu": None,
                    "link_layer": None, "active_width": None, "active_speed": None,
                    "sm_lid": None, "port_lid": None, "gids": []}
            dev["ports"][int(value)] = port
        elif port is None:
            if label in device_fields:
                dev[label] = _enum_field(value)[0] if label == "transport" else value
            elif label == "phys_port_cnt":
                dev[label] = _int_or_none(value, tool, line)
        elif label in ("max_mtu", "active_mtu"):
            number, enum = _enum_field(value)
            if enum is None or not number.isdigit() or _IB_MTU.get(enum) != int(number):
                raise ParseError("%s: %s must read like '4096 (5)' in line %r" % (tool, label, line))
            port[label] = int(number)
        elif label in ("state", "phys_state", "active_width", "active_speed"):
            port[label] = _enum_field(value)[0]
        elif label == "link_layer":
            port[label] = value
        elif label in ("sm_lid", "port_lid"):
            port[label] = _int_or_none(value, tool, line)
    if not devices:
        raise ParseError("%s: no 'hca_id:' line in output" % tool)
    return devices


def parse_ibstat(text: str) -> Dict[str, Dict[str, Any]]:
    """Parse ``ibstat`` (infiniband-diags) into ``{ca: {"ca_type", "number_of_ports",
    "firmware_version", "hardware_version", "node_guid", "system_image_guid",
    "ports": {port: {"state", "physical_state", "rate" (Gb/s, int), "base_lid", "lmc", "sm_lid",
    "capability_mask", "port_guid", "link_layer"}}}}``."""
    tool = "ibstat"
    cas = {}  # type: Dict[str, Dict[str, Any]]
    ca = None  # type: Optional[Dict[str, Any]]
    port = None  # type: Optional[Dict[str, Any]]
    ints = ("number_of_ports", "rate", "base_lid", "lmc", "sm_lid")
    for line in _lines(text, tool):
        m = re.match(r"^CA '(?P<name>[^']+)'$", line)
        if m:
            ca = {"ports": {}}
            cas[m.group("name")] = ca
            port = None
            continue
        m = re.match(r"^Port (?P<num>\d+):$", line)
        if m and ca is not None:
            port = {}
            ca["ports"][int(m.group("num"))] = port
            continue
        field = _split_field(line)
        if field is None or ca is None:
            continue
        key = _snake(field[0])
        value = field[1]
        target = port if port is not None else ca
        target[key] = _int_or_none(value, tool, line) if key in ints else value
    if not cas:
        raise ParseError("%s: no \"CA '...'\" line in output" % tool)
    return cas


def parse_rdma_link_json(text: str) -> List[Dict[str, Any]]:
    """Parse ``rdma -j link show`` (iproute2) into ``[{"device", "port", "state",
    "physical_state", "netdev", "netdev_index"}]``; ``netdev`` is None for InfiniBand ports."""
    tool = "rdma -j link"
    try:
        data = json.loads(text)
    except (TypeError, ValueError) as exc:
        raise ParseError("%s: malformed JSON: %s" % (tool, exc)) from None
    if not isinstance(data, list):
        raise ParseError("%s: expected a JSON list of links, got %s" % (tool, type(data).__name__))
    out = []
    for index, item in enumerate(data):
        if not isinstance(item, dict) or not isinstance(item.get("ifname"), str) \
                or not isinstance(item.get("port"), int):
            raise ParseError("%s: entry %d has no 'ifname' and 'port'" % (tool, index))
        out.append({"device": item["ifname"], "port": item["port"], "state": item.get("state"),
                    "physical_state": item.get("physical_state"), "netdev": item.get("netdev"),
                    "netdev_index": item.get("netdev_index")})
    return out


def parse_nvidia_smi_topo(text: str) -> Dict[str, Any]:
    """Parse ``nvidia-smi topo -m`` (tab-separated) into ``{"devices": [GPU0, NIC0, ...],
    "matrix": {row: {column: "PIX"|"NV12"|"X"|...}}, "cpu_affinity": {gpu: cpulist},
    "numa_affinity": {gpu: node}, "nics": {NIC0: "mlx5_0"}}``."""
    tool = "nvidia-smi topo -m"
    lines = [line.rstrip() for line in text.splitlines()] if isinstance(text, str) else None
    if not lines or not any(lines):
        raise ParseError("%s: empty output" % tool)
    header = next((line for line in lines if line.strip()), "")
    if "\t" not in header:
        raise ParseError("%s: the header line has no tab-separated columns: %r" % (tool, header))
    columns = [c.strip() for c in header.split("\t")]
    if columns and columns[0] == "":
        columns = columns[1:]
    extra = ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")
    devices = [c for c in columns if c and c not in extra]
    result = {"devices": devices, "matrix": {}, "cpu_affinity": {}, "numa_affinity": {},
              "nics": {}}  # type: Dict[str, Any]
    in_matrix = True
    for line in lines[lines.index(header) + 1:]:
        stripped = line.strip()
        if not stripped:
            in_matrix = False
            continue
        m = re.match(r"^(NIC\d+):\s*(\S+)$", stripped)
        if m:
            result["nics"][m.group(1)] = m.group(2)
            continue
        if not in_matrix:
            continue
        cells = [c.strip() for c in line.split("\t")]
        row = cells[0]
        if row not in devices:
            raise ParseError("%s: row %r is not one of the header's devices" % (tool, row))
        values = cells[1:]
        result["matrix"][row] = dict((dev, values[i]) for i, dev in enumerate(devices) if i < len(values))
        for i, name in enumerate(columns[len(devices):]):
            pos = len(devices) + i
            value = values[pos] if pos < len(values) else ""
            if name == "CPU Affinity" and value:
                result["cpu_affinity"][row] = value
            elif name == "NUMA Affinity" and value:
                result["numa_affinity"][row] = value
    if not result["matrix"]:
        raise ParseError("%s: no matrix rows in output" % tool)
    return result


def parse_softnet_stat(text: str) -> List[Dict[str, int]]:
    """Parse /proc/net/softnet_stat (one hex row per online CPU) into ``[{"cpu", "processed",
    "dropped", "time_squeeze", "received_rps", "flow_limit_count"}]``.

    Columns (net/core/net-procfs.c): processed, dropped, time_squeeze, six zeros (fastroute,
    cpu_collision), received_rps, flow_limit_count, then (5.10+) backlog length and the CPU
    number, then (6.x) input and process queue lengths.  ``cpu`` is that CPU column when
    printed, else the row number."""
    tool = "/proc/net/softnet_stat"
    out = []
    for row, line in enumerate(line for line in _lines(text, tool) if line):
        try:
            cols = [int(c, 16) for c in line.split()]
        except ValueError:
            raise ParseError("%s: non-hex column in line %r" % (tool, line)) from None
        if len(cols) < 3:
            raise ParseError("%s: fewer than 3 columns in line %r" % (tool, line))
        out.append({"cpu": cols[12] if len(cols) >= 13 else row, "processed": cols[0], "dropped": cols[1],
                    "time_squeeze": cols[2], "received_rps": cols[9] if len(cols) > 9 else 0,
                    "flow_limit_count": cols[10] if len(cols) > 10 else 0})
    return out


def parse_proc_net_snmp(text: str) -> Dict[str, Dict[str, int]]:
    """Parse /proc/net/snmp (and /proc/net/netstat): ``{"Tcp": {"RetransSegs": 0, ...}, ...}``."""
    tool = "/proc/net/snmp"
    lines = [line for line in _lines(text, tool) if line]
    out = {}  # type: Dict[str, Dict[str, int]]
    for head, values in zip(lines[::2], lines[1::2]):
        hname, _sep, hcols = head.partition(":")
        vname, _sep, vcols = values.partition(":")
        names, numbers = hcols.split(), vcols.split()
        if hname != vname or len(names) != len(numbers):
            raise ParseError("%s: header %r and values %r do not pair up" % (tool, head, values))
        try:
            out[hname] = dict((n, int(v)) for n, v in zip(names, numbers))
        except ValueError:
            raise ParseError("%s: non-integer value in line %r" % (tool, values)) from None
    if len(lines) % 2:
        raise ParseError("%s: header line %r has no value line" % (tool, lines[-1]))
    return out


# --------------------------------------------------------------------------- packages
def parse_apt_cache_policy(text: str) -> Dict[str, Dict[str, Optional[str]]]:
    """Parse ``apt-cache policy NAME...`` into ``{name: {"installed", "candidate"}}`` (None for
    ``(none)``).  apt prints nothing for a name it does not know, so absent keys are unknown."""
    out = {}  # type: Dict[str, Dict[str, Optional[str]]]
    current = None  # type: Optional[Dict[str, Optional[str]]]
    for line in (text or "").splitlines():
        if line and not line[0].isspace() and line.rstrip().endswith(":"):
            current = {"installed": None, "candidate": None}
            out[line.rstrip()[:-1]] = current
            continue
        field = _split_field(line.strip())
        if current is None or field is None:
            continue
        if field[0] in ("installed", "candidate"):
            current[field[0]] = None if field[1] == "(none)" else field[1]
    return out


_APT_ACTION = re.compile(r"^(?P<op>Inst|Remv|Purg)\s+(?P<name>\S+)(?:\s+\[(?P<old>[^\]]+)\])?(?:\s+\((?P<new>\S+).*\))?")


def parse_apt_simulate(text: str) -> Dict[str, List[Dict[str, Optional[str]]]]:
    """Parse ``apt-get -s install ...`` into ``{"install": [{"name", "version"}], "upgrade":
    [{"name", "from", "version"}], "remove": [{"name", "version"}]}`` in apt's order
    (``Inst X [old] (new ...)`` is an upgrade; ``Remv``/``Purg`` a removal)."""
    out = {"install": [], "upgrade": [], "remove": []}  # type: Dict[str, List[Dict[str, Optional[str]]]]
    for line in (text or "").splitlines():
        m = _APT_ACTION.match(line.strip())
        if not m:
            continue
        name = m.group("name")
        if m.group("op") != "Inst":
            out["remove"].append({"name": name, "version": m.group("old")})
        elif m.group("old"):
            out["upgrade"].append({"name": name, "from": m.group("old"), "version": m.group("new")})
        else:
            out["install"].append({"name": name, "version": m.group("new")})
    return out


def parse_apt_cache_depends(text: str) -> Dict[str, List[str]]:
    """Parse ``apt-cache depends --important NAME...`` into ``{name: [Depends/PreDepends]}``
    (alternatives' providers, the deeper-indented lines, are left out)."""
    out = {}  # type: Dict[str, List[str]]
    current = None  # type: Optional[List[str]]
    for line in (text or "").splitlines():
        if line and not line[0].isspace():
            current = out.setdefault(line.strip(), [])
            continue
        m = re.match(r"^  \|?(?:Pre)?Depends: <?(?P<dep>[^\s>]+)>?", line)
        if m and current is not None:
            current.append(m.group("dep").split(":")[0])
    return out


def parse_dpkg_query_status(text: str) -> Dict[str, str]:
    """Parse ``dpkg-query -W -f '${Package}\\t${db:Status-Status}\\n' NAME...`` into
    ``{name: status}`` (``installed``, ``config-files``, ``not-installed``, ``half-installed``...)."""
    out = {}  # type: Dict[str, str]
    for line in (text or "").splitlines():
        name, sep, status = line.partition("\t")
        if sep and name.strip():
            out[name.strip().split(":")[0]] = status.strip() or "not-installed"
    return out


def parse_dnf_transaction(text: str) -> Dict[str, List[str]]:
    """Parse the transaction table ``dnf install --assumeno NAME...`` prints (dnf 4) into
    ``{"install": [names], "upgrade": [names], "remove": [names]}``; "Nothing to do" is empty."""
    out = {"install": [], "upgrade": [], "remove": []}  # type: Dict[str, List[str]]
    section = None  # type: Optional[str]
    for raw in (text or "").splitlines():
        line = raw.strip()
        lowered = line.lower().rstrip(":")
        if line.endswith(":") and not raw.startswith(" "):
            if lowered.startswith(("installing", "reinstalling")):
                section = "install"
            elif lowered.startswith(("upgrading", "downgrading")):
                section = "upgrade"
            elif lowered.startswith(("removing", "erasing")):
                section = "remove"
            else:
                section = None
            continue
        if lowered.startswith("transaction summary"):
            break
        if section and raw.startswith(" ") and line and not line.startswith(("replacing", "=")):
            out[section].append(line.split()[0])
    return out


# --------------------------------------------------------------------------- kernel modules
def kmod_name(path_or_name: str) -> str:
    """``kernel/drivers/infiniband/core/ib_core.ko.xz`` or ``ib-core`` -> ``ib_core``."""
    base = path_or_name.strip().rsplit("/", 1)[-1]
    base = re.sub(r"\.ko(\.(xz|gz|zst))?$", "", base)
    return base.replace("-", "_")


def parse_modules_dep(text: str) -> Dict[str, List[str]]:
    """Parse modules.dep into ``{module: [direct and indirect dependencies as depmod lists them]}``."""
    out = {}  # type: Dict[str, List[str]]
    for line in (text or "").splitlines():
        target, sep, deps = line.partition(":")
        if not sep or not target.strip():
            continue
        out[kmod_name(target)] = [kmod_name(d) for d in deps.split()]
    return out


def parse_modules_builtin(text: str) -> List[str]:
    """Parse modules.builtin (one ``kernel/.../NAME.ko`` per line) into sorted module names."""
    return sorted(set(kmod_name(line) for line in (text or "").splitlines() if line.strip()))


def parse_modules_softdep(text: str) -> Dict[str, Dict[str, List[str]]]:
    """Parse ``softdep MODULE pre: A B post: C`` lines (modules.softdep, modprobe.d)."""
    out = {}  # type: Dict[str, Dict[str, List[str]]]
    for line in (text or "").splitlines():
        words = line.split("#", 1)[0].split()
        if len(words) < 3 or words[0] != "softdep":
            continue
        entry = out.setdefault(kmod_name(words[1]), {"pre": [], "post": []})
        section = "pre"
        for word in words[2:]:
            if word in ("pre:", "post:"):
                section = word[:-1]
            else:
                entry[section].append(kmod_name(word))
    return out
