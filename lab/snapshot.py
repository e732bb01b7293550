# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Print a JSON snapshot of everything hpcnet.rdma may touch on a lab node (stdlib only).

Runs ON the node (ansible.builtin.script): every readable /proc/sys value under the given roots,
each non-loopback interface's MTU and ethtool channels/rings/coalesce output, and the content and
mode of every file in the directories the collection writes.  Two snapshots are equal iff the
node is in the same state for all of these; the collection's own journal directory is left out.
"""
import hashlib
import json
import os
import subprocess
import sys

SYSCTL_ROOTS = ("net", "vm", "kernel/numa_balancing")
FILE_DIRS = ("/etc/sysctl.d", "/etc/systemd/network", "/etc/modules-load.d", "/etc/udev/rules.d",
             "/etc/security/limits.d", "/etc/systemd/system")
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
        for dirpath, _dirs, names in os.walk(d):
            for n in sorted(names):
                p = os.path.join(dirpath, n)
                st = os.lstat(p)
                if os.path.islink(p):
                    out[p] = "symlink:" + os.readlink(p)
                else:
                    with open(p, "rb") as f:
                        out[p] = "%o:%s" % (st.st_mode, hashlib.sha256(f.read()).hexdigest())
    return out


def main():
    json.dump({"sysctl": sysctls(), "interfaces": interfaces(), "files": files()}, sys.stdout, sort_keys=True)


if __name__ == "__main__":
    main()
