"""labctl - build the hpcnet.rdma lab image and start/stop container lab nodes.

Standard library only.  Run as root on the host that runs the Docker engine.

  python3 lab/labctl.py dockerd        ensure a Docker engine answers (start one if none runs)
  python3 lab/labctl.py image build    debootstrap + docker import, cached by recipe hash
                          [--recipe rdma-bookworm|rdma-trixie]: + an offline apt cache of the RDMA stack
  python3 lab/labctl.py up --nodes N   start N nodes, join them pairwise with veth "data links"
  python3 lab/labctl.py list           show the current lab run
  python3 lab/labctl.py down [--all]   remove the nodes of the current run (or every lab run)
  python3 lab/labctl.py vm ...         QEMU VM nodes (lab/vm.py: `vm image build`, `vm up`, `vm down`)

Every container carries the label hpcnet-rdma-lab=<run-id>; `down` removes only
containers with our label, so nothing else on the engine is touched.  The current
run is recorded in lab/run/state.json and the inventory in inventories/lab/hosts.yml.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NoReturn

import vm  # lab/vm.py, next to this file (sys.path[0] when run as lab/labctl.py)

ROOT = Path(__file__).resolve().parent.parent
CACHE_DIR = ROOT / "lab" / "cache"
RUN_DIR = ROOT / "lab" / "run"
STATE_FILE = RUN_DIR / "state.json"
INVENTORY = ROOT / "inventories" / "lab" / "hosts.yml"

LABEL = "hpcnet-rdma-lab"
IMAGE_REPO = "hpcnet-rdma-lab"
NODE_PREFIX = "hpcnet-lab-node"

# Everything that determines the image content.  Change it and the hash changes.
RECIPE = {
    "suite": "bookworm",
    "variant": "minbase",
    "include": ["python3", "iproute2", "ethtool", "procps", "kmod", "systemd", "iputils-ping", "sudo"],
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
RDMA_IMAGE = dict(RECIPE, cleanup=[], apt_cache=RDMA_STACK, kernel="linux-image-cloud-amd64")
RECIPES = {
    "default": RECIPE,
    "rdma-bookworm": dict(RDMA_IMAGE, suite="bookworm"),
    "rdma-trixie": dict(RDMA_IMAGE, suite="trixie"),
}


def log(msg: str) -> None:
    print(f"labctl: {msg}", flush=True)


def die(msg: str) -> NoReturn:
    print(f"labctl: error: {msg}", file=sys.stderr, flush=True)
    sys.exit(1)


def run(cmd: list[str], check: bool = True, capture: bool = False, **kw) -> subprocess.CompletedProcess:
    if capture:
        kw.setdefault("stdout", subprocess.PIPE)
        kw.setdefault("stderr", subprocess.PIPE)
        kw.setdefault("text", True)
    res = subprocess.run(cmd, check=False, **kw)
    if check and res.returncode != 0:
        err = (res.stderr or "").strip() if capture else ""
        die(f"command failed ({res.returncode}): {' '.join(cmd)}" + (f"\n{err}" if err else ""))
    return res


def docker(*args: str, check: bool = True) -> str:
    return run(["docker", *args], check=check, capture=True).stdout.strip()


# --------------------------------------------------------------------------- dockerd


def docker_answers() -> bool:
    res = subprocess.run(["docker", "info"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return res.returncode == 0


def pid_alive(pidfile: Path) -> int | None:
    try:
        pid = int(pidfile.read_text().strip())
    except (OSError, ValueError):
        return None
    try:
        os.kill(pid, 0)
    except OSError:
        return None
    cmdline = Path(f"/proc/{pid}/cmdline")
    try:
        if b"dockerd" not in cmdline.read_bytes():
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
    log(f"starting {' '.join(cmd)} (log: {logfile})")
    with open(logfile, "ab") as out:
        return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True)


def cmd_dockerd(args: argparse.Namespace) -> None:
    if docker_answers():
        log("docker engine is running")
        return
    pidfile, logfile = Path(args.pidfile).resolve(), Path(args.log).resolve()
    # Never start a second engine: one that is starting up (ours or the system's) gets time.
    for candidate in (pidfile, Path("/var/run/docker.pid")):
        pid = pid_alive(candidate)
        if pid:
            log(f"dockerd pid {pid} ({candidate}) is alive but not answering yet; waiting")
            if wait_docker(args.timeout):
                log("docker engine is running")
                return
            die(f"dockerd pid {pid} does not answer after {args.timeout}s; see its log")
    proc = start_dockerd(pidfile, logfile, args.storage_driver)
    if wait_docker(args.timeout, proc):
        log(f"docker engine is running (pid {proc.pid})")
        return
    tail = logfile.read_text(errors="replace").splitlines()[-15:]
    if proc.poll() is not None and not args.storage_driver and any("overlay" in line for line in tail):
        log("dockerd failed with the overlay storage driver; retrying with --storage-driver=vfs")
        proc = start_dockerd(pidfile, logfile, "vfs")
        if wait_docker(args.timeout, proc):
            log(f"docker engine is running (pid {proc.pid}, storage driver vfs)")
            return
        tail = logfile.read_text(errors="replace").splitlines()[-15:]
    die("docker engine did not come up; last log lines:\n" + "\n".join(tail))


# --------------------------------------------------------------------------- image


def recipe_hash(name: str = "default") -> str:
    return hashlib.sha256(json.dumps(RECIPES[name], sort_keys=True).encode()).hexdigest()[:12]


def image_repo(name: str) -> str:
    return IMAGE_REPO if name == "default" else f"{IMAGE_REPO}-{name}"


def tarball_name(name: str, digest: str) -> str:
    return f"rootfs-{digest}.tar" if name == "default" else f"rootfs-{name}-{digest}.tar"


def parse_apt_sources() -> list[tuple[str, list[str], list[str]]]:
    """Return (uri, suites, components) of every 'deb' source of this host's apt."""
    entries = []
    apt = Path("/etc/apt")
    one_line = [apt / "sources.list", *sorted((apt / "sources.list.d").glob("*.list"))]
    for path in one_line:
        if not path.is_file():
            continue
        for line in path.read_text(errors="replace").splitlines():
            line = re.sub(r"\[[^]]*\]", " ", line.split("#", 1)[0]).split()
            if len(line) >= 3 and line[0] == "deb":
                entries.append((line[1], [line[2]], line[3:]))
    for path in sorted((apt / "sources.list.d").glob("*.sources")):
        for stanza in re.split(r"\n\s*\n", path.read_text(errors="replace")):
            fields: dict[str, str] = {}
            for line in stanza.splitlines():
                if line.startswith("#") or ":" not in line or line[0].isspace():
                    continue
                key, value = line.split(":", 1)
                fields[key.strip().lower()] = value.strip()
            if "deb" not in fields.get("types", "").split() or fields.get("enabled", "yes") == "no":
                continue
            for uri in fields.get("uris", "").split():
                entries.append((uri, fields.get("suites", "").split(), fields.get("components", "").split()))
    return entries


