# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A file's state as the journal stores it (:data:`FileState`) and the byte-level work under
:meth:`_host.Host.file_state` and :meth:`_host.Host.write_file`: the content's two encodings, the
checks of a state before anything is written, extended attributes (the SELinux label, ACLs) and the
atomic replacement of a regular file (temp file, fsync, rename) in an open directory."""
from __future__ import annotations

import base64
import binascii
import errno
import os
import posixpath
import stat

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError, os_reason
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._trust import UntrustedPath, check_foreign, open_dir, open_parent, untrusted
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import lazy_re

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Callable, Dict, List, Optional, Tuple

# A file's state as the journal stores it: None means "absent"; a symbolic link is {"link": TARGET};
# a regular file is {"content": TEXT, "mode": "0644"} plus, when they apply:
#   "encoding": "base64"  the bytes are not valid UTF-8, so TEXT is their base64 (otherwise TEXT is
#                         the bytes decoded; journals before this field held text read with
#                         surrogateescape, which still encodes back to the same bytes)
#   "uid", "gid"          the owner, when it is not the user the module runs as (a state without
#                         them is a file of that user, as a file the module creates is)
#   "selinux"             the SELinux label (xattr security.selinux), when the file has one
if TYPE_CHECKING:
    FileState = Optional[Dict[str, Any]]

BASE64 = "base64"
SELINUX_XATTR = "security.selinux"
DIR_MODE = 0o755
_FILE_MODE = lazy_re(r"^0?[0-7]{3,4}$")
_LABEL = lazy_re(r"^[^\x00-\x20\x7f]+$")
_NO_XATTRS = (errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENODATA)


# ---------------------------------------------------------------------- file contents and attributes
def encode_content(data: bytes) -> Dict[str, str]:
    """The journal's form of a file's bytes: text when they are valid UTF-8, else base64."""
    try:
        return {"content": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"content": base64.b64encode(data).decode("ascii"), "encoding": BASE64}


def content_bytes(state: Dict[str, Any]) -> bytes:
    """The bytes a file state holds (either form of :func:`encode_content`)."""
    content, encoding = state.get("content", ""), state.get("encoding")
    if not isinstance(content, str):
        raise HostError("file content must be text, not %s" % type(content).__name__)
    if encoding is None:
        try:
            return content.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError as e:
            raise HostError("file content is not encodable: %s" % e)
    if encoding != BASE64:
        raise HostError("unknown content encoding %r (known: %s)" % (encoding, BASE64))
    try:
        return base64.b64decode(content.encode("ascii"), validate=True)
    except (ValueError, binascii.Error) as e:
        raise HostError("file content is not valid base64: %s" % e)


def _id(state: Dict[str, Any], field: str, what: str) -> Optional[int]:
    value = state.get(field)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 0xFFFFFFFF:
        raise HostError("%s %r is not a %s id" % (field, value, what))
    return value


def _regular_spec(path: str, state: Dict[str, Any]) -> Dict[str, Any]:
    """What to write for a regular file's state, every field checked before anything is written."""
    mode = state.get("mode", "0644")
    if not isinstance(mode, str) or not _FILE_MODE.match(mode):
        raise HostError("cannot write %s: mode %r is not an octal mode" % (path, mode))
    label = state.get("selinux")
    if label is not None and not (isinstance(label, str) and _LABEL.match(label)):
        raise HostError("cannot write %s: selinux %r is not an SELinux label" % (path, label))
    try:
        uid, gid = _id(state, "uid", "user"), _id(state, "gid", "group")
        data = content_bytes(state)
    except HostError as e:
        raise HostError("cannot write %s: %s" % (path, e))
    return {"data": data, "mode": int(mode, 8), "label": label,
            "uid": os.geteuid() if uid is None else uid, "gid": os.getegid() if gid is None else gid}


