# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A lab VM in trouble, seen from the host: its serial console (kernel-trouble lines and tail),
QEMU's run state over QMP, a nearly full disk under its overlay, and where each vCPU is (a kernel
symbol from the kallsyms `vm up` saved next to the image).  `labctl.py vm console` prints these;
molecule/vm/conftest.py attaches them to the report of a check whose ssh failed."""

from __future__ import annotations

import bisect
import json
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

from .vmstate import LOG, alive_word, load_state, ssh_answers, ssh_base

# What a guest kernel prints on the serial console when it is in trouble (a hung or dying VM
# answers ssh with "Connection timed out during banner exchange"; its console says why).
KERNEL_TROUBLE = re.compile(r"Kernel panic|BUG: |Oops|soft lockup|hard LOCKUP|rcu: INFO|self-detected stall|"
                            r"blocked for more than|Out of memory|oom-kill|invoked oom-killer|WARNING: CPU|"
                            r"Call Trace|segfault at|NETDEV WATCHDOG|transmit queue \d+ timed out")
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]|\r")
MODULES_START = 0xffffffffc0000000  # x86_64: loadable modules live above the kernel image
KALLSYMS = "kallsyms"  # in the image dir: the kernel's own text symbols, read from the first VM that booted it
# Below this much free space a VM's qcow2 overlay can hit ENOSPC; QEMU then pauses the guest
# (status io-error) while its ssh port still accepts connections: ssh "times out during banner exchange".
LOW_DISK = 1 << 30


def console_report(node: dict, lines: int, trouble_only: bool) -> str:
    """The console log of one VM: its kernel-trouble lines and (unless trouble_only) its last lines."""
    alive = alive_word(node)
    path = Path(node["console"])
    if not path.exists():
        return f"== {node['name']}: QEMU pid {node['pid']} {alive}; no console log {path}"
    text = [line for line in ANSI.sub("", path.read_text(errors="replace")).splitlines() if line.strip()]
    trouble = [f"{i + 1}: {line}" for i, line in enumerate(text) if KERNEL_TROUBLE.search(line)]
    if trouble_only and not trouble:
        return ""
    out = [f"== {node['name']}: QEMU pid {node['pid']} {alive}; console {path} ({len(text)} lines), "
           f"{len(trouble)} kernel-trouble line(s)"]
    out += [f"  {line}" for line in trouble[:40]]
    out += [f"-- last {min(lines, len(text))} console lines of {node['name']}:"] + text[-lines:]
    return "\n".join(out)


def qmp(node: dict, commands: list[dict], timeout: float = 10) -> list[dict]:
    """Run QMP commands on a VM's QEMU (its -qmp socket); their "return" values, in order."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(node["qmp"])
        stream = sock.makefile("rw", encoding="utf-8")

        def reply() -> dict:
            while True:
                msg = json.loads(stream.readline() or "{}")
                if "event" not in msg:
                    return msg

        reply()  # the greeting
        out = []
        for command in [{"execute": "qmp_capabilities"}] + commands:
            stream.write(json.dumps(command) + "\n")
            stream.flush()
            msg = reply()
            if "return" not in msg:
                raise RuntimeError(f"QMP {command['execute']}: {msg.get('error', msg)}")
            out.append(msg["return"])
        return out[1:]


# --------------------------------------------------------------------------- kernel symbols


def save_kallsyms(image: Path, node: dict) -> None:
    """Keep the booted kernel's text symbols next to the image, once (Debian's /boot/System.map is a
    placeholder).  With nokaslr they hold for every boot of that kernel; module code is not in it."""
    target = image / KALLSYMS
    if target.exists():
        return
    res = subprocess.run(ssh_base(node["ssh_port"]) + ["grep -E '^[0-9a-f]+ [tTwW] [^ ]+$' /proc/kallsyms"],
                         capture_output=True, text=True, timeout=120, check=False)
    if res.returncode == 0 and res.stdout.strip() and not res.stdout.startswith("0000000000000000"):
        tmp = target.with_suffix(".tmp")
        tmp.write_text(res.stdout)
        tmp.replace(target)


