# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ``nic`` domain: MTU, rings, channels and interrupt coalescing of network interfaces.

Keys are ``nic:IF:mtu``, ``nic:IF:ring.rx``, ``nic:IF:channel.combined``,
``nic:IF:coalesce.rx_usecs``, ``nic:IF:coalesce.adaptive_rx``.  Persistence is one systemd
``.link`` file per interface (applied by udev when the device appears, i.e. at every boot).

Also the management-link guard: which interfaces carry the Ansible connection (the node's end of
the SSH connection, the route back to the controller, the address the controller connects to),
and every device under them (bridge and bond ports, the lower device of a VLAN or macvlan, a
veth's peer).  Runtime changes to those are refused, and so is any runtime change when the path
cannot be told and the controller did not say the connection does not use the node's network.
"""
from __future__ import annotations

import fnmatch
import ipaddress
import os
import sys
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _ethtool
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _files
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _iproute
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _procnet
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._plan import Plan
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._spec import SELECTORS

LINK_DIR = "/etc/systemd/network"
LINK_FILE = LINK_DIR + "/10-hpcnet-rdma-{ifname}.link"
# match: driver persists one file per driver; it sorts after the per-interface files (10-), so an
# interface's own file wins over its driver's, and before the distribution's 99-default.link.
DRIVER_LINK_FILE = LINK_DIR + "/20-hpcnet-rdma-driver-{driver}.link"
# What the distribution's 99-default.link sets (systemd 252): a driver-wide file matches devices of
# any name, so instead of Name= it keeps the naming every other device gets.
DEFAULT_NAMING = ("NamePolicy=keep kernel database onboard slot path",
                  "AlternativeNamesPolicy=database onboard slot path",
                  "MACAddressPolicy=persistent")
# How a persisted .link file matches its device (nic_tuning's match option).
MATCHES = ("auto", "path", "driver", "original_name", "mac")
# Selectors that can plan a .link file for an interface that is not present (a bake).
ABSENT_SELECTORS = ("name", "driver")
# Where udev looks for .link files (systemd.link(5)); a name in an earlier directory hides the
# same name in a later one, and of all the files the first matching one in name order applies.
LINK_DIRS = (LINK_DIR, "/run/systemd/network", "/usr/local/lib/systemd/network", "/usr/lib/systemd/network",
             "/lib/systemd/network")

# Below this an IPv4 host need not accept a datagram (RFC 791); below IPV6_MIN_MTU the kernel
# removes the interface's IPv6 configuration (RFC 8200: 1280 is IPv6's minimum link MTU).
IPV4_MIN_MTU = 576
IPV6_MIN_MTU = 1280
# Link kinds stacked on a lower device whose MTU the kernel lowers with it (never raises).
STACKED = ("vlan", "macvlan", "macvtap", "ipvlan", "ipvtap")

RINGS = ("rx", "rx_mini", "rx_jumbo", "tx")
CHANNELS = ("rx", "tx", "other", "combined")
COALESCE_BOOL = ("adaptive_rx", "adaptive_tx")
COALESCE_INT = ("rx_usecs", "tx_usecs", "rx_frames", "tx_frames")

# ethtool argument names and systemd.link(5) keys per setting.
_ETHTOOL_ARG = {
    "ring.rx": "rx", "ring.rx_mini": "rx-mini", "ring.rx_jumbo": "rx-jumbo", "ring.tx": "tx",
    "channel.rx": "rx", "channel.tx": "tx", "channel.other": "other", "channel.combined": "combined",
    "coalesce.adaptive_rx": "adaptive-rx", "coalesce.adaptive_tx": "adaptive-tx",
    "coalesce.rx_usecs": "rx-usecs", "coalesce.tx_usecs": "tx-usecs",
    "coalesce.rx_frames": "rx-frames", "coalesce.tx_frames": "tx-frames",
}
_LINK_KEY = {
    "mtu": "MTUBytes",
    "ring.rx": "RxBufferSize", "ring.rx_mini": "RxMiniBufferSize",
    "ring.rx_jumbo": "RxJumboBufferSize", "ring.tx": "TxBufferSize",
    "channel.rx": "RxChannels", "channel.tx": "TxChannels",
    "channel.other": "OtherChannels", "channel.combined": "CombinedChannels",
    "coalesce.adaptive_rx": "UseAdaptiveRxCoalesce", "coalesce.adaptive_tx": "UseAdaptiveTxCoalesce",
    "coalesce.rx_usecs": "RxCoalesceSec", "coalesce.tx_usecs": "TxCoalesceSec",
    "coalesce.rx_frames": "RxMaxCoalescedFrames", "coalesce.tx_frames": "TxMaxCoalescedFrames",
}
_SECTION = {"ring": "rings", "channel": "channels", "coalesce": "coalesce"}


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
    group, field = setting.split(".", 1)
    parsed = _ethtool.read(host, _SECTION[group], ifname)
    if parsed is None:
        raise HostError("%s of %s: not supported by the driver" % (_SECTION[group], ifname))
    return (parsed if group == "coalesce" else parsed["current"]).get(field)


def write_value(host: Host, target: str, value: Any) -> None:
    ifname, setting = _split(target)
    if setting == "mtu":
        _iproute.set_mtu(host, ifname, int(value))
        return
    group = setting.split(".", 1)[0]
    if isinstance(value, bool):
        arg = "on" if value else "off"
    else:
        arg = str(int(value))
    _ethtool.write(host, _SECTION[group], ifname, [_ETHTOOL_ARG[setting], arg])


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
    return dict((_SECTION[g], _ethtool.read(host, _SECTION[g], ifname)) for g in groups)


# ---------------------------------------------------------------------- selection (pure)
def _selector(entry: Dict[str, Any], index: int) -> Tuple[str, str]:
    given = [s for s in SELECTORS if entry.get(s)]
    if len(given) != 1:
        raise ValueError("interfaces[%d]: give exactly one of %s (got %s)"
                         % (index, ", ".join(SELECTORS), ", ".join(given) or "none"))
    return given[0], str(entry[given[0]])


def _holds_subnet(obs: Dict[str, Any], net: Any) -> bool:
    for a in obs.get("addresses", []):
        try:
            if ipaddress.ip_address(a["local"]) in net:
                return True
        except ValueError:
            continue
    return False


def _fields(entry: Optional[Dict[str, Any]]) -> List[Tuple[str, str, Any]]:
    """(section, field, value) of every setting an entry gives; field "" for mtu."""
    out: List[Tuple[str, str, Any]] = []
    for section in ("mtu", "rings", "channels", "coalesce"):
        v = (entry or {}).get(section)
        if v is None:
            continue
        if section == "mtu":
            out.append(("mtu", "", v))
        else:
            out.extend((section, k, x) for k, x in sorted(v.items()) if x is not None)
    return out


def _merge(into: Dict[str, Any], entry: Optional[Dict[str, Any]]) -> None:
    for section, field, value in _fields(entry):
        if section == "mtu":
            into["mtu"] = value
        else:
            into.setdefault(section, {})[field] = value


def _conflicts(ifname: str, setters: Dict[str, Tuple[int, str]], index: int, kind: str, value: str,
               entry: Dict[str, Any], merged: Dict[str, Any]) -> None:
    """Raise when ``entry`` gives a setting of ``ifname`` another entry already gave differently.

    A ``name`` entry may refine what earlier glob/driver/subnet entries set (documented); any
    other pair of entries disagreeing is a mistake, named with both entries."""
    for section, field, wanted in _fields(entry):
        label = section if section == "mtu" else "%s.%s" % (section, field)
        earlier = setters.get(label)
        have = merged.get("mtu") if section == "mtu" else (merged.get(section) or {}).get(field)
        if earlier is not None and have != wanted and not (kind == "name" and earlier[1].split("=", 1)[0] != "name"):
            raise ValueError("interfaces[%d] (%s) and interfaces[%d] (%s=%s) both select %s with a different %s "
                             "(%s, then %s); make them agree, or select %s by name to override the broader entry"
                             % (earlier[0], earlier[1], index, kind, value, ifname, label, have, wanted, ifname))
        setters[label] = (index, "%s=%s" % (kind, value))


def _set_match(target: str, settings: Dict[str, Any], entry: Dict[str, Any], index: int, kind: str,
               value: str) -> None:
    """Record the entry's ``match``/``match_value`` on one interface's settings; an entry selecting
    by name overrides a broader entry's, two other entries disagreeing is an error naming both."""
    if not entry.get("match") and not entry.get("match_value"):
        return
    mine = (entry.get("match") or "auto", entry.get("match_value"))
    earlier = settings.get("match_by")
    if earlier is not None and settings["match"] != mine and not (kind == "name" and earlier[1] != "name"):
        raise ValueError("interfaces[%d] (%s=%s) and interfaces[%d] (%s=%s) give %s a different match "
                         "(%s, then %s); make them agree, or select it by name to override the broader entry"
                         % (earlier[0], earlier[1], earlier[2], index, kind, value, target,
                            "/".join(str(x) for x in settings["match"] if x), "/".join(str(x) for x in mine if x)))
    settings["match"] = mine
    settings["match_by"] = (index, kind, value)


def select(entries: List[Dict[str, Any]], links: Dict[str, Dict[str, Any]],
           defaults: Optional[Dict[str, Any]] = None,
           absent: Optional[Dict[str, Dict[str, Any]]] = None) -> Dict[str, Dict[str, Any]]:
    """Interface name → merged settings: ``defaults``, then each selecting entry in order.

    An entry selecting by name overrides, per setting, what earlier glob/driver/subnet entries
    set; two entries that otherwise give one interface's setting different values are an error
    naming both.

    ``absent`` (persist-only mode, a bake): a dict that receives, instead of an error, each
    ``name`` or ``driver`` selection that matches no interface here, keyed ``name=X`` /
    ``driver=X`` with its merged settings: its .link file is planned from the entry alone.  A
    ``glob`` or ``subnet`` selection needs the interfaces themselves and stays an error."""
    chosen: Dict[str, Dict[str, Any]] = {}
    setters: Dict[str, Dict[str, Tuple[int, str]]] = {}
    explicit: Dict[str, set] = {}
    present = ", ".join("%s (%s)" % (n, links[n].get("driver") or "?") for n in sorted(links)) or "none"
    for i, entry in enumerate(entries):
        kind, value = _selector(entry, i)
        if kind == "name":
            names = [value] if value in links else []
            if not names and absent is None:
                raise ValueError("interfaces[%d].name: unknown interface %r; present: %s" % (i, value, present))
        elif kind == "glob":
            names = [n for n in sorted(links) if fnmatch.fnmatchcase(n, value)]
        elif kind == "driver":
            names = [n for n in sorted(links) if links[n].get("driver") == value]
        else:
            try:
                net = ipaddress.ip_network(value, strict=False)
            except ValueError:
                raise ValueError("interfaces[%d].subnet: %r is not an IPv4/IPv6 network (e.g. 10.0.0.0/24)"
                                 % (i, value))
            names = [n for n in sorted(links) if _holds_subnet(links[n], net)]
        if not names and absent is not None and kind in ABSENT_SELECTORS:
            label = "%s=%s" % (kind, value)
            if label not in absent:
                absent[label] = {"selected_by": [], "selector": kind, "value": value, "index": i}
                _merge(absent[label], defaults)
            _conflicts(label, setters.setdefault(label, {}), i, kind, value, entry, absent[label])
            absent[label]["selected_by"].append(label)
            _merge(absent[label], entry)
            _set_match(label, absent[label], entry, i, kind, value)
            continue
        if not names:
            raise ValueError("interfaces[%d]: selector %s=%r matched no interface; present: %s%s"
                             % (i, kind, value, present,
                                "" if absent is None else
                                " (in mode persist an interface that is not here can be selected by name or "
                                "driver, with match; glob and subnet need the interfaces themselves)"))
        for n in names:
            if n not in chosen:
                chosen[n] = {"selected_by": []}
                _merge(chosen[n], defaults)
            _conflicts(n, setters.setdefault(n, {}), i, kind, value, entry, chosen[n])
            chosen[n]["selected_by"].append("%s=%s" % (kind, value))
            _merge(chosen[n], entry)
            _set_match(n, chosen[n], entry, i, kind, value)
            explicit.setdefault(n, set()).update((sec, f) for sec, f, _v in _fields(entry))
    for n, settings in chosen.items():   # what only the defaults (a profile) give: skipped where unsupported
        settings["from_defaults"] = sorted(set((sec, f) for sec, f, _v in _fields(defaults)) - explicit[n])
    return chosen


def drop_unsupported_defaults(chosen: Dict[str, Dict[str, Any]],
                              observed: Dict[str, Dict[str, Any]]) -> List[Dict[str, str]]:
    """Remove from ``chosen`` every setting that only the defaults give and the interface's driver
    does not offer (its ethtool group or field is missing, or its maximum is 0): a profile applies
    where the NIC allows.  The same setting given in an interface entry stays, and is refused by
    :func:`desired_values` naming the driver.  Returns ``{interface, setting, reason}`` for each."""
    dropped = []
    for n in sorted(chosen):
        settings, obs = chosen[n], observed.get(n, {})
        driver = obs.get("driver") or "unknown"
        for section, field in settings.get("from_defaults", []):
            if section == "mtu":
                continue
            state = obs.get(section)
            if state is None:
                reason = "%s not supported by driver %s" % (section, driver)
            elif section == "coalesce" and state.get(field) is None:
                reason = "coalesce.%s not supported by driver %s" % (field, driver)
            elif section != "coalesce" and not state["max"].get(field):
                reason = "%s.%s not supported by driver %s (maximum %s)" % (
                    section, field, driver, state["max"].get(field))
            else:
                continue
            settings[section].pop(field, None)
            if not settings[section]:
                del settings[section]
            dropped.append({"interface": n, "setting": "%s.%s" % (section, field), "reason": reason})
    return dropped


def groups_needed(settings: Dict[str, Any]) -> List[str]:
    return [g for g in ("ring", "channel", "coalesce") if settings.get(_SECTION[g])]


# ---------------------------------------------------------------------- plan (pure)
def _limit(ifname: str, what: str, value: int, maximum: Optional[int], cap: bool,
           capped: List[Dict[str, Any]]) -> int:
    if maximum is None or value <= maximum:
        return value
    if cap:
        capped.append({"interface": ifname, "setting": what, "requested": value, "applied": maximum})
        return maximum
    raise ValueError("interfaces: %s %s=%d is above the hardware maximum %d; use %d or less, "
                     "or cap: true" % (ifname, what, value, maximum, maximum))


def _ipv6_addresses(obs: Dict[str, Any]) -> List[str]:
    return [a["local"] for a in obs.get("addresses", []) if a.get("family") == "inet6"]


def check_mtu_floor(ifname: str, mtu: int, obs: Dict[str, Any], allow_low_mtu: bool, runtime: bool,
                    relation: str = "") -> None:
    """Refuse an MTU the interface's protocols cannot live with: below 1280 where IPv6 is
    configured (the kernel would drop the interface's IPv6 addresses and settings, and a
    rollback would not bring them back), below 576 unless ``allow_low_mtu``.

    ``obs`` is the interface whose IPv6 is checked: ``ifname`` itself, or a device stacked on
    it (``relation`` says how) that the kernel lowers with it."""
    if mtu < IPV4_MIN_MTU and not allow_low_mtu:
        raise ValueError("interfaces: %s mtu=%d is below %d, the smallest datagram every IPv4 host must accept "
                         "(RFC 791); set allow_low_mtu: true if that is really meant" % (ifname, mtu, IPV4_MIN_MTU))
    v6 = _ipv6_addresses(obs) if runtime else []
    if mtu < IPV6_MIN_MTU and v6:
        raise ValueError("interfaces: %s mtu=%d is below %d, the IPv6 minimum MTU (RFC 8200), and %s%s has IPv6 "
                         "configured (%s): the kernel would drop its IPv6 addresses and settings. Disable IPv6 on "
                         "%s first (net.ipv6.conf.%s.disable_ipv6 = 1) or use %d or more"
                         % (ifname, mtu, IPV6_MIN_MTU, obs["name"], relation, ", ".join(v6), obs["name"],
                            obs["name"], IPV6_MIN_MTU))


def desired_values(ifname: str, settings: Dict[str, Any], obs: Dict[str, Any],
                   cap: bool, capped: List[Dict[str, Any]], allow_low_mtu: bool = False,
                   runtime: bool = True) -> Dict[str, Any]:
    """Validate one interface's wanted settings against its capabilities: setting → value."""
    out: Dict[str, Any] = {}
    driver = obs.get("driver") or "unknown"
    if settings.get("mtu") is not None:
        mtu = settings["mtu"]
        lo = obs.get("min_mtu") or 68
        hi = obs.get("max_mtu") or 65535
        if not lo <= mtu <= hi:
            raise ValueError("interfaces: %s mtu=%d is outside what the device allows (%d..%d)"
                             % (ifname, mtu, lo, hi))
        check_mtu_floor(ifname, mtu, obs, allow_low_mtu, runtime)
        out["mtu"] = mtu
    for group, names in (("ring", RINGS), ("channel", CHANNELS)):
        wanted = settings.get(_SECTION[group]) or {}
        if not wanted:
            continue
        state = obs.get(_SECTION[group])
        if state is None:
            raise ValueError("interfaces: %s: %s not supported by driver %s (ethtool %s: Operation not "
                             "supported)" % (ifname, _SECTION[group], driver, _ethtool.ETHTOOL.formats[_SECTION[group]][0]))
        for field in names:
            if field not in wanted:
                continue
            value = wanted[field]
            floor = 1 if group == "ring" else 0
            if value < floor:
                raise ValueError("interfaces: %s %s.%s=%d is invalid; allowed: %d..%s"
                                 % (ifname, _SECTION[group], field, value, floor, state["max"].get(field)))
            maximum = state["max"].get(field)
            if not maximum:
                raise ValueError("interfaces: %s %s.%s is not supported by driver %s (maximum %s)"
                                 % (ifname, _SECTION[group], field, driver, maximum))
            out["%s.%s" % (group, field)] = _limit(ifname, "%s.%s" % (_SECTION[group], field), value,
                                                   maximum, cap, capped)
    wanted = settings.get("coalesce") or {}
    for field in COALESCE_INT:
        if wanted.get(field) is not None and wanted[field] < 0:
            raise ValueError("interfaces: %s coalesce.%s=%d is negative; allowed: 0 or more"
                             % (ifname, field, wanted[field]))
    if wanted:
        state = obs.get("coalesce")
        if state is None:
            raise ValueError("interfaces: %s: coalesce not supported by driver %s (ethtool -c: Operation "
                             "not supported)" % (ifname, driver))
        for field in COALESCE_BOOL + COALESCE_INT:
            if field not in wanted:
                continue
            value = wanted[field]
            if state.get(field) is None:
                raise ValueError("interfaces: %s coalesce.%s is not supported by driver %s"
                                 % (ifname, field, driver))
            out["coalesce." + field] = value
    return out


def current_value(obs: Dict[str, Any], setting: str) -> Any:
    if setting == "mtu":
        return obs["mtu"]
    group, field = setting.split(".", 1)
    state = obs[_SECTION[group]]
    return (state if group == "coalesce" else state["current"]).get(field)


def link_match(ifname: str, obs: Dict[str, Any]) -> List[str]:
    """The ``[Match]`` lines of the .link file, so it matches this device and no other:

    * ``Path=`` udev's ``ID_PATH`` (+ ``Driver=``) for a bus device that is the only netdev of its
      bus device: the same slot on every node with the same hardware layout, so a baked image
      carries it to other nodes; VLANs, bonds and bridges have no path and never match;
    * else ``PermanentMACAddress=`` (this node only; VLANs and bonds have no permanent address);
    * else ``OriginalName=`` the name: virtual devices (veth, ...) are created under their name
      and get a random MAC each time, so their MAC would never match again.
    Never ``MACAddress=``: a VLAN or bond copies its port's address and would match too."""
    if obs.get("udev_path") and obs.get("path_unique", True):
        lines = ["Path=%s" % obs["udev_path"]]
        if obs.get("device_driver"):
            lines.append("Driver=%s" % obs["device_driver"])
        return lines
    perm = obs.get("permaddr") or obs.get("permanent_mac")
    if perm:
        return ["PermanentMACAddress=%s" % perm]
    return ["OriginalName=%s" % ifname]


def match_lines(ifname: str, obs: Dict[str, Any], match: str = "auto", value: Optional[str] = None,
                persist_only: bool = False) -> Tuple[List[str], Optional[str]]:
    """The ``[Match]`` lines of ``ifname``'s .link file as ``match`` says, and the driver when the
    file is the driver's (``match: driver``: one file for every device of the driver, which keeps
    the distribution's naming), else None.  ``obs`` is what this node shows of the interface (empty
    when it is not here); ``value`` (``match_value``) replaces what would be read from it.

    ``persist_only`` (mode persist, an image bake): the file must match on the nodes the image
    boots, so a MAC address is never used - ``auto`` refuses where it would fall back to the
    permanent MAC, and ``mac`` is refused."""
    where = "interfaces: %s" % ifname
    present = bool(obs)
    if value is not None and match in ("auto", "mac"):
        raise ValueError("%s: match_value %r needs match path, driver or original_name (got match: %s)"
                         % (where, value, match))
    if match == "auto":
        if not present:
            raise ValueError("%s is not present here, so how its .link file matches it at boot cannot be read from "
                             "it; set match: original_name (OriginalName=, the kernel's name; match_value if it "
                             "differs from %s), path with match_value (udev's ID_PATH on the target nodes, e.g. "
                             "pci-0000:3b:00.0) or driver with match_value (every NIC of that driver)" % (where, ifname))
        lines = link_match(ifname, obs)
        if persist_only and lines[0].startswith("PermanentMACAddress="):
            raise ValueError("%s would be matched by its permanent MAC address (%s), which only this node has; in "
                             "mode persist (an image bake) the .link file must match on every node the image boots: "
                             "set match: path (the bus position, udev ID_PATH), driver or original_name"
                             % (where, lines[0].split("=", 1)[1]))
        return lines, None
    if match == "path":
        path = value or obs.get("udev_path")
        if not path:
            raise ValueError("%s: match: path needs udev's ID_PATH of the device, and %s; give match_value: the "
                             "ID_PATH on the target nodes (udevadm info -q property /sys/class/net/IF, e.g. "
                             "pci-0000:3b:00.0)" % (where, "there is none here (no udev database: a chroot or a "
                                                    "container, or a virtual device)" if present
                                                    else "the interface is not present here"))
        if value is None and not obs.get("path_unique", True):
            raise ValueError("%s: match: path - other netdevs share its bus device (ports of one PCI function, "
                             "representors), so Path=%s would match them all; use match: original_name or mac"
                             % (where, path))
        lines = ["Path=%s" % path]
        if value is None and obs.get("device_driver"):   # a given path is the target nodes': so is their driver
            lines.append("Driver=%s" % obs["device_driver"])
        return lines, None
    if match == "driver":
        driver = value or obs.get("device_driver") or obs.get("driver")
        if not driver:
            raise ValueError("%s: match: driver - its driver is %s; give match_value: the driver (e.g. mlx5_core)"
                             % (where, "not known here" if present else "unknown (the interface is not present here)"))
        if "/" in driver or not driver.strip() or driver != driver.strip():
            raise ValueError("%s: match_value %r is not a driver name" % (where, driver))
        return ["Driver=%s" % driver], driver
    if match == "original_name":
        name = value or ifname
        if "/" in name or not name.strip():
            raise ValueError("%s: match_value %r is not an interface name" % (where, name))
        return ["OriginalName=%s" % name], None
    if match == "mac":
        if persist_only:
            raise ValueError("%s: match: mac matches this node's NIC only; in mode persist (an image bake) use "
                             "match: path, driver or original_name" % where)
        perm = obs.get("permaddr") or obs.get("permanent_mac")
        if not perm:
            raise ValueError("%s: match: mac - it has no permanent MAC address (a virtual device, or the kernel "
                             "reports none); use match: path, driver or original_name" % where)
        return ["PermanentMACAddress=%s" % perm], None
    raise ValueError("%s: match %r is not one of %s" % (where, match, ", ".join(MATCHES)))


def link_file_path(ifname: str, driver: Optional[str]) -> str:
    return DRIVER_LINK_FILE.format(driver=driver) if driver else LINK_FILE.format(ifname=ifname)


def render_link(ifname: str, obs: Dict[str, Any], values: Dict[str, Any], journal_dir: str,
                lines: Optional[List[str]] = None, driver_wide: bool = False) -> str:
    """A systemd .link file that re-applies ``values`` whenever the device appears.

    ``lines``: the [Match] lines (default :func:`link_match`); ``driver_wide``: the file matches
    every device of a driver, so it names none (the distribution's naming policy instead)."""
    out = [_files.HEADER.format(module="nic_tuning", journal=journal_dir), "[Match]\n"]
    out.extend(line + "\n" for line in (link_match(ifname, obs) if lines is None else lines))
    out.append("\n[Link]\n")
    out.extend(line + "\n" for line in (DEFAULT_NAMING if driver_wide else ("Name=%s" % ifname,)))
    order = ["mtu"] + ["ring." + f for f in RINGS] + ["channel." + f for f in CHANNELS] + \
        ["coalesce." + f for f in COALESCE_BOOL + COALESCE_INT]
    for setting in order:
        if setting not in values:
            continue
        v = values[setting]
        if isinstance(v, bool):
            text = "yes" if v else "no"
        elif setting.endswith("_usecs"):
            text = "%dus" % v
        else:
            text = str(v)
        out.append("%s=%s\n" % (_LINK_KEY[setting], text))
    return "".join(out)


def absent_values(label: str, settings: Dict[str, Any], allow_low_mtu: bool = False) -> Dict[str, Any]:
    """Validate the settings of a selection that is not present here (a bake): only what holds for
    every NIC (ranges); its driver's limits are checked by nobody until udev applies the file at
    boot (systemd-udevd logs what the device refuses, and applies the rest)."""
    out: Dict[str, Any] = {}
    if settings.get("mtu") is not None:
        mtu = settings["mtu"]
        if not 68 <= mtu <= 65535:
            raise ValueError("interfaces: %s mtu=%d is outside 68..65535" % (label, mtu))
        check_mtu_floor(label, mtu, {"name": label}, allow_low_mtu, False)
        out["mtu"] = mtu
    for group, names in (("ring", RINGS), ("channel", CHANNELS)):
        wanted = settings.get(_SECTION[group]) or {}
        floor = 1 if group == "ring" else 0
        for field in names:
            if wanted.get(field) is None:
                continue
            if wanted[field] < floor:
                raise ValueError("interfaces: %s %s.%s=%d is invalid; allowed: %d or more"
                                 % (label, _SECTION[group], field, wanted[field], floor))
            out["%s.%s" % (group, field)] = wanted[field]
    wanted = settings.get("coalesce") or {}
    for field in COALESCE_BOOL + COALESCE_INT:
        if wanted.get(field) is None:
            continue
        if field in COALESCE_INT and wanted[field] < 0:
            raise ValueError("interfaces: %s coalesce.%s=%d is negative; allowed: 0 or more"
                             % (label, field, wanted[field]))
        out["coalesce." + field] = wanted[field]
    return out


class FileStates(object):
    """``path -> FileState`` read on demand (plan asks for the .link files it plans)."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.seen: Dict[str, Any] = {}

    def get(self, path: str) -> Any:
        if path not in self.seen:
            self.seen[path] = self.host.file_state(path)
        return self.seen[path]


# ---------------------------------------------------------------------- other .link files
def _match_section(text: str) -> List[Tuple[str, str]]:
    """``(key, value)`` of every setting in the [Match] section(s) of a .link file."""
    out: List[Tuple[str, str]] = []
    section = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
            continue
        if section == "Match" and "=" in line:
            key, value = line.split("=", 1)
            if value.strip():
                out.append((key.strip(), value.strip()))
    return out


def link_file_matches(text: str, ifname: str, obs: Dict[str, Any]) -> Optional[str]:
    """Why a .link file's [Match] section matches this interface (its conditions, those this
    module cannot evaluate marked so), or None when it does not or cannot.  A file without any
    match is ignored by udev, so it matches nothing here either."""
    facts = {
        "MACAddress": obs.get("address"),
        "PermanentMACAddress": obs.get("permaddr") or obs.get("permanent_mac"),
        "OriginalName": ifname,
        "Path": obs.get("udev_path"),
        "Driver": obs.get("device_driver") or obs.get("driver"),
        "Kind": obs.get("kind"),
    }
    conditions = _match_section(text)
    if not conditions:
        return None
    reasons = []
    for key, value in conditions:
        negate = value.startswith("!")
        patterns = value.lstrip("!").split()
        if key not in facts:
            reasons.append("%s=%s (not checked)" % (key, value))
            continue
        fact = facts[key]
        if fact is None:
            return None
        if key.endswith("MACAddress"):
            hit = fact.lower() in [p.lower() for p in patterns]
        else:
            hit = any(fnmatch.fnmatchcase(fact, p) for p in patterns)
        if hit == negate:
            return None
        reasons.append("%s=%s" % (key, value))
    return ", ".join(reasons)


def earlier_link_files(host: Host, ifname: str, obs: Dict[str, Any], path: Optional[str] = None) -> List[str]:
    """Warnings for .link files that sort before this interface's own (``path``, default its
    per-interface file) and match it: udev applies only the first matching .link file, so the
    persisted settings would silently not apply."""
    ours = os.path.basename(path or LINK_FILE.format(ifname=ifname))
    files: Dict[str, str] = {}
    for d in LINK_DIRS:
        for name in host.listdir(d):
            if name.endswith(".link") and name not in files:
                files[name] = d + "/" + name
    out = []
    for name in sorted(files):
        if name >= ours:
            break
        other = files[name]
        if name.startswith(("10-hpcnet-rdma-", "20-hpcnet-rdma-")) or host.readlink(other) == "/dev/null":
            continue
        why = link_file_matches(host.read(other) or "", ifname, obs)
        if why:
            out.append("%s sorts before %s and matches %s (%s): udev applies only the first .link file that "
                       "matches a device, so the settings persisted for %s would not apply at boot; rename it "
                       "to sort after %s or narrow its [Match]" % (other, ours, ifname, why, ifname, ours))
    return out


# ---------------------------------------------------------------------- the management path
class Endpoint(NamedTuple):
    """One address of the Ansible connection.  ``side``: ``node`` (this node's end), ``peer``
    (the controller's end, as the node sees it) or ``controller`` (the address the controller
    connects to, e.g. ``ansible_host``; maybe NATed or forwarded)."""

    address: str
    side: str
    source: str


class ManagementPath(object):
    """The interfaces that carry the Ansible connection, each with why, and whether that could
    be told at all.  ``required``: the controller said the connection uses the node's network
    (``management_connection: network``), so not knowing the path refuses runtime changes."""

    def __init__(self, required: bool = True) -> None:
        self.required = required
        self.protected: Dict[str, str] = {}
        self.determined = False
        self.notes: List[str] = []

    def protect(self, ifname: str, why: str) -> None:
        self.determined = True
        self.protected.setdefault(ifname, why)


RouteLookup = Callable[[str, Optional[str]], Tuple[Optional[Dict[str, Any]], str]]


def split_zone(text: str) -> Tuple[Optional[Any], Optional[str]]:
    """'fe80::1%eth0' -> (IPv6Address('fe80::1'), 'eth0'); '[::1]' -> (::1, None); a name -> (None, None).
    An IPv4-mapped IPv6 address (an IPv4 peer of a dual-stack socket) is the IPv4 address."""
    address, _sep, zone = text.strip().strip("[]").partition("%")
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return None, None
    mapped = getattr(ip, "ipv4_mapped", None)
    return (mapped or ip), (zone or None)


def _holders(net: Dict[str, Dict[str, Any]], ip: Any) -> List[str]:
    out = []
    for name in sorted(net):
        for a in net[name].get("addresses", []):
            held, _zone = split_zone(a.get("local", ""))
            if held is not None and held == ip:
                out.append(name)
                break
    return out


def _resolve(path: ManagementPath, net: Dict[str, Dict[str, Any]], ep: Endpoint, route: RouteLookup) -> None:
    ip, zone = split_zone(ep.address)
    sides = {"node": "the node's end", "peer": "the controller's end", "controller": "the address Ansible connects to"}
    what = "%s (%s: %s)" % (ep.address, ep.source, sides[ep.side])
    if ip is None:
        path.notes.append("%s is not an IP address (names are not resolved on the node)" % what)
        return
    if ep.side == "controller" and ip.is_loopback:
        path.notes.append("%s is a loopback address of the controller (a tunnel or forwarded port): it says "
                          "nothing about this node's interfaces" % what)
        return
    if ep.side == "node" and zone and zone in net and not net[zone].get("loopback"):
        path.protect(zone, "holds %s" % what)
        return
    if ep.side in ("node", "controller"):
        holders = _holders(net, ip)
        nics = [h for h in holders if not net[h].get("loopback")]
        for h in nics:
            path.protect(h, "holds %s" % what)
        if nics:
            return
        if holders and ep.side == "node" and ip.is_loopback:
            path.determined = True   # the connection runs over loopback: no NIC carries it
            path.notes.append("%s is on loopback: no NIC carries the connection" % what)
            return
        if holders or ep.side == "node" or ip.is_link_local:
            path.notes.append("%s: %s" % (what, "held by loopback, reached by routing" if holders
                                          else "no interface holds it"))
            return
    if ip.is_link_local and not zone:
        path.notes.append("%s is link-local without an interface" % what)
        return
    found, reason = route(str(ip), zone if ep.side == "peer" else None)
    if found is None:
        path.notes.append("no route to %s (%s)" % (what, reason))
    elif found.get("type") == "local" or found.get("dev") not in net or net[found["dev"]].get("loopback"):
        if ep.side == "peer":
            path.determined = True
            path.notes.append("%s is this node itself: no NIC carries the connection" % what)
        else:
            path.notes.append("%s is routed through loopback" % what)
    else:
        path.protect(found["dev"], "is where the route to %s leaves" % what)


def _under(net: Dict[str, Dict[str, Any]], path: ManagementPath) -> None:
    """Add every device under a protected one: bridge/bond ports, the lower device of a VLAN or
    macvlan, a veth's peer (changing them changes or resets the protected one's traffic)."""
    todo = sorted(path.protected)
    while todo:
        top = todo.pop(0)
        below = [(n, "a port of %s" % top) for n in sorted(net) if net[n].get("master") == top]
        lower = net[top].get("link")
        if lower in net:
            below.append((lower, ("the veth peer of %s" if net[top].get("kind") == "veth"
                                  else "the lower device of %s") % top))
        for name, how in below:
            if name not in path.protected and not net[name].get("loopback"):
                path.protected[name] = "is %s, which %s" % (how, path.protected[top])
                todo.append(name)


def management_path(net: Dict[str, Dict[str, Any]], endpoints: List[Endpoint], route: RouteLookup,
                    required: bool = True, notes: Optional[List[str]] = None) -> ManagementPath:
    """Which interfaces carry the Ansible connection (pure but for ``route``, ``ip route get``)."""
    path = ManagementPath(required)
    path.notes.extend(notes or [])
    for ep in endpoints:
        _resolve(path, net, ep, route)
    _under(net, path)
    return path


def _ancestors(host: Host) -> List[str]:
    """PIDs of this process's parents, nearest first (``/proc/self``, ``PPid:`` lines)."""
    pid = host.readlink("/proc/self")
    out: List[str] = []
    while pid and pid.isdigit() and len(out) < 64:
        ppid = None
        for line in (host.read("/proc/%s/status" % pid) or "").splitlines():
            if line.startswith("PPid:"):
                ppid = line.split(":", 1)[1].strip()
        if not ppid or ppid == "0" or ppid in out:
            break
        out.append(ppid)
        pid = ppid
    return out