def _read_all(fd: int) -> bytes:
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _label_of(fd: int) -> Optional[str]:
    """The SELinux label of an open file, None when it has none (or the filesystem has no xattrs)."""
    try:
        raw = os.getxattr(fd, SELINUX_XATTR)
    except OSError as e:
        if e.errno in _NO_XATTRS:
            return None
        raise
    return raw.rstrip(b"\0").decode("utf-8", "surrogateescape") or None


def _carry_xattrs(path: str, old: int, fd: int) -> None:
    """Copy every extended attribute of the open file ``old`` (ACLs, label, user.*) to ``fd``."""
    try:
        names = os.listxattr(old)
    except OSError as e:
        if e.errno in _NO_XATTRS:
            return
        raise HostError("cannot list the extended attributes of %s: %s" % (path, e.strerror or e))
    for name in names:
        try:
            os.setxattr(fd, name, os.getxattr(old, name))
        except OSError as e:
            if e.errno == errno.ENODATA:   # removed meanwhile
                continue
            raise HostError("cannot carry extended attribute %s of %s over to its replacement: %s"
                            % (name, path, e.strerror or e))


_FILE_FLAGS = os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def _temp_in(dfd: int, prefix: str) -> Tuple[int, str]:
    """A new file ``PREFIX<random>`` (mode 0600, O_EXCL, never through a link) in the open directory."""
    while True:
        name = prefix + binascii.hexlify(os.urandom(6)).decode("ascii")
        try:
            return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _FILE_FLAGS, 0o600, dir_fd=dfd), name
        except FileExistsError:
            continue


def _replace_regular(path: str, dfd: int, name: str, wanted: Dict[str, Any]) -> None:
    """Write a temp file next to ``name`` (in the open directory ``dfd``) with everything ``wanted``
    says, then rename it over."""
    old: Optional[int] = None
    try:
        if stat.S_ISREG(os.stat(name, dir_fd=dfd, follow_symlinks=False).st_mode):
            old = os.open(name, os.O_RDONLY | _FILE_FLAGS, dir_fd=dfd)
    except FileNotFoundError:
        old = None
    fd, tmp = _temp_in(dfd, ".hpcnet-")
    try:
        try:
            write_all(fd, wanted["data"])
            st = os.fstat(fd)
            if (st.st_uid, st.st_gid) != (wanted["uid"], wanted["gid"]):
                os.fchown(fd, wanted["uid"], wanted["gid"])   # before the xattrs: chown drops capabilities
            if old is not None:
                _carry_xattrs(path, old, fd)
            if wanted["label"] is not None:
                try:
                    os.setxattr(fd, SELINUX_XATTR, wanted["label"].encode("utf-8", "surrogateescape") + b"\0")
                except OSError as e:
                    raise HostError("cannot set SELinux label %s on %s: %s" % (wanted["label"], path, e.strerror or e))
            os.fchmod(fd, wanted["mode"])   # last: carrying an ACL rewrites the mode bits
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dfd)
        except OSError:
            pass
        raise
    finally:
        if old is not None:
            os.close(old)


# ---------------------------------------------------------------------- a file's state, read and written
# ``real`` is where the node path ``path`` is under the host's root (:meth:`_host.Host.p`); messages name ``path``.
def read_state(real: str, path: str) -> FileState:
    """The state of the file at ``real`` (see :meth:`_host.Host.file_state`)."""
    state = read_states([(real, path)])[path]
    if isinstance(state, HostError):
        raise state
    return state


