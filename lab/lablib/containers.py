# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Container lab nodes: the Docker engine, the lab images (debootstrap + docker import, cached by
recipe hash) and the nodes themselves, joined pairwise by veth "data links".

Every container carries the label hpcnet-rdma-lab=<run-id>; `down` removes only containers with
our label, so nothing else on the engine is touched.  The current run is recorded in
lab/run/state.json and the inventory in inventories/lab/hosts.yml.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from . import debian, inventory
from .common import CACHE_DIR, ROOT, RUN_DIR, Log, digest

LOG = Log("labctl")
STATE_FILE = RUN_DIR / "state.json"
INVENTORY = ROOT / "inventories" / "lab" / "hosts.yml"

LABEL = "hpcnet-rdma-lab"
IMAGE_REPO = "hpcnet-rdma-lab"
NODE_PREFIX = "hpcnet-lab-node"

# Everything that determines the image content.  Change it and the hash changes.
RECIPE = {
    "suite": "bookworm",
    "variant": "minbase",
    "include": ["python3", "iproute2", "ethtool", "procps", "kmod", "systemd", "iputils-ping", "sudo",
                # a real Slurm for the health scenario (molecule/health): controller, node daemon, munge
                "munge", "slurmctld", "slurmd", "slurm-client",
                # LLDP for the topology scenario (molecule/topology): lab switches and nodes advertise themselves
                "lldpd"],
    "cleanup": ["var/cache/apt/archives/*.deb", "var/lib/apt/lists/*"],
    "changes": ['CMD ["/bin/sleep", "infinity"]'],
    "format": 1,
}

# Images for the rdma_core scenario: the same base plus the apt lists and the downloaded (not
# installed) .debs of the RDMA user-space stack.  Lab containers have no network
# (network_mode: none), so apt-get installs from that cache, as a node would from a local mirror.
RDMA_STACK = ["rdma-core", "ibverbs-utils", "rdmacm-utils", "infiniband-diags", "perftest"]
# A Debian cloud kernel package too, as an image bake has one: rdma_stack checks module names against
# its modules tree (a container's running kernel is the host's, with no tree inside).
RDMA_IMAGE = dict(RECIPE, cleanup=[], apt_cache=RDMA_STACK, kernel="linux-image-cloud-amd64",
                  include=[p for p in RECIPE["include"] if p not in ("munge", "slurmctld", "slurmd", "slurm-client", "lldpd")])
RECIPES = {
    "default": RECIPE,
    "rdma-bookworm": dict(RDMA_IMAGE, suite="bookworm"),
    "rdma-trixie": dict(RDMA_IMAGE, suite="trixie"),
}
CHROOT_ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C", "DEBIAN_FRONTEND": "noninteractive"}


def docker(*args: str, check: bool = True) -> str:
    return LOG.run(["docker", *args], check=check, capture=True).stdout.strip()


def quiet_ok(cmd: list[str]) -> bool:
    """Does argv exit 0?  Its output is discarded."""
    return subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False).returncode == 0


# --------------------------------------------------------------------------- dockerd


def docker_answers() -> bool:
    return quiet_ok(["docker", "info"])


def pid_alive(pidfile: Path) -> int | None:
    """The pid in pidfile if that process is alive and is a dockerd."""
    try:
        pid = int(pidfile.read_text().strip())
    except (OSError, ValueError):
        return None
    try:
        os.kill(pid, 0)
    except OSError:
        return None
    try:
        if b"dockerd" not in Path(f"/proc/{pid}/cmdline").read_bytes():
            return None
    except OSError:
        return None
    return pid


def wait_docker(seconds: float, proc: subprocess.Popen | None = None) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if docker_answers():
            return True
        if proc is not None and proc.poll() is not None:
            return False
        time.sleep(0.5)
    return docker_answers()


def start_dockerd(pidfile: Path, logfile: Path, storage_driver: str | None) -> subprocess.Popen:
    cmd = ["dockerd", "--bridge=none", "--iptables=false", f"--pidfile={pidfile}"]
    if storage_driver:
        cmd.append(f"--storage-driver={storage_driver}")
    logfile.parent.mkdir(parents=True, exist_ok=True)
    LOG.info(f"starting {' '.join(cmd)} (log: {logfile})")
    with open(logfile, "ab") as out:
        return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True)


