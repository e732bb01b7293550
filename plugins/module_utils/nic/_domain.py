# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ``nic`` domain: MTU, rings, channels and interrupt coalescing of network interfaces.

Keys are ``nic:IF:mtu``, ``nic:IF:ring.rx``, ``nic:IF:channel.combined``,
``nic:IF:coalesce.rx_usecs``, ``nic:IF:coalesce.adaptive_rx``.  Persistence is one systemd
``.link`` file per interface (applied by udev when the device appears, i.e. at every boot).

This file is what rollback needs (the knob table, ``read_value``/``write_value``/``same``, the
``DOMAINS`` map) and what nic_tuning observes.  The rest of the concern: selecting interfaces and
validating the wanted values (``_select``), the ``.link`` file (``_linkfile``), the
management-link guard (``_guard``) and the planner (``_plan``).

A new NIC knob is one :class:`Knob` in :data:`KNOBS`: the module's options, validation, the
ethtool call and the ``.link`` key all follow from it.
"""
from __future__ import annotations

import collections
import functools
import os
import sys

from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _ethnl, _ethtool
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _iproute
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host, run_all

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List, Optional, Tuple


class Knob(collections.namedtuple("Knob", "name group ethtool link_key kind")):
    """One ethtool setting of an interface, as every part of the collection names it."""

    name: str       # the setting in journal keys and results: nic:IF:<name>
    group: str      # the ethtool group that reads and writes it, and the section of an interfaces entry
    ethtool: str    # its argument to ethtool -G / -L / -C
    link_key: str   # its systemd.link(5) key in the persisted .link file
    kind: str       # "int" or "bool" (also the option's type in the module's argument spec)
    __slots__ = ()

    @property
    def field(self) -> str:
        """The option under its section (``rings: {rx: 4096}``)."""
        return self.name.split(".", 1)[1]


# Every ethtool knob, in the order the module offers, validates and persists them.
KNOBS = (
    Knob("ring.rx", "rings", "rx", "RxBufferSize", "int"),
    Knob("ring.rx_mini", "rings", "rx-mini", "RxMiniBufferSize", "int"),
    Knob("ring.rx_jumbo", "rings", "rx-jumbo", "RxJumboBufferSize", "int"),
    Knob("ring.tx", "rings", "tx", "TxBufferSize", "int"),
    Knob("channel.rx", "channels", "rx", "RxChannels", "int"),
    Knob("channel.tx", "channels", "tx", "TxChannels", "int"),
    Knob("channel.other", "channels", "other", "OtherChannels", "int"),
    Knob("channel.combined", "channels", "combined", "CombinedChannels", "int"),
    Knob("coalesce.adaptive_rx", "coalesce", "adaptive-rx", "UseAdaptiveRxCoalesce", "bool"),
    Knob("coalesce.adaptive_tx", "coalesce", "adaptive-tx", "UseAdaptiveTxCoalesce", "bool"),
    Knob("coalesce.rx_usecs", "coalesce", "rx-usecs", "RxCoalesceSec", "int"),
    Knob("coalesce.tx_usecs", "coalesce", "tx-usecs", "TxCoalesceSec", "int"),
    Knob("coalesce.rx_frames", "coalesce", "rx-frames", "RxMaxCoalescedFrames", "int"),
    Knob("coalesce.tx_frames", "coalesce", "tx-frames", "TxMaxCoalescedFrames", "int"),
)
KNOB = dict((k.name, k) for k in KNOBS)
# The ethtool groups (_ethtool's names), each a section of an interfaces entry.
GROUPS = ("rings", "channels", "coalesce")
# The MTU is no ethtool knob (read from sysfs, set with ip link); its systemd.link(5) key:
MTU_LINK_KEY = "MTUBytes"


def fields(group: str, kind: Optional[str] = None) -> Tuple[str, ...]:
    """The option names of one group's knobs (of one kind), in table order."""
    return tuple(k.field for k in KNOBS if k.group == group and (kind is None or k.kind == kind))


def _split(target: str) -> Tuple[str, str]:
    ifname, setting = target.rsplit(":", 1)
    return ifname, setting