def sshd_connections(host: Host) -> Tuple[List[Tuple[str, str, str]], str]:
    """The TCP connections of the nearest sshd among this process's parents, as
    ``(node address, peer address, source)``, when SSH_CONNECTION is gone (become with sudo's
    env_reset drops it); and why there are none.  Only an sshd in this network namespace counts."""
    own_ns = host.readlink("/proc/self/ns/net")
    for pid in _ancestors(host):
        comm = (host.read("/proc/%s/comm" % pid) or "").strip()
        if not (comm.startswith("sshd") or comm == "dropbear"):
            continue
        if host.readlink("/proc/%s/ns/net" % pid) != own_ns:
            return [], "the sshd parent (pid %s) is in another network namespace" % pid
        inodes = set()
        for fd in host.listdir("/proc/%s/fd" % pid):
            target = host.readlink("/proc/%s/fd/%s" % (pid, fd)) or ""
            if target.startswith("socket:[") and target.endswith("]"):
                inodes.add(int(target[8:-1]))
        found = []
        for table in ("tcp", "tcp6"):
            text = host.read("/proc/%s/net/%s" % (pid, table))
            if not text:
                continue
            for sock in _procnet.parse_proc_net_tcp(text):
                if sock["inode"] in inodes and sock["state"] == _procnet.TCP_ESTABLISHED:
                    found.append((sock["local"], sock["remote"], "the connection of sshd (pid %s)" % pid))
        if found:
            return found, ""
        return [], "the sshd parent (pid %s) shows no TCP connection (not readable without root)" % pid
    return [], "no sshd among the module's parent processes"