def debian_mirror(suite: str) -> str:
    """The host's own Debian mirror for `suite` (read from apt's sources at run time)."""
    if os.environ.get("LAB_DEBIAN_MIRROR"):
        return os.environ["LAB_DEBIAN_MIRROR"]
    sources = [s for s in parse_apt_sources() if "main" in s[2] and s[0].startswith(("http://", "https://", "file:/"))]
    for uri, suites, _components in sources:
        if suite in suites:
            return uri
    # A newer release than the host's (trixie on a bookworm host) comes from the same archive.
    for uri, suites, _components in sources:
        if any(re.fullmatch(r"[a-z]+", s) for s in suites) and not uri.rstrip("/").endswith("-security"):
            log(f"no apt source lists suite '{suite}'; using the host's Debian archive {uri}")
            return uri
    die(f"no apt source for suite '{suite}' (main) in /etc/apt; set LAB_DEBIAN_MIRROR")


def image_exists(ref: str) -> bool:
    return subprocess.run(["docker", "image", "inspect", ref], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, check=False).returncode == 0


def fill_apt_cache(rootfs: Path, packages: list[str]) -> None:
    """apt lists + downloaded .debs of `packages` and their dependencies, nothing installed."""
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C", "DEBIAN_FRONTEND": "noninteractive"}
    t0 = time.monotonic()
    for deb in (rootfs / "var" / "cache" / "apt" / "archives").glob("*.deb"):
        deb.unlink()  # debootstrap's own .debs: installed already, not part of the cache
    for cmd in (["apt-get", "update", "-q"],
                ["apt-get", "install", "-y", "-q", "--download-only", "--no-install-recommends", *packages]):
        res = subprocess.run(["chroot", str(rootfs), *cmd], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, check=False)
        if res.returncode != 0:
            print(res.stdout[-4000:], file=sys.stderr)
            die(f"apt cache step failed in the image: {' '.join(cmd)}")
    debs = list((rootfs / "var" / "cache" / "apt" / "archives").glob("*.deb"))
    log(f"apt cache: {len(debs)} .deb files for {', '.join(packages)} in {time.monotonic() - t0:.0f}s")


