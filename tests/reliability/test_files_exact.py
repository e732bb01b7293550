# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Files come back byte- and owner-exact: real module runs (AnsibleModule, exit_json) on a temp
tree, apply then rollback, compared entry by entry with the pristine tree - bytes (CRLF, not
UTF-8), mode, uid/gid, SELinux label, ACL and user xattrs - on tmpfs and on the disk; new
directories under umask 077; and file content never echoed in a result."""
from __future__ import annotations

import errno
import json
import os
import struct
from typing import Any, Dict, Optional

import pytest

from rlib import ROLLBACK, forked, read_journal, snapshot

NOBODY = 65534
LABEL = b"system_u:object_r:etc_t:s0\x00"
# system.posix_acl_access, version 2: user::rw- user:65534:rw- group::r-- mask::rw- other::---
ACL = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", tag, perm, uid) for tag, perm, uid in (
    (0x01, 6, 0xFFFFFFFF), (0x02, 6, NOBODY), (0x04, 4, 0xFFFFFFFF), (0x10, 6, 0xFFFFFFFF), (0x20, 0, 0xFFFFFFFF)))

CRLF = b"# edited on Windows\r\nvm.swappiness = 30\r\n"
LATIN1 = b"# \xe9crit en latin-1\nbtl = ^openib\n"
OWNED = b"# nobody's file\nkeep = 1\n"


@pytest.fixture(params=["tmpfs", "disk"])
def fs(request, work, tmp_path) -> str:
    """A directory on tmpfs (the suite's ``work``) and one on the disk pytest's tmp_path is on."""
    return work if request.param == "tmpfs" else str(tmp_path)


def _put(root: str, path: str, data: bytes, mode: int = 0o644, owner: Optional[int] = None) -> str:
    full = os.path.join(root, path.lstrip("/"))
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "wb") as f:
        f.write(data)
    os.chmod(full, mode)
    if owner is not None:
        os.chown(full, owner, owner)
    return full


def _xattr_support(full: str) -> Dict[str, Optional[str]]:
    """Per kind of xattr, None when this filesystem stores it, else the errno name it answered."""
    out: Dict[str, Optional[str]] = {}
    for kind, name, value in (("user", "user.hpcnet-probe", b"1"), ("acl", "system.posix_acl_access", ACL),
                              ("selinux", "security.selinux", LABEL)):
        try:
            os.setxattr(full, name, value)
            os.removexattr(full, name)
            out[kind] = None
        except OSError as e:
            out[kind] = errno.errorcode.get(e.errno, str(e.errno))
    return out


def _xattrs(root: str) -> Dict[str, Dict[str, bytes]]:
    """Every extended attribute of every file under ``root``."""
    out: Dict[str, Dict[str, bytes]] = {}
    for d, _dirs, names in os.walk(root):
        for n in names:
            full = os.path.join(d, n)
            attrs = dict((a, os.getxattr(full, a, follow_symlinks=False))
                         for a in os.listxattr(full, follow_symlinks=False))
            if attrs:
                out[os.path.relpath(full, root)] = attrs
    return out


def _node(fs: str) -> Dict[str, Any]:
    """A node whose files have CRLF, non-UTF-8 bytes, another owner, a label, an ACL, user xattrs."""
    assert os.geteuid() == 0, "the reliability tier runs as root (chown to 65534, security.* xattrs)"
    root = os.path.join(fs, "node")
    _put(root, "/proc/sys/vm/swappiness", b"60\n")
    _put(root, "/etc/sysctl.d/90-hpcnet-rdma.conf", CRLF, 0o640, NOBODY)
    _put(root, "/etc/openmpi/openmpi-mca-params.conf", LATIN1, 0o644)
    owned = _put(root, "/etc/hpc/owned.conf", OWNED, 0o640, NOBODY)
    gone = _put(root, "/etc/hpc/gone.conf", b"removed, then restored\n", 0o600, NOBODY)
    os.makedirs(os.path.join(root, "var/lib"), 0o755)
    support = _xattr_support(owned)
    if support["user"] is None:
        os.setxattr(owned, "user.site", b"keep me")
    if support["acl"] is None:
        os.setxattr(owned, "system.posix_acl_access", ACL)
    if support["selinux"] is None:
        os.setxattr(gone, "security.selinux", LABEL)
    return {"root": root, "support": support}


TUNE = [
    {"module": "sysctl_tuning", "params": {"sysctls": {"vm.swappiness": 10}, "mode": "persist", "context": "host"}},
    {"module": "managed_files", "params": {"files": [
        {"path": "/etc/openmpi/openmpi-mca-params.conf", "content": "pml = ucx\r\n", "mode": "0644"},
        {"path": "/etc/hpc/owned.conf", "content": "keep = 2 # not-to-be-echoed\n", "mode": "0644"},
        {"path": "/etc/hpc/gone.conf", "state": "absent"},
        {"path": "/etc/ucx/ucx.conf", "content": "UCX_TLS=rc,sm\n", "mode": 420},
    ]}},
]


def test_apply_and_rollback_are_byte_owner_and_xattr_exact(fs):
    node = _node(fs)
    root, support = node["root"], node["support"]
    for kind, reason in support.items():   # a filesystem without them is named, never passed over
        assert reason in (None, "ENOTSUP", "EOPNOTSUPP"), (kind, reason)
    before, before_x = snapshot(root), _xattrs(root)
    out = os.path.join(fs, "out.json")

    status, results = forked(root, TUNE, out)
    assert status == 0 and [r["rc"] for r in results] == [0, 0], results
    tuned = snapshot(root)
    # replaced files keep owner, group, ACL and xattrs; they get the bytes and mode asked for
    assert tuned["etc/hpc/owned.conf"] == ("file", "0o100644", NOBODY, NOBODY, b"keep = 2 # not-to-be-echoed\n")
    assert tuned["etc/sysctl.d/90-hpcnet-rdma.conf"][1:4] == ("0o100644", NOBODY, NOBODY)
    assert tuned["etc/openmpi/openmpi-mca-params.conf"][4] == b"pml = ucx\r\n"
    assert tuned["etc/ucx/ucx.conf"][1] == "0o100644"                 # mode: 420 is the YAML of 0644
    assert "etc/hpc/gone.conf" not in tuned
    tuned_x = _xattrs(root).get("etc/hpc/owned.conf", {})
    assert tuned_x.get("user.site") == (b"keep me" if support["user"] is None else None)
    if support["acl"] is None:
        assert struct.unpack("<HHI", tuned_x["system.posix_acl_access"][12:20]) == (0x02, 6, NOBODY)
    # the journal holds what is needed to bring them back
    originals = dict((k, v["value"]) for k, v in read_journal(root)["originals"].items())
    assert originals["file:/etc/sysctl.d/90-hpcnet-rdma.conf"] == {
        "content": CRLF.decode(), "mode": "0640", "uid": NOBODY, "gid": NOBODY}
    assert originals["file:/etc/openmpi/openmpi-mca-params.conf"]["encoding"] == "base64"
    gone = originals["file:/etc/hpc/gone.conf"]
    assert (gone["uid"], gone["gid"], gone["mode"]) == (NOBODY, NOBODY, "0600")
    assert gone.get("selinux") == (LABEL.rstrip(b"\0").decode() if support["selinux"] is None else None)

    status, (done,) = forked(root, ROLLBACK, out)
    assert status == 0 and done["rc"] == 0 and done["unrestorable"] == [], done
    assert snapshot(root) == before
    assert _xattrs(root) == before_x


def test_directories_made_under_umask_077_are_0755(work):
    root = os.path.join(work, "node")
    os.makedirs(os.path.join(root, "var/lib"), 0o755)
    os.makedirs(os.path.join(root, "etc"), 0o755)
    before = snapshot(root)
    out = os.path.join(work, "out.json")
    steps = [{"module": "managed_files", "params": {"files": [
        {"path": "/etc/ucx/ucx.conf", "content": "UCX_TLS=rc,sm\n"},
        {"path": "/etc/openmpi/conf.d/site.conf", "content": "pml = ucx\n", "mode": "0640"}]}}]
    old = os.umask(0o077)
    try:
        status, (result,) = forked(root, steps, out)
    finally:
        os.umask(old)
    assert status == 0 and result["rc"] == 0, result
    now = snapshot(root)
    assert dict((k, now[k][1]) for k in ("etc/ucx", "etc/openmpi", "etc/openmpi/conf.d")) == {
        "etc/ucx": "0o40755", "etc/openmpi": "0o40755", "etc/openmpi/conf.d": "0o40755"}
    assert now["etc/ucx/ucx.conf"][1] == "0o100644" and now["etc/openmpi/conf.d/site.conf"][1] == "0o100640"
    status, (done,) = forked(root, ROLLBACK, out)
    assert status == 0 and done["rc"] == 0
    assert snapshot(root) == before


def test_file_content_is_never_echoed_in_a_result(work):
    root = os.path.join(work, "node")
    os.makedirs(os.path.join(root, "var/lib"), 0o755)
    _put(root, "/etc/nccl.conf", b"NCCL_OLD=original-bytes\n")
    out = os.path.join(work, "out.json")
    secret = "NCCL_IB_HCA=mlx5_0 # sekrit-value\n"
    steps = [{"module": "managed_files", "check_mode": check, "params": {"files": [
        {"path": "/etc/nccl.conf", "content": secret}]}} for check in (True, False)]
    status, results = forked(root, steps, out)
    assert status == 0 and [r["rc"] for r in results] == [0, 0], results
    assert all(r["changed"] for r in results)
    for r in results:
        assert "sekrit-value" not in json.dumps(r)                 # nowhere, the --diff included
        assert "original-bytes" not in json.dumps(dict((k, v) for k, v in r.items() if k != "diff"))
        assert r["current"]["file:/etc/nccl.conf"]["size"] == len(secret)
        # --diff (run_module asks for it) shows the file as it was; the new content is no_log
        assert [(d["before"], d["after"]) for d in r["diff"]] == [
            ("NCCL_OLD=original-bytes\n", "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER")]
    with open(os.path.join(root, "etc/nccl.conf")) as f:
        assert f.read() == secret
