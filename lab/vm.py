"""VM nodes for the hpcnet.rdma lab (standard library only; used by lab/labctl.py).

  labctl.py vm image build [--force]   debootstrap rootfs + host kernel modules -> ext4 disk image
  labctl.py vm up --nodes N            boot N QEMU VMs (per-VM qcow2 overlays), wait for ssh
  labctl.py vm list [--json]           show the recorded VMs
  labctl.py vm ssh NAME [CMD...]       ssh into a VM as root
  labctl.py vm down                    stop exactly the QEMU PIDs recorded by `vm up`

Each VM: `-machine q35 -smp 2 -m 1024`, TCG (`tb-size=256`, `-cpu max`) unless KVM really works
(not under PVM nested virtualisation: /sys/module/kvm_pvm), the host's Debian kernel booted directly
(`-kernel/-initrd`), two virtio-net NICs named by MAC inside the guest:
  mgmt0  user-mode network (restrict=on: no way out), DHCP, sshd forwarded to 127.0.0.1:PORT
  data0  socket backend, VM 2k-1 listens on 127.0.0.1:P, VM 2k connects: a point-to-point
         "data link" (host_mtu=9000, rx_queue_size=1024, MSI-X), 10.77.<pair>.<k>/24
The serial console goes to lab/run/<run>/<vm>.console.log; the state (PIDs, ports) is
lab/run/<run>/state.json.  The default run ("vm") writes inventories/lab-vm/hosts.yml.
"""

from __future__ import annotations

import argparse
import bisect
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, NoReturn

ROOT = Path(__file__).resolve().parent.parent
CACHE_DIR = ROOT / "lab" / "cache"
RUN_DIR = ROOT / "lab" / "run"
KEY_DIR = CACHE_DIR / "vm-ssh"
KEY_FILE = KEY_DIR / "id_ed25519"
INVENTORY = ROOT / "inventories" / "lab-vm" / "hosts.yml"
DEFAULT_RUN = "vm"
MARKER = "hpcnet-rdma-lab"  # in every QEMU's -name: `down` only signals processes that carry it
MAX_NODES = 8

# Everything debootstrap does.  Change it and the cached rootfs tarball is rebuilt.
ROOTFS_RECIPE = {
    "suite": "bookworm",
    "variant": "minbase",
    # the rdma_core role's whole Debian package map is in the image (the VMs have no package
    # mirror): the role finds it installed and journals no package
    "include": ["systemd-sysv", "udev", "dbus", "openssh-server", "python3", "iproute2", "ethtool", "kmod",
                "sudo", "rdma-core", "ibverbs-utils", "rdmacm-utils", "infiniband-diags", "perftest", "iperf3",
                "iputils-ping", "irqbalance", "procps", "libnss-myhostname"],
    "cleanup": ["var/cache/apt/archives/*.deb", "var/lib/apt/lists/*"],
    "format": 1,
}
# What is left out of the host kernel's /lib/modules tree (no such hardware in the VM).
TRIM_MODULES = ["kernel/drivers/gpu", "kernel/sound", "kernel/drivers/media", "kernel/drivers/net/wireless",
                "kernel/net/wireless", "kernel/net/mac80211", "kernel/drivers/staging"]
# Units that would only burn emulated CPU in a short-lived lab VM.
MASK_UNITS = ["apt-daily.timer", "apt-daily-upgrade.timer", "e2scrub_all.timer", "e2scrub_reap.service",
              "fstrim.timer"]
IMAGE_FORMAT = 1

QEMU = "qemu-system-x86_64"
VM_MEMORY_MB = 1024
VM_CPUS = 2
DATA_MTU = 9000
DATA_RX_QUEUE = 1024  # virtio-net: ethtool -g rx maximum = rx_queue_size; tx stays 256 (the maximum here)


def log(msg: str) -> None:
    print(f"labctl vm: {msg}", flush=True)


