# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Host's file I/O and the file/dir domains on a real temp filesystem: bytes in, the same bytes
out; owner, group, SELinux label and extended attributes kept and journaled; directories with
an explicit mode whatever the umask."""
from __future__ import annotations

import base64
import errno
import json
import os
import struct

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _files
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _journal
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _filestate
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._plan import Change, Plan

NOBODY = 65534
LABEL = "system_u:object_r:etc_t:s0"
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")


@pytest.fixture
def host(tmp_path):
    return Host(root=str(tmp_path))


def put(host, path, data, mode=0o644):
    full = host.p(path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "wb") as f:
        f.write(data)
    os.chmod(full, mode)
    return full


def raw(host, path):
    with open(host.p(path), "rb") as f:
        return f.read()


def acl(*entries):
    """A system.posix_acl_access value (version 2; tag, perm, id per entry, sorted by tag)."""
    undefined = 0xFFFFFFFF
    return struct.pack("<I", 2) + b"".join(
        struct.pack("<HHI", tag, perm, undefined if uid is None else uid) for tag, perm, uid in entries)


# user::rw- user:65534:rw- group::r-- mask::rw- other::r--
ACL = acl((0x01, 6, None), (0x02, 6, NOBODY), (0x04, 4, None), (0x10, 6, None), (0x20, 4, None))


# --------------------------------------------------------------------------- bytes
@pytest.mark.parametrize("data, state", [
    (b"a = 1\r\nb = 2\r\n", {"content": "a = 1\r\nb = 2\r\n"}),
    (b"no newline at the end", {"content": "no newline at the end"}),
    (b"\xef\xbb\xbfBOM and \xc3\xa9\n", {"content": "\ufeffBOM and \u00e9\n"}),
    (b"latin-1 \xe9t\xe9\n", {"content": base64.b64encode(b"latin-1 \xe9t\xe9\n").decode(), "encoding": "base64"}),
    (b"\x00\x01binary\xff", {"content": base64.b64encode(b"\x00\x01binary\xff").decode(), "encoding": "base64"}),
    (b"", {"content": ""}),
])
def test_bytes_round_trip_exactly(host, data, state):
    put(host, "/etc/x.conf", data, 0o640)
    read = host.file_state("/etc/x.conf")
    assert read == dict(state, mode="0640")
    json.loads(json.dumps(read))                       # what the journal stores
    os.unlink(host.p("/etc/x.conf"))
    host.write_file("/etc/x.conf", json.loads(json.dumps(read)))
    assert raw(host, "/etc/x.conf") == data
    assert host.file_state("/etc/x.conf") == read


def test_old_journal_text_states_still_write_their_bytes(host):
    # schema-1 journals stored text read with surrogateescape (no "encoding" field)
    host.write_file("/etc/old.conf", {"content": "caf\udce9\n", "mode": "0644"})
    assert raw(host, "/etc/old.conf") == b"caf\xe9\n"
    assert _files.same(host.file_state("/etc/old.conf"), {"content": "caf\udce9\n", "mode": "0644"})


def test_owned_is_canonical_and_text_decodes_either_form():
    assert _files.owned("x\r\n") == {"content": "x\r\n", "mode": "0644"}
    assert _files.owned(b"\xff\n", "0600") == {"content": "/wo=", "encoding": "base64", "mode": "0600"}
    assert _files.text({"content": "/wo=", "encoding": "base64"}) == "\udcff\n"
    assert _files.text(None) is None
    with pytest.raises(HostError, match="unknown content encoding 'rot13'"):
        _files.content_bytes({"content": "x", "encoding": "rot13"})


# --------------------------------------------------------------------------- owner, label, xattrs
@ROOT_ONLY
def test_owner_is_journaled_kept_on_replace_and_restored(host):
    full = put(host, "/etc/hpc/site.conf", b"old\r\n", 0o640)
    os.chown(full, NOBODY, NOBODY)
    before = host.file_state("/etc/hpc/site.conf")
    assert before == {"content": "old\r\n", "mode": "0640", "uid": NOBODY, "gid": NOBODY}
    # a planner's after names content and mode only: the replaced file keeps its owner (atomic_move)
    plan = _files.keep_attributes(Plan([Change("file:/etc/hpc/site.conf", before, _files.owned("new\n"))]))
    after = plan.changes[0].after
    assert after == {"content": "new\n", "mode": "0644", "uid": NOBODY, "gid": NOBODY}
    host.write_file("/etc/hpc/site.conf", after)
    st = os.stat(full)
    assert (st.st_uid, st.st_gid, oct(st.st_mode & 0o7777)) == (NOBODY, NOBODY, "0o644")
    # the original comes back with its owner even after the file was removed in between
    os.unlink(full)
    host.write_file("/etc/hpc/site.conf", before)
    st = os.stat(full)
    assert (st.st_uid, st.st_gid, oct(st.st_mode & 0o7777)) == (NOBODY, NOBODY, "0o640")
    assert raw(host, "/etc/hpc/site.conf") == b"old\r\n"


@ROOT_ONLY
def test_state_without_owner_means_the_running_user(host):
    full = put(host, "/etc/x.conf", b"x\n")
    os.chown(full, NOBODY, NOBODY)
    host.write_file("/etc/x.conf", {"content": "x\n", "mode": "0644"})   # e.g. a root-owned original
    st = os.stat(full)
    assert (st.st_uid, st.st_gid) == (os.geteuid(), os.getegid())
    assert host.file_state("/etc/x.conf") == {"content": "x\n", "mode": "0644"}


def test_a_content_and_mode_match_with_the_same_owner_is_no_change(host):
    put(host, "/etc/x.conf", b"x\n")
    before = host.file_state("/etc/x.conf")
    assert not _files.keep_attributes(Plan([Change("file:/etc/x.conf", before, _files.owned("x\n"))]))


@pytest.mark.parametrize("field, value, message", [
    ("uid", "0", "uid '0' is not a user id"),
    ("gid", True, "gid True is not a group id"),
    ("uid", -1, "uid -1 is not a user id"),
    ("selinux", 5, "selinux 5 is not an SELinux label"),
    ("selinux", "a\nb", "is not an SELinux label"),
])
def test_bad_owner_fields_are_refused_before_writing(host, field, value, message):
    with pytest.raises(HostError, match=message):
        host.write_file("/etc/x.conf", {"content": "x", "mode": "0644", field: value})
    assert not os.path.exists(host.p("/etc"))      # not even the parent directory was made


def _xattrs_supported(path):
    """None when user.* xattrs and POSIX ACLs work on ``path``'s filesystem, else the errno name."""
    try:
        os.setxattr(path, "user.hpcnet-probe", b"1")
        os.removexattr(path, "user.hpcnet-probe")
        os.setxattr(path, "system.posix_acl_access", ACL)
        os.removexattr(path, "system.posix_acl_access")
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
    return None


