# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The systemd ``.link`` file that persists an interface's settings (udev applies it whenever the
device appears, i.e. at every boot): how it matches its device (:func:`match_lines`), its text
(:func:`render_link`), and the other ``.link`` files that would shadow it
(:func:`earlier_link_files`).
"""
from __future__ import annotations

import fnmatch
import os

from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _files
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.nic._domain import KNOB, KNOBS, MTU_LINK_KEY

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List, Optional, Tuple

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
# Where udev looks for .link files (systemd.link(5)); a name in an earlier directory hides the
# same name in a later one, and of all the files the first matching one in name order applies.
LINK_DIRS = (LINK_DIR, "/run/systemd/network", "/usr/local/lib/systemd/network", "/usr/lib/systemd/network",
             "/lib/systemd/network")


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
    for setting in ["mtu"] + [k.name for k in KNOBS]:
        if setting not in values:
            continue
        v = values[setting]
        if isinstance(v, bool):
            text = "yes" if v else "no"
        elif setting.endswith("_usecs"):
            text = "%dus" % v
        else:
            text = str(v)
        out.append("%s=%s\n" % (MTU_LINK_KEY if setting == "mtu" else KNOB[setting].link_key, text))
    return "".join(out)


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