def die(msg: str) -> NoReturn:
    print(f"labctl vm: error: {msg}", file=sys.stderr, flush=True)
    sys.exit(1)


def run(cmd: list[str], check: bool = True, **kw) -> subprocess.CompletedProcess:
    kw.setdefault("stdout", subprocess.PIPE)
    kw.setdefault("stderr", subprocess.STDOUT)
    kw.setdefault("text", True)
    res = subprocess.run(cmd, check=False, **kw)
    if check and res.returncode != 0:
        die(f"command failed ({res.returncode}): {' '.join(cmd)}\n{(res.stdout or '')[-3000:]}")
    return res


def short_hash(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:12]


def file_sha(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# --------------------------------------------------------------------------- MACs and addresses


def mgmt_mac(k: int) -> str:
    return f"52:54:00:a0:00:{k:02x}"


def data_mac(k: int) -> str:
    return f"52:54:00:a1:00:{k:02x}"


def data_address(k: int) -> str:
    """VMs 1-2 are pair 0, 3-4 pair 1, ...: 10.77.<pair>.<k>/24, as in the container lab."""
    return f"10.77.{(k - 1) // 2}.{k}/24"


def peer_of(k: int, nodes: int) -> int | None:
    peer = k + 1 if k % 2 else k - 1
    return peer if 1 <= peer <= nodes else None


# --------------------------------------------------------------------------- requirements


def require_tools(*tools: str) -> None:
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        die(f"missing on this machine: {', '.join(missing)}. Install the VM tier's apt packages: "
            f"apt-get install qemu-system-x86 qemu-utils linux-image-amd64 debootstrap (see .ci/run)")


def host_kernel() -> tuple[str, Path, Path]:
    """The newest Debian kernel in /boot with an initrd and a /lib/modules tree (or $LAB_VM_KERNEL)."""
    wanted = os.environ.get("LAB_VM_KERNEL")
    found = []
    for vmlinuz in Path("/boot").glob("vmlinuz-*"):
        ver = vmlinuz.name[len("vmlinuz-"):]
        initrd = Path("/boot") / f"initrd.img-{ver}"
        if initrd.is_file() and (Path("/lib/modules") / ver / "modules.dep").is_file():
            found.append((ver, vmlinuz, initrd))
    if wanted:
        found = [f for f in found if f[0] == wanted]
    if not found:
        die("no usable kernel: need /boot/vmlinuz-VER, /boot/initrd.img-VER and /lib/modules/VER "
            "(apt-get install linux-image-amd64)" + (f" for LAB_VM_KERNEL={wanted}" if wanted else ""))

    def version_key(item: tuple[str, Path, Path]) -> list[int]:
        return [int(n) for n in re.findall(r"\d+", item[0])]

    return max(found, key=version_key)


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


# --------------------------------------------------------------------------- ssh key


def ensure_key() -> str:
    """The lab's root ssh key (lab/cache/vm-ssh/, git-ignored); returns the public key."""
    if not KEY_FILE.exists() or not KEY_FILE.with_suffix(".pub").exists():
        require_tools("ssh-keygen")
        KEY_DIR.mkdir(parents=True, exist_ok=True)
        KEY_FILE.unlink(missing_ok=True)
        KEY_FILE.with_suffix(".pub").unlink(missing_ok=True)
        run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "hpcnet-rdma-lab", "-f", str(KEY_FILE)])
        log(f"generated the lab ssh key {KEY_FILE.relative_to(ROOT)}")
    KEY_FILE.chmod(0o600)
    return KEY_FILE.with_suffix(".pub").read_text().strip()


# --------------------------------------------------------------------------- guest configuration


