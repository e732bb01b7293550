# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""lab/lablib/common.py (log, die, run, hashing) and what the lab derives from it: the recipe and
image hashes that name cached images (pinned: a change here rebuilds every cached image), and the
address plan both labs share."""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from lablib import common, containers, vmimage
from lablib.common import Log

LOG = Log("labctl test")


def test_log_and_die(capsys: pytest.CaptureFixture[str]) -> None:
    LOG.info("hello")
    with pytest.raises(SystemExit) as exit_:
        LOG.die("it broke")
    assert exit_.value.code == 1
    assert capsys.readouterr() == ("labctl test: hello\n", "labctl test: error: it broke\n")


@pytest.mark.parametrize("capture, rc, out, err", [
    (True, 0, "out\n", "err\n"),
    (False, 0, None, None),
])
def test_run_success(capture: bool, rc: int, out: Any, err: Any) -> None:
    res = LOG.run([sys.executable, "-c", "import sys; print('out'); print('err', file=sys.stderr)"], capture=capture)
    assert (res.returncode, res.stdout, res.stderr) == (rc, out, err)


def test_run_failure(capsys: pytest.CaptureFixture[str]) -> None:
    cmd = [sys.executable, "-c", "import sys; print('why', file=sys.stderr); sys.exit(3)"]
    assert LOG.run(cmd, check=False, capture=True).returncode == 3
    with pytest.raises(SystemExit):
        LOG.run(cmd, capture=True)
    assert capsys.readouterr().err == f"labctl test: error: command failed (3): {' '.join(cmd)}\nwhy\n"


def test_run_merged(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # As CI runs it: no PYTHONUNBUFFERED in the caller's environment (a piped Python child would
    # otherwise block-buffer stdout and print 'b' before 'a').
    monkeypatch.delenv("PYTHONUNBUFFERED", raising=False)
    ok = LOG.run_merged([sys.executable, "-c", "import sys; print('a'); print('b', file=sys.stderr)"])
    assert ok.stdout == "a\nb\n"
    cmd = [sys.executable, "-c", "import sys; print('x' * 5000, file=sys.stderr); sys.exit(4)"]
    with pytest.raises(SystemExit):
        LOG.run_merged(cmd)
    err = capsys.readouterr().err
    assert err == f"labctl test: error: command failed (4): {' '.join(cmd)}\n{'x' * 2999}\n\n"  # the last 3000 chars


@pytest.mark.parametrize("data, expected", [
    ({"b": 1, "a": [1, 2]}, hashlib.sha256(b'{"a": [1, 2], "b": 1}').hexdigest()[:12]),
    ([{"b": 1, "a": [1, 2]}], hashlib.sha256(b'[{"a": [1, 2], "b": 1}]').hexdigest()[:12]),
    ((Path("/x"),), hashlib.sha256(b'["/x"]').hexdigest()[:12]),  # not JSON: str()
])
def test_digest(data: Any, expected: str) -> None:
    assert common.digest(data) == expected


def test_file_sha(tmp_path: Path) -> None:
    data = bytes(range(256)) * 9000  # more than one 1 MiB block
    (tmp_path / "f").write_bytes(data)
    assert common.file_sha(tmp_path / "f") == hashlib.sha256(data).hexdigest()


# Pinned: the hashes of the recipes whose images are cached (lab/cache/, the Docker engine).
@pytest.mark.parametrize("recipe, digest, repo, tarball", [
    ("default", "dc287ef03353", "hpcnet-rdma-lab", "rootfs-dc287ef03353.tar"),   # + munge, slurmctld, slurmd (rdma_health), lldpd (topology)
    ("rdma-bookworm", "e29a90bb6b0a", "hpcnet-rdma-lab-rdma-bookworm", "rootfs-rdma-bookworm-e29a90bb6b0a.tar"),
    ("rdma-trixie", "86d93daeaba5", "hpcnet-rdma-lab-rdma-trixie", "rootfs-rdma-trixie-86d93daeaba5.tar"),
])
def test_container_recipe_hashes_are_stable(recipe: str, digest: str, repo: str, tarball: str) -> None:
    assert containers.recipe_hash(recipe) == digest
    assert containers.image_repo(recipe) == repo
    assert containers.tarball_name(recipe, digest) == tarball


def test_vm_image_hash_inputs_are_stable() -> None:
    # 9dc240e6c436: Open MPI, UCX, mpi4py, openssh-client and tcpdump joined the image (issue 28's MPI steps)
    assert common.digest([vmimage.ROOTFS_RECIPE]) == "9dc240e6c436"
    files = vmimage.guest_files("ssh-ed25519 AAAAtest lab")
    # 2e566ddd12c00800: 50-lab-data1.link names the second data NIC (e1000e) by its MAC
    assert hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()[:16] == "2e566ddd12c00800"
    assert files["/etc/systemd/network/50-lab-data1.link"][1].endswith(
        "[Match]\nMACAddress=" + " ".join(vmimage.data1_mac(k) for k in range(1, vmimage.MAX_NODES + 1))
        + "\n\n[Link]\nName=data1\n")
    assert files["/root/.ssh/authorized_keys"] == (0o600, "ssh-ed25519 AAAAtest lab\n")
    assert files["/etc/systemd/network/50-lab-data0-vm3.network"][1].endswith(
        "[Match]\nName=data0\nMACAddress=52:54:00:a1:00:03\n\n[Network]\nAddress=10.77.1.3/24\nIPv6AcceptRA=no\n")
    assert "/root/.ssh/id_ed25519" not in files
    # with the guests' own key pair: root on one VM reaches another over the data link, and nothing else
    fabric = vmimage.guest_files("ssh-ed25519 AAAAtest lab", ("PRIVATE\n", "ssh-ed25519 AAAAfabric lab-fabric"))
    assert fabric["/root/.ssh/authorized_keys"] == (0o600, "ssh-ed25519 AAAAtest lab\nssh-ed25519 AAAAfabric lab-fabric\n")
    assert fabric["/root/.ssh/id_ed25519"] == (0o600, "PRIVATE\n")
    assert "Host 10.77.*\n  StrictHostKeyChecking no\n" in fabric["/root/.ssh/config"][1]


@pytest.mark.parametrize("k, address, peer_of_k_in_3", [
    (1, "10.77.0.1/24", 2), (2, "10.77.0.2/24", 1), (3, "10.77.1.3/24", None), (4, "10.77.1.4/24", 3),
    (8, "10.77.3.8/24", None),
])
def test_both_labs_share_one_address_plan(k: int, address: str, peer_of_k_in_3: Any) -> None:
    assert vmimage.data_address(k) == address
    assert containers.data_addresses((k - 1) // 2)[(k - 1) % 2] == address
    assert vmimage.peer_of(k, 3) == peer_of_k_in_3


@pytest.mark.parametrize("used, size", [(0, 448), (1000, 1728), (1024, 1792), (1, 448)])
def test_vm_disk_size(used: int, size: int) -> None:
    assert vmimage.disk_mb(used) == size and size % 64 == 0 and size >= used * 13 // 10 + 400