def ensure_dockerd(pidfile: Path, logfile: Path, storage_driver: str | None, timeout: float) -> None:
    """A Docker engine answers afterwards: the running one, or one started here (never a second)."""
    if docker_answers():
        LOG.info("docker engine is running")
        return
    pidfile, logfile = pidfile.resolve(), logfile.resolve()
    # Never start a second engine: one that is starting up (ours or the system's) gets time.
    for candidate in (pidfile, Path("/var/run/docker.pid")):
        pid = pid_alive(candidate)
        if pid:
            LOG.info(f"dockerd pid {pid} ({candidate}) is alive but not answering yet; waiting")
            if wait_docker(timeout):
                LOG.info("docker engine is running")
                return
            LOG.die(f"dockerd pid {pid} does not answer after {timeout}s; see its log")
    proc = start_dockerd(pidfile, logfile, storage_driver)
    if wait_docker(timeout, proc):
        LOG.info(f"docker engine is running (pid {proc.pid})")
        return
    tail = logfile.read_text(errors="replace").splitlines()[-15:]
    if proc.poll() is not None and not storage_driver and any("overlay" in line for line in tail):
        LOG.info("dockerd failed with the overlay storage driver; retrying with --storage-driver=vfs")
        proc = start_dockerd(pidfile, logfile, "vfs")
        if wait_docker(timeout, proc):
            LOG.info(f"docker engine is running (pid {proc.pid}, storage driver vfs)")
            return
        tail = logfile.read_text(errors="replace").splitlines()[-15:]
    LOG.die("docker engine did not come up; last log lines:\n" + "\n".join(tail))


# --------------------------------------------------------------------------- image


def recipe_hash(name: str = "default") -> str:
    return digest(RECIPES[name])


def image_repo(name: str) -> str:
    return IMAGE_REPO if name == "default" else f"{IMAGE_REPO}-{name}"


def tarball_name(name: str, recipe_digest: str) -> str:
    return f"rootfs-{recipe_digest}.tar" if name == "default" else f"rootfs-{name}-{recipe_digest}.tar"


def image_exists(ref: str) -> bool:
    return quiet_ok(["docker", "image", "inspect", ref])


def in_chroot(rootfs: Path, cmd: list[str], env: dict[str, str], what: str) -> None:
    """Run argv inside the rootfs; on failure print the tail of its output and die with `what`."""
    res = subprocess.run(["chroot", str(rootfs), *cmd], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, check=False)
    if res.returncode != 0:
        print(res.stdout[-4000:], file=sys.stderr)
        LOG.die(what)


def fill_apt_cache(rootfs: Path, packages: list[str]) -> None:
    """apt lists + downloaded .debs of `packages` and their dependencies, nothing installed."""
    t0 = time.monotonic()
    for deb in (rootfs / "var" / "cache" / "apt" / "archives").glob("*.deb"):
        deb.unlink()  # debootstrap's own .debs: installed already, not part of the cache
    for cmd in (["apt-get", "update", "-q"],
                ["apt-get", "install", "-y", "-q", "--download-only", "--no-install-recommends", *packages]):
        in_chroot(rootfs, cmd, CHROOT_ENV, f"apt cache step failed in the image: {' '.join(cmd)}")
    debs = list((rootfs / "var" / "cache" / "apt" / "archives").glob("*.deb"))
    LOG.info(f"apt cache: {len(debs)} .deb files for {', '.join(packages)} in {time.monotonic() - t0:.0f}s")


def install_kernel(rootfs: Path, package: str) -> None:
    """A kernel package as an image bake has one (INITRD=No: no initramfs; containers never boot it)."""
    t0 = time.monotonic()
    in_chroot(rootfs, ["apt-get", "install", "-y", "-q", "--no-install-recommends", package],
              dict(CHROOT_ENV, INITRD="No"), f"installing {package} in the image failed")
    trees = sorted(p.name for p in (rootfs / "lib" / "modules").iterdir())
    LOG.info(f"kernel {package} ({', '.join(trees)}) installed in {time.monotonic() - t0:.0f}s")


