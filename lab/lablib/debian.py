# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Debian root filesystems for the lab images: the host's own mirror (read from apt's sources),
debootstrap in a scratch directory under lab/cache/, and the tarball that caches its output."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Mapping, NamedTuple

from .common import CACHE_DIR, Log

APT_DIR = Path("/etc/apt")
MOUNTS = Path("/proc/self/mounts")


class AptSource(NamedTuple):
    uri: str
    suites: list[str]
    components: list[str]


def parse_one_line_sources(text: str) -> list[AptSource]:
    """The 'deb' lines of a sources.list file ('[options]' and comments dropped)."""
    entries = []
    for line in text.splitlines():
        fields = re.sub(r"\[[^]]*\]", " ", line.split("#", 1)[0]).split()
        if len(fields) >= 3 and fields[0] == "deb":
            entries.append(AptSource(fields[1], [fields[2]], fields[3:]))
    return entries


def parse_deb822_sources(text: str) -> list[AptSource]:
    """The enabled 'deb' stanzas of a .sources file (deb822), one entry per URI."""
    entries = []
    for stanza in re.split(r"\n\s*\n", text):
        fields: dict[str, str] = {}
        for line in stanza.splitlines():
            if line.startswith("#") or ":" not in line or line[0].isspace():
                continue
            key, value = line.split(":", 1)
            fields[key.strip().lower()] = value.strip()
        if "deb" not in fields.get("types", "").split() or fields.get("enabled", "yes") == "no":
            continue
        for uri in fields.get("uris", "").split():
            entries.append(AptSource(uri, fields.get("suites", "").split(), fields.get("components", "").split()))
    return entries


def parse_apt_sources(apt: Path = APT_DIR) -> list[AptSource]:
    """Every 'deb' source of this host's apt: sources.list, sources.list.d/*.list, then *.sources."""
    entries = []
    for path in [apt / "sources.list", *sorted((apt / "sources.list.d").glob("*.list"))]:
        if path.is_file():
            entries += parse_one_line_sources(path.read_text(errors="replace"))
    for path in sorted((apt / "sources.list.d").glob("*.sources")):
        entries += parse_deb822_sources(path.read_text(errors="replace"))
    return entries


def choose_mirror(sources: list[AptSource], suite: str) -> tuple[str, bool] | None:
    """(uri, True) of the first http(s)/file source of `suite` with 'main'; else (uri, False) of the
    host's Debian archive (a release name, not -security), where a newer release than the host's
    (trixie on a bookworm host) is too; None if there is neither."""
    usable = [s for s in sources if "main" in s.components and s.uri.startswith(("http://", "https://", "file:/"))]
    for source in usable:
        if suite in source.suites:
            return source.uri, True
    for source in usable:
        if any(re.fullmatch(r"[a-z]+", s) for s in source.suites) and not source.uri.rstrip("/").endswith("-security"):
            return source.uri, False
    return None


def debian_mirror(suite: str, log: Log, apt: Path = APT_DIR, env: Mapping[str, str] | None = None) -> str:
    """The host's own Debian mirror for `suite` ($LAB_DEBIAN_MIRROR of env, default os.environ, wins)."""
    env = os.environ if env is None else env
    if env.get("LAB_DEBIAN_MIRROR"):
        return env["LAB_DEBIAN_MIRROR"]
    chosen = choose_mirror(parse_apt_sources(apt), suite)
    if chosen is None:
        log.die(f"no apt source for suite '{suite}' (main) in {apt}; set LAB_DEBIAN_MIRROR")
    uri, exact = chosen
    if not exact:
        log.info(f"no apt source lists suite '{suite}'; using the host's Debian archive {uri}")
    return uri


# --------------------------------------------------------------------------- mounts


def mounts_under(mounts: str, path: Path) -> list[str]:
    """Mount points at or below `path` in a /proc/self/mounts text, deepest first."""
    top = str(path).rstrip("/")
    found = []
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) < 2:
            continue
        point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[1])
        if point == top or point.startswith(top + "/"):
            found.append(point)
    return sorted(found, key=lambda p: (-p.count("/"), p))


def unmount_under(path: Path, log: Log) -> list[str]:
    """Unmount whatever is mounted at or below `path` (debootstrap can leave its /proc behind: a tar
    or rmtree of the rootfs would then walk the host's /proc).  Returns what is still mounted."""
    for point in mounts_under(MOUNTS.read_text(), path):
        log.info(f"unmounting {point} (left mounted in the rootfs)")
        if subprocess.run(["umount", point], capture_output=True, check=False).returncode != 0:
            subprocess.run(["umount", "-l", point], capture_output=True, check=False)
    return mounts_under(MOUNTS.read_text(), path)


@contextmanager
def scratch_dir(prefix: str, log: Log) -> Iterator[Path]:
    """A new directory under lab/cache/, removed afterwards (never while something is mounted in it)."""
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=prefix, dir=CACHE_DIR))
    try:
        yield scratch
    finally:
        mounted = unmount_under(scratch, log)
        if mounted:
            log.info(f"not removing {scratch}: still mounted there: {', '.join(mounted)}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)


# --------------------------------------------------------------------------- debootstrap


def debootstrap(rootfs: Path, recipe: Mapping, mirror: str, log: Log) -> None:
    """debootstrap recipe's suite/variant/include into rootfs; dies with its log's tail if it fails."""
    cmd = ["debootstrap", f"--variant={recipe['variant']}", "--include=" + ",".join(recipe["include"]),
           recipe["suite"], str(rootfs), mirror]
    log.info("running " + " ".join(cmd))
    t0 = time.monotonic()
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
    if res.returncode != 0:
        print(res.stdout[-4000:], file=sys.stderr)
        debootstrap_log = rootfs / "debootstrap" / "debootstrap.log"
        if debootstrap_log.exists():
            print(debootstrap_log.read_text(errors="replace")[-4000:], file=sys.stderr)
        log.die("debootstrap failed")
    still = unmount_under(rootfs, log)
    if still:
        log.die(f"debootstrap left {', '.join(still)} mounted and it does not unmount")
    log.info(f"debootstrap done in {time.monotonic() - t0:.0f}s")


def remove_globs(rootfs: Path, patterns: list[str]) -> None:
    """Delete what each glob (relative to rootfs) matches: files, symlinks and whole directories."""
    for pattern in patterns:
        for path in rootfs.glob(pattern):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()


def pack(rootfs: Path, tarball: Path, log: Log, xattrs: bool = False) -> None:
    """tar the rootfs (numeric owners) to tarball, atomically (via tarball.partial)."""
    partial = tarball.with_suffix(".partial")
    log.run_merged(["tar", "-C", str(rootfs), "--numeric-owner", *(["--xattrs"] if xattrs else []),
                    "-cf", str(partial), "."])
    partial.rename(tarball)
