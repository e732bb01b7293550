# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""VM runs: boot N QEMU VMs from the lab image (per-VM qcow2 overlays) and wait for ssh, list them,
ssh into one, stop exactly the recorded QEMU PIDs.

Each VM: `-machine q35 -smp 2 -m 1024`, TCG (`tb-size=256`, `-cpu max`) unless KVM really works
(not under PVM nested virtualisation: /sys/module/kvm_pvm), the host's Debian kernel booted directly
(`-kernel/-initrd`), three NICs named by MAC inside the guest:
  mgmt0  user-mode network (restrict=on: no way out), DHCP, sshd forwarded to 127.0.0.1:PORT and
         node_exporter (:9100) to 127.0.0.1:METRICS_PORT (host var lab_metrics_port)
  data0  socket backend, VM 2k-1 listens on 127.0.0.1:P, VM 2k connects: a point-to-point
         "data link" (host_mtu=9000, rx_queue_size=1024, MSI-X), 10.77.<pair>.<k>/24
  data1  e1000e (a second real driver) on a user-mode network that reaches nothing; no address
The serial console goes to lab/run/<run>/<vm>.console.log; the state (PIDs, ports) is
lab/run/<run>/state.json.  The default run ("vm") writes inventories/lab-vm/hosts.yml.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from . import inventory
from .common import ROOT
from .vmdiag import save_kallsyms
from .vmimage import build_image, data1_mac, data_address, data_mac, image_dir, mgmt_mac, peer_of
from .vmstate import (DEFAULT_RUN, KEY_FILE, LOG, MARKER, MAX_NODES, QEMU, alive_word, load_state, our_qemu,
                      require_tools, run_dir, save_state, ssh_answers, ssh_base, state_file)

INVENTORY = ROOT / "inventories" / "lab-vm" / "hosts.yml"
VM_MEMORY_MB = 1024
VM_CPUS = 2
DATA_MTU = 9000
# The guest's prometheus-node-exporter (in the image): forwarded from 127.0.0.1:<metrics_port>, host var
# lab_metrics_port, so a Prometheus on the host scrapes each VM (molecule/vm/prometheus.yml).
NODE_EXPORTER_PORT = 9100
DATA_RX_QUEUE = 1024  # virtio-net: ethtool -g rx maximum = rx_queue_size; tx stays 256 (the maximum here)
# The data NIC's PCI slot, fixed so its udev ID_PATH (pci-0000:00:10.0) is the same in every VM: an
# image baked with nic_tuning match: path (molecule/vm/bake.yml) matches it by that path at first boot.
DATA_PCI_SLOT = 0x10
DATA_ID_PATH = f"pci-0000:00:{DATA_PCI_SLOT:02x}.0"
# A second data NIC of another real driver, QEMU's e1000e (82574L: rings up to 4096/4096, ethtool -C
# rx-usecs, no channels), on a user-mode netdev that reaches nothing (restrict=on): the VM tier tunes
# its MTU, rings and coalescing for real beside virtio's.  Fixed slot, as data0's.
DATA1_PCI_SLOT = 0x11


def choose_accel() -> tuple[str, list[str]]:
    """KVM only where it really works; TCG otherwise (see LAB.md: PVM nested KVM hangs the kernel)."""
    forced = os.environ.get("LAB_VM_ACCEL")
    tcg = ["-accel", "tcg,tb-size=256", "-cpu", "max"]
    kvm = ["-accel", "kvm", "-cpu", "host"]
    if forced == "tcg":
        return "tcg (LAB_VM_ACCEL)", tcg
    if forced == "kvm":
        return "kvm (LAB_VM_ACCEL)", kvm
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return "tcg (no usable /dev/kvm)", tcg
    if Path("/sys/module/kvm_pvm").exists():
        return "tcg (/dev/kvm is PVM nested virtualisation: a stock kernel hangs under it)", tcg
    cpuinfo = Path("/proc/cpuinfo").read_text(errors="replace")
    if not re.search(r"^flags\s*:.*\b(vmx|svm)\b", cpuinfo, re.M):
        return "tcg (no vmx/svm CPU flag)", tcg
    return "kvm", kvm


