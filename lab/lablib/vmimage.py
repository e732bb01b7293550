# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The lab VM disk image: a debootstrap bookworm rootfs (cached as lab/cache/vm-rootfs-<hash>.tar)
with the host's Debian kernel modules, the lab's ssh key and NIC naming by MAC, as an ext4 image
in lab/cache/vm-<hash>/ next to the host kernel the VMs boot directly, with an initrd of their own.

The hash covers everything that goes into the image (recipe, kernel files, guest files, key):
keep that data byte-identical unless the image is meant to change."""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

from . import debian
from .common import CACHE_DIR, ROOT, digest, file_sha
from .vmstate import FABRIC_KEY_FILE, KEY_DIR, KEY_FILE, LOG, MAX_NODES, all_states, require_tools

# Everything debootstrap does.  Change it and the cached rootfs tarball is rebuilt.
ROOTFS_RECIPE = {
    "suite": "bookworm",
    "variant": "minbase",
    # the rdma_core role's whole Debian package map is in the image (the VMs have no package
    # mirror): the role finds it installed and journals no package
    "include": ["systemd-sysv", "udev", "dbus", "openssh-server", "python3", "iproute2", "ethtool", "kmod",
                "sudo", "rdma-core", "ibverbs-utils", "rdmacm-utils", "infiniband-diags", "perftest", "iperf3",
                "iputils-ping", "irqbalance", "procps", "libnss-myhostname",
                # hpcnet.rdma.rdma_bench (iperf3, perftest above; sockperf) and rdma_metrics
                # (node_exporter, enabled by its package as on any Debian node; vmrun forwards :9100)
                "sockperf", "prometheus-node-exporter",
                # MPI over the fabric (issue 28): Open MPI 4.1 with UCX 1.13 and mpi4py, as an HPC node has them
                # (mpirun starts the remote rank over ssh: openssh-client); tcpdump reads the RoCE packets'
                # traffic class and addresses off the wire
                "openmpi-bin", "ucx-utils", "python3-mpi4py", "openssh-client", "tcpdump"],
    "cleanup": ["var/cache/apt/archives/*.deb", "var/lib/apt/lists/*"],
    "format": 1,
}
# What is left out of the host kernel's /lib/modules tree (no such hardware in the VM).
TRIM_MODULES = ["kernel/drivers/gpu", "kernel/sound", "kernel/drivers/media", "kernel/drivers/net/wireless",
                "kernel/net/wireless", "kernel/net/mac80211", "kernel/drivers/staging"]
# Units that would only burn emulated CPU in a short-lived lab VM.
MASK_UNITS = ["apt-daily.timer", "apt-daily-upgrade.timer", "e2scrub_all.timer", "e2scrub_reap.service",
              "fstrim.timer"]
# The initrd the VMs boot: not the host's generic one (30 MB, every storage driver it may need: unpacking it
# and its udev pass took 12.5 s of an 18.5 s kernel start in a TCG guest), but mkinitramfs's with what mounts
# the root disk (virtio-blk, ext4) and nothing else: 8 MB, the kernel's start 7.2 s, boot to ssh 25 s not
# 31-52 s (measured on a debug VM, 2026-12-07).  mkinitramfs -d DIR reads only DIR's configuration.
INITRD_RECIPE = {
    "conf": {"MODULES": "list", "BUSYBOX": "auto", "COMPRESS": "zstd", "COMPRESSLEVEL": "1", "FSTYPE": "ext4",
             "RUNSIZE": "10%"},
    "modules": ["virtio_pci", "virtio_blk", "ext4"],
}
IMAGE_FORMAT = 1
# The first line of every lab file in the guest.  Part of the image hash: it names lab/vm.py, where
# the VM code lived when the cached images were first built; changing it rebuilds every VM image.
GUEST_FILE_HEAD = "# hpcnet.rdma lab VM image (lab/vm.py). Not managed by the collection.\n"


# --------------------------------------------------------------------------- MACs and addresses


def mgmt_mac(k: int) -> str:
    return f"52:54:00:a0:00:{k:02x}"


def data_mac(k: int) -> str:
    return f"52:54:00:a1:00:{k:02x}"


def data1_mac(k: int) -> str:
    """The second data NIC (QEMU's e1000e, an Intel 82574L): a second real driver with its own limits."""
    return f"52:54:00:a2:00:{k:02x}"


def data_address(k: int) -> str:
    """VMs 1-2 are pair 0, 3-4 pair 1, ...: 10.77.<pair>.<k>/24, as in the container lab."""
    return f"10.77.{(k - 1) // 2}.{k}/24"


def peer_of(k: int, nodes: int) -> int | None:
    peer = k + 1 if k % 2 else k - 1
    return peer if 1 <= peer <= nodes else None


# --------------------------------------------------------------------------- kernel and key


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
        LOG.die("no usable kernel: need /boot/vmlinuz-VER, /boot/initrd.img-VER and /lib/modules/VER "
                "(apt-get install linux-image-amd64)" + (f" for LAB_VM_KERNEL={wanted}" if wanted else ""))

    def version_key(item: tuple[str, Path, Path]) -> list[int]:
        return [int(n) for n in re.findall(r"\d+", item[0])]

    return max(found, key=version_key)


def ensure_key() -> str:
    """The lab's root ssh key (lab/cache/vm-ssh/, git-ignored); returns the public key."""
    if not KEY_FILE.exists() or not KEY_FILE.with_suffix(".pub").exists():
        require_tools("ssh-keygen")
        KEY_DIR.mkdir(parents=True, exist_ok=True)
        KEY_FILE.unlink(missing_ok=True)
        KEY_FILE.with_suffix(".pub").unlink(missing_ok=True)
        LOG.run_merged(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "hpcnet-rdma-lab", "-f", str(KEY_FILE)])
        LOG.info(f"generated the lab ssh key {KEY_FILE.relative_to(ROOT)}")
    KEY_FILE.chmod(0o600)
    return KEY_FILE.with_suffix(".pub").read_text().strip()


