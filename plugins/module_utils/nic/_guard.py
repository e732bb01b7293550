# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The management-link guard of nic_tuning: which interfaces carry the Ansible connection (the
node's end of the SSH connection, the route back to the controller, the address the controller
connects to), and every device under them (bridge and bond ports, the lower device of a VLAN or
macvlan, a veth's peer).  Runtime changes to those are refused (:func:`guard`), and so is any
runtime change when the path cannot be told and the controller did not say the connection does
not use the node's network.

Also what an MTU change reaches beyond the interface it names: the stacked devices the kernel
lowers with it (:func:`dragged`, :func:`check_stack`).
"""
from __future__ import annotations

import collections
import ipaddress

from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _iproute
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _procnet
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.nic._select import check_mtu_floor

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Callable, Dict, List, Optional, Tuple

# Link kinds stacked on a lower device whose MTU the kernel lowers with it (never raises).
STACKED = ("vlan", "macvlan", "macvtap", "ipvlan", "ipvtap")


# ---------------------------------------------------------------------- the management path
class Endpoint(collections.namedtuple("Endpoint", "address side source")):
    """One address of the Ansible connection.  ``side``: ``node`` (this node's end), ``peer``
    (the controller's end, as the node sees it) or ``controller`` (the address the controller
    connects to, e.g. ``ansible_host``; maybe NATed or forwarded)."""

    address: str
    side: str
    source: str
    __slots__ = ()


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


if TYPE_CHECKING:
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


# ---------------------------------------------------------------------- what a runtime change reaches (pure)
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


def check_stack(wanted: Dict[str, Dict[str, Any]], observed: Dict[str, Dict[str, Any]],
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


def guard(diffs: Dict[str, List[str]], management: ManagementPath, allow_management: bool) -> None:
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