def guest_files(pubkey: str) -> dict[str, tuple[int, str]]:
    """path inside the guest -> (mode, content).  Part of the image hash."""
    head = "# hpcnet.rdma lab VM image (lab/vm.py). Not managed by the collection.\n"
    mgmt_macs = " ".join(mgmt_mac(k) for k in range(1, MAX_NODES + 1))
    data_macs = " ".join(data_mac(k) for k in range(1, MAX_NODES + 1))
    files = {
        "/etc/fstab": (0o644, "/dev/vda / ext4 rw,errors=remount-ro 0 1\n"),
        "/etc/hostname": (0o644, "hpcnet-vm\n"),  # the kernel's systemd.hostname=vmK wins at boot
        "/root/.ssh/authorized_keys": (0o600, pubkey + "\n"),
        "/etc/ssh/sshd_config.d/hpcnet-lab.conf": (0o644, head + "PermitRootLogin prohibit-password\n"
                                                   "PasswordAuthentication no\nUseDNS no\n"),
        # NICs are named by MAC (net.ifnames=0 keeps the kernel's eth* until udev renames them).
        # Only the first .link file that matches a device applies: the collection's own
        # 10-hpcnet-rdma-data0.link sorts before these, so once it exists it wins (it sets Name= too).
        "/etc/systemd/network/50-lab-mgmt0.link": (0o644, head + "[Match]\nMACAddress=" + mgmt_macs +
                                                   "\n\n[Link]\nName=mgmt0\n"),
        # Pristine data0 looks like a stock NIC: virtio-net would start at host_mtu (9000) with its
        # rings at the maximum; a real NIC starts at MTU 1500 with rings below the maximum (mlx5:
        # 1024 of 8192), and so does this one: 1500, rings 256 of 1024 (rx) and 128 of 256 (tx).
        "/etc/systemd/network/50-lab-data0.link": (0o644, head + "[Match]\nMACAddress=" + data_macs +
                                                   "\n\n[Link]\nName=data0\nMTUBytes=1500\n"
                                                   "RxBufferSize=256\nTxBufferSize=128\n"),
        "/etc/systemd/network/50-lab-mgmt0.network": (0o644, head + "[Match]\nName=mgmt0\n\n[Network]\n"
                                                      "DHCP=ipv4\nLinkLocalAddressing=no\nIPv6AcceptRA=no\n"),
    }
    for k in range(1, MAX_NODES + 1):
        files[f"/etc/systemd/network/50-lab-data0-vm{k}.network"] = (
            0o644, head + f"[Match]\nName=data0\nMACAddress={data_mac(k)}\n\n[Network]\n"
            f"Address={data_address(k)}\nIPv6AcceptRA=no\n")
    return files


def customise(rootfs: Path, kver: str, pubkey: str) -> None:
    src = Path("/lib/modules") / kver
    dst = rootfs / "lib" / "modules" / kver
    trimmed = {str(src / t) for t in TRIM_MODULES}

    def ignore(directory: str, names: list[str]) -> list[str]:
        return [n for n in names if os.path.join(directory, n) in trimmed]

    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst, symlinks=True, ignore=ignore)
    for link in ("build", "source"):
        if (dst / link).is_symlink():
            (dst / link).unlink()
    run(["depmod", "-b", str(rootfs), kver])
    (rootfs / "root" / ".ssh").mkdir(mode=0o700, exist_ok=True)
    (rootfs / "root" / ".ssh").chmod(0o700)
    for path, (mode, content) in guest_files(pubkey).items():
        target = rootfs / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
        target.chmod(mode)
    run(["systemctl", f"--root={rootfs}", "enable", "systemd-networkd.service"])
    run(["systemctl", f"--root={rootfs}", "mask", *MASK_UNITS])
    for path in ("etc/resolv.conf",):
        (rootfs / path).unlink(missing_ok=True)


# --------------------------------------------------------------------------- image