def test_xattrs_and_acl_are_carried_across_a_replace(host):
    full = put(host, "/etc/x.conf", b"old\n", 0o660)
    unsupported = _xattrs_supported(full)
    if unsupported:   # nothing to carry on such a filesystem: say which errno, never pass silently
        assert unsupported in ("ENOTSUP", "EOPNOTSUPP")
        assert host.file_state("/etc/x.conf") == {"content": "old\n", "mode": "0660"}
        return
    os.setxattr(full, "user.site", b"keep me")
    os.setxattr(full, "system.posix_acl_access", ACL)
    before = host.file_state("/etc/x.conf")
    assert before == {"content": "old\n", "mode": "0664"}      # the ACL's mask shows as the group bits
    host.write_file("/etc/x.conf", {"content": "new\n", "mode": "0640"})
    assert os.getxattr(full, "user.site") == b"keep me"
    assert oct(os.stat(full).st_mode & 0o777) == "0o640"        # the mode asked for; the mask follows it
    carried = os.getxattr(full, "system.posix_acl_access")
    assert struct.unpack("<HHI", carried[12:20]) == (0x02, 6, NOBODY)   # the named user entry survived
    host.write_file("/etc/x.conf", before)                      # rollback
    assert os.getxattr(full, "system.posix_acl_access") == ACL and os.getxattr(full, "user.site") == b"keep me"


