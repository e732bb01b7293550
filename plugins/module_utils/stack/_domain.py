# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The RDMA stack: kernel modules, soft-RoCE links, the RDMA netns mode, device-node access.

Runtime domains (journal keys):

* ``kmod:NAME`` — ``loaded`` / ``absent`` (``builtin`` is read, never written).  Loading is
  ``modprobe NAME`` one module at a time, dependencies first; unloading is ``rmmod NAME`` of that
  one module, refused (:class:`Refused`, nothing changed) while the module is in use.
* ``rxe:NAME`` — ``{"netdev": IF}`` or None: ``rdma link add NAME type rxe netdev IF`` / ``delete``.
* ``rdma:netns_mode`` — ``shared`` / ``exclusive`` (None: ib_core not loaded, nothing to restore);
  ``rdma system set netns``.  The kernel refuses a change while other network namespaces exist
  (EBUSY): a :class:`Refused` result, the persisted ``ib_core netns_mode`` applies at next boot.
* ``devnode:/dev/infiniband/X`` — ``{"gid": N, "mode": "0660"}`` of an existing device node.

Persistent parts are ``file:`` keys planned in ``_config`` (modules-load.d, modprobe.d, limits.d, systemd
drop-ins, a udev rule, the soft-RoCE boot unit), from the checked parameters; this file holds the
runtime domains and what is read of the kernel (module trees, loaded modules, device nodes).
"""
from __future__ import annotations

import time

from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _getent
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _ibtools
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _kmod
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _kmodfiles
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _rdmanl
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _systemd
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._domain import Refused
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import is_not_supported
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._plan import Plan
from ansible_collections.hpcnet.rdma.plugins.module_utils.stack._config import DEV_DIR, DEVICES

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List, Optional, Tuple


# ---------------------------------------------------------------------- kmod:NAME
class _Kmod(object):
    @staticmethod
    def read_value(host: Host, name: str) -> str:
        base = "/sys/module/%s" % name
        if not host.isdir(base):
            return "absent"
        state = host.read(base + "/initstate")
        if state is None:
            return "builtin"
        return "absent" if state.strip() == "going" else "loaded"

    @staticmethod
    def write_value(host: Host, name: str, value: Any) -> None:
        current = _Kmod.read_value(host, name)
        if current == value or (value == "absent" and current == "builtin"):
            return
        if value == "loaded":
            _kmod.MODPROBE.call(host, "load", name=name)
            return
        if value != "absent":
            raise HostError("kernel module %s: cannot bring it to state %r" % (name, value))
        base = "/sys/module/%s" % name
        refcnt = (host.read(base + "/refcnt") or "0").strip()
        holders = host.listdir(base + "/holders")
        if refcnt not in ("", "0") or holders:
            raise Refused("kernel module %s is in use (refcnt %s%s); left loaded"
                          % (name, refcnt, ", used by " + ", ".join(holders) if holders else ""))
        rc, out, err = _kmod.RMMOD.run(host, "unload", name=name)
        if rc != 0:
            msg = " ".join((err or out).split())
            if "in use" in msg:
                raise Refused("kernel module %s is in use (%s); left loaded" % (name, msg))
            raise HostError("rmmod %s failed (rc=%d): %s" % (name, rc, msg))

    @staticmethod
    def same(actual: Any, wanted: Any) -> bool:
        return actual == wanted or (wanted == "absent" and actual == "builtin")


KMOD = _Kmod()


# ---------------------------------------------------------------------- rxe:NAME
def rdma_links(host: Host) -> List[Dict[str, Any]]:
    """Every RDMA port with its netdev (``device``, ``port``, ``netdev``); [] when ib_core is not loaded.
    Nothing is asked then: opening the NETLINK_RDMA socket makes the kernel load ib_core (its
    net-pf-16-proto-20 alias), and a read (check mode, status) must not load a module.  Read from the
    kernel's RDMA netlink (node/_rdmanl: the dump ``rdma link show`` makes, without starting the tool), else
    ``rdma -j link`` parsed (with the ports' states too); entries the parser could not read are left out
    (they name no link this module could manage)."""
    if not host.isdir("/sys/module/ib_core"):
        return []
    ports = _rdmanl.port_netdevs(host)
    if ports is not None:
        return ports
    rc, out, err = _ibtools.RDMA.run(host, "links")
    if rc != 0:
        msg = " ".join((err or out).split())
        if "NETLINK_RDMA" in msg or is_not_supported(msg):
            return []
        raise HostError("rdma -j link show failed (rc=%d): %s" % (rc, msg))
    return [link for link in _ibtools.parse_rdma_link(out or "[]") if "unreadable" not in link]


class _Rxe(object):
    @staticmethod
    def read_value(host: Host, name: str) -> Optional[Dict[str, Any]]:
        for link in rdma_links(host):
            if link["device"] == name:
                return {"netdev": link["netdev"]}
        return None

    @staticmethod
    def write_value(host: Host, name: str, value: Any) -> None:
        current = _Rxe.read_value(host, name)
        if current == value:
            return
        if current is not None:
            _ibtools.RDMA.call(host, "delete_link", name=name)
        if value is not None:
            _ibtools.RDMA.call(host, "add_rxe", name=name, netdev=value["netdev"])

    @staticmethod
    def same(actual: Any, wanted: Any) -> bool:
        return actual == wanted


RXE = _Rxe()


# ---------------------------------------------------------------------- rdma:netns_mode
NETNS_PARAM = "/sys/module/ib_core/parameters/netns_mode"


class _RdmaSystem(object):
    @staticmethod
    def read_value(host: Host, name: str) -> Optional[str]:
        if name != "netns_mode":
            raise HostError("rdma:%s is not a known RDMA system setting" % name)
        text = host.read(NETNS_PARAM)
        if text is None:
            return None
        return "shared" if text.strip() in ("Y", "1") else "exclusive"

    @staticmethod
    def write_value(host: Host, name: str, value: Any) -> None:
        current = _RdmaSystem.read_value(host, name)
        if value is None or current == value:
            return
        if current is None:
            raise HostError("cannot set the RDMA netns mode: ib_core is not loaded")
        rc, out, err = _ibtools.RDMA.run(host, "set_netns", mode=value)
        if rc != 0:
            msg = " ".join((err or out).split())
            if "busy" in msg.lower():
                raise Refused("the kernel refuses to change the RDMA netns mode to %s while other network "
                              "namespaces exist (%s); the modprobe option applies at the next boot" % (value, msg))
            raise HostError("rdma system set netns %s failed (rc=%d): %s" % (value, rc, msg))

    @staticmethod
    def same(actual: Any, wanted: Any) -> bool:
        return wanted is None or actual == wanted


RDMA_SYSTEM = _RdmaSystem()


# ---------------------------------------------------------------------- devnode:PATH
class _DevNode(object):
    @staticmethod
    def read_value(host: Host, path: str) -> Optional[Dict[str, Any]]:
        return host.node_perms(path)

    @staticmethod
    def write_value(host: Host, path: str, value: Any) -> None:
        if value is None or not host.exists(path):
            return  # the device went away (its driver unloaded): nothing left to restore
        host.set_node_perms(path, int(value["gid"]), value["mode"])

    @staticmethod
    def same(actual: Any, wanted: Any) -> bool:
        return wanted is None or actual is None or actual == wanted


DEVNODE = _DevNode()

# the domain contract (_domain.Domain): the journal prefixes this file reads and writes
DOMAINS = {"kmod": KMOD, "rxe": RXE, "rdma": RDMA_SYSTEM, "devnode": DEVNODE}


# ---------------------------------------------------------------------- kernel facts
def kernel_tree(host: Host, release: str) -> Optional[Dict[str, Any]]:
    """modules.dep / modules.builtin / modules.softdep of ``/lib/modules/RELEASE``; None when absent."""
    base = "/lib/modules/%s" % release
    dep = host.read(base + "/modules.dep")
    if dep is None:
        return None
    softdep = _kmodfiles.parse_modules_softdep(host.read(base + "/modules.softdep") or "")
    return {"release": release, "dep": _kmodfiles.parse_modules_dep(dep),
            "builtin": set(_kmodfiles.parse_modules_builtin(host.read(base + "/modules.builtin") or "")),
            "softdep": softdep}


def closure(tree: Dict[str, Any], wanted: List[str]) -> List[str]:
    """``wanted`` and everything modprobe loads with them (dependencies, soft pre/post), in load
    order: every module after what it depends on."""
    order: List[str] = []

    def visit(name: str, stack: Tuple[str, ...]) -> None:
        if name in order or name in stack:
            return
        soft = tree["softdep"].get(name, {"pre": [], "post": []})
        for dep in list(reversed(tree["dep"].get(name, []))) + soft["pre"]:
            visit(dep, stack + (name,))
        order.append(name)
        for post in soft["post"]:
            visit(post, stack + (name,))

    for w in wanted:
        visit(w, ())
    return order


def unknown_modules(tree: Dict[str, Any], names: List[str]) -> List[str]:
    known = set(tree["dep"]) | tree["builtin"]
    for deps in tree["dep"].values():
        known.update(deps)
    return [n for n in names if n not in known]


def loaded_modules(host: Host) -> List[str]:
    """Names in /proc/modules (loadable modules that are loaded now)."""
    return sorted(line.split()[0] for line in (host.read("/proc/modules") or "").splitlines() if line.strip())


def settle(host: Host, timeout: float = 20.0) -> None:
    """Wait until udev has handled the new devices' events and rdma-core's rdma-load-modules@ units
    (started by its udev rules when an RDMA device appears) have finished loading ULP modules."""
    if host.exists("/run/udev/control"):
        _systemd.UDEVADM.run(host, "settle", timeout=int(timeout))
    if not host.isdir("/run/systemd/system"):
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        _rc, jobs, _err = _systemd.SYSTEMCTL.run(host, "list_jobs")
        if "rdma-load-modules@" not in jobs and "rdma-hw.target" not in jobs:
            return
        time.sleep(0.5)


def consequence_plan(tree: Optional[Dict[str, Any]], new: List[str]) -> Plan:
    """``kmod:`` changes for modules that appeared during the call without being planned (rdma-core's
    udev rules load ib_iser, rpcrdma, ... when an RDMA device appears): dependencies first, so
    rollback unloads them, dependents first, before the modules they hold in use."""
    order = [m for m in closure(tree, new) if m in new] if tree else []
    order += [m for m in sorted(new) if m not in order]
    p = Plan()
    for name in order:
        p.add("kmod:" + name, "absent", "loaded")
    return p


def group_gid(host: Host, group: str) -> Optional[int]:
    """The group's id through NSS (``getent group``: local, LDAP, SSSD); None when unknown."""
    rc, out, _err = _getent.GETENT.run(host, "group", name=group)
    return _getent.parse_group_gid(out) if rc == 0 else None


def device_nodes(host: Host, kinds: List[str]) -> List[str]:
    """Existing /dev/infiniband nodes of the selected kinds."""
    prefixes = tuple(DEVICES[k][2] for k in kinds)
    return ["%s/%s" % (DEV_DIR, n) for n in host.listdir(DEV_DIR) if n.startswith(prefixes)]