def rootfs_tarball(mirror_of: Callable[[str], str]) -> Path:
    """debootstrap once per ROOTFS_RECIPE, cached as lab/cache/vm-rootfs-<hash>.tar."""
    digest = short_hash(ROOTFS_RECIPE)
    tarball = CACHE_DIR / f"vm-rootfs-{digest}.tar"
    if tarball.exists():
        log(f"debootstrap output cached: {tarball.relative_to(ROOT)}")
        return tarball
    require_tools("debootstrap")
    mirror = mirror_of(ROOTFS_RECIPE["suite"])
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    rootfs = Path(tempfile.mkdtemp(prefix="vm-rootfs-", dir=CACHE_DIR))
    try:
        cmd = ["debootstrap", f"--variant={ROOTFS_RECIPE['variant']}",
               "--include=" + ",".join(ROOTFS_RECIPE["include"]), ROOTFS_RECIPE["suite"], str(rootfs), mirror]
        log("running " + " ".join(cmd))
        t0 = time.monotonic()
        res = run(cmd, check=False)
        if res.returncode != 0:
            print(res.stdout[-4000:], file=sys.stderr)
            dlog = rootfs / "debootstrap" / "debootstrap.log"
            if dlog.exists():
                print(dlog.read_text(errors="replace")[-4000:], file=sys.stderr)
            die("debootstrap failed")
        log(f"debootstrap done in {time.monotonic() - t0:.0f}s")
        for pattern in ROOTFS_RECIPE["cleanup"]:
            for path in rootfs.glob(pattern):
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path)
                else:
                    path.unlink()
        partial = tarball.with_suffix(".partial")
        run(["tar", "-C", str(rootfs), "--numeric-owner", "--xattrs", "-cf", str(partial), "."])
        partial.rename(tarball)
        for old in CACHE_DIR.glob("vm-rootfs-*.tar"):
            if old != tarball:
                log(f"removing the cached rootfs of another recipe: {old.name}")
                old.unlink()
    finally:
        shutil.rmtree(rootfs, ignore_errors=True)
    return tarball


def image_id() -> tuple[str, dict]:
    kver, vmlinuz, initrd = host_kernel()
    pubkey = ensure_key()
    meta = {
        "rootfs": short_hash(ROOTFS_RECIPE),
        "kernel": kver,
        "vmlinuz_sha256": file_sha(vmlinuz),
        "initrd_sha256": file_sha(initrd),
        "modules_dep_sha256": file_sha(Path("/lib/modules") / kver / "modules.dep"),
        "trim": TRIM_MODULES,
        "mask": MASK_UNITS,
        "files": guest_files(pubkey),
        "format": IMAGE_FORMAT,
    }
    return short_hash(meta), meta


def image_dir() -> Path:
    return CACHE_DIR / f"vm-{image_id()[0]}"


def build_image(force: bool, mirror_of: Callable[[str], str]) -> Path:
    require_tools("mkfs.ext4", "qemu-img", "depmod", "systemctl", "tar")
    t0 = time.monotonic()
    digest, meta = image_id()
    final = CACHE_DIR / f"vm-{digest}"
    if (final / "image.json").exists() and not force:
        log(f"VM image {final.relative_to(ROOT)} exists (same recipe, kernel and key); nothing to build")
        return final
    if force:
        for old in CACHE_DIR.glob("vm-rootfs-*.tar"):
            old.unlink()
    tarball = rootfs_tarball(mirror_of)
    kver, vmlinuz, initrd = host_kernel()
    work = Path(tempfile.mkdtemp(prefix="vm-build-", dir=CACHE_DIR))
    try:
        rootfs = work / "rootfs"
        rootfs.mkdir()
        run(["tar", "-C", str(rootfs), "--numeric-owner", "--xattrs", "-xpf", str(tarball)])
        customise(rootfs, kver, ensure_key())
        used_mb = int(run(["du", "-sxm", str(rootfs)]).stdout.split()[0])
        size_mb = (used_mb * 13 // 10 + 400 + 63) // 64 * 64  # ~30 % + 400 MiB free for the tests
        disk = work / "disk.img"
        run(["mkfs.ext4", "-q", "-F", "-L", "hpcnet-root", "-d", str(rootfs), str(disk), f"{size_mb}M"])
        shutil.rmtree(rootfs)
        shutil.copy2(vmlinuz, work / "vmlinuz")
        shutil.copy2(initrd, work / "initrd.img")
        meta = dict(meta, files=sorted(meta["files"]), rootfs_mb=used_mb, disk_mb=size_mb,
                    built=time.strftime("%Y-%m-%dT%H:%M:%S"))
        (work / "image.json").write_text(json.dumps(meta, indent=2) + "\n")
        shutil.rmtree(final, ignore_errors=True)
        work.rename(final)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    in_use = {s.get("image") for s in all_states()}
    for old in CACHE_DIR.glob("vm-*"):
        if old.is_dir() and old != final and old.name not in ("vm-ssh",) and not old.name.startswith("vm-build-") \
                and str(old) not in in_use:
            log(f"removing the VM image of another recipe: {old.name}")
            shutil.rmtree(old)
    log(f"built {final.relative_to(ROOT)} ({used_mb} MiB of files in a {size_mb} MiB ext4 image, "
        f"kernel {kver}) in {time.monotonic() - t0:.0f}s")
    return final


# --------------------------------------------------------------------------- runs and processes


def run_dir(name: str) -> Path:
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,30}", name):
        die(f"--run {name!r}: use lower-case letters, digits and '-'")
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


