# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Print a JSON snapshot of everything hpcnet.rdma may touch on a lab node (stdlib only).

Runs ON the node (ansible.builtin.script): every readable /proc/sys value under the given roots,
each non-loopback interface's MTU and ethtool channels/rings/coalesce output, and the content and
mode of every file in the directories the collection writes, the RDMA side (RDMA devices and
their netdevs, the RDMA CM's configfs defaults, /dev/infiniband owners and modes, the netns mode)
and, with --modules (VM nodes: they have their own kernel), the loaded kernel modules.  Two
snapshots are equal iff the node is in the same state for all of these; the collection's own
journal directory is left out.  With --save PATH the same JSON is also written to PATH (mode 0600)
on the node, which spares the scenarios a copy task (stat, transfer, module) per saved snapshot.
"""
import hashlib
import json
import os
import subprocess
import sys

SYSCTL_ROOTS = ("net", "vm", "kernel/numa_balancing")
FILE_DIRS = ("/etc/sysctl.d", "/etc/systemd/network", "/etc/modules-load.d", "/etc/udev/rules.d",
             "/etc/security/limits.d", "/etc/systemd/system", "/etc/modprobe.d", "/etc/hpcnet-rdma",
             "/usr/local/lib/hpcnet-rdma", "/etc/ucx", "/etc/openmpi", "/etc/default/irqbalance",
             "/etc/nccl.conf", "/etc/systemd/system.conf.d")
# Counters and caches the kernel changes on its own, not settings.
VOLATILE = ("net/netfilter/nf_conntrack_count", "net/ipv4/route/", "net/ipv6/route/gc_",
            "kernel/random/", "vm/stat_", "net/core/bpf_jit_harden")


def sysctls():
    out = {}
    for root in SYSCTL_ROOTS:
        base = "/proc/sys/" + root
        paths = [base] if os.path.isfile(base) else []
        for d, _dirs, names in os.walk(base):
            paths.extend(os.path.join(d, n) for n in names)
        for p in sorted(paths):
            rel = p[len("/proc/sys/"):]
            if rel.startswith(VOLATILE) or not os.stat(p).st_mode & 0o444:
                continue
            try:
                with open(p) as f:
                    out[rel.replace("/", ".")] = " ".join(f.read().split())
            except OSError:
                continue
    return out


def ethtool(flag, ifname):
    try:
        r = subprocess.run(["ethtool", flag, ifname], capture_output=True, text=True, check=False,
                           env={"LC_ALL": "C", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
    except OSError:
        return None
    return r.stdout if r.returncode == 0 else "unsupported"


def interfaces():
    out = {}
    for name in sorted(os.listdir("/sys/class/net")):
        if name == "lo":
            continue
        with open("/sys/class/net/%s/mtu" % name) as f:
            out[name] = {"mtu": f.read().strip()}
        for flag in ("-l", "-g", "-c"):
            out[name][flag] = ethtool(flag, name)
    return out


def files():
    out = {}
    for d in FILE_DIRS:
        walk = [(os.path.dirname(d), [], [os.path.basename(d)])] if os.path.isfile(d) else os.walk(d)
        for dirpath, _dirs, names in walk:
            for n in sorted(names):
                p = os.path.join(dirpath, n)
                st = os.lstat(p)
                if os.path.islink(p):
                    out[p] = "symlink:" + os.readlink(p)
                else:
                    with open(p, "rb") as f:
                        out[p] = "%o:%s" % (st.st_mode, hashlib.sha256(f.read()).hexdigest())
    return out


def dirs():
    """Every directory in the trees of FILE_DIRS, with its mode: rollback must remove each one the
    collection created (its own dirs, a unit's drop-in dir, /etc/systemd/system.conf.d, ...) and
    leave the others as they were."""
    out = {}
    for d in FILE_DIRS:
        for dirpath, _dirs, _names in os.walk(d):
            out[dirpath] = "%o" % os.lstat(dirpath).st_mode
    return dict(sorted(out.items()))


def _read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def rdma():
    """RDMA devices (-> netdev), RDMA CM configfs defaults, /dev/infiniband nodes, netns mode.

    Only files are read: the rdma tool would open an RDMA netlink socket, which loads ib_core."""
    out = {"devices": {}, "rdma_cm": {}, "dev": {}, "netns_mode": _read("/sys/module/ib_core/parameters/netns_mode")}
    base = "/sys/class/infiniband"
    for dev in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        nets = []
        for port in sorted(os.listdir(os.path.join(base, dev, "ports"))):
            ndevs = os.path.join(base, dev, "ports", port, "gid_attrs", "ndevs", "0")
            nets.append(_read(ndevs) or "")
        out["devices"][dev] = nets
    cm = "/sys/kernel/config/rdma_cm"
    for dirpath, _dirs, names in os.walk(cm):
        for n in sorted(names):
            out["rdma_cm"][os.path.join(dirpath, n)] = _read(os.path.join(dirpath, n))
    dev = "/dev/infiniband"
    for n in sorted(os.listdir(dev)) if os.path.isdir(dev) else []:
        st = os.stat(os.path.join(dev, n))
        out["dev"][n] = "%04o %d:%d" % (st.st_mode & 0o7777, st.st_uid, st.st_gid)
    return out


def modules():
    with open("/proc/modules") as f:
        return sorted(line.split()[0] for line in f if line.strip())


def main():
    snap = {"sysctl": sysctls(), "interfaces": interfaces(), "files": files(), "dirs": dirs(), "rdma": rdma()}
    args = sys.argv[1:]
    if "--modules" in args:
        snap["modules"] = modules()
    if "--save" in args:
        save(args[args.index("--save") + 1], snap)
    json.dump(snap, sys.stdout, sort_keys=True)


def save(path, snap):
    """Write the snapshot to PATH, mode 0600, replacing it whole (a temporary file renamed over it)."""
    tmp = path + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        os.fchmod(f.fileno(), 0o600)
        json.dump(snap, f, sort_keys=True)
    os.rename(tmp, path)


if __name__ == "__main__":
    main()