def build_rootfs_tarball(tarball: Path, name: str = "default") -> None:
    recipe = RECIPES[name]
    mirror = debian.debian_mirror(recipe["suite"], LOG)
    with debian.scratch_dir("rootfs-", LOG) as rootfs:
        # the image's / is 0755 like any root: mkdtemp's 0700 keeps a package's own user (munge's
        # postinst runs mungekey as munge) from reaching /bin/sh inside the chroot
        rootfs.chmod(0o755)
        debian.debootstrap(rootfs, recipe, mirror, LOG)
        if recipe.get("kernel"):
            install_kernel(rootfs, recipe["kernel"])
        if recipe.get("apt_cache"):
            fill_apt_cache(rootfs, recipe["apt_cache"])
        debian.remove_globs(rootfs, recipe["cleanup"])
        debian.pack(rootfs, tarball, LOG)
    same_recipe = re.compile(re.escape(tarball_name(name, "X")).replace("X", "[0-9a-f]{12}") + "$")
    for old in CACHE_DIR.glob("rootfs-*.tar"):
        if old != tarball and same_recipe.match(old.name):
            LOG.info(f"removing cached rootfs of another recipe: {old.name}")
            old.unlink()


def build_image(name: str, force: bool) -> None:
    """hpcnet-rdma-lab[-NAME]:<recipe-hash>, from the cached rootfs tarball if there is one; tagged :latest."""
    recipe_digest = recipe_hash(name)
    ref, latest = f"{image_repo(name)}:{recipe_digest}", f"{image_repo(name)}:latest"
    if image_exists(ref) and not force:
        LOG.info(f"image {ref} exists (same recipe); nothing to build")
    else:
        tarball = CACHE_DIR / tarball_name(name, recipe_digest)
        if force and tarball.exists():
            tarball.unlink()
        if tarball.exists():
            LOG.info(f"importing cached rootfs {tarball.relative_to(ROOT)} (no debootstrap needed)")
        else:
            build_rootfs_tarball(tarball, name)
        cmd = ["docker", "import"]
        for change in RECIPES[name]["changes"]:
            cmd += ["--change", change]
        with open(tarball, "rb") as data:
            LOG.run([*cmd, "-", ref], stdin=data, stdout=subprocess.DEVNULL)
        LOG.info(f"imported {ref}")
    LOG.run(["docker", "tag", ref, latest])
    LOG.info(f"tagged {latest} -> {ref}")


# --------------------------------------------------------------------------- nodes


def load_state() -> dict | None:
    try:
        return json.loads(STATE_FILE.read_text())
    except (OSError, ValueError):
        return None


def save_state(state: dict) -> None:
    STATE_FILE.write_text(json.dumps(state, indent=2) + "\n")


def our_containers(run_id: str | None) -> list[str]:
    label = f"{LABEL}={run_id}" if run_id else LABEL
    out = docker("ps", "-a", "--filter", f"label={label}", "--format", "{{.Names}}")
    return [name for name in out.splitlines() if name]


def inventory_text(nodes: list[dict[str, Any]], run_id: str | None) -> str:
    """inventories/lab/hosts.yml for these nodes (none: the empty group `down` leaves)."""
    hosts = []
    for node in nodes:
        host_vars: list[tuple[str, inventory.Value]] = [("ansible_host", node["name"])]
        if node.get("data0"):
            host_vars += [("lab_data0_address", node["data0"]), ("lab_data0_peer", node["peer"])]
        hosts.append((node["hostname"], host_vars))
    return inventory.render("up", "lab run", run_id or "none (no lab nodes are up)",
                            [("ansible_connection", "community.docker.docker"),
                             ("ansible_python_interpreter", "/usr/bin/python3")], hosts)


def container_pid(name: str) -> int:
    pid = int(docker("inspect", "-f", "{{.State.Pid}}", name))
    if pid <= 0:
        LOG.die(f"container {name} is not running")
    return pid


def in_netns(pid: int, *cmd: str) -> None:
    LOG.run(["nsenter", "-t", str(pid), "-n", *cmd], capture=True)


def data_addresses(pair: int) -> tuple[str, str]:
    """The data0 addresses of pair `pair` (nodes 2p+1 and 2p+2): 10.77.<pair>.<k>/24."""
    return f"10.77.{pair}.{2 * pair + 1}/24", f"10.77.{pair}.{2 * pair + 2}/24"


