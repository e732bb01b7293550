# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ``nic`` domain: MTU, rings, channels and interrupt coalescing of network interfaces.

Keys are ``nic:IF:mtu``, ``nic:IF:ring.rx``, ``nic:IF:channel.combined``,
``nic:IF:coalesce.rx_usecs``, ``nic:IF:coalesce.adaptive_rx``.  Persistence is one systemd
``.link`` file per interface (applied by udev when the device appears, i.e. at every boot).
"""
from __future__ import annotations

import fnmatch
import ipaddress
import sys
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.hpcnet.rdma.plugins.module_utils import _ethtool, _files, _iproute
from ansible_collections.hpcnet.rdma.plugins.module_utils._host import Host, HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils._plan import Plan
from ansible_collections.hpcnet.rdma.plugins.module_utils._spec import SELECTORS

LINK_DIR = "/etc/systemd/network"
LINK_FILE = LINK_DIR + "/10-hpcnet-rdma-{ifname}.link"

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
def observe(host: Host) -> Dict[str, Dict[str, Any]]:
    """Every interface but loopback: link facts and ethtool state (None where unsupported)."""
    addrs = _iproute.addrs(host)
    out: Dict[str, Dict[str, Any]] = {}
    for link in _iproute.links(host):
        name = link["ifname"]
        if "LOOPBACK" in (link.get("flags") or []):
            continue
        out[name] = {
            "name": name,
            "mtu": link["mtu"],
            "min_mtu": link.get("min_mtu"),
            "max_mtu": link.get("max_mtu"),
            "address": link.get("address"),
            "permaddr": link.get("permaddr"),
            "kind": link.get("kind"),
            "driver": _iproute.iface_driver(host, name) or link.get("kind"),
            "addresses": addrs.get(name, []),
        }
    return out


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


def _merge(into: Dict[str, Any], entry: Optional[Dict[str, Any]]) -> None:
    for section in ("mtu", "rings", "channels", "coalesce"):
        v = (entry or {}).get(section)
        if v is None:
            continue
        if section == "mtu":
            into["mtu"] = v
        else:
            into.setdefault(section, {}).update(dict((k, x) for k, x in v.items() if x is not None))


def select(entries: List[Dict[str, Any]], links: Dict[str, Dict[str, Any]],
           defaults: Optional[Dict[str, Any]] = None) -> Dict[str, Dict[str, Any]]:
    """Interface name → merged settings: ``defaults``, then each selecting entry in order
    (later entries override earlier ones field by field)."""
    chosen: Dict[str, Dict[str, Any]] = {}
    present = ", ".join("%s (%s)" % (n, links[n].get("driver") or "?") for n in sorted(links)) or "none"
    for i, entry in enumerate(entries):
        kind, value = _selector(entry, i)
        if kind == "name":
            if value not in links:
                raise ValueError("interfaces[%d].name: unknown interface %r; present: %s" % (i, value, present))
            names = [value]
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
        if not names:
            raise ValueError("interfaces[%d]: selector %s=%r matched no interface; present: %s"
                             % (i, kind, value, present))
        for n in names:
            if n not in chosen:
                chosen[n] = {"selected_by": []}
                _merge(chosen[n], defaults)
            chosen[n]["selected_by"].append("%s=%s" % (kind, value))
            _merge(chosen[n], entry)
    return chosen


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


def desired_values(ifname: str, settings: Dict[str, Any], obs: Dict[str, Any],
                   cap: bool, capped: List[Dict[str, Any]]) -> Dict[str, Any]:
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


def render_link(ifname: str, obs: Dict[str, Any], values: Dict[str, Any], journal_dir: str) -> str:
    """A systemd .link file that re-applies ``values`` whenever the device appears."""
    lines = [_files.HEADER.format(module="nic_tuning", journal=journal_dir), "[Match]\n"]
    if obs.get("permaddr"):
        lines.append("PermanentMACAddress=%s\n" % obs["permaddr"])
    elif obs.get("address"):
        lines.append("MACAddress=%s\n" % obs["address"])
    else:
        lines.append("OriginalName=%s\n" % ifname)
    lines.append("\n[Link]\nName=%s\n" % ifname)
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
        lines.append("%s=%s\n" % (_LINK_KEY[setting], text))
    return "".join(lines)


def management_interfaces(links: Dict[str, Dict[str, Any]], address: Optional[str]) -> List[str]:
    if not address:
        return []
    return [n for n, obs in links.items() if any(a.get("local") == address for a in obs.get("addresses", []))]


def plan(chosen: Dict[str, Dict[str, Any]], observed: Dict[str, Dict[str, Any]], mode: str, cap: bool,
         management: List[str], allow_management: bool, link_files: Dict[str, Any],
         journal_dir: str) -> Dict[str, Any]:
    """Validate everything, then plan runtime keys and .link files; raises ValueError first."""
    capped: List[Dict[str, Any]] = []
    wanted = dict((n, desired_values(n, chosen[n], observed[n], cap, capped)) for n in sorted(chosen))
    p = Plan()
    previous: Dict[str, Any] = {}
    for ifname in sorted(wanted):
        values = wanted[ifname]
        if mode in ("runtime", "both"):
            diffs = [s for s in values if current_value(observed[ifname], s) != values[s]]
            if diffs and ifname in management and not allow_management:
                raise ValueError("interfaces: %s carries the Ansible connection; changing %s could cut it "
                                 "off. Set allow_management_interface: true to proceed"
                                 % (ifname, ", ".join(diffs)))
            # adaptive coalescing first: drivers ignore fixed usecs while adaptive is on
            for setting in sorted(values, key=lambda s: (not s.startswith("coalesce.adaptive"), s)):
                key = "nic:%s:%s" % (ifname, setting)
                before = current_value(observed[ifname], setting)
                previous[key] = before
                p.add(key, before, values[setting])
        if mode in ("persist", "both"):
            path = LINK_FILE.format(ifname=ifname)
            before = link_files.get(path)
            previous["file:" + path] = before
            p.add("file:" + path, before, _files.owned(render_link(ifname, observed[ifname], values, journal_dir)))
    return {"plan": p, "previous": previous, "capped": capped, "desired": wanted}