# --------------------------------------------------------------------------- guest configuration


def ensure_fabric_key() -> tuple[str, str]:
    """The key the lab VMs use among themselves (lab/cache/vm-ssh/fabric_ed25519, git-ignored): mpirun on one
    node starts the other ranks over ssh, as on a cluster whose nodes trust each other.  Only the guests hold
    its private half; returns (private, public)."""
    if not FABRIC_KEY_FILE.exists() or not FABRIC_KEY_FILE.with_suffix(".pub").exists():
        require_tools("ssh-keygen")
        KEY_DIR.mkdir(parents=True, exist_ok=True)
        FABRIC_KEY_FILE.unlink(missing_ok=True)
        FABRIC_KEY_FILE.with_suffix(".pub").unlink(missing_ok=True)
        LOG.run_merged(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "hpcnet-rdma-lab-fabric",
                        "-f", str(FABRIC_KEY_FILE)])
    FABRIC_KEY_FILE.chmod(0o600)
    return FABRIC_KEY_FILE.read_text(), FABRIC_KEY_FILE.with_suffix(".pub").read_text().strip()


def guest_files(pubkey: str, fabric: tuple[str, str] | None = None) -> dict[str, tuple[int, str]]:
    """path inside the guest -> (mode, content).  Part of the image hash.  fabric: the guests' own key pair
    (ensure_fabric_key), which lets root on one VM ssh to another over the data link."""
    head = GUEST_FILE_HEAD
    mgmt_macs = " ".join(mgmt_mac(k) for k in range(1, MAX_NODES + 1))
    data_macs = " ".join(data_mac(k) for k in range(1, MAX_NODES + 1))
    data1_macs = " ".join(data1_mac(k) for k in range(1, MAX_NODES + 1))
    files = {
        "/etc/fstab": (0o644, "/dev/vda / ext4 rw,errors=remount-ro 0 1\n"),
        "/etc/hostname": (0o644, "hpcnet-vm\n"),  # the kernel's systemd.hostname=vmK wins at boot
        "/root/.ssh/authorized_keys": (0o600, pubkey + "\n" + (fabric[1] + "\n" if fabric else "")),
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
        # data1 (e1000e) keeps the driver's own defaults: MTU 1500, rings 256 of 4096, rx-usecs 3.
        "/etc/systemd/network/50-lab-data1.link": (0o644, head + "[Match]\nMACAddress=" + data1_macs +
                                                   "\n\n[Link]\nName=data1\n"),
        "/etc/systemd/network/50-lab-mgmt0.network": (0o644, head + "[Match]\nName=mgmt0\n\n[Network]\n"
                                                      "DHCP=ipv4\nLinkLocalAddressing=no\nIPv6AcceptRA=no\n"),
    }
    if fabric:
        files["/root/.ssh/id_ed25519"] = (0o600, fabric[0])
        # the VMs' data addresses are reused by every run: no host key to learn or to trip over
        files["/root/.ssh/config"] = (0o600, head + "Host 10.77.*\n  StrictHostKeyChecking no\n"
                                      "  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n  BatchMode yes\n")
    for k in range(1, MAX_NODES + 1):
        files[f"/etc/systemd/network/50-lab-data0-vm{k}.network"] = (
            0o644, head + f"[Match]\nName=data0\nMACAddress={data_mac(k)}\n\n[Network]\n"
            f"Address={data_address(k)}\nIPv6AcceptRA=no\n")
    return files