def link_pair(pair: int, a: dict, b: dict, run_id: str) -> None:
    """veth between a and b, each end named data0 inside its node."""
    tmp_a, tmp_b = f"hl{run_id[:6]}{pair}a", f"hl{run_id[:6]}{pair}b"
    LOG.run(["ip", "link", "add", tmp_a, "type", "veth", "peer", "name", tmp_b], capture=True)
    for tmp, node, peer in ((tmp_a, a, b), (tmp_b, b, a)):
        pid = container_pid(node["name"])
        LOG.run(["ip", "link", "set", tmp, "netns", str(pid)], capture=True)
        in_netns(pid, "ip", "link", "set", tmp, "name", "data0")
        in_netns(pid, "ip", "addr", "add", node["data0"], "dev", "data0")
        in_netns(pid, "ip", "link", "set", "data0", "up")
        node["peer"] = peer["hostname"]
    LOG.info(f"data link {a['hostname']}:data0 ({a['data0']}) <-> {b['hostname']}:data0 ({b['data0']})")


def down(every_run: bool) -> None:
    """Remove the containers of the recorded run (every_run: of every lab run); reset the inventory."""
    state = load_state()
    run_id = None if every_run else (state or {}).get("run_id")
    if run_id is None and not every_run:
        LOG.info("no lab run recorded")
    else:
        names = our_containers(run_id)
        if names:
            LOG.run(["docker", "rm", "-f", *names], capture=True)
        LOG.info(f"removed {len(names)} container(s) with label {LABEL}" + (f"={run_id}" if run_id else ""))
    STATE_FILE.unlink(missing_ok=True)
    inventory.write(INVENTORY, inventory_text([], None))


def up(count: int, image: str) -> None:
    """Start `count` nodes from `image` (a recorded run goes down first), link them pairwise."""
    if count < 1 or count > 64:
        LOG.die("--nodes must be between 1 and 64")
    if not image_exists(image):
        LOG.die(f"image {image} not found; run `labctl.py image build` first")
    if load_state():
        LOG.info("a lab run is recorded; taking it down first")
        down(every_run=False)
    names = [f"{NODE_PREFIX}{k}" for k in range(1, count + 1)]
    clash = [n for n in names if quiet_ok(["docker", "inspect", n])]
    if clash:
        LOG.die(f"container(s) already exist: {', '.join(clash)} (not from the recorded run; "
                f"`labctl.py down --all` removes lab containers)")
    run_id = time.strftime("%Y%m%d%H%M%S") + secrets.token_hex(3)
    RUN_DIR.mkdir(parents=True, exist_ok=True)
    nodes: list[dict[str, Any]] = []
    state = {"run_id": run_id, "image": image, "nodes": nodes}
    for k, name in enumerate(names, start=1):
        LOG.run(["docker", "run", "-d", "--network", "none", "--cap-add", "NET_ADMIN", "--cap-add", "SYS_ADMIN",
                 "--label", f"{LABEL}={run_id}", "--name", name, "--hostname", f"node{k}",
                 image, "sleep", "infinity"], capture=True)
        nodes.append({"name": name, "hostname": f"node{k}", "data0": None, "peer": None})
        save_state(state)  # recorded before anything can fail
        LOG.run(["docker", "exec", name, "mount", "-o", "remount,rw", "/proc/sys"], capture=True)
        LOG.info(f"started {name} (node{k})")
    for pair in range(count // 2):
        a, b = nodes[2 * pair], nodes[2 * pair + 1]
        a["data0"], b["data0"] = data_addresses(pair)
        link_pair(pair, a, b, run_id)
    if count % 2:
        LOG.info(f"{nodes[-1]['hostname']} has no data link (odd node count)")
    save_state(state)
    inventory.write(INVENTORY, inventory_text(nodes, run_id))
    LOG.info(f"lab run {run_id} is up; inventory: {INVENTORY.relative_to(ROOT)}")


def show() -> None:
    """The recorded run, then every lab container the engine has."""
    state = load_state()
    if not state:
        LOG.info("no lab run recorded")
    else:
        print(f"run {state['run_id']}  image {state['image']}")
        for node in state["nodes"]:
            print(f"  {node['hostname']:8} {node['name']:20} data0={node['data0'] or '-'} peer={node['peer'] or '-'}")
    print(docker("ps", "-a", "--filter", f"label={LABEL}",
                 "--format", "table {{.Names}}\t{{.Status}}\t{{.Label \"" + LABEL + "\"}}"))