def install_kernel(rootfs: Path, package: str) -> None:
    """A kernel package as an image bake has one (INITRD=No: no initramfs; containers never boot it)."""
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C", "DEBIAN_FRONTEND": "noninteractive",
           "INITRD": "No"}
    t0 = time.monotonic()
    res = subprocess.run(["chroot", str(rootfs), "apt-get", "install", "-y", "-q", "--no-install-recommends", package],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
    if res.returncode != 0:
        print(res.stdout[-4000:], file=sys.stderr)
        die(f"installing {package} in the image failed")
    trees = sorted(p.name for p in (rootfs / "lib" / "modules").iterdir())
    log(f"kernel {package} ({', '.join(trees)}) installed in {time.monotonic() - t0:.0f}s")


def build_rootfs_tarball(tarball: Path, name: str = "default") -> None:
    recipe = RECIPES[name]
    mirror = debian_mirror(recipe["suite"])
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    rootfs = Path(tempfile.mkdtemp(prefix="rootfs-", dir=CACHE_DIR))
    try:
        cmd = ["debootstrap", f"--variant={recipe['variant']}", "--include=" + ",".join(recipe["include"]),
               recipe["suite"], str(rootfs), mirror]
        log("running " + " ".join(cmd))
        t0 = time.monotonic()
        res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
        if res.returncode != 0:
            print(res.stdout[-4000:], file=sys.stderr)
            debootstrap_log = rootfs / "debootstrap" / "debootstrap.log"
            if debootstrap_log.exists():
                print(debootstrap_log.read_text(errors="replace")[-4000:], file=sys.stderr)
            die("debootstrap failed")
        log(f"debootstrap done in {time.monotonic() - t0:.0f}s")
        if recipe.get("kernel"):
            install_kernel(rootfs, recipe["kernel"])
        if recipe.get("apt_cache"):
            fill_apt_cache(rootfs, recipe["apt_cache"])
        for pattern in recipe["cleanup"]:
            for path in rootfs.glob(pattern):
                if path.is_file() or path.is_symlink():
                    path.unlink()
                elif path.is_dir():
                    shutil.rmtree(path)
        partial = tarball.with_suffix(".partial")
        run(["tar", "-C", str(rootfs), "--numeric-owner", "-cf", str(partial), "."])
        partial.rename(tarball)
        same_recipe = re.compile(re.escape(tarball_name(name, "X")).replace("X", "[0-9a-f]{12}") + "$")
        for old in CACHE_DIR.glob("rootfs-*.tar"):
            if old != tarball and same_recipe.match(old.name):
                log(f"removing cached rootfs of another recipe: {old.name}")
                old.unlink()
    finally:
        shutil.rmtree(rootfs, ignore_errors=True)


def cmd_image_build(args: argparse.Namespace) -> None:
    name = args.recipe
    digest = recipe_hash(name)
    ref, latest = f"{image_repo(name)}:{digest}", f"{image_repo(name)}:latest"
    if image_exists(ref) and not args.force:
        log(f"image {ref} exists (same recipe); nothing to build")
    else:
        tarball = CACHE_DIR / tarball_name(name, digest)
        if args.force and tarball.exists():
            tarball.unlink()
        if tarball.exists():
            log(f"importing cached rootfs {tarball.relative_to(ROOT)} (no debootstrap needed)")
        else:
            build_rootfs_tarball(tarball, name)
        cmd = ["docker", "import"]
        for change in RECIPES[name]["changes"]:
            cmd += ["--change", change]
        with open(tarball, "rb") as data:
            run([*cmd, "-", ref], stdin=data, stdout=subprocess.DEVNULL)
        log(f"imported {ref}")
    run(["docker", "tag", ref, latest])
    log(f"tagged {latest} -> {ref}")


# --------------------------------------------------------------------------- nodes


def load_state() -> dict | None:
    try:
        return json.loads(STATE_FILE.read_text())
    except (OSError, ValueError):
        return None


def our_containers(run_id: str | None) -> list[str]:
    label = f"{LABEL}={run_id}" if run_id else LABEL
    out = docker("ps", "-a", "--filter", f"label={label}", "--format", "{{.Names}}")
    return [name for name in out.splitlines() if name]


def write_inventory(nodes: list[dict], run_id: str | None) -> None:
    lines = [
        "---",
        "# Written by `lab/labctl.py up`; reset by `lab/labctl.py down`. Do not edit by hand.",
        f"# lab run: {run_id or 'none (no lab nodes are up)'}",
        "all:",
        "  children:",
        "    rdma_nodes:",
    ]
    if nodes:
        lines += [
            "      vars:",
            "        ansible_connection: community.docker.docker",
            "        ansible_python_interpreter: /usr/bin/python3",
            "      hosts:",
        ]
        for node in nodes:
            lines += [f"        {node['hostname']}:", f"          ansible_host: {node['name']}"]
            if node.get("data0"):
                lines += [f"          lab_data0_address: {node['data0']}", f"          lab_data0_peer: {node['peer']}"]
    else:
        lines += ["      hosts: {}"]
    INVENTORY.parent.mkdir(parents=True, exist_ok=True)
    INVENTORY.write_text("\n".join(lines) + "\n")


def container_pid(name: str) -> int:
    pid = int(docker("inspect", "-f", "{{.State.Pid}}", name))
    if pid <= 0:
        die(f"container {name} is not running")
    return pid


def in_netns(pid: int, *cmd: str) -> None:
    run(["nsenter", "-t", str(pid), "-n", *cmd], capture=True)


def link_pair(pair: int, a: dict, b: dict, run_id: str) -> None:
    """veth between a and b, each end named data0 inside its node, 10.77.<pair>.<k>/24."""
    tmp_a, tmp_b = f"hl{run_id[:6]}{pair}a", f"hl{run_id[:6]}{pair}b"
    run(["ip", "link", "add", tmp_a, "type", "veth", "peer", "name", tmp_b], capture=True)
    for tmp, node, peer in ((tmp_a, a, b), (tmp_b, b, a)):
        pid = container_pid(node["name"])
        run(["ip", "link", "set", tmp, "netns", str(pid)], capture=True)
        in_netns(pid, "ip", "link", "set", tmp, "name", "data0")
        in_netns(pid, "ip", "addr", "add", node["data0"], "dev", "data0")
        in_netns(pid, "ip", "link", "set", "data0", "up")
        node["peer"] = peer["hostname"]
    log(f"data link {a['hostname']}:data0 ({a['data0']}) <-> {b['hostname']}:data0 ({b['data0']})")


def cmd_down(args: argparse.Namespace) -> None:
    state = load_state()
    run_id = None if args.all else (state or {}).get("run_id")
    if run_id is None and not args.all:
        log("no lab run recorded")
    else:
        names = our_containers(run_id)
        if names:
            run(["docker", "rm", "-f", *names], capture=True)
        log(f"removed {len(names)} container(s) with label {LABEL}" + (f"={run_id}" if run_id else ""))
    STATE_FILE.unlink(missing_ok=True)
    write_inventory([], None)


def cmd_up(args: argparse.Namespace) -> None:
    if args.nodes < 1 or args.nodes > 64:
        die("--nodes must be between 1 and 64")
    if not image_exists(args.image):
        die(f"image {args.image} not found; run `labctl.py image build` first")
    if load_state():
        log("a lab run is recorded; taking it down first")
        cmd_down(argparse.Namespace(all=False))
    names = [f"{NODE_PREFIX}{k}" for k in range(1, args.nodes + 1)]
    clash = [n for n in names if subprocess.run(["docker", "inspect", n], stdout=subprocess.DEVNULL,
                                                stderr=subprocess.DEVNULL, check=False).returncode == 0]
    if clash:
        die(f"container(s) already exist: {', '.join(clash)} (not from the recorded run; "
            f"`labctl.py down --all` removes lab containers)")
    run_id = time.strftime("%Y%m%d%H%M%S") + secrets.token_hex(3)
    RUN_DIR.mkdir(parents=True, exist_ok=True)
    nodes = []
    state = {"run_id": run_id, "image": args.image, "nodes": nodes}
    for k, name in enumerate(names, start=1):
        run(["docker", "run", "-d", "--network", "none", "--cap-add", "NET_ADMIN", "--cap-add", "SYS_ADMIN",
             "--label", f"{LABEL}={run_id}", "--name", name, "--hostname", f"node{k}",
             args.image, "sleep", "infinity"], capture=True)
        nodes.append({"name": name, "hostname": f"node{k}", "data0": None, "peer": None})
        STATE_FILE.write_text(json.dumps(state, indent=2) + "\n")  # recorded before anything can fail
        run(["docker", "exec", name, "mount", "-o", "remount,rw", "/proc/sys"], capture=True)
        log(f"started {name} (node{k})")
    for pair in range(args.nodes // 2):
        a, b = nodes[2 * pair], nodes[2 * pair + 1]
        a["data0"] = f"10.77.{pair}.{2 * pair + 1}/24"
        b["data0"] = f"10.77.{pair}.{2 * pair + 2}/24"
        link_pair(pair, a, b, run_id)
    if args.nodes % 2:
        log(f"{nodes[-1]['hostname']} has no data link (odd node count)")
    STATE_FILE.write_text(json.dumps(state, indent=2) + "\n")
    write_inventory(nodes, run_id)
    log(f"lab run {run_id} is up; inventory: {INVENTORY.relative_to(ROOT)}")


def cmd_list(args: argparse.Namespace) -> None:
    state = load_state()
    if not state:
        log("no lab run recorded")
    else:
        print(f"run {state['run_id']}  image {state['image']}")
        for node in state["nodes"]:
            print(f"  {node['hostname']:8} {node['name']:20} data0={node['data0'] or '-'} peer={node['peer'] or '-'}")
    print(docker("ps", "-a", "--filter", f"label={LABEL}",
                 "--format", "table {{.Names}}\t{{.Status}}\t{{.Label \"" + LABEL + "\"}}"))


def main() -> None:
    parser = argparse.ArgumentParser(prog="labctl.py", description=__doc__.split("\n\n", maxsplit=1)[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("dockerd", help="ensure a Docker engine is running")
    p.add_argument("--pidfile", default=str(ROOT / "build" / "dockerd.pid"))
    p.add_argument("--log", default=str(ROOT / "build" / "dockerd.log"))
    p.add_argument("--storage-driver", default=os.environ.get("LAB_DOCKERD_STORAGE_DRIVER"))
    p.add_argument("--timeout", type=float, default=60)
    p.set_defaults(func=cmd_dockerd)

    p = sub.add_parser("image", help="lab image")
    isub = p.add_subparsers(dest="image_command", required=True)
    b = isub.add_parser("build", help="build (or reuse) hpcnet-rdma-lab:<recipe-hash> and tag :latest")
    b.add_argument("--force", action="store_true", help="rebuild even if cached")
    b.add_argument("--recipe", choices=sorted(RECIPES), default="default",
                   help="default: the base lab image; rdma-*: + an offline apt cache of the RDMA stack")
    b.set_defaults(func=cmd_image_build)
    h = isub.add_parser("hash", help="print the recipe hash")
    h.add_argument("--recipe", choices=sorted(RECIPES), default="default")
    h.set_defaults(func=lambda a: print(recipe_hash(a.recipe)))

    p = sub.add_parser("up", help="start lab nodes and their data links")
    p.add_argument("--nodes", type=int, default=2)
    p.add_argument("--image", default=f"{IMAGE_REPO}:latest")
    p.set_defaults(func=cmd_up)

    p = sub.add_parser("list", help="show the lab run")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("down", help="remove the lab nodes of the recorded run")
    p.add_argument("--all", action="store_true", help=f"remove every container labelled {LABEL}")
    p.set_defaults(func=cmd_down)

    vm.register(sub, debian_mirror)

    args = parser.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()