def read_states(files: List[Tuple[str, str]], checkpoint: Optional[Callable[[], None]] = None) -> Dict[str, Any]:
    """``{path: state}`` of each ``(real, path)``, a ``HostError`` in place of a state that could not be read:
    :func:`read_state` of each, with each parent directory reached (under the trust rule) once for all of its
    files - a node's journaled files share few directories (the health check reads 79 in 9: the walk from /
    was a fifth of its drift stage on a lab VM under TCG).  ``checkpoint`` is called before each directory
    (what it raises ends the read)."""
    by_parent: Dict[str, List[Tuple[str, str]]] = {}
    for real, path in files:
        parent, name = posixpath.split(real)
        by_parent.setdefault(parent, []).append((name, path))
    out: Dict[str, Any] = {}
    for parent, names in by_parent.items():
        if checkpoint is not None:
            checkpoint()
        foreign: List[Tuple[int, str]] = []
        try:
            dfd = open_dir(parent, foreign=foreign)
        except FileNotFoundError:
            dfd = None
        except UntrustedPath as e:
            out.update((path, untrusted(path, "read", str(e))) for _name, path in names)
            continue
        except OSError as e:
            out.update((path, HostError("cannot stat %s: %s" % (path, e.strerror or e))) for _name, path in names)
            continue
        try:
            for name, path in names:
                try:
                    out[path] = _state_in(dfd, name, path, foreign)
                except HostError as e:
                    out[path] = e
        finally:
            if dfd is not None:
                os.close(dfd)
    return out


def _state_in(dfd: Optional[int], name: str, path: str, foreign: List[Tuple[int, str]]) -> FileState:
    """The state of ``name`` in the open directory ``dfd`` (None: the directory does not exist)."""
    if not name:
        raise HostError("%s is not a file path" % path)
    if dfd is None:
        check_foreign(path, "read", foreign, None)
        return None
    try:
        st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        check_foreign(path, "read", foreign, None)
        return None
    except OSError as e:
        raise HostError("cannot stat %s: %s" % (path, e.strerror or e))
    check_foreign(path, "read", foreign, st.st_uid)
    if stat.S_ISLNK(st.st_mode):
        return {"link": os.readlink(name, dir_fd=dfd)}
    if not stat.S_ISREG(st.st_mode):
        raise HostError("%s exists and is not a regular file" % path)
    try:
        fd = os.open(name, os.O_RDONLY | _FILE_FLAGS, dir_fd=dfd)
    except OSError as e:
        raise HostError("cannot read %s: %s" % (path, e.strerror or e))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise HostError("%s exists and is not a regular file" % path)
        state = encode_content(_read_all(fd))
        label = _label_of(fd)
    except OSError as e:
        raise HostError("cannot read %s: %s" % (path, e.strerror or e))
    finally:
        os.close(fd)
    state["mode"] = "%04o" % stat.S_IMODE(st.st_mode)
    if st.st_uid != os.geteuid():
        state["uid"] = st.st_uid
    if st.st_gid != os.getegid():
        state["gid"] = st.st_gid
    if label is not None:
        state["selinux"] = label
    return state


def write_state(real: str, path: str, state: FileState) -> None:
    """Bring the file at ``real`` to ``state`` (see :meth:`_host.Host.write_file`)."""
    if state is None:
        _remove(real, path)
        return
    wanted = None if "link" in state else _regular_spec(path, state)
    owner = wanted["uid"] if wanted is not None else None
    try:
        dfd, name = open_parent(real, path, "write", owner=owner, create=DIR_MODE)
        try:
            if wanted is None:
                tmp = name + ".hpcnet-tmp"
                try:
                    os.unlink(tmp, dir_fd=dfd)
                except FileNotFoundError:
                    pass
                os.symlink(state["link"], tmp, dir_fd=dfd)
                os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
            else:
                _replace_regular(path, dfd, name, wanted)
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError as e:
        raise HostError("cannot write %s: %s" % (path, os_reason(e)))


def _remove(real: str, path: str) -> None:
    foreign: List[Tuple[int, str]] = []
    try:
        dfd, name = open_parent(real, path, "remove", foreign=foreign)
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as e:
        raise HostError("cannot remove %s: %s" % (path, e.strerror or e))
    try:
        try:
            st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        except FileNotFoundError:
            return
        check_foreign(path, "remove", foreign, st.st_uid)
        os.unlink(name, dir_fd=dfd)
        os.fsync(dfd)
    except OSError as e:
        raise HostError("cannot remove %s: %s" % (path, e.strerror or e))
    finally:
        os.close(dfd)