def connection_endpoints(host: Host, management_address: Optional[str]) -> Tuple[List[Endpoint], List[str]]:
    """Every address of the Ansible connection this node and the controller can tell: the
    SSH_CONNECTION of the environment, else the sshd parent's socket, and ``management_address``
    (the controller's ``ansible_host``); and notes on what could not be told."""
    endpoints: List[Endpoint] = []
    notes: List[str] = []
    ssh = host.ssh_connection()
    if ssh:
        endpoints += [Endpoint(ssh[1], "node", "SSH_CONNECTION"), Endpoint(ssh[0], "peer", "SSH_CONNECTION")]
    else:
        notes.append("no SSH_CONNECTION in the module's environment")
        try:
            found, why = sshd_connections(host)
        except (HostError, ValueError) as e:
            found, why = [], "the sshd parent's sockets could not be read: %s" % e
        for local, remote, source in found:
            endpoints += [Endpoint(local, "node", source), Endpoint(remote, "peer", source)]
        if why:
            notes.append(why)
    if management_address:
        endpoints.append(Endpoint(management_address, "controller", "management_address"))
    else:
        notes.append("management_address not given")
    return endpoints, notes


def read_management_path(host: Host, net: Dict[str, Dict[str, Any]], management_address: Optional[str],
                         required: bool) -> ManagementPath:
    endpoints, notes = connection_endpoints(host, management_address)
    return management_path(net, endpoints, lambda address, oif: _iproute.route_get(host, address, oif),
                           required, notes)


