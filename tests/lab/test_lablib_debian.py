# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""lab/lablib/debian.py: the host's Debian mirror from apt's sources, mounts left in a rootfs,
cleanup globs and the rootfs tarball."""
from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from lablib import debian
from lablib.common import Log
from lablib.debian import AptSource

LOG = Log("labctl test")


@pytest.mark.parametrize("text, expected", [
    ("deb http://deb.debian.org/debian bookworm main contrib\n",
     [AptSource("http://deb.debian.org/debian", ["bookworm"], ["main", "contrib"])]),
    ("deb [arch=amd64 signed-by=/usr/share/keyrings/k.gpg] https://m.example/debian trixie main # comment\n",
     [AptSource("https://m.example/debian", ["trixie"], ["main"])]),
    ("# deb http://old.example/debian buster main\ndeb-src http://m/debian bookworm main\n\n", []),
    ("deb http://m/debian-security bookworm-security main\ndeb file:/srv/mirror bookworm\n",
     [AptSource("http://m/debian-security", ["bookworm-security"], ["main"]),
      AptSource("file:/srv/mirror", ["bookworm"], [])]),
    ("deb http://m/debian\n", []),  # no suite: not a source
])
def test_one_line_sources(text: str, expected: list[AptSource]) -> None:
    assert debian.parse_one_line_sources(text) == expected


DEB822 = """Types: deb deb-src
URIs: http://deb.debian.org/debian http://mirror.example/debian
Suites: bookworm bookworm-updates
Components: main non-free-firmware
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

# a disabled stanza
Types: deb
URIs: http://disabled.example/debian
Suites: trixie
Components: main
Enabled: no