@ROOT_ONLY
def test_selinux_label_is_journaled_and_restored(host):
    full = put(host, "/etc/x.conf", b"old\n")
    try:
        os.setxattr(full, "security.selinux", LABEL.encode() + b"\0")
    except OSError as e:
        # a kernel whose LSM refuses this label: the error must be the LSM's, not ours
        assert e.errno in (errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EACCES, errno.EPERM)
        return
    before = host.file_state("/etc/x.conf")
    assert before == {"content": "old\n", "mode": "0644", "selinux": LABEL}
    os.unlink(full)
    host.write_file("/etc/x.conf", before)
    assert os.getxattr(full, "security.selinux").rstrip(b"\0") == LABEL.encode()
    assert _files.same(host.file_state("/etc/x.conf"), before)
    # a wanted state without a label does not care which label the policy gave the file
    assert _files.same(host.file_state("/etc/x.conf"), {"content": "old\n", "mode": "0644"})


# --------------------------------------------------------------------------- directories and umask
def test_directories_get_an_explicit_mode_whatever_the_umask(host):
    old = os.umask(0o077)
    try:
        host.mkdir("/etc")
        host.mkdir("/etc/ucx")
        host.mkdir("/etc/private", 0o700)
        host.write_file("/etc/deep/er/x.conf", {"content": "x\n", "mode": "0644"})
    finally:
        os.umask(old)
    modes = dict((p, oct(os.stat(host.p(p)).st_mode & 0o7777))
                 for p in ("/etc/ucx", "/etc/private", "/etc/deep", "/etc/deep/er", "/etc/deep/er/x.conf"))
    assert modes == {"/etc/ucx": "0o755", "/etc/private": "0o700", "/etc/deep": "0o755",
                     "/etc/deep/er": "0o755", "/etc/deep/er/x.conf": "0o644"}


def test_mkdir_leaves_an_existing_directory_alone(host):
    os.makedirs(host.p("/etc/ucx"), mode=0o750)
    os.chmod(host.p("/etc/ucx"), 0o750)
    host.mkdir("/etc/ucx")
    assert oct(os.stat(host.p("/etc/ucx")).st_mode & 0o777) == "0o750"


# --------------------------------------------------------------------------- journal
def test_new_file_fields_pass_the_journal_validation(host, tmp_path):
    put(host, "/etc/bin.conf", b"\xff\r\n", 0o600)
    state = host.file_state("/etc/bin.conf")
    state.update(uid=NOBODY, gid=NOBODY, selinux=LABEL)
    jdir = tmp_path / "journal"
    j = _journal.Journal(Host(root="/"), str(jdir))
    j.load()
    j.begin("managed_files", Plan([Change("file:/etc/bin.conf", state, _files.owned("x\n"))]))
    again = _journal.Journal(Host(root="/"), str(jdir))
    assert again.original("file:/etc/bin.conf") == state


# --------------------------------------------------------------------------- same()
@pytest.mark.parametrize("actual, wanted, result", [
    ({"content": "x", "mode": "0644"}, {"content": "x", "mode": "0644", "notify": "u"}, True),
    ({"content": "eA==", "encoding": "base64", "mode": "0644"}, {"content": "x", "mode": "0644"}, True),
    ({"content": "x", "mode": "0644", "uid": 5}, {"content": "x", "mode": "0644"}, False),
    ({"content": "x", "mode": "0644"}, {"content": "x", "mode": "0644", "gid": 5}, False),
    ({"content": "x", "mode": "0644", "selinux": LABEL}, {"content": "x", "mode": "0644"}, True),
    ({"content": "x", "mode": "0644", "selinux": LABEL}, {"content": "x", "mode": "0644", "selinux": "u:r:t:s0"}, False),
    ({"content": "x\r\n", "mode": "0644"}, {"content": "x\n", "mode": "0644"}, False),
    (None, {"absent": True, "notify": "u"}, True),
    ({"link": "/a"}, {"link": "/a"}, True),
    ({"link": "/a"}, {"content": "", "mode": "0644"}, False),
])
def test_same(actual, wanted, result):
    assert _files.same(actual, wanted) is result