def stop_pid(pid: int, tag: str, name: str) -> None:
    if not our_qemu(pid, tag):
        LOG.info(f"{name}: pid {pid} is not running (or is not our QEMU); nothing to stop")
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and our_qemu(pid, tag):
        time.sleep(0.2)
    if our_qemu(pid, tag):
        LOG.info(f"{name}: pid {pid} ignored SIGTERM; sending SIGKILL")
        os.kill(pid, signal.SIGKILL)
    LOG.info(f"{name}: stopped QEMU pid {pid}")


def free_ports(count: int) -> list[int]:
    """``count`` distinct free ports on 127.0.0.1.  All sockets stay bound until every port is chosen: one
    port at a time, the kernel can hand out a port it just gave back (a CI run got the same port for vm1's
    ssh forward and its data0 listener, and QEMU could not listen)."""
    with contextlib.ExitStack() as stack:
        ports = []
        for _index in range(count):
            s = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            s.bind(("127.0.0.1", 0))
            ports.append(s.getsockname()[1])
        return ports


def listening(port: int) -> bool:
    """Is something listening on 127.0.0.1:port?  Read from /proc: a probe connect would be
    accepted by QEMU's socket netdev as its peer."""
    want = f"0100007F:{port:04X}"
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[1] == want and fields[3] == "0A":
            return True
    return False


def qemu_argv(node: dict, image: Path, accel: list[str], peer_listens: bool | None) -> list[str]:
    k = node["index"]
    # nokaslr: a hung guest's vCPU addresses (`vm console --cpus`) are looked up in the saved kallsyms as they are
    append = f"root=/dev/vda rw console=ttyS0 net.ifnames=0 nokaslr systemd.hostname={node['name']}"
    argv = [QEMU, "-name", f"{node['tag']},process={node['tag']}", "-machine", "q35", *accel,
            "-smp", str(VM_CPUS), "-m", str(VM_MEMORY_MB), "-nodefaults", "-no-user-config",
            "-display", "none", "-monitor", "none", "-serial", f"file:{node['console']}",
            "-qmp", f"unix:{node['qmp']},server=on,wait=off",
            "-kernel", str(image / "vmlinuz"), "-initrd", str(image / "initrd.img"), "-append", append,
            "-drive", f"file={node['overlay']},if=virtio,format=qcow2,discard=unmap",
            "-object", "rng-random,id=rng0,filename=/dev/urandom", "-device", "virtio-rng-pci,rng=rng0",
            "-netdev", f"user,id=mgmt,restrict=on,hostfwd=tcp:127.0.0.1:{node['ssh_port']}-:22"
            + (f",hostfwd=tcp:127.0.0.1:{node['metrics_port']}-:{NODE_EXPORTER_PORT}"
               if node.get("metrics_port") else ""),
            "-device", f"virtio-net-pci,netdev=mgmt,mac={mgmt_mac(k)}",
            "-netdev", "user,id=data1,restrict=on",
            "-device", f"e1000e,netdev=data1,mac={data1_mac(k)},addr={DATA1_PCI_SLOT:#x}"]
    if peer_listens is not None:
        mode = "connect" if peer_listens else "listen"
        argv += ["-netdev", f"socket,id=data,{mode}=127.0.0.1:{node['data_port']}",
                 "-device", f"virtio-net-pci,netdev=data,mac={data_mac(k)},host_mtu={DATA_MTU},"
                 f"rx_queue_size={DATA_RX_QUEUE},vectors=3,addr={DATA_PCI_SLOT:#x}"]
    return argv


def wait_ssh(nodes: list[dict], timeout: float, t0: float) -> None:
    pending = {n["name"]: n for n in nodes}
    deadline = time.monotonic() + timeout
    while pending and time.monotonic() < deadline:
        for name, node in list(pending.items()):
            if not our_qemu(node["pid"], node["tag"]):
                tail = "\n".join(Path(node["console"]).read_text(errors="replace").splitlines()[-30:]) \
                    if Path(node["console"]).exists() else "(no console log)"
                raise RuntimeError(f"{name}: QEMU pid {node['pid']} exited; see {node['qemu_log']}\n"
                                   f"{Path(node['qemu_log']).read_text(errors='replace')[-2000:]}\n{tail}")
            if ssh_answers(node, 5) is not None:
                node["boot_seconds"] = round(time.monotonic() - t0, 1)
                LOG.info(f"{name}: ssh answers on 127.0.0.1:{node['ssh_port']} after {node['boot_seconds']}s")
                del pending[name]
        if pending:
            time.sleep(2)
    if pending:
        names = ", ".join(sorted(pending))
        raise RuntimeError(f"no ssh after {timeout:.0f}s: {names}; console logs: "
                           + ", ".join(n["console"] for n in pending.values()))