# ---------------------------------------------------------------------- plan (pure)
def dragged(ifname: str, mtu: int, net: Dict[str, Dict[str, Any]],
            own: Tuple[str, ...] = ()) -> List[Tuple[str, int, str]]:
    """Devices stacked on ``ifname`` (VLAN, macvlan, ... and those on them) whose MTU is above
    ``mtu``: the kernel lowers them with it.  ``(name, current mtu, relation)``, the topmost first.
    Devices in ``own`` get an MTU of their own in this call: neither they nor what sits on them
    are dragged from here."""
    out: List[Tuple[str, int, str]] = []
    for name in sorted(net):
        obs = net[name]
        if obs.get("link") == ifname and obs.get("kind") in STACKED and obs["mtu"] > mtu and name not in own:
            out.extend(dragged(name, mtu, net, own))
            out.append((name, obs["mtu"], " (%s on %s, which the kernel lowers with it)" % (obs["kind"], ifname)))
    return out


def _depth(name: str, net: Dict[str, Dict[str, Any]]) -> int:
    """How many stacked devices (VLAN on macvlan on NIC: 2) sit under ``name``."""
    depth, seen = 0, set()
    while name in net and net[name].get("kind") in STACKED and net[name].get("link") in net and name not in seen:
        seen.add(name)
        name = net[name]["link"]
        depth += 1
    return depth