def our_qemu(pid: int, tag: str) -> bool:
    """True only for a live QEMU whose command line carries our -name tag (guards against PID reuse)."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return bool(argv) and argv[0].endswith(QEMU.encode()) and f"{tag},process={tag}".encode() in argv


def stop_pid(pid: int, tag: str, name: str) -> None:
    if not our_qemu(pid, tag):
        log(f"{name}: pid {pid} is not running (or is not our QEMU); nothing to stop")
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and our_qemu(pid, tag):
        time.sleep(0.2)
    if our_qemu(pid, tag):
        log(f"{name}: pid {pid} ignored SIGTERM; sending SIGKILL")
        os.kill(pid, signal.SIGKILL)
    log(f"{name}: stopped QEMU pid {pid}")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port: int) -> bool:
    """Is something listening on 127.0.0.1:port?  Read from /proc: a probe connect would be
    accepted by QEMU's socket netdev as its peer."""
    want = f"0100007F:{port:04X}"
    for table in ("/proc/net/tcp",):
        for line in Path(table).read_text().splitlines()[1:]:
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
            "-netdev", f"user,id=mgmt,restrict=on,hostfwd=tcp:127.0.0.1:{node['ssh_port']}-:22",
            "-device", f"virtio-net-pci,netdev=mgmt,mac={mgmt_mac(k)}"]
    if peer_listens is not None:
        mode = "connect" if peer_listens else "listen"
        argv += ["-netdev", f"socket,id=data,{mode}=127.0.0.1:{node['data_port']}",
                 "-device", f"virtio-net-pci,netdev=data,mac={data_mac(k)},host_mtu={DATA_MTU},"
                 f"rx_queue_size={DATA_RX_QUEUE},vectors=3"]
    return argv


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
                log(f"{name}: ssh answers on 127.0.0.1:{node['ssh_port']} after {node['boot_seconds']}s")
                del pending[name]
        if pending:
            time.sleep(2)
    if pending:
        names = ", ".join(sorted(pending))
        raise RuntimeError(f"no ssh after {timeout:.0f}s: {names}; console logs: "
                           + ", ".join(n["console"] for n in pending.values()))