def inventory_text(state: dict | None) -> str:
    """inventories/lab-vm/hosts.yml for a VM run (None: the empty group `vm down` leaves)."""
    hosts = []
    for node in (state or {}).get("nodes", []):
        host_vars: list[tuple[str, inventory.Value]] = [("ansible_port", node["ssh_port"])]
        if node.get("metrics_port"):
            host_vars.append(("lab_metrics_port", node["metrics_port"]))
        if node.get("peer"):
            host_vars += [("lab_data0_address", node["data0"]), ("lab_data0_peer", node["peer"])]
        hosts.append((node["name"], host_vars))
    group_vars: list[tuple[str, inventory.Value]] = [
        ("ansible_connection", "ssh"),
        ("ansible_host", "127.0.0.1"),
        ("ansible_user", "root"),
        ("ansible_ssh_private_key_file", str(KEY_FILE)),
        ("ansible_ssh_common_args",
         inventory.Folded("-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR")),
        ("ansible_python_interpreter", "/usr/bin/python3"),
    ]
    return inventory.render("vm up", "lab VM run", state["started"] if state else "none (no lab VMs are up)",
                            group_vars, hosts)


# --------------------------------------------------------------------------- commands


def new_state(run: str, count: int, image: Path, accel_why: str, disk: Path | None = None) -> dict[str, Any]:
    """The record of a VM run before anything boots: names, ports, MACs, addresses, file paths.
    ``disk``: the raw disk image the overlays are backed by instead of the image's own disk.img (a
    baked copy of it); the kernel and initrd stay the image's."""
    rdir = run_dir(run)
    state: dict[str, Any] = {"run": run, "image": str(image), "accel": accel_why,
                             "disk": str(disk if disk is not None else image / "disk.img"),
                             "started": time.strftime("%Y-%m-%dT%H:%M:%S"), "key": str(KEY_FILE), "nodes": []}
    ports = iter(free_ports(3 * count))    # ssh, metrics, data0 (a listener's; unused by the others)
    for k in range(1, count + 1):
        name = f"vm{k}"
        peer = peer_of(k, count)
        state["nodes"].append({
            "name": name, "index": k, "tag": f"{MARKER}-{run}-{name}", "pid": None,
            "ssh_port": next(ports), "metrics_port": next(ports), "data_port": next(ports),
            "peer": f"vm{peer}" if peer else None,
            "data0": data_address(k) if peer else None,
            "peer_address": data_address(peer).split("/", maxsplit=1)[0] if peer else None,
            "mgmt_mac": mgmt_mac(k), "data_mac": data_mac(k) if peer else None,
            "overlay": str(rdir / f"{name}.qcow2"), "console": str(rdir / f"{name}.console.log"),
            "qemu_log": str(rdir / f"{name}.qemu.log"), "qmp": str(rdir / f"{name}.qmp"), "boot_seconds": None,
        })
    for node in state["nodes"]:
        if not node["peer"]:
            node["data_port"] = None
        elif node["index"] % 2 == 0:   # the connecting side uses its listener's port
            node["data_port"] = state["nodes"][node["index"] - 2]["data_port"]
    return state


def boot(state: dict, image: Path, accel: list[str]) -> None:
    """Start each VM's QEMU (a connecting data0 only once its listener listens); recorded as it goes."""
    for node in state["nodes"]:
        LOG.run_merged(["qemu-img", "create", "-q", "-f", "qcow2", "-F", "raw", "-b",
                        state.get("disk") or str(image / "disk.img"), node["overlay"]])
        Path(node["console"]).unlink(missing_ok=True)
        launch(state, node, image, accel)