def test_planners_reading_an_earlier_file_see_its_text_whatever_the_encoding():
    from ansible_collections.hpcnet.rdma.plugins.module_utils.irq import _plan as _irqplan
    latin1 = _files.owned(b"# \xe9t\xe9\nmlx5_comp0\n")
    assert latin1["encoding"] == "base64"
    assert _irqplan.merged_banned(latin1, ["mlx5_comp1"]) == ["mlx5_comp0", "mlx5_comp1"]
    assert _irqplan.irqbalance_defaults(_irqplan._content(latin1)).startswith("# \udce9t\udce9\n")


def test_a_diff_shows_the_text_of_a_file_that_is_not_utf8():
    from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._plan import render_diff
    diff = render_diff(Plan([Change("file:/etc/x.conf", _files.owned(b"caf\xe9\n"), _files.owned("caf\u00e9\n"))]))
    assert (diff[0]["before"], diff[0]["after"]) == ("caf\ufffd\n", "caf\u00e9\n")


# ---------------------------------------------------------------------- issue 30: the trust rule on the way
@ROOT_ONLY
@pytest.mark.parametrize("op", ["read", "write", "remove", "mkdir", "rmdir"])
def test_every_file_operation_refuses_a_link_another_user_planted(host, tmp_path, op):
    victim = tmp_path / "victim"
    victim.mkdir(mode=0o700)
    (victim / "f").write_text("root's\n")
    (victim / "d").mkdir()
    (tmp_path / "etc").mkdir()
    os.symlink(str(victim), str(tmp_path / "etc" / "ucx"))
    os.lchown(str(tmp_path / "etc" / "ucx"), NOBODY, NOBODY)
    calls = {"read": lambda: host.file_state("/etc/ucx/f"), "write": lambda: host.write_file("/etc/ucx/f", _files.owned("x\n")),
             "remove": lambda: host.write_file("/etc/ucx/f", None), "mkdir": lambda: host.mkdir("/etc/ucx/new"),
             "rmdir": lambda: host.rmdir("/etc/ucx/d")}
    with pytest.raises(HostError) as e:
        calls[op]()
    assert "symbolic link %s/etc/ucx is owned by uid 65534, not by root" % tmp_path in str(e.value)
    assert sorted(os.listdir(str(victim))) == ["d", "f"] and (victim / "f").read_text() == "root's\n"