def customise(rootfs: Path, kver: str, pubkey: str, fabric: tuple[str, str]) -> None:
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
    LOG.run_merged(["depmod", "-b", str(rootfs), kver])
    (rootfs / "root" / ".ssh").mkdir(mode=0o700, exist_ok=True)
    (rootfs / "root" / ".ssh").chmod(0o700)
    for path, (mode, content) in guest_files(pubkey, fabric).items():
        target = rootfs / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
        target.chmod(mode)
    LOG.run_merged(["systemctl", f"--root={rootfs}", "enable", "systemd-networkd.service"])
    LOG.run_merged(["systemctl", f"--root={rootfs}", "mask", *MASK_UNITS])
    for path in ("etc/resolv.conf",):
        (rootfs / path).unlink(missing_ok=True)


# --------------------------------------------------------------------------- image


def rootfs_tarball() -> Path:
    """debootstrap once per ROOTFS_RECIPE, cached as lab/cache/vm-rootfs-<hash>.tar."""
    tarball = CACHE_DIR / f"vm-rootfs-{digest([ROOTFS_RECIPE])}.tar"
    if tarball.exists():
        LOG.info(f"debootstrap output cached: {tarball.relative_to(ROOT)}")
        return tarball
    require_tools("debootstrap")
    mirror = debian.debian_mirror(ROOTFS_RECIPE["suite"], LOG)
    with debian.scratch_dir("vm-rootfs-", LOG) as rootfs:
        debian.debootstrap(rootfs, ROOTFS_RECIPE, mirror, LOG)
        debian.remove_globs(rootfs, ROOTFS_RECIPE["cleanup"])
        debian.pack(rootfs, tarball, LOG, xattrs=True)
    for old in CACHE_DIR.glob("vm-rootfs-*.tar"):
        if old != tarball:
            LOG.info(f"removing the cached rootfs of another recipe: {old.name}")
            old.unlink()
    return tarball


def image_id() -> tuple[str, dict]:
    """The image's hash and what it covers."""
    kver, vmlinuz, _initrd = host_kernel()
    pubkey = ensure_key()
    meta = {
        "rootfs": digest([ROOTFS_RECIPE]),
        "kernel": kver,
        "vmlinuz_sha256": file_sha(vmlinuz),
        "initrd": INITRD_RECIPE,
        "modules_dep_sha256": file_sha(Path("/lib/modules") / kver / "modules.dep"),
        "trim": TRIM_MODULES,
        "mask": MASK_UNITS,
        "files": guest_files(pubkey, ensure_fabric_key()),
        "format": IMAGE_FORMAT,
    }
    return digest([meta]), meta