def launch(state: dict, node: dict, image: Path, accel: list[str]) -> None:
    """Start one VM's QEMU on its existing overlay; its pid is recorded at once."""
    if node["peer"] and node["index"] % 2 == 0:  # the connecting side: its listener must be up
        listener = state["nodes"][node["index"] - 2]
        deadline = time.monotonic() + 30
        while not listening(node["data_port"]):
            if time.monotonic() > deadline or not our_qemu(listener["pid"], listener["tag"]):
                raise RuntimeError(f"{listener['name']} is not listening on 127.0.0.1:{node['data_port']}")
            time.sleep(0.2)
    peer_listens = None if not node["peer"] else node["index"] % 2 == 0
    argv = qemu_argv(node, image, accel, peer_listens)
    with open(node["qemu_log"], "w", encoding="utf-8") as out:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out,  # pylint: disable=consider-using-with
                                start_new_session=True)
    node["pid"] = proc.pid
    save_state(state)  # recorded before anything else can fail
    # Until the child has exec'd QEMU, /proc/PID/cmdline is still this Python's, and our_qemu() -
    # which every later liveness check uses - would call a VM that is just starting "exited" (seen
    # under load: `vm start` failed 0.1 s after the fork).  Wait for the exec, or for a real exit.
    deadline = time.monotonic() + 30
    while not our_qemu(proc.pid, node["tag"]):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"{node['name']}: QEMU pid {proc.pid} exited at start (status {proc.poll()}); "
                               f"see {node['qemu_log']}")
        time.sleep(0.05)
    LOG.info(f"{node['name']}: QEMU pid {proc.pid}, ssh 127.0.0.1:{node['ssh_port']}, "
             f"node_exporter 127.0.0.1:{node.get('metrics_port') or '-'}"
             + (f", data0 {node['data0']} ({'connects to' if peer_listens else 'listens on'} "
                f"127.0.0.1:{node['data_port']})" if node["peer"] else ", no data link (odd node count)"))


def one_node(run: str, name: str) -> tuple[dict, dict]:
    """The run's state and its VM `name`; dies naming what is recorded when either is missing."""
    state = load_state(run)
    if not state:
        LOG.die(f"no VM run '{run}' recorded")
    node = next((n for n in state["nodes"] if n["name"] == name), None)
    if node is None:
        LOG.die(f"no VM {name} in run '{run}' (recorded: {', '.join(n['name'] for n in state['nodes'])})")
    return state, node


def stop(run: str, name: str) -> None:
    """Stop one VM's QEMU and keep its overlay (its disk), e.g. to bake it; `vm start` boots it again.
    A listening VM (odd index) cannot be restarted under a connected peer: stop the connecting one."""
    state, node = one_node(run, name)
    if node["peer"] and node["index"] % 2 == 1:
        LOG.die(f"{name} listens for {node['peer']}'s data link, which would not reconnect to a new QEMU; "
                f"stop {node['peer']} instead (or the whole run with `vm down`)")
    if node.get("pid"):
        stop_pid(node["pid"], node["tag"], name)
    node["pid"] = None
    save_state(state)
    LOG.info(f"{name}: stopped; its disk is {node['overlay']} (backed by {state.get('disk')})")


def start(run: str, name: str, timeout: float) -> None:
    """Boot one stopped VM of the run again from its overlay (whatever was written into it since)
    and wait until ssh answers."""
    state, node = one_node(run, name)
    if node.get("pid") and our_qemu(node["pid"], node["tag"]):
        LOG.die(f"{name} is running (QEMU pid {node['pid']}); `vm stop --run {run} {name}` first")
    if not Path(node["overlay"]).is_file():
        LOG.die(f"{name}: its disk {node['overlay']} is missing")
    require_tools(QEMU, "ssh")
    accel_why, accel = choose_accel()
    Path(node["console"]).unlink(missing_ok=True)
    t0 = time.monotonic()
    try:
        launch(state, node, Path(state["image"]), accel)
        wait_ssh([node], timeout, t0)
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        save_state(state)
        LOG.die(f"{name}: {exc}")
    save_state(state)
    LOG.info(f"{name}: up again ({accel_why}) in {node['boot_seconds']}s")