def write_inventory(state: dict | None) -> None:
    lines = [
        "---",
        "# Written by `lab/labctl.py vm up`; reset by `lab/labctl.py vm down`. Do not edit by hand.",
        f"# lab VM run: {state['started'] if state else 'none (no lab VMs are up)'}",
        "all:",
        "  children:",
        "    rdma_nodes:",
    ]
    if state:
        lines += [
            "      vars:",
            "        ansible_connection: ssh",
            "        ansible_host: 127.0.0.1",
            "        ansible_user: root",
            f"        ansible_ssh_private_key_file: {KEY_FILE}",
            "        ansible_ssh_common_args: >-",
            "          -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR",
            "        ansible_python_interpreter: /usr/bin/python3",
            "      hosts:",
        ]
        for node in state["nodes"]:
            lines += [f"        {node['name']}:", f"          ansible_port: {node['ssh_port']}"]
            if node.get("peer"):
                lines += [f"          lab_data0_address: {node['data0']}", f"          lab_data0_peer: {node['peer']}"]
    else:
        lines += ["      hosts: {}"]
    INVENTORY.parent.mkdir(parents=True, exist_ok=True)
    INVENTORY.write_text("\n".join(lines) + "\n")


# --------------------------------------------------------------------------- commands


def cmd_image_build(args: argparse.Namespace, mirror_of: Callable[[str], str]) -> None:
    build_image(args.force, mirror_of)


def cmd_down(args: argparse.Namespace) -> None:
    state = load_state(args.run)
    if not state:
        log(f"no VM run '{args.run}' recorded")
    else:
        for node in state["nodes"]:
            if node.get("pid"):
                stop_pid(node["pid"], node["tag"], node["name"])
            Path(node["overlay"]).unlink(missing_ok=True)
        state_file(args.run).unlink(missing_ok=True)
        log(f"VM run '{args.run}' is down")
    if args.run == DEFAULT_RUN and not args.no_inventory:
        write_inventory(None)


def cmd_up(args: argparse.Namespace, mirror_of: Callable[[str], str]) -> None:
    if not 1 <= args.nodes <= MAX_NODES:
        die(f"--nodes must be between 1 and {MAX_NODES}")
    require_tools(QEMU, "qemu-img", "ssh")
    image = build_image(False, mirror_of) if args.build else image_dir()
    if not (image / "image.json").exists():
        die(f"no VM image {image.relative_to(ROOT)}; run `labctl.py vm image build` first")
    if load_state(args.run):
        log(f"VM run '{args.run}' is recorded; taking it down first")
        cmd_down(argparse.Namespace(run=args.run, no_inventory=True))
    accel_why, accel = choose_accel()
    log(f"accelerator: {accel_why}")
    rdir = run_dir(args.run)
    rdir.mkdir(parents=True, exist_ok=True)
    state = {"run": args.run, "image": str(image), "accel": accel_why, "started": time.strftime("%Y-%m-%dT%H:%M:%S"),
             "key": str(KEY_FILE), "nodes": []}
    for k in range(1, args.nodes + 1):
        name = f"vm{k}"
        peer = peer_of(k, args.nodes)
        state["nodes"].append({
            "name": name, "index": k, "tag": f"{MARKER}-{args.run}-{name}", "pid": None,
            "ssh_port": free_port(), "data_port": None, "peer": f"vm{peer}" if peer else None,
            "data0": data_address(k) if peer else None,
            "peer_address": data_address(peer).split("/", maxsplit=1)[0] if peer else None,
            "mgmt_mac": mgmt_mac(k), "data_mac": data_mac(k) if peer else None,
            "overlay": str(rdir / f"{name}.qcow2"), "console": str(rdir / f"{name}.console.log"),
            "qemu_log": str(rdir / f"{name}.qemu.log"), "qmp": str(rdir / f"{name}.qmp"), "boot_seconds": None,
        })
    for node in state["nodes"]:
        if node["peer"] and node["index"] % 2:
            node["data_port"] = free_port()
        elif node["peer"]:
            node["data_port"] = state["nodes"][node["index"] - 2]["data_port"]
    save_state(state)
    t0 = time.monotonic()
    try:
        for node in state["nodes"]:
            run(["qemu-img", "create", "-q", "-f", "qcow2", "-F", "raw", "-b", str(image / "disk.img"), node["overlay"]])
            Path(node["console"]).unlink(missing_ok=True)
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
            log(f"{node['name']}: QEMU pid {proc.pid}, ssh 127.0.0.1:{node['ssh_port']}"
                + (f", data0 {node['data0']} ({'connects to' if peer_listens else 'listens on'} "
                   f"127.0.0.1:{node['data_port']})" if node["peer"] else ", no data link (odd node count)"))
        wait_ssh(state["nodes"], args.timeout, t0)
        save_kallsyms(image, state["nodes"][0])
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        save_state(state)
        log(f"boot failed; stopping the VMs of run '{args.run}'")
        cmd_down(argparse.Namespace(run=args.run, no_inventory=True))
        die(str(exc))
    save_state(state)
    if args.run == DEFAULT_RUN and not args.no_inventory:
        write_inventory(state)
        log(f"inventory: {INVENTORY.relative_to(ROOT)}")
    log(f"VM run '{args.run}' is up: {len(state['nodes'])} VM(s) in {time.monotonic() - t0:.0f}s "
        f"(boot to ssh: {', '.join(str(n['boot_seconds']) + 's' for n in state['nodes'])})")