def image_dir() -> Path:
    return CACHE_DIR / f"vm-{image_id()[0]}"


def build_initrd(kver: str, out: Path) -> None:
    """mkinitramfs with INITRD_RECIPE alone (its own configuration directory, no host hooks)."""
    with debian.scratch_dir("vm-initrd-", LOG) as conf:
        for sub in ("conf.d", "hooks", "scripts"):
            (conf / sub).mkdir()
        (conf / "initramfs.conf").write_text("".join(f"{k}={v}\n" for k, v in INITRD_RECIPE["conf"].items()))
        (conf / "modules").write_text("".join(m + "\n" for m in INITRD_RECIPE["modules"]))
        LOG.run_merged(["mkinitramfs", "-d", str(conf), "-o", str(out), kver])


def disk_mb(used_mb: int) -> int:
    """The ext4 image size for used_mb of files: ~30 % + 400 MiB free for the tests, in 64 MiB steps."""
    return (used_mb * 13 // 10 + 400 + 63) // 64 * 64


def build_image(force: bool) -> Path:
    """lab/cache/vm-<hash>/ (disk.img, vmlinuz, initrd.img, image.json); reused when it exists."""
    require_tools("mkfs.ext4", "qemu-img", "depmod", "systemctl", "tar", "mkinitramfs")
    t0 = time.monotonic()
    image_digest, meta = image_id()
    final = CACHE_DIR / f"vm-{image_digest}"
    if (final / "image.json").exists() and not force:
        LOG.info(f"VM image {final.relative_to(ROOT)} exists (same recipe, kernel and key); nothing to build")
        return final
    if force:
        for old in CACHE_DIR.glob("vm-rootfs-*.tar"):
            old.unlink()
    tarball = rootfs_tarball()
    kver, vmlinuz, _initrd = host_kernel()
    with debian.scratch_dir("vm-build-", LOG) as work:
        rootfs = work / "rootfs"
        rootfs.mkdir()
        LOG.run_merged(["tar", "-C", str(rootfs), "--numeric-owner", "--xattrs", "-xpf", str(tarball)])
        customise(rootfs, kver, ensure_key(), ensure_fabric_key())
        used_mb = int(LOG.run_merged(["du", "-sxm", str(rootfs)]).stdout.split()[0])
        size_mb = disk_mb(used_mb)
        disk = work / "disk.img"
        LOG.run_merged(["mkfs.ext4", "-q", "-F", "-L", "hpcnet-root", "-d", str(rootfs), str(disk), f"{size_mb}M"])
        shutil.rmtree(rootfs)
        shutil.copy2(vmlinuz, work / "vmlinuz")
        build_initrd(kver, work / "initrd.img")
        meta = dict(meta, files=sorted(meta["files"]), rootfs_mb=used_mb, disk_mb=size_mb,
                    built=time.strftime("%Y-%m-%dT%H:%M:%S"))
        (work / "image.json").write_text(json.dumps(meta, indent=2) + "\n")
        shutil.rmtree(final, ignore_errors=True)
        work.rename(final)
    in_use = {s.get("image") for s in all_states()}
    for old in CACHE_DIR.glob("vm-*"):
        if old.is_dir() and old != final and old.name not in ("vm-ssh",) and not old.name.startswith("vm-build-") \
                and str(old) not in in_use:
            LOG.info(f"removing the VM image of another recipe: {old.name}")
            shutil.rmtree(old)
    LOG.info(f"built {final.relative_to(ROOT)} ({used_mb} MiB of files in a {size_mb} MiB ext4 image, "
             f"kernel {kver}) in {time.monotonic() - t0:.0f}s")
    return final