@ROOT_ONLY
def test_a_directory_of_the_files_own_owner_is_trusted_for_that_file_only(host, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    os.chown(str(home), NOBODY, NOBODY)
    (home / "own.conf").write_text("nobody's\n")
    os.chown(str(home / "own.conf"), NOBODY, NOBODY)
    state = host.file_state("/home/own.conf")
    assert state["uid"] == NOBODY
    host.write_file("/home/own.conf", dict(_files.owned("new\n"), uid=NOBODY, gid=NOBODY))
    assert (home / "own.conf").read_text() == "new\n"
    with pytest.raises(HostError) as e:     # a file of root's there: nobody could have pointed it anywhere
        host.write_file("/home/roots.conf", _files.owned("x\n"))
    assert "home is owned by uid 65534, not by root" in str(e.value)
    with pytest.raises(HostError):          # nor planned: a file created there would be root's
        host.file_state("/home/absent.conf")


@pytest.mark.parametrize("current, written, edited", [
    (_files.owned("a\n"), _files.owned("a\n"), False),                         # as the tune left it
    (_files.owned("a\n", "0600"), _files.owned("a\n"), False),                 # a chmod is no edit of its bytes
    (_files.owned("a\nb\n"), _files.owned("a\n"), True),                       # a hand edit
    (_files.owned("made\n"), None, True),                                      # made where the tune removed one
    (None, _files.owned("a\n"), False),                                        # removed by hand: nothing to keep
    ({"link": "/x"}, _files.owned("a\n"), False),                              # a link holds no bytes to keep
    (_files.with_notify(_files.owned("b\n"), "u.service"), _files.with_notify(_files.owned("a\n"), "u.service"), True),
])
def test_edited_compares_the_bytes_with_what_the_tune_wrote(current, written, edited):
    assert _files.edited(current, written) is edited


def _one_by_one(host, paths):
    out = {}
    for path in paths:
        try:
            out[path] = host.file_state(path)
        except HostError as e:
            out[path] = e
    return out


def _shown(states):
    return dict((p, ("error", type(v).__name__, str(v)) if isinstance(v, Exception) else v) for p, v in states.items())


@ROOT_ONLY
def test_file_states_reads_each_directory_once_and_equals_file_state_of_each(host, tmp_path, monkeypatch):
    """The health check and status read every journaled file at once (Host.file_states, the file domain's
    read_values): each parent directory is walked under the trust rule once for all of its files, and every
    state - or error - is what file_state gives for that path alone: regular files, a non-UTF-8 file, a link,
    absent files and directories, a directory where a file is expected, a file where a directory is, another
    user's link on the way, a directory of the file's own owner (trusted for that owner's file only)."""
    put(host, "/etc/a.conf", b"a\n")
    put(host, "/etc/b.conf", b"\xff\xfe binary", 0o600)
    os.symlink("a.conf", host.p("/etc/link.conf"))
    os.makedirs(host.p("/etc/dir.conf"))
    put(host, "/etc/sub/c.conf", b"c\n")
    put(host, "/usr/lib/x/m.py", b"m\n")
    victim = tmp_path / "victim"
    victim.mkdir(mode=0o700)
    (victim / "f").write_text("root's\n")
    os.symlink(str(victim), host.p("/etc/ucx"))
    os.lchown(host.p("/etc/ucx"), NOBODY, NOBODY)
    home = tmp_path / "home"
    home.mkdir()
    os.chown(str(home), NOBODY, NOBODY)
    (home / "own.conf").write_text("nobody's\n")
    os.chown(str(home / "own.conf"), NOBODY, NOBODY)
    (home / "roots.conf").write_text("root's\n")
    paths = ["/etc/a.conf", "/etc/b.conf", "/etc/link.conf", "/etc/dir.conf", "/etc/absent.conf", "/etc/sub/c.conf",
             "/etc/nodir/x.conf", "/etc/a.conf/x", "/usr/lib/x/m.py", "/etc/ucx/f", "/etc/ucx/absent",
             "/home/own.conf", "/home/roots.conf", "/home/absent.conf"]
    alone = _one_by_one(host, paths)
    opened = []
    real_open_dir = _filestate.open_dir
    monkeypatch.setattr(_filestate, "open_dir", lambda parent, **kw: opened.append(parent) or real_open_dir(parent, **kw))
    together = host.file_states(paths)
    assert _shown(together) == _shown(alone)
    assert sorted(opened) == sorted(set(opened)) and len(opened) == 7          # /etc, /etc/sub, /etc/nodir, ...
    checked = []                                    # the health check's budget ends the read before a directory
    host.on_checkpoint = lambda: checked.append(len(opened))
    del opened[:]
    host.file_states(paths)
    assert checked == list(range(7))
    host.on_checkpoint = lambda: opened and _raise(KeyError("spent"))
    del opened[:]
    with pytest.raises(KeyError):
        host.file_states(paths)
    assert len(opened) == 1
    host.on_checkpoint = None
    assert _files.read_values(host, paths[:2]) == dict((p, alone[p]) for p in paths[:2])
    assert isinstance(alone["/etc/ucx/f"], HostError) and "owned by uid 65534" in str(alone["/etc/ucx/f"])
    assert alone["/home/own.conf"]["uid"] == NOBODY and isinstance(alone["/home/roots.conf"], HostError)


def _raise(error):
    raise error