def down(run: str, no_inventory: bool) -> None:
    """Stop the run's recorded QEMU PIDs (ours only), drop their overlays and the record."""
    state = load_state(run)
    if not state:
        LOG.info(f"no VM run '{run}' recorded")
    else:
        for node in state["nodes"]:
            if node.get("pid"):
                stop_pid(node["pid"], node["tag"], node["name"])
            Path(node["overlay"]).unlink(missing_ok=True)
        state_file(run).unlink(missing_ok=True)
        LOG.info(f"VM run '{run}' is down")
    if run == DEFAULT_RUN and not no_inventory:
        inventory.write(INVENTORY, inventory_text(None))


def up(run: str, count: int, timeout: float, build: bool, no_inventory: bool, disk: Path | None = None) -> None:
    """Boot `count` VMs as run `run` (a recorded one goes down first) and wait until ssh answers;
    from `disk` (a raw copy of the image's disk.img, e.g. baked) instead of the image's own disk."""
    if not 1 <= count <= MAX_NODES:
        LOG.die(f"--nodes must be between 1 and {MAX_NODES}")
    require_tools(QEMU, "qemu-img", "ssh")
    image = build_image(False) if build else image_dir()
    if not (image / "image.json").exists():
        LOG.die(f"no VM image {image.relative_to(ROOT)}; run `labctl.py vm image build` first")
    if disk is not None and not disk.is_file():
        LOG.die(f"--disk {disk}: no such file (a raw copy of {image.relative_to(ROOT)}/disk.img)")
    if load_state(run):
        LOG.info(f"VM run '{run}' is recorded; taking it down first")
        down(run, no_inventory=True)
    accel_why, accel = choose_accel()
    LOG.info(f"accelerator: {accel_why}")
    run_dir(run).mkdir(parents=True, exist_ok=True)
    state = new_state(run, count, image, accel_why, disk.resolve() if disk is not None else None)
    save_state(state)
    t0 = time.monotonic()
    try:
        boot(state, image, accel)
        wait_ssh(state["nodes"], timeout, t0)
        save_kallsyms(image, state["nodes"][0])
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        save_state(state)
        LOG.info(f"boot failed; stopping the VMs of run '{run}'")
        down(run, no_inventory=True)
        LOG.die(str(exc))
    save_state(state)
    if run == DEFAULT_RUN and not no_inventory:
        inventory.write(INVENTORY, inventory_text(state))
        LOG.info(f"inventory: {INVENTORY.relative_to(ROOT)}")
    LOG.info(f"VM run '{run}' is up: {len(state['nodes'])} VM(s) in {time.monotonic() - t0:.0f}s "
             f"(boot to ssh: {', '.join(str(n['boot_seconds']) + 's' for n in state['nodes'])})")


def show(run: str, as_json: bool, molecule: bool) -> None:
    """The run: as text, as its JSON state, or as Molecule's instance config."""
    state = load_state(run)
    if as_json:
        print(json.dumps(state or {}, indent=2))
        return
    if molecule:
        # Molecule's instance config (driver `default`, managed: true): one entry per VM.
        print(json.dumps([{"instance": n["name"], "address": "127.0.0.1", "user": "root", "port": n["ssh_port"],
                           "identity_file": state["key"]} for n in (state or {}).get("nodes", [])], indent=2))
        return
    if not state:
        LOG.info(f"no VM run '{run}' recorded")
        return
    print(f"run {state['run']}  started {state['started']}  accel {state['accel']}")
    for n in state["nodes"]:
        print(f"  {n['name']:4} pid {n['pid']} ({alive_word(n)})  ssh 127.0.0.1:{n['ssh_port']}  "
              f"node_exporter 127.0.0.1:{n.get('metrics_port') or '-'}  "
              f"data0={n['data0'] or '-'} peer={n['peer'] or '-'}  boot {n['boot_seconds']}s")


def ssh(run: str, name: str, cmd: list[str]) -> None:
    """ssh into VM `name` as root (a command, or a login shell); exits with ssh's exit code."""
    _state, node = one_node(run, name)
    res = subprocess.run(ssh_base(node["ssh_port"]) + cmd, check=False)
    sys.exit(res.returncode)