Types: deb-src
URIs: http://src.example/debian
Suites: bookworm
Components: main

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
"""


def test_deb822_sources() -> None:
    assert debian.parse_deb822_sources(DEB822) == [
        AptSource("http://deb.debian.org/debian", ["bookworm", "bookworm-updates"], ["main", "non-free-firmware"]),
        AptSource("http://mirror.example/debian", ["bookworm", "bookworm-updates"], ["main", "non-free-firmware"]),
        AptSource("http://deb.debian.org/debian-security", ["bookworm-security"], ["main"]),
    ]


def test_apt_dir_order(tmp_path: Path) -> None:
    """sources.list first, then sources.list.d/*.list sorted, then *.sources sorted."""
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list").write_text("deb http://a/debian bookworm main\n")
    (tmp_path / "sources.list.d" / "z.list").write_text("deb http://z/debian bookworm main\n")
    (tmp_path / "sources.list.d" / "b.list").write_text("deb http://b/debian bookworm main\n")
    (tmp_path / "sources.list.d" / "debian.sources").write_text("Types: deb\nURIs: http://c/debian\n"
                                                                "Suites: trixie\nComponents: main\n")
    assert [s.uri for s in debian.parse_apt_sources(tmp_path)] == [
        "http://a/debian", "http://b/debian", "http://z/debian", "http://c/debian"]


def test_apt_dir_without_sources(tmp_path: Path) -> None:
    assert not debian.parse_apt_sources(tmp_path)


HOST = [
    AptSource("cdrom:[Debian 12]/", ["bookworm"], ["main"]),               # not http/file: never used
    AptSource("http://contrib.example/debian", ["trixie"], ["contrib"]),    # no main: never used
    AptSource("http://deb.example/debian-security", ["bookworm-security"], ["main"]),
    AptSource("http://deb.example/debian", ["bookworm", "bookworm-updates"], ["main"]),
    AptSource("file:/srv/mirror", ["sid"], ["main"]),
]


@pytest.mark.parametrize("sources, suite, expected", [
    (HOST, "bookworm", ("http://deb.example/debian", True)),
    (HOST, "bookworm-updates", ("http://deb.example/debian", True)),
    (HOST, "sid", ("file:/srv/mirror", True)),
    (HOST, "trixie", ("http://deb.example/debian", False)),  # a newer release: the host's archive, not -security
    (HOST[:3], "trixie", None),                               # only cdrom, non-main and -security
    ([], "bookworm", None),
])
def test_choose_mirror(sources: list[AptSource], suite: str, expected: Any) -> None:
    assert debian.choose_mirror(sources, suite) == expected


def test_debian_mirror(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "sources.list").write_text("deb http://deb.example/debian bookworm main\n")
    assert debian.debian_mirror("bookworm", LOG, tmp_path, env={}) == "http://deb.example/debian"
    assert capsys.readouterr().out == ""
    assert debian.debian_mirror("trixie", LOG, tmp_path, env={}) == "http://deb.example/debian"
    assert capsys.readouterr().out == ("labctl test: no apt source lists suite 'trixie'; "
                                       "using the host's Debian archive http://deb.example/debian\n")
    assert debian.debian_mirror("trixie", LOG, tmp_path, env={"LAB_DEBIAN_MIRROR": "http://own/"}) == "http://own/"


def test_debian_mirror_without_a_source_dies(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        debian.debian_mirror("bookworm", LOG, tmp_path, env={})
    assert exit_.value.code == 1
    assert capsys.readouterr().err == (f"labctl test: error: no apt source for suite 'bookworm' (main) in "
                                       f"{tmp_path}; set LAB_DEBIAN_MIRROR\n")


MOUNTS = """sysfs /sys sysfs rw 0 0
proc /work/lab/cache/rootfs-ab12/proc proc rw,relatime 0 0
devpts /work/lab/cache/rootfs-ab12/dev/pts devpts rw 0 0
udev /work/lab/cache/rootfs-ab12/dev devtmpfs rw 0 0
proc /work/lab/cache/rootfs-ab123/proc proc rw 0 0
tmpfs /work/lab/cache/rootfs\\040with\\040space/run tmpfs rw 0 0
"""


@pytest.mark.parametrize("path, expected", [
    ("/work/lab/cache/rootfs-ab12", ["/work/lab/cache/rootfs-ab12/dev/pts", "/work/lab/cache/rootfs-ab12/dev",
                                     "/work/lab/cache/rootfs-ab12/proc"]),
    ("/work/lab/cache/rootfs-ab12/", ["/work/lab/cache/rootfs-ab12/dev/pts", "/work/lab/cache/rootfs-ab12/dev",
                                      "/work/lab/cache/rootfs-ab12/proc"]),
    ("/work/lab/cache/rootfs-ab12/proc", ["/work/lab/cache/rootfs-ab12/proc"]),
    ("/work/lab/cache/rootfs with space", ["/work/lab/cache/rootfs with space/run"]),  # \040 decoded
    ("/work/lab/cache/rootfs-ab", []),   # a name prefix is not a parent directory
    ("/elsewhere", []),
])
def test_mounts_under(path: str, expected: list[str]) -> None:
    assert debian.mounts_under(MOUNTS, Path(path)) == expected


def test_remove_globs(tmp_path: Path) -> None:
    keep = tmp_path / "outside"
    keep.mkdir()
    (keep / "precious").write_text("x")
    archives = tmp_path / "var" / "cache" / "apt" / "archives"
    lists = tmp_path / "var" / "lib" / "apt" / "lists"
    (archives / "partial").mkdir(parents=True)
    (lists / "partial").mkdir(parents=True)
    (archives / "a.deb").write_text("deb")
    (archives / "lock").write_text("")
    (lists / "deb.example_dists_bookworm_InRelease").write_text("r")
    (lists / "link").symlink_to(keep)  # a symlink to a directory goes, what it points to stays
    debian.remove_globs(tmp_path, ["var/cache/apt/archives/*.deb", "var/lib/apt/lists/*"])
    assert sorted(p.name for p in archives.iterdir()) == ["lock", "partial"]
    assert not list(lists.iterdir())
    assert (keep / "precious").read_text() == "x"


def test_pack(tmp_path: Path) -> None:
    rootfs = tmp_path / "rootfs"
    (rootfs / "etc").mkdir(parents=True)
    (rootfs / "etc" / "hostname").write_text("node\n")
    tarball = tmp_path / "rootfs-0123456789ab.tar"
    debian.pack(rootfs, tarball, LOG)
    assert tarball.exists() and not tarball.with_suffix(".partial").exists()
    listing = subprocess.run(["tar", "-tf", str(tarball)], capture_output=True, text=True, check=True).stdout
    assert "./etc/hostname" in listing.splitlines()


def test_pack_failure_dies_with_tar_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        debian.pack(tmp_path / "missing", tmp_path / "x.tar", LOG)
    err = capsys.readouterr().err
    assert err.startswith("labctl test: error: command failed (2): tar -C ") and "missing" in err


def test_scratch_dir_is_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(debian, "CACHE_DIR", tmp_path / "cache")
    with debian.scratch_dir("rootfs-", LOG) as scratch:
        (scratch / "file").write_text("x")
        assert scratch.parent == tmp_path / "cache" and scratch.name.startswith("rootfs-")
    assert not scratch.exists()