def cmd_list(args: argparse.Namespace) -> None:
    state = load_state(args.run)
    if args.json:
        print(json.dumps(state or {}, indent=2))
        return
    if args.molecule:
        # Molecule's instance config (driver `default`, managed: true): one entry per VM.
        print(json.dumps([{"instance": n["name"], "address": "127.0.0.1", "user": "root", "port": n["ssh_port"],
                           "identity_file": state["key"]} for n in (state or {}).get("nodes", [])], indent=2))
        return
    if not state:
        log(f"no VM run '{args.run}' recorded")
        return
    print(f"run {state['run']}  started {state['started']}  accel {state['accel']}")
    for n in state["nodes"]:
        alive = "running" if n.get("pid") and our_qemu(n["pid"], n["tag"]) else "NOT running"
        print(f"  {n['name']:4} pid {n['pid']} ({alive})  ssh 127.0.0.1:{n['ssh_port']}  "
              f"data0={n['data0'] or '-'} peer={n['peer'] or '-'}  boot {n['boot_seconds']}s")


# What a guest kernel prints on the serial console when it is in trouble (a hung or dying VM
# answers ssh with "Connection timed out during banner exchange"; its console says why).
KERNEL_TROUBLE = re.compile(r"Kernel panic|BUG: |Oops|soft lockup|hard LOCKUP|rcu: INFO|self-detected stall|"
                            r"blocked for more than|Out of memory|oom-kill|invoked oom-killer|WARNING: CPU|"
                            r"Call Trace|segfault at|NETDEV WATCHDOG|transmit queue \d+ timed out")
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]|\r")


def console_report(node: dict, lines: int, trouble_only: bool) -> str:
    """The console log of one VM: its kernel-trouble lines and (unless trouble_only) its last lines."""
    alive = "running" if node.get("pid") and our_qemu(node["pid"], node["tag"]) else "NOT running"
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


MODULES_START = 0xffffffffc0000000  # x86_64: loadable modules live above the kernel image
KALLSYMS = "kallsyms"  # in the image dir: the kernel's own text symbols, read from the first VM that booted it


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


# Below this much free space a VM's qcow2 overlay can hit ENOSPC; QEMU then pauses the guest
# (status io-error) while its ssh port still accepts connections: ssh "times out during banner exchange".
LOW_DISK = 1 << 30


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


def cmd_console(args: argparse.Namespace) -> None:
    state = load_state(args.run)
    if not state:
        if not args.trouble:  # --trouble prints only trouble (molecule's destroy runs it before any VM exists)
            log(f"no VM run '{args.run}' recorded")
        return
    syms = run_symbols(state) if args.cpus else []
    for node in state["nodes"]:
        if args.name and node["name"] != args.name:
            continue
        report = console_report(node, args.lines, args.trouble)
        if report:
            print(report)
        trouble = qemu_trouble(node) if args.trouble else ""
        if trouble:
            print(trouble)
        if args.cpus:
            print(cpu_report(node, syms))
        if args.probe:
            took = ssh_answers(node, args.probe)
            answer = f"answers ({took}s)" if took is not None else f"does NOT answer within {args.probe}s"
            print(f"== {node['name']}: ssh {answer}")