# ---------------------------------------------------------------------- domain interface
def read_value(host: Host, target: str) -> Any:
    ifname, setting = _split(target)
    if setting == "mtu":
        text = host.read("/sys/class/net/%s/mtu" % ifname)
        if text is None:
            raise HostError("interface %s does not exist" % ifname)
        return int(text.strip())
    knob = KNOB[setting]
    return _group_fields(host, ifname, knob.group).get(knob.field)


def _group_fields(host: Host, ifname: str, group: str) -> Dict[str, Any]:
    """The current fields of one ethtool group of ``ifname`` (rings: ``-g``'s current settings; coalesce: ``-c``)."""
    return _current(ifname, group, _ethtool.read(host, group, ifname))


def _current(ifname: str, group: str, parsed: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """The current fields of a group as ethtool's reader or the kernel's netlink (node/_ethnl) parsed it (None:
    not supported by the driver)."""
    if parsed is None:
        raise HostError("%s of %s: not supported by the driver" % (group, ifname))
    return parsed if group == "coalesce" else parsed["current"]


def read_values(host: Host, targets: List[str]) -> Dict[str, Any]:
    """read_value of each target: every interface's groups asked of the kernel's ethtool netlink at once
    (node/_ethnl, what ethtool reads them from; four ethtool runs were the longest path of the health check's
    drift stage on a lab VM), and what it did not answer with one ethtool run per interface and group (rx
    and tx rings, the coalescing fields: one ``ethtool -g`` / ``-c``); a HostError instance for a target not read."""
    out: Dict[str, Any] = {}
    groups: Dict[Tuple[str, str], List[str]] = {}
    for target in targets:
        ifname, setting = _split(target)
        if setting in KNOB:
            groups.setdefault((ifname, KNOB[setting].group), []).append(target)
            continue
        try:
            out[target] = read_value(host, target)
        except HostError as e:
            out[target] = e

    by_netlink = _ethnl.read_groups(host, sorted(groups))

    def read_group(ifname: str, group: str, members: List[str]) -> Dict[str, Any]:
        try:
            if (ifname, group) in by_netlink:
                fields_of = _current(ifname, group, by_netlink[(ifname, group)])
            else:
                fields_of = _group_fields(host, ifname, group)
        except HostError as e:
            return dict((t, e) for t in members)
        return dict((t, fields_of.get(KNOB[_split(t)[1]].field)) for t in members)
    for pair in [g for g in groups if g in by_netlink]:
        out.update(read_group(pair[0], pair[1], groups.pop(pair)))
    # The first run - of a group ethtool may print as JSON - learns whether this ethtool prints --json
    # (Host.tool_facts); the others then run side by side where the host allows it (the health check's
    # drift stage: ethtool was 4 of its 5 tool runs).
    order = sorted(groups, key=lambda g: g[1] + "_json" not in _ethtool.ETHTOOL.formats)
    calls = [functools.partial(read_group, ifname, group, groups[(ifname, group)]) for ifname, group in order]
    if calls:
        for got in [calls[0]()] + run_all(calls[1:], bool(getattr(host, "concurrent_reads", False))):
            out.update(got)
    return out


def write_value(host: Host, target: str, value: Any) -> None:
    ifname, setting = _split(target)
    if setting == "mtu":
        _iproute.set_mtu(host, ifname, int(value))
        return
    knob = KNOB[setting]
    if isinstance(value, bool):
        arg = "on" if value else "off"
    else:
        arg = str(int(value))
    _ethtool.write(host, knob.group, ifname, [knob.ethtool, arg])


def same(actual: Any, wanted: Any) -> bool:
    return actual == wanted


# the domain contract (_domain.Domain): this file's read_value, write_value and same
DOMAINS = {"nic": sys.modules[__name__]}


# ---------------------------------------------------------------------- observe (I/O)
def read_network(host: Host) -> Dict[str, Dict[str, Any]]:
    """Every interface, loopback included: link facts, how it stacks and its addresses
    (``ip -j -d link``, ``ip -j addr``)."""
    addrs = _iproute.addrs(host)
    out: Dict[str, Dict[str, Any]] = {}
    for link in _iproute.links(host):
        name = link["ifname"]
        out[name] = {
            "name": name,
            "ifindex": link.get("ifindex"),
            "mtu": link["mtu"],
            "min_mtu": link.get("min_mtu"),
            "max_mtu": link.get("max_mtu"),
            "address": link.get("address"),
            "permaddr": link.get("permaddr"),
            "kind": link.get("kind"),
            "loopback": "LOOPBACK" in (link.get("flags") or []),
            "master": link.get("master"),
            "slave_kind": link.get("slave_kind"),
            "link": link.get("link"),
            "addresses": addrs.get(name, []),
        }
    return out


def observe(host: Host, net: Optional[Dict[str, Dict[str, Any]]] = None) -> Dict[str, Dict[str, Any]]:
    """Every interface but loopback (from ``net`` when given, else read): link facts and driver."""
    out: Dict[str, Dict[str, Any]] = {}
    for name, link in (read_network(host) if net is None else net).items():
        if link.get("loopback"):
            continue
        out[name] = dict(link, driver=_iproute.iface_driver(host, name) or link.get("kind"))
    return out


def _udev_property(host: Host, ifindex: Optional[int], prop: str) -> Optional[str]:
    """A property udev recorded for a network device (``/run/udev/data/nIFINDEX``, ``E:`` lines)."""
    if not ifindex:
        return None
    for line in (host.read("/run/udev/data/n%d" % ifindex) or "").splitlines():
        if line.startswith("E:%s=" % prop):
            return line.split("=", 1)[1].strip() or None
    return None


def observe_identity(host: Host, ifname: str, ifindex: Optional[int]) -> Dict[str, Any]:
    """What a .link file can match the device by: udev's ``ID_PATH`` (the bus position, the same
    on every node with the same hardware layout), the bus driver, and the permanent MAC address
    when the kernel says the current address is it (``addr_assign_type`` 0 on a bus device)."""
    device_driver = host.readlink("/sys/class/net/%s/device/driver" % ifname)
    perm = None
    if host.exists("/sys/class/net/%s/device" % ifname) and \
            (host.read("/sys/class/net/%s/addr_assign_type" % ifname) or "").strip() == "0":
        perm = (host.read("/sys/class/net/%s/address" % ifname) or "").strip() or None
    return {"udev_path": _udev_property(host, ifindex, "ID_PATH"),
            "device_driver": os.path.basename(device_driver) if device_driver else None,
            "permanent_mac": perm}


def mark_shared_paths(host: Host, observed: Dict[str, Dict[str, Any]], links: Dict[str, Dict[str, Any]]) -> None:
    """``path_unique`` on each observed interface with a bus device: False when other netdevs sit on
    the same device (ports of one PCI function, switchdev representors), where ``Path=`` would
    match them all."""
    devices: Dict[str, List[str]] = {}
    for name in links:
        target = host.readlink("/sys/class/net/%s/device" % name)
        if target:
            devices.setdefault(os.path.basename(target), []).append(name)
    for name, obs in observed.items():
        target = host.readlink("/sys/class/net/%s/device" % name)
        if target:
            obs["path_unique"] = len(devices.get(os.path.basename(target), [])) <= 1


def observe_ethtool(host: Host, ifname: str, groups: List[str]) -> Dict[str, Any]:
    """The state of each ethtool group in ``groups`` (:func:`groups_needed`), None where unsupported."""
    return dict((g, _ethtool.read(host, g, ifname)) for g in groups)


def groups_needed(settings: Dict[str, Any]) -> List[str]:
    return [g for g in GROUPS if settings.get(g)]


# ---------------------------------------------------------------------- observed values (pure)
def current_value(obs: Dict[str, Any], setting: str) -> Any:
    if setting == "mtu":
        return obs["mtu"]
    knob = KNOB[setting]
    state = obs[knob.group]
    return (state if knob.group == "coalesce" else state["current"]).get(knob.field)