def _order_mtu_changes(p: Plan, net: Dict[str, Dict[str, Any]]) -> Plan:
    """The same plan with its MTU changes (in the places they hold) reordered so a stacked
    device never exceeds its lower device, neither while applying nor while rolling back in
    reverse: decreases first, topmost device first; then increases, lowest device first."""
    changes = list(p)
    slots = [i for i, c in enumerate(changes) if c.key.startswith("nic:") and c.key.endswith(":mtu")]

    def rank(c: Any) -> Tuple[int, int]:
        depth = _depth(c.key.split(":")[1], net)
        return (0, -depth) if c.after < c.before else (1, depth)

    ordered = sorted((changes[i] for i in slots), key=rank)
    for i, c in zip(slots, ordered):
        changes[i] = c
    out = Plan()
    for c in changes:
        out.add(c.key, c.before, c.after)
    return out


def _check_stack(wanted: Dict[str, Dict[str, Any]], observed: Dict[str, Dict[str, Any]],
                 net: Dict[str, Dict[str, Any]]) -> Dict[str, List[Tuple[str, int, str]]]:
    """Validate MTUs against the stacking and return, per interface whose MTU goes down, the
    stacked devices the kernel lowers with it (those not given an MTU of their own)."""
    out: Dict[str, List[Tuple[str, int, str]]] = {}
    for name in sorted(wanted):
        lower = net.get(name, {}).get("link")
        if "mtu" in wanted[name] and net.get(name, {}).get("kind") in STACKED and lower in net:
            limit = wanted.get(lower, {}).get("mtu", net[lower]["mtu"])
            if wanted[name]["mtu"] > limit:
                raise ValueError("interfaces: %s mtu=%d is above %d, the MTU of %s, the %s's lower device (after "
                                 "this call); the kernel refuses it"
                                 % (name, wanted[name]["mtu"], limit, lower, net[name]["kind"]))
    for name in sorted(wanted):
        mtu = wanted[name].get("mtu")
        if mtu is None or mtu >= observed[name]["mtu"]:
            continue
        uppers = dragged(name, mtu, net, tuple(n for n in wanted if "mtu" in wanted[n]))
        for upper, _before, relation in uppers:
            check_mtu_floor(name, mtu, net[upper], True, True, relation)
        if uppers:
            out[name] = uppers
    return out


