# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Print JSON of what the rdma_core role may change beyond lab/snapshot.py (stdlib only, runs ON the node).

"dpkg": every package dpkg knows with its version and status (dpkg -l); "files": content hash and
mode of every file under the directories rdma_stack writes that lab/snapshot.py does not cover;
"residue": what maintainer scripts leave that a purge does not undo (reported, not compared).
"""
import hashlib
import json
import os
import subprocess
import sys

DIRS = ("/etc/modprobe.d", "/etc/security", "/etc/systemd", "/etc/udev", "/etc/modules-load.d", "/etc/rdma")


def dpkg():
    out = subprocess.run(["dpkg-query", "-W", "-f", "${Package}\\t${Version}\\t${db:Status-Abbrev}\\n"],
                         capture_output=True, text=True, check=True, env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"})
    return dict((f[0], f[1] + " " + f[2].strip()) for f in (line.split("\t") for line in out.stdout.splitlines()))


def files():
    out = {}
    for d in DIRS:
        for dirpath, dirs, names in os.walk(d):
            for n in sorted(dirs):
                out[os.path.join(dirpath, n) + "/"] = "dir"
            for n in sorted(names):
                p = os.path.join(dirpath, n)
                if os.path.islink(p):
                    out[p] = "symlink:" + os.readlink(p)
                else:
                    with open(p, "rb") as f:
                        out[p] = "%o:%s" % (os.lstat(p).st_mode, hashlib.sha256(f.read()).hexdigest())
    return out


def residue():
    groups = [line.split(":")[0] for line in open("/etc/group") if line.startswith("rdma:")]
    return {"group_rdma": bool(groups)}


json.dump({"dpkg": dpkg(), "files": files(), "residue": residue()}, sys.stdout, sort_keys=True)