def cmd_ssh(args: argparse.Namespace) -> None:
    state = load_state(args.run)
    if not state:
        die(f"no VM run '{args.run}' recorded")
    node = next((n for n in state["nodes"] if n["name"] == args.name), None)
    if node is None:
        die(f"no VM {args.name} in run '{args.run}'")
    res = subprocess.run(ssh_base(node["ssh_port"]) + args.cmd, check=False)
    sys.exit(res.returncode)


def register(sub: argparse._SubParsersAction, mirror_of: Callable[[str], str]) -> None:
    """Add the `vm` command tree to labctl's parser."""
    p = sub.add_parser("vm", help="QEMU VM lab nodes (real kernel: global sysctls, rings, soft-RoCE, reboot)")
    vsub = p.add_subparsers(dest="vm_command", required=True)

    def with_run(q: argparse.ArgumentParser) -> argparse.ArgumentParser:
        q.add_argument("--run", default=DEFAULT_RUN, help=f"name of the VM run (default {DEFAULT_RUN})")
        return q

    q = vsub.add_parser("image", help="VM disk image")
    isub = q.add_subparsers(dest="vm_image_command", required=True)
    b = isub.add_parser("build", help="build (or reuse) lab/cache/vm-<hash>/")
    b.add_argument("--force", action="store_true", help="rebuild, debootstrap included")
    b.set_defaults(func=lambda a: cmd_image_build(a, mirror_of))
    h = isub.add_parser("path", help="print the image directory for the current recipe")
    h.set_defaults(func=lambda a: print(image_dir()))

    q = with_run(vsub.add_parser("up", help="boot VMs and wait for ssh"))
    q.add_argument("--nodes", type=int, default=2)
    q.add_argument("--timeout", type=float, default=float(os.environ.get("LAB_VM_BOOT_TIMEOUT", "420")))
    q.add_argument("--build", action="store_true", help="build the image first if needed")
    q.add_argument("--no-inventory", action="store_true", help="do not write inventories/lab-vm/hosts.yml")
    q.set_defaults(func=lambda a: cmd_up(a, mirror_of))

    q = with_run(vsub.add_parser("down", help="stop the recorded QEMU PIDs"))
    q.add_argument("--no-inventory", action="store_true", help="do not reset inventories/lab-vm/hosts.yml")
    q.set_defaults(func=cmd_down)

    q = with_run(vsub.add_parser("list", help="show the recorded VMs"))
    q.add_argument("--json", action="store_true", help="the run's state as JSON")
    q.add_argument("--molecule", action="store_true", help="Molecule's instance config (JSON) for the run")
    q.set_defaults(func=cmd_list)

    q = with_run(vsub.add_parser("console", help="a VM's serial console: kernel-trouble lines and its tail"))
    q.add_argument("name", nargs="?", help="one VM (default: every VM of the run)")
    q.add_argument("--lines", type=int, default=40, help="how many last lines to print (default 40)")
    q.add_argument("--trouble", action="store_true",
                   help="print only trouble: console lines (panic, lockup, stall, OOM, oops), a QEMU that is not "
                        "running its guest, a nearly full disk under the overlays")
    q.add_argument("--cpus", action="store_true",
                   help="also ask QEMU (QMP) for its run state and where each vCPU is (kernel symbol)")
    q.add_argument("--probe", type=int, metavar="SECONDS", default=0,
                   help="also try a fresh ssh login to each VM, waiting up to SECONDS for it")
    q.set_defaults(func=cmd_console)

    q = with_run(vsub.add_parser("ssh", help="ssh into a VM as root"))
    q.add_argument("name")
    q.add_argument("cmd", nargs=argparse.REMAINDER)
    q.set_defaults(func=cmd_ssh)