def _guard(diffs: Dict[str, List[str]], management: ManagementPath, allow_management: bool) -> None:
    """Refuse runtime changes on the interfaces carrying the Ansible connection, and any runtime
    change when that path is unknown and the controller did not say it needs none."""
    if allow_management:
        return
    for ifname in sorted(diffs):
        if ifname in management.protected:
            raise ValueError("interfaces: %s carries the Ansible connection; changing %s could cut it off (%s %s). "
                             "Set allow_management_interface: true to proceed"
                             % (ifname, ", ".join(diffs[ifname]), ifname, management.protected[ifname]))
    if diffs and management.required and not management.determined:
        first = sorted(diffs)[0]
        raise ValueError("interfaces: cannot tell which interface carries the Ansible connection (%s), so changing "
                         "%s of %s could cut it off. Give management_address (the node's address as Ansible "
                         "reaches it: the hpcnet.rdma.tuning role passes ansible_host), or management_connection: none when "
                         "the connection does not use this node's network (local, docker, chroot connections), "
                         "or allow_management_interface: true"
                         % ("; ".join(management.notes) or "nothing told", ", ".join(diffs[first]), first))


def _add_link_file(p: Plan, previous: Dict[str, Any], link_files: Any, driver_files: Dict[str, Any],
                   who: Tuple[str, str, Dict[str, Any]], values: Dict[str, Any], journal_dir: str,
                   lines: List[str], driver: Optional[str]) -> None:
    """Plan the ``.link`` file of one selection - ``who``: (its label, the interface name the file
    is named after, what was observed of it) - or fold it into its driver's file (match: driver)."""
    label, ifname, obs = who
    if driver:
        _driver_file(driver_files, driver, label, lines, values)
        return
    path = LINK_FILE.format(ifname=ifname)
    before = link_files.get(path)
    previous["file:" + path] = before
    p.add("file:" + path, before, _files.owned(render_link(ifname, obs, values, journal_dir, lines)))