def kernel_symbols(path: Path) -> list[tuple[int, str]]:
    """Text symbols of a kallsyms/System.map file, sorted by address ([] if there is none)."""
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return []
    syms = []
    for line in lines:
        fields = line.split()
        if len(fields) == 3 and fields[1] in "tTwW":
            syms.append((int(fields[0], 16), fields[2]))
    return sorted(syms)


def symbolise(addr: int, syms: list[tuple[int, str]]) -> str:
    if addr >= MODULES_START:
        return f"module code {addr:#x}"
    i = bisect.bisect_right(syms, (addr, "\U0010ffff")) - 1
    return f"{syms[i][1]}+{addr - syms[i][0]:#x}" if i >= 0 and addr - syms[i][0] < 0x100000 else f"{addr:#x}"


def run_symbols(state: dict) -> list[tuple[int, str]]:
    """The text symbols of the kernel a VM run boots (saved by `vm up`), or []."""
    return kernel_symbols(Path(state["image"]) / KALLSYMS) if state.get("image") else []


# --------------------------------------------------------------------------- QEMU's view


def disk_free(node: dict) -> int:
    return shutil.disk_usage(Path(node["overlay"]).parent).free


def qemu_trouble(node: dict) -> str:
    """"" while QEMU runs the guest and its overlay has room; else what is wrong, in one line."""
    problems = []
    free = disk_free(node)
    if free < LOW_DISK:
        problems.append(f"only {free >> 20} MiB free for its overlay")
    try:
        status = qmp(node, [{"execute": "query-status"}])[0]
        if status.get("status") != "running":
            problems.append(f"QEMU status {status.get('status')} (the guest is not running)")
    except (OSError, ValueError, RuntimeError, KeyError) as exc:
        problems.append(f"no QMP answer ({exc})")
    return f"== {node['name']}: " + "; ".join(problems) if problems else ""


def cpu_report(node: dict, syms: list[tuple[int, str]], samples: int = 3) -> str:
    """QEMU's run state and where each vCPU is, sampled a few times: stuck at one kernel address
    (a lockup), idle in the kernel's halt loop (alive, waiting), or in user space."""
    try:
        status = qmp(node, [{"execute": "query-status"}])[0]
        seen = []
        for _sample in range(samples):
            regs = qmp(node, [{"execute": "human-monitor-command", "arguments": {"command-line": "info registers -a"}}])[0]
            seen.append([int(rip, 16) for rip in re.findall(r"RIP=([0-9a-f]{16})", regs)])
            time.sleep(0.5)
    except (OSError, ValueError, RuntimeError, KeyError) as exc:
        return f"== {node['name']}: no QMP answer ({exc})"
    out = [f"== {node['name']}: QEMU status {status.get('status')} (running={status.get('running')}), "
           f"{disk_free(node) >> 20} MiB free for its overlay"]
    for cpu in range(max((len(s) for s in seen), default=0)):
        where = [symbolise(s[cpu], syms) if s[cpu] >= 1 << 63 else f"user {s[cpu]:#x}" for s in seen if cpu < len(s)]
        out.append(f"  vCPU {cpu}: " + ", ".join(where))
    return "\n".join(out)


# --------------------------------------------------------------------------- the command


def console(run: str, name: str | None, lines: int, trouble: bool, cpus: bool, probe: int) -> None:
    """`vm console`: per VM of the run (or only `name`), its console report, with --trouble what QEMU
    says is wrong, with --cpus where its vCPUs are, with --probe whether a fresh ssh login works."""
    state = load_state(run)
    if not state:
        if not trouble:  # --trouble prints only trouble (molecule's destroy runs it before any VM exists)
            LOG.info(f"no VM run '{run}' recorded")
        return
    syms = run_symbols(state) if cpus else []
    for node in state["nodes"]:
        if name and node["name"] != name:
            continue
        report = console_report(node, lines, trouble)
        if report:
            print(report)
        wrong = qemu_trouble(node) if trouble else ""
        if wrong:
            print(wrong)
        if cpus:
            print(cpu_report(node, syms))
        if probe:
            took = ssh_answers(node, probe)
            answer = f"answers ({took}s)" if took is not None else f"does NOT answer within {probe}s"
            print(f"== {node['name']}: ssh {answer}")
