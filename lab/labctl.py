"""labctl - build the hpcnet.rdma lab image and start/stop container lab nodes.

Standard library only.  Run as root on the host that runs the Docker engine (containers) or QEMU (VMs).
The command line only: the lab itself is the package lab/lablib/ (see its __init__.py).

  python3 lab/labctl.py dockerd        ensure a Docker engine answers (start one if none runs)
  python3 lab/labctl.py image build    debootstrap + docker import, cached by recipe hash
                          [--recipe rdma-bookworm|rdma-trixie]: + an offline apt cache of the RDMA stack
  python3 lab/labctl.py up --nodes N   start N nodes, join them pairwise with veth "data links"
  python3 lab/labctl.py list           show the current lab run
  python3 lab/labctl.py down [--all]   remove the nodes of the current run (or every lab run)

  python3 lab/labctl.py vm image build [--force]   debootstrap rootfs + host kernel modules -> ext4 disk image
  python3 lab/labctl.py vm up --nodes N            boot N QEMU VMs (per-VM qcow2 overlays), wait for ssh
  python3 lab/labctl.py vm list [--json]           show the recorded VMs
  python3 lab/labctl.py vm ssh NAME [CMD...]       ssh into a VM as root
  python3 lab/labctl.py vm console [NAME] [--trouble] [--cpus] [--probe S]   a VM's console, QEMU's view of it
  python3 lab/labctl.py vm stop NAME / vm start NAME   stop one VM keeping its disk (e.g. to bake it), boot it again
  python3 lab/labctl.py vm down                    stop exactly the QEMU PIDs recorded by `vm up`
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from lablib import containers, vmdiag, vmimage, vmrun  # lab/lablib/, next to this file (sys.path[0])
from lablib.common import ROOT
from lablib.vmstate import DEFAULT_RUN


def add_container_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("dockerd", help="ensure a Docker engine is running")
    p.add_argument("--pidfile", default=str(ROOT / "build" / "dockerd.pid"))
    p.add_argument("--log", default=str(ROOT / "build" / "dockerd.log"))
    p.add_argument("--storage-driver", default=os.environ.get("LAB_DOCKERD_STORAGE_DRIVER"))
    p.add_argument("--timeout", type=float, default=60)
    p.set_defaults(func=lambda a: containers.ensure_dockerd(Path(a.pidfile), Path(a.log), a.storage_driver, a.timeout))

    p = sub.add_parser("image", help="lab image")
    isub = p.add_subparsers(dest="image_command", required=True)
    b = isub.add_parser("build", help="build (or reuse) hpcnet-rdma-lab:<recipe-hash> and tag :latest")
    b.add_argument("--force", action="store_true", help="rebuild even if cached")
    b.add_argument("--recipe", choices=sorted(containers.RECIPES), default="default",
                   help="default: the base lab image; rdma-*: + an offline apt cache of the RDMA stack")
    b.set_defaults(func=lambda a: containers.build_image(a.recipe, a.force))
    h = isub.add_parser("hash", help="print the recipe hash")
    h.add_argument("--recipe", choices=sorted(containers.RECIPES), default="default")
    h.set_defaults(func=lambda a: print(containers.recipe_hash(a.recipe)))

    p = sub.add_parser("up", help="start lab nodes and their data links")
    p.add_argument("--nodes", type=int, default=2)
    p.add_argument("--image", default=f"{containers.IMAGE_REPO}:latest")
    p.set_defaults(func=lambda a: containers.up(a.nodes, a.image))

    p = sub.add_parser("list", help="show the lab run")
    p.set_defaults(func=lambda a: containers.show())

    p = sub.add_parser("down", help="remove the lab nodes of the recorded run")
    p.add_argument("--all", action="store_true", help=f"remove every container labelled {containers.LABEL}")
    p.set_defaults(func=lambda a: containers.down(a.all))


def add_vm_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("vm", help="QEMU VM lab nodes (real kernel: global sysctls, rings, soft-RoCE, reboot)")
    vsub = p.add_subparsers(dest="vm_command", required=True)

    def with_run(q: argparse.ArgumentParser) -> argparse.ArgumentParser:
        q.add_argument("--run", default=DEFAULT_RUN, help=f"name of the VM run (default {DEFAULT_RUN})")
        return q

    q = vsub.add_parser("image", help="VM disk image")
    isub = q.add_subparsers(dest="vm_image_command", required=True)
    b = isub.add_parser("build", help="build (or reuse) lab/cache/vm-<hash>/")
    b.add_argument("--force", action="store_true", help="rebuild, debootstrap included")
    b.set_defaults(func=lambda a: vmimage.build_image(a.force))
    h = isub.add_parser("path", help="print the image directory for the current recipe")
    h.set_defaults(func=lambda a: print(vmimage.image_dir()))

    q = with_run(vsub.add_parser("up", help="boot VMs and wait for ssh"))
    q.add_argument("--nodes", type=int, default=2)
    q.add_argument("--timeout", type=float, default=float(os.environ.get("LAB_VM_BOOT_TIMEOUT", "420")))
    q.add_argument("--build", action="store_true", help="build the image first if needed")
    q.add_argument("--no-inventory", action="store_true", help="do not write inventories/lab-vm/hosts.yml")
    q.add_argument("--disk", type=Path, default=None,
                   help="boot from this raw disk (a copy of the image's disk.img, e.g. baked) instead of the image's")
    q.set_defaults(func=lambda a: vmrun.up(a.run, a.nodes, a.timeout, a.build, a.no_inventory, a.disk))

    q = with_run(vsub.add_parser("down", help="stop the recorded QEMU PIDs"))
    q.add_argument("--no-inventory", action="store_true", help="do not reset inventories/lab-vm/hosts.yml")
    q.set_defaults(func=lambda a: vmrun.down(a.run, a.no_inventory))

    q = with_run(vsub.add_parser("stop", help="stop one VM, keeping its disk (overlay) for `vm start`"))
    q.add_argument("name", help="vm1, vm2, ... (a connecting one: vm2, vm4, ...)")
    q.set_defaults(func=lambda a: vmrun.stop(a.run, a.name))

    q = with_run(vsub.add_parser("start", help="boot one stopped VM again from its disk and wait for ssh"))
    q.add_argument("name", help="vm1, vm2, ...")
    q.add_argument("--timeout", type=float, default=float(os.environ.get("LAB_VM_BOOT_TIMEOUT", "420")))
    q.set_defaults(func=lambda a: vmrun.start(a.run, a.name, a.timeout))

    q = with_run(vsub.add_parser("list", help="show the recorded VMs"))
    q.add_argument("--json", action="store_true", help="the run's state as JSON")
    q.add_argument("--molecule", action="store_true", help="Molecule's instance config (JSON) for the run")
    q.set_defaults(func=lambda a: vmrun.show(a.run, a.json, a.molecule))

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
    q.set_defaults(func=lambda a: vmdiag.console(a.run, a.name, a.lines, a.trouble, a.cpus, a.probe))

    q = with_run(vsub.add_parser("ssh", help="ssh into a VM as root"))
    q.add_argument("name")
    q.add_argument("cmd", nargs=argparse.REMAINDER)
    q.set_defaults(func=lambda a: vmrun.ssh(a.run, a.name, a.cmd))


def main() -> None:
    parser = argparse.ArgumentParser(prog="labctl.py", description=__doc__.split("\n\n", maxsplit=1)[0])
    sub = parser.add_subparsers(dest="command", required=True)
    add_container_commands(sub)
    add_vm_commands(sub)
    args = parser.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()