def plan(chosen: Dict[str, Dict[str, Any]], observed: Dict[str, Dict[str, Any]], mode: str, cap: bool,
         management: Any, allow_management: bool, link_files: Dict[str, Any],
         journal_dir: str, net: Optional[Dict[str, Dict[str, Any]]] = None,
         allow_low_mtu: bool = False, absent: Optional[Dict[str, Dict[str, Any]]] = None,
         match: str = "auto") -> Dict[str, Any]:
    """Validate everything, then plan runtime keys and .link files; raises ValueError first.

    ``management``: a :class:`ManagementPath`, or a list of interface names that carry the
    connection.  ``net``: every interface of the node (:func:`read_network`) for the stacking
    (defaults to ``observed``).  ``absent``: the selections :func:`select` found no interface
    for (mode persist only): a .link file each, from the entry alone.  ``match``: how a .link
    file matches its device where the entry does not say (:func:`match_lines`)."""
    if not isinstance(management, ManagementPath):
        names = list(management)
        management = ManagementPath(required=False)
        for name in names:
            management.protect(name, "holds the connection's address")
    net = observed if net is None else net
    runtime = mode in ("runtime", "both")
    capped: List[Dict[str, Any]] = []
    wanted = dict((n, desired_values(n, chosen[n], observed[n], cap, capped, allow_low_mtu, runtime))
                  for n in sorted(chosen))
    drags = _check_stack(wanted, observed, net) if runtime else {}
    p = Plan()
    previous: Dict[str, Any] = {}
    diffs: Dict[str, List[str]] = {}
    driver_files: Dict[str, Tuple[List[str], Dict[str, Any], str]] = {}
    for ifname in sorted(wanted):
        values = wanted[ifname]
        if runtime:
            changed = [s for s in values if current_value(observed[ifname], s) != values[s]]
            if changed:
                diffs[ifname] = changed
            # adaptive coalescing first: drivers ignore fixed usecs while adaptive is on
            for setting in sorted(values, key=lambda s: (not s.startswith("coalesce.adaptive"), s)):
                key = "nic:%s:%s" % (ifname, setting)
                before = current_value(observed[ifname], setting)
                previous[key] = before
                if setting == "mtu":
                    for upper, upper_mtu, _relation in drags.get(ifname, []):
                        previous["nic:%s:mtu" % upper] = upper_mtu
                        p.add("nic:%s:mtu" % upper, upper_mtu, values["mtu"])
                p.add(key, before, values[setting])
        if mode in ("persist", "both"):
            lines, driver = match_lines(ifname, observed[ifname], *chosen[ifname].get("match", (match, None)),
                                        persist_only=not runtime)
            _add_link_file(p, previous, link_files, driver_files, (ifname, ifname, observed[ifname]), values,
                           journal_dir, lines, driver)
    for label in sorted(absent or {}):
        settings = absent[label]
        values = absent_values(label, settings, allow_low_mtu)
        wanted[label] = values
        kind, value = settings["selector"], settings["value"]
        how, how_value = settings.get("match", (match, None))
        if kind == "driver" and how != "driver":
            raise ValueError("interfaces[%d] (driver=%s): no interface of driver %s is present here, so its .link "
                             "file can only match by driver: set match: driver" % (settings["index"], value, value))
        lines, driver = match_lines(value if kind == "name" else label, {}, how,
                                    how_value if how_value is not None or kind == "name" else value,
                                    persist_only=not runtime)
        _add_link_file(p, previous, link_files, driver_files, (label, value, {}), values, journal_dir, lines, driver)
    for driver in sorted(driver_files):
        lines, values, _who = driver_files[driver]
        path = DRIVER_LINK_FILE.format(driver=driver)
        before = link_files.get(path)
        previous["file:" + path] = before
        p.add("file:" + path, before, _files.owned(render_link(driver, {}, values, journal_dir, lines,
                                                               driver_wide=True)))
    _guard(diffs, management, allow_management)
    return {"plan": _order_mtu_changes(p, net), "previous": previous, "capped": capped, "desired": wanted,
            "dragged": dict((n, [u[0] for u in d]) for n, d in drags.items())}


def _driver_file(files: Dict[str, Tuple[List[str], Dict[str, Any], str]], driver: str, who: str,
                 lines: List[str], values: Dict[str, Any]) -> None:
    """One .link file per driver (match: driver): every interface it covers must want the same."""
    if driver in files and files[driver][1] != values:
        raise ValueError("interfaces: %s and %s both match by driver %s, which persists one .link file for every "
                         "NIC of the driver, but want different settings (%s, then %s); give them the same values, "
                         "or match one of them by path or original_name"
                         % (files[driver][2], who, driver, _show(files[driver][1]), _show(values)))
    files.setdefault(driver, (lines, values, who))


def _show(values: Dict[str, Any]) -> str:
    return ", ".join("%s=%s" % (k, values[k]) for k in sorted(values)) or "nothing"
