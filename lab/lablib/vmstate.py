# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What every VM command shares: the record of a VM run (lab/run/<run>/state.json), the QEMU
processes it names (and only those), the lab's ssh key and an ssh login to a guest."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from pathlib import Path

from .common import CACHE_DIR, RUN_DIR, Log

LOG = Log("labctl vm")
QEMU = "qemu-system-x86_64"
MARKER = "hpcnet-rdma-lab"  # in every QEMU's -name: `down` only signals processes that carry it
DEFAULT_RUN = "vm"
MAX_NODES = 8
KEY_DIR = CACHE_DIR / "vm-ssh"
KEY_FILE = KEY_DIR / "id_ed25519"
FABRIC_KEY_FILE = KEY_DIR / "fabric_ed25519"


def require_tools(*tools: str) -> None:
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        LOG.die(f"missing on this machine: {', '.join(missing)}. Install the VM tier's apt packages: "
                f"apt-get install qemu-system-x86 qemu-utils linux-image-amd64 initramfs-tools debootstrap (scripts/ospkgs.sh, group vm)")


# --------------------------------------------------------------------------- run records


def run_dir(name: str) -> Path:
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,30}", name):
        LOG.die(f"--run {name!r}: use lower-case letters, digits and '-'")
    return RUN_DIR / name


def state_file(name: str) -> Path:
    return run_dir(name) / "state.json"


def load_state(name: str) -> dict | None:
    try:
        return json.loads(state_file(name).read_text())
    except (OSError, ValueError):
        return None


def save_state(state: dict) -> None:
    path = state_file(state["run"])
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(state, indent=2) + "\n")
    tmp.rename(path)


def all_states() -> list[dict]:
    out = []
    for path in RUN_DIR.glob("*/state.json"):
        try:
            out.append(json.loads(path.read_text()))
        except (OSError, ValueError):
            continue
    return out


# --------------------------------------------------------------------------- processes and ssh


def our_qemu(pid: int, tag: str) -> bool:
    """True only for a live QEMU whose command line carries our -name tag (guards against PID reuse)."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return bool(argv) and argv[0].endswith(QEMU.encode()) and f"{tag},process={tag}".encode() in argv


def alive_word(node: dict) -> str:
    """"running" or "NOT running": is the node's recorded QEMU alive?"""
    return "running" if node.get("pid") and our_qemu(node["pid"], node["tag"]) else "NOT running"


def ssh_base(port: int, connect_timeout: int = 5) -> list[str]:
    return ["ssh", "-i", str(KEY_FILE), "-p", str(port), "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no",
            "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR", "-o", f"ConnectTimeout={connect_timeout}",
            "root@127.0.0.1"]


def ssh_answers(node: dict, timeout: int) -> float | None:
    """Seconds a fresh ssh login to `node` took to run `true`, or None if it did not within timeout."""
    t0 = time.monotonic()
    try:
        res = subprocess.run(ssh_base(node["ssh_port"], timeout) + ["true"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, timeout=2 * timeout, check=False)
    except subprocess.TimeoutExpired:
        return None
    return round(time.monotonic() - t0, 1) if res.returncode == 0 else None
