# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The RDMA stack's declared state and the files that persist it, all pure: :func:`normalize` checks
rdma_stack's parameters, the file contents and :func:`planned_files` say what each persistent file
holds (modules-load.d, modprobe.d, limits.d, systemd drop-ins, a udev rule, the soft-RoCE boot
unit), and :func:`plan` turns that and what was read into the plan (the runtime domains it plans
for are in ``_domain``).

Locked memory stays scoped: the limits.d line names one group, and systemd services get
``LimitMEMLOCK`` only through a drop-in for each service named in ``memlock.services``.  The
manager-wide ``DefaultLimitMEMLOCK`` (``memlock.systemd: global``) reaches every service — sshd,
getty and ``user@.service`` hand it to every login — so it is an explicit opt-in that warns
(:func:`memlock_warnings`), as is naming a service that starts login sessions.
"""
from __future__ import annotations

from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _files
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._plan import Plan
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _kmodfiles
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import lazy_re

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List, Tuple

MODULES_LOAD = "/etc/modules-load.d/hpcnet-rdma.conf"
MODPROBE_CONF = "/etc/modprobe.d/hpcnet-rdma.conf"
LIMITS_CONF = "/etc/security/limits.d/90-hpcnet-rdma.conf"
SYSTEMD_MANAGER_DROPIN = "/etc/systemd/system.conf.d/90-hpcnet-rdma.conf"
SERVICE_DROPIN = "/etc/systemd/system/%s.d/90-hpcnet-rdma-memlock.conf"
UDEV_RULE = "/etc/udev/rules.d/92-hpcnet-rdma-access.rules"
RXE_UNIT = "/etc/systemd/system/hpcnet-rdma-rxe.service"
RXE_LINK = "/etc/systemd/system/multi-user.target.wants/hpcnet-rdma-rxe.service"
DEV_DIR = "/dev/infiniband"

MODULE_RE = lazy_re(r"^[A-Za-z0-9_-]+$")
NAME_RE = lazy_re(r"^[A-Za-z0-9_.-]+$")
IFNAMSIZ = 16              # a network interface name has at most IFNAMSIZ - 1 bytes (dev_valid_name)
IB_DEVICE_NAME_MAX = 64    # an RDMA device name has at most 63 (rdma link add: nla_strscpy)
MEMLOCK_SYSTEMD = ("services", "global", "none")
# services that start login sessions: a LimitMEMLOCK on them reaches every user who logs in through them
LOGIN_SERVICE_RE = lazy_re(r"^(ssh|sshd|console-getty|gdm|lightdm|sddm|xrdp|systemd-logind|"
                           r"(getty|serial-getty|container-getty|autovt|user)@.*)\.service$")
# what systemd-escape --path keeps as is (unit_name_path_escape: letters, digits, ':', '_', '.')
_UNIT_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:_.")
UNIT_RE = lazy_re(r"^[A-Za-z0-9:_.@-]+\.service$")
MODE_RE = lazy_re(r"^0?[0-7]{3}$")
# device-node kinds: (udev subsystem, kernel name pattern, /dev/infiniband name prefix)
DEVICES = {
    "uverbs": ("infiniband_verbs", "uverbs*", "uverbs"),
    "rdma_cm": ("misc", "rdma_cm", "rdma_cm"),
    "umad": ("infiniband_mad", "umad*", "umad"),
    "issm": ("infiniband_mad", "issm*", "issm"),
}


# ---------------------------------------------------------------------- validation (pure)
def normalize(params: Dict[str, Any]) -> Dict[str, Any]:
    """Checked, normalized input; ValueError naming the field, the value and what is allowed."""
    modules = []
    for m in params.get("modules") or []:
        if not MODULE_RE.match(m or ""):
            raise ValueError("modules: %r is not a kernel module name (letters, digits, _ and -)" % m)
        name = _kmodfiles.kmod_name(m)
        if name not in modules:
            modules.append(name)
    rxe = []
    for i, link in enumerate(params.get("soft_roce") or []):
        name = link.get("name") or "rxe%d" % i
        if not NAME_RE.match(link.get("netdev") or "") or not NAME_RE.match(name):
            raise ValueError("soft_roce[%d]: netdev %r / name %r must be interface and device names"
                             % (i, link.get("netdev"), name))
        if len(link["netdev"]) >= IFNAMSIZ or link["netdev"] in (".", ".."):
            raise ValueError("soft_roce[%d].netdev: %r is not a network interface name (allowed: 1 to %d characters, "
                             "not . or ..)" % (i, link["netdev"], IFNAMSIZ - 1))
        if len(name) >= IB_DEVICE_NAME_MAX:
            raise ValueError("soft_roce[%d].name: %r is longer than an RDMA device name may be (%d characters)"
                             % (i, name, IB_DEVICE_NAME_MAX - 1))
        if name in [r["name"] for r in rxe]:
            raise ValueError("soft_roce[%d]: device name %s is given twice" % (i, name))
        for j, other in enumerate(rxe):
            if other["netdev"] == link["netdev"]:
                raise ValueError("soft_roce[%d] and soft_roce[%d] both put a soft-RoCE device on %s (%s, %s); the "
                                 "kernel allows one per interface" % (j, i, link["netdev"], other["name"], name))
        rxe.append({"name": name, "netdev": link["netdev"]})
    if rxe and "rdma_rxe" not in modules:
        modules.append("rdma_rxe")
    memlock = params.get("memlock")
    if memlock:
        limit = str(memlock.get("limit") or "unlimited")
        if limit != "unlimited" and not (limit.isdigit() and int(limit) > 0):
            raise ValueError("memlock.limit: %r is not allowed (allowed: unlimited, or a size in KiB > 0)" % limit)
        if not NAME_RE.match(memlock.get("group") or ""):
            raise ValueError("memlock.group: %r is not a group name" % memlock.get("group"))
        services = list(memlock.get("services") or [])
        bad = [s for s in services if not UNIT_RE.match(s)]
        if bad:
            raise ValueError("memlock.services: %s must be systemd service names ending in .service"
                             % ", ".join(repr(b) for b in bad))
        systemd = memlock.get("systemd") or "services"
        if systemd not in MEMLOCK_SYSTEMD:
            raise ValueError("memlock.systemd: %r is not allowed (allowed: %s)" % (systemd, ", ".join(MEMLOCK_SYSTEMD)))
        if systemd == "none" and services:
            raise ValueError("memlock.services: %s given with memlock.systemd: none, which leaves systemd alone "
                             "(allowed: systemd: services to give them a LimitMEMLOCK drop-in, or no services)"
                             % ", ".join(services))
        memlock = {"group": memlock["group"], "limit": limit, "systemd": systemd, "services": services}
    access = params.get("device_access")
    if access:
        mode = str(access.get("mode") or "0660")
        if not MODE_RE.match(mode):
            raise ValueError("device_access.mode: %r is not an octal mode like 0660" % mode)
        if int(mode, 8) & 0o007:
            raise ValueError("device_access.mode: %s gives access to every user; the point is group-only "
                             "access (e.g. 0660)" % mode)
        if not NAME_RE.match(access.get("group") or ""):
            raise ValueError("device_access.group: %r is not a group name" % access.get("group"))
        access = {"group": access["group"], "mode": "%04o" % int(mode, 8),
                  "devices": list(access.get("devices") or ["uverbs", "rdma_cm"])}
    return {"modules": modules, "soft_roce": rxe, "memlock": memlock, "device_access": access,
            "netns_mode": params.get("netns_mode")}


def memlock_warnings(norm: Dict[str, Any]) -> List[str]:
    """What an explicit memlock choice opens beyond the group (pure): the module warns with these."""
    memlock = norm.get("memlock")
    if not memlock:
        return []
    limit = systemd_limit(memlock)
    out = []
    if memlock["systemd"] == "global":
        out.append("memlock.systemd: global sets DefaultLimitMEMLOCK=%s in %s for every systemd service; sshd, "
                   "getty and user@.service pass it to every login session, so every user - not only the members "
                   "of group %s - may lock that much memory. Prefer systemd: services with the daemons that need "
                   "it in memlock.services" % (limit, SYSTEMD_MANAGER_DROPIN, memlock["group"]))
    logins = [svc for svc in memlock["services"] if LOGIN_SERVICE_RE.match(svc)]
    if logins and memlock["systemd"] != "none":
        out.append("memlock.services: %s start%s login sessions; every login through %s inherits LimitMEMLOCK=%s, "
                   "not only the members of group %s" % (", ".join(logins), "s" if len(logins) == 1 else "",
                                                         "it" if len(logins) == 1 else "them", limit,
                                                         memlock["group"]))
    return out


def systemd_escape_path(path: str) -> str:
    """``systemd-escape --path PATH`` (systemd's unit_name_path_escape), pure: the path simplified
    (repeated and trailing slashes, ``.`` components dropped), ``/`` alone is ``-``; otherwise
    leading/trailing slashes go, each ``/`` becomes ``-``, letters, digits, ``:``, ``_`` and ``.``
    stay (a leading ``.`` does not), every other byte of its UTF-8 becomes ``\\xNN``.
    ValueError for a path with a ``..`` component, which systemd refuses too."""
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ValueError("%r is not a normalized path: systemd cannot name a unit after it" % path)
    if not parts:
        return "-"
    out = []
    for i, byte in enumerate("/".join(parts).encode("utf-8")):
        ch = chr(byte)
        if ch == "/":
            out.append("-")
        elif byte < 128 and ch in _UNIT_SAFE and not (i == 0 and ch == "."):
            out.append(ch)
        else:
            out.append("\\x%02x" % byte)
    return "".join(out)


def netdev_unit(netdev: str) -> str:
    """The systemd device unit of a network interface (``enp1s0-v1`` →
    ``sys-subsystem-net-devices-enp1s0\\x2dv1.device``), named as udev's systemd tag names it."""
    return systemd_escape_path("/sys/subsystem/net/devices/" + netdev) + ".device"


# ---------------------------------------------------------------------- file contents (pure)
def _header(what: str) -> str:
    return _files.HEADER.format(module="rdma_stack", journal="/var/lib/hpcnet-rdma") + "# " + what + "\n"


def modules_load(modules: List[str]) -> str:
    return _header("kernel modules loaded at boot by systemd-modules-load") + "".join(m + "\n" for m in modules)


def modprobe_conf(netns_mode: str) -> str:
    return _header("RDMA subsystem network-namespace mode at module load (0 exclusive, 1 shared)") \
        + "options ib_core netns_mode=%d\n" % (0 if netns_mode == "exclusive" else 1)


def limits_conf(memlock: Dict[str, Any]) -> str:
    return _header("locked memory for RDMA users (PAM pam_limits, applies at the next login)") \
        + "@%s - memlock %s\n" % (memlock["group"], memlock["limit"])


def systemd_limit(memlock: Dict[str, Any]) -> str:
    return "infinity" if memlock["limit"] == "unlimited" else str(int(memlock["limit"]) * 1024)


def manager_dropin(memlock: Dict[str, Any]) -> str:
    return _header("default locked-memory limit of every systemd service (daemon-reexec or reboot)") \
        + "[Manager]\nDefaultLimitMEMLOCK=%s\n" % systemd_limit(memlock)


def service_dropin(memlock: Dict[str, Any]) -> str:
    return _header("locked-memory limit of this service (daemon-reload, then restart it)") \
        + "[Service]\nLimitMEMLOCK=%s\n" % systemd_limit(memlock)


def udev_rule(access: Dict[str, Any]) -> str:
    lines = []
    for kind in access["devices"]:
        subsystem, kernel, _prefix = DEVICES[kind]
        lines.append('SUBSYSTEM=="%s", KERNEL=="%s", GROUP="%s", MODE="%s"\n'
                     % (subsystem, kernel, access["group"], access["mode"]))
    return _header("RDMA device nodes in /dev/infiniband: group-only access") + "".join(lines)


def rxe_unit(links: List[Dict[str, Any]], rdma_bin: str) -> str:
    devices = " ".join(netdev_unit(link["netdev"]) for link in links)
    start = "".join("ExecStart=-%s link add %s type rxe netdev %s\n" % (rdma_bin, link["name"], link["netdev"])
                    for link in links)
    stop = "".join("ExecStop=-%s link delete %s\n" % (rdma_bin, link["name"]) for link in links)
    return ("# Managed by hpcnet.rdma (rdma_stack); rollback (hpcnet.rdma.tuning_state) removes it.\n"
            "[Unit]\nDescription=hpcnet.rdma: soft-RoCE (rdma_rxe) links\n"
            "Wants=%s\nAfter=systemd-modules-load.service network-pre.target %s\nBefore=network.target\n\n"
            "[Service]\nType=oneshot\nRemainAfterExit=yes\n%s%s\n"
            "[Install]\nWantedBy=multi-user.target\n" % (devices, devices, start, stop))


def planned_files(norm: Dict[str, Any], rdma_bin: str) -> List[Tuple[str, Any]]:
    """(path, wanted FileState) of every persistent file, in apply order (modprobe.d first: it must be
    in place before ib_core is loaded)."""
    out: List[Tuple[str, Any]] = []
    if norm["netns_mode"]:
        out.append((MODPROBE_CONF, _files.owned(modprobe_conf(norm["netns_mode"]))))
    if norm["modules"]:
        out.append((MODULES_LOAD, _files.owned(modules_load(norm["modules"]))))
    memlock = norm["memlock"]
    if memlock:
        out.append((LIMITS_CONF, _files.owned(limits_conf(memlock))))
        if memlock["systemd"] == "global":
            out.append((SYSTEMD_MANAGER_DROPIN, _files.owned(manager_dropin(memlock))))
        for svc in memlock["services"] if memlock["systemd"] != "none" else []:
            out.append((SERVICE_DROPIN % svc, _files.owned(service_dropin(memlock))))
    if norm["device_access"]:
        out.append((UDEV_RULE, _files.owned(udev_rule(norm["device_access"]))))
    if norm["soft_roce"]:
        out.append((RXE_UNIT, _files.owned(rxe_unit(norm["soft_roce"], rdma_bin))))
        out.append((RXE_LINK, {"link": RXE_UNIT}))
    return out


# ---------------------------------------------------------------------- the plan (pure)
def plan(norm: Dict[str, Any], node: Dict[str, Any], mode: str) -> Dict[str, Any]:
    """Everything rdma_stack changes.  ``node`` holds what was read: ``files`` (path → state),
    ``load_order`` (modules in load order), ``kmods`` (name → state), ``rxe`` (name → value),
    ``netns`` (current mode or None), ``devnodes`` (path → perms), ``gid``, ``runtime_possible``."""
    p = Plan()
    previous: Dict[str, Any] = {}

    def add(key: str, before: Any, after: Any) -> None:
        previous[key] = before
        p.add(key, before, after)

    if mode in ("persist", "both"):
        for path, wanted in node["wanted_files"]:
            # the directories a created file needs are journaled by the engine (with_parent_dirs)
            add("file:" + path, node["files"].get(path), wanted)
    if mode in ("runtime", "both") and node["runtime_possible"]:
        for name in node["load_order"]:
            state = node["kmods"][name]
            if state == "builtin":
                continue
            add("kmod:" + name, state, "loaded")
        if norm["netns_mode"]:
            add("rdma:netns_mode", node["netns"], norm["netns_mode"])
        for link in norm["soft_roce"]:
            add("rxe:" + link["name"], node["rxe"].get(link["name"]), {"netdev": link["netdev"]})
    if mode in ("runtime", "both") and norm["device_access"] and node.get("gid") is not None:
        for path, perms in sorted(node["devnodes"].items()):
            add("devnode:" + path, perms, {"gid": node["gid"], "mode": norm["device_access"]["mode"]})
    return {"plan": p, "previous": previous}
