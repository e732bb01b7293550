# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every read and write of the node goes through :class:`Host`.

Paths are always given as absolute node paths (``/proc/sys/...``, ``/etc/...``) and resolved
under ``root``, so unit tests run against a fake tree.  Commands are argv lists only, run with
``LC_ALL=C`` through an injected runner (``AnsibleModule.run_command`` in modules).

Host knows no tool: each tool's argv formats and parsers live in a file of their own
(``_ethtool``, ``_iproute``, ``_dcb``, ``_mlnx_qos``, ``_ibtools`` ...), run through
:meth:`Host.run` by :class:`_runner.Tool`.
"""
from __future__ import annotations

import base64
import binascii
import errno
import fcntl
import json
import os
import posixpath
import re
import stat
import tempfile
import time
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import is_not_supported

Runner = Callable[[List[str]], Tuple[int, str, str]]
BinPath = Callable[[str], Optional[str]]

# A file's state as the journal stores it: None means "absent"; a symbolic link is {"link": TARGET};
# a regular file is {"content": TEXT, "mode": "0644"} plus, when they apply:
#   "encoding": "base64"  the bytes are not valid UTF-8, so TEXT is their base64 (otherwise TEXT is
#                         the bytes decoded; journals before this field held text read with
#                         surrogateescape, which still encodes back to the same bytes)
#   "uid", "gid"          the owner, when it is not the user the module runs as (a state without
#                         them is a file of that user, as a file the module creates is)
#   "selinux"             the SELinux label (xattr security.selinux), when the file has one
FileState = Optional[Dict[str, Any]]

BASE64 = "base64"
SELINUX_XATTR = "security.selinux"
DIR_MODE = 0o755
_FILE_MODE = re.compile(r"^0?[0-7]{3,4}$")
_LABEL = re.compile(r"^[^\x00-\x20\x7f]+$")
_NO_XATTRS = (errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENODATA)


class HostError(Exception):
    """A node operation failed; the message names the path or command.  ``errno``: the OS error
    behind it, when there is one (a domain words a refusal of the kernel from it)."""

    errno: Optional[int] = None


class NotSupported(HostError):
    """The driver does not implement the operation (ethtool: Operation not supported)."""


def os_reason(e: OSError) -> str:
    """The words for an OS error in a message that already names the path: its text, and for a full
    disk (or quota) what that means."""
    text = e.strerror or str(e)
    if e.errno == errno.ENOSPC:
        return "%s - the filesystem holding it is full; free space there and run again" % text
    if e.errno == errno.EDQUOT:
        return "%s - the disk quota there is used up; free space there and run again" % text
    return text


def command_error(argv: List[str], rc: int, msg: str, unsupported: bool) -> HostError:
    """The error of a failed command, naming its argv: NotSupported when the tool said so."""
    if unsupported:
        return NotSupported("%s: %s" % (" ".join(argv), msg))
    return HostError("%s failed (rc=%d): %s" % (" ".join(argv), rc, msg))


def module_runner(module: Any) -> Runner:
    """Adapt ``AnsibleModule.run_command`` to the argv-only runner signature."""

    def run(argv: List[str]) -> Tuple[int, str, str]:
        rc, out, err = module.run_command(
            argv, check_rc=False, environ_update={"LC_ALL": "C", "LANG": "C"}
        )
        return rc, out, err

    return run


def module_bin_path(module: Any) -> BinPath:
    def find(name: str) -> Optional[str]:
        return module.get_bin_path(name, required=False, opt_dirs=["/sbin", "/usr/sbin", "/usr/local/sbin"])

    return find


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


def _write_all(fd: int, data: bytes) -> None:
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
            _write_all(fd, wanted["data"])
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


def _set_dir_mode(full: str, mode: int, dir_fd: Optional[int] = None) -> None:
    """chmod a directory just made (the umask narrowed it), never through a symbolic link."""
    fd = os.open(full, _DIR_FLAGS, dir_fd=dir_fd)
    try:
        if stat.S_IMODE(os.fstat(fd).st_mode) != mode:
            os.fchmod(fd, mode)
    finally:
        os.close(fd)


# ---------------------------------------------------------------------- trust of the directories written through
# One rule for every directory the collection writes through as root - the journal's and every managed
# file's: whoever can change a directory on the way (or a symbolic link in it) can point the write
# anywhere.  So each directory must be owned by root (the running user) - or by the owner the file is
# meant to have - and not be writable by group or others; a directory above may be world-writable with
# the sticky bit (/tmp: nobody else can rename or replace an entry of ours there); a symbolic link on the
# way must belong to root (or that owner) too, and the directories its target passes are checked alike.
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
MAX_LINKS = 40


class UntrustedPath(HostError):
    """A directory (or symbolic link) on the way to a path is not one only root can change."""


def trusted_owner(uid: int, owner: Optional[int] = None) -> bool:
    return uid in (0, os.geteuid()) or (owner is not None and uid == owner)


def _not_by(owner: Optional[int]) -> str:
    return "root" if owner is None or trusted_owner(owner) else "root or uid %d (the file's owner)" % owner


def dir_problem(path: str, st: os.stat_result, last: bool, owner: Optional[int] = None) -> Optional[str]:
    """Why the directory ``path`` (its ``st``) cannot be trusted, or None; ``last``: the directory
    itself is what is written (no sticky-bit exception)."""
    if not trusted_owner(st.st_uid, owner):
        return "%s is owned by uid %d, not by %s" % (path, st.st_uid, _not_by(owner))
    writable = st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    if writable and (last or not st.st_mode & stat.S_ISVTX):
        return "%s is writable by group or others (mode %04o)%s" % (
            path, stat.S_IMODE(st.st_mode), "" if last else " without the sticky bit")
    return None


def _link_problem(path: str, st: os.stat_result, owner: Optional[int]) -> Optional[str]:
    if not trusted_owner(st.st_uid, owner):
        return "symbolic link %s is owned by uid %d, not by %s" % (path, st.st_uid, _not_by(owner))
    return None


def path_trust_problem(path: str, strict_last: bool = True, owner: Optional[int] = None) -> Optional[str]:
    """Why the directory ``path`` (a real path, absolute) cannot be trusted, or None: every component
    as the kernel walks it, symbolic links included (see above).  The part of the path that does not
    exist yet is fine: whoever creates it makes it theirs, and it is checked again once it exists.
    A check without opening anything (check mode, and before the journal directory is created);
    writes walk with :func:`open_dir`."""
    todo = list(reversed([c for c in path.split("/") if c]))
    cur = "/"
    problem = dir_problem("/", os.lstat("/"), last=strict_last and not todo, owner=owner)
    links = 0
    while todo and problem is None:
        name = todo.pop()
        if name == ".":
            continue
        if name == "..":
            cur = posixpath.dirname(cur)
            continue
        nxt = posixpath.join(cur, name)
        try:
            st = os.lstat(nxt)
        except OSError as e:
            if e.errno in (errno.ENOENT, errno.ENOTDIR, errno.ENAMETOOLONG):
                return None   # cannot exist yet: creating it fails (or makes it ours), checked again then
            return "cannot inspect %s: %s" % (nxt, e.strerror or e)
        if stat.S_ISLNK(st.st_mode):
            links += 1
            problem = _link_problem(nxt, st, owner)
            if problem:
                return problem
            if links > MAX_LINKS:
                return "too many symbolic links in %s" % path
            target = os.readlink(nxt)
            if target.startswith("/"):
                cur = "/"
            todo.extend(reversed([c for c in target.split("/") if c]))
            continue
        if not stat.S_ISDIR(st.st_mode):
            return "%s is not a directory" % nxt
        problem = dir_problem(nxt, st, last=strict_last and not todo, owner=owner)
        cur = nxt
    return problem


def open_dir(path: str, owner: Optional[int] = None, create: Optional[int] = None,
             foreign: Optional[List[Tuple[int, str]]] = None, strict_last: bool = False) -> int:
    """An open descriptor of the directory ``path`` (a real absolute path), reached from ``/`` one
    component at a time, each opened relative to the one before with ``O_NOFOLLOW`` and checked on
    the descriptor itself (so nothing can be swapped in between), symbolic links on the way checked and
    followed by hand.  UntrustedPath when a component breaks the rule above.

    ``owner``: the owner the file written there is meant to have (its directories may be that user's).
    ``foreign``: when given, components whose only fault is their owner are appended to it as
    ``(uid, reason)`` instead of failing, for a reader who learns the file's owner only at the end.
    ``create``: make missing directories with exactly this mode; otherwise a missing component raises
    FileNotFoundError, and one that is not a directory NotADirectoryError.
    """
    def problem_or_foreign(problem: Optional[str], uid: int) -> None:
        if problem is None:
            return
        if foreign is not None and not trusted_owner(uid):
            foreign.append((uid, problem))
            return
        raise UntrustedPath(problem)

    todo = list(reversed([c for c in path.split("/") if c]))
    root = os.open("/", _DIR_FLAGS)
    stack: List[Tuple[int, str]] = [(root, "/")]
    try:
        problem = dir_problem("/", os.fstat(root), last=strict_last and not todo, owner=owner)
        if problem:
            raise UntrustedPath(problem)
        links, retries = 0, 0
        while todo:
            name = todo.pop()
            fd, cur = stack[-1]
            if name == ".":
                continue
            if name == "..":
                if len(stack) > 1:
                    os.close(stack.pop()[0])
                continue
            nxt = posixpath.join(cur, name)
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                if create is None:
                    raise
                try:
                    os.mkdir(name, create, dir_fd=fd)
                    _set_dir_mode(name, create, dir_fd=fd)   # whatever the umask
                except FileExistsError:
                    pass
                todo.append(name)   # look at what is there now
                continue
            if stat.S_ISLNK(st.st_mode):
                links += 1
                if links > MAX_LINKS:
                    raise UntrustedPath("too many symbolic links in %s" % path)
                problem_or_foreign(_link_problem(nxt, st, owner), st.st_uid)
                target = os.readlink(name, dir_fd=fd)
                if target.startswith("/"):
                    while len(stack) > 1:
                        os.close(stack.pop()[0])
                todo.extend(reversed([c for c in target.split("/") if c]))
                continue
            if not stat.S_ISDIR(st.st_mode):
                raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), nxt)
            try:
                nfd = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError as e:
                if e.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT) and retries < 10:
                    retries += 1   # replaced since the stat: look again
                    todo.append(name)
                    continue
                raise
            stack.append((nfd, nxt))
            st = os.fstat(nfd)
            last = strict_last and not any(c != "." for c in todo)
            problem_or_foreign(dir_problem(nxt, st, last=last, owner=owner), st.st_uid)
        fd = stack.pop()[0]
        return fd
    finally:
        for fd, _cur in stack:
            os.close(fd)


def _untrusted(path: str, verb: str, reason: str) -> UntrustedPath:
    return UntrustedPath("refusing to %s %s: %s; whoever can change a directory or symbolic link on the way could "
                         "point it anywhere (allowed: directories owned by root, or by the file's owner, not "
                         "writable by group or others unless sticky, and no other user's symbolic link)"
                         % (verb, path, reason))


def _check_foreign(path: str, verb: str, foreign: List[Tuple[int, str]], uid: Optional[int]) -> None:
    """The components a reader let pass on their owner are fine only when they belong to the owner
    of the file itself (``uid``; None: the file is absent, so it would be root's)."""
    for owner, reason in foreign:
        if uid is None or owner != uid:
            raise _untrusted(path, verb, reason)


class Host:
    def __init__(self, root: str = "/", runner: Optional[Runner] = None,
                 bin_path: Optional[BinPath] = None, environ: Optional[Dict[str, str]] = None) -> None:
        self.root = root
        self._runner = runner
        self._bin_path = bin_path
        self.environ = dict(os.environ if environ is None else environ)
        self._bins: Dict[str, str] = {}
        # What this call learned about the node's tools, so it is not asked again within the call
        # (e.g. "ethtool_no_json": this ethtool has no --json for -g/-c).  Lives as long as the call.
        self.tool_facts: Dict[str, Any] = {}

    @classmethod
    def from_module(cls, module: Any, root: str = "/") -> "Host":
        return cls(root=root, runner=module_runner(module), bin_path=module_bin_path(module))

    # ------------------------------------------------------------------ paths and files
    def p(self, path: str) -> str:
        """Resolve an absolute node path under the root prefix."""
        if not path.startswith("/"):
            raise HostError("path %r is not absolute" % path)
        if self.root in ("", "/"):
            return path
        return os.path.join(self.root, path.lstrip("/"))

    def exists(self, path: str) -> bool:
        return os.path.lexists(self.p(path))

    def isdir(self, path: str) -> bool:
        return os.path.isdir(self.p(path))

    def listdir(self, path: str) -> List[str]:
        try:
            return sorted(os.listdir(self.p(path)))
        except OSError:
            return []

    def readlink(self, path: str) -> Optional[str]:
        try:
            return os.readlink(self.p(path))
        except OSError:
            return None

    def read(self, path: str) -> Optional[str]:
        """Text of a file, or None when it does not exist."""
        try:
            with open(self.p(path), "r", encoding="utf-8", errors="surrogateescape") as f:
                return f.read()
        except FileNotFoundError:
            return None
        except OSError as e:
            raise HostError("cannot read %s: %s" % (path, e.strerror or e))

    def read_json(self, path: str) -> Any:
        """A JSON file's value, or None when it does not exist; HostError when it cannot be read
        or is not JSON."""
        text = self.read(path)
        if text is None:
            return None
        try:
            return json.loads(text)
        except ValueError as e:
            raise HostError("not JSON: %s" % e)
        except RecursionError:
            raise HostError("not JSON: %s is nested too deeply to read" % path) from None

    def write_proc(self, path: str, value: str) -> None:
        """Write one value to /proc or /sys (no temp file: these are not regular files)."""
        try:
            with open(self.p(path), "w", encoding="utf-8") as f:
                f.write(value)
        except OSError as e:
            err = HostError("cannot write %r to %s: %s" % (value, path, e.strerror or e))
            err.errno = e.errno
            raise err

    def proc_writable(self, path: str) -> bool:
        """True when the kernel offers the file for writing (sysctl files honour mode bits for root)."""
        try:
            mode = os.stat(self.p(path)).st_mode
        except OSError:
            return False
        return bool(mode & stat.S_IWUSR)

    def _parent(self, path: str, verb: str, owner: Optional[int] = None, create: Optional[int] = None,
                foreign: Optional[List[Tuple[int, str]]] = None) -> Tuple[int, str]:
        """The open parent directory of the node path ``path`` (reached under the trust rule, see
        :func:`open_dir`) and the file's name in it."""
        parent, name = posixpath.split(self.p(path))
        if not name:
            raise HostError("%s is not a file path" % path)
        try:
            return open_dir(parent, owner=owner, create=create, foreign=foreign), name
        except UntrustedPath as e:
            raise _untrusted(path, verb, str(e))

    def file_state(self, path: str) -> FileState:
        """A regular file's bytes, mode, owner (when not the running user's) and SELinux label;
        ``{"link": TARGET}`` for a symbolic link; None when absent (see :data:`FileState`).

        Read through its directories under the trust rule (:func:`open_dir`): a directory or link on
        the way that another user controls is an error (UntrustedPath) unless that user owns the file."""
        foreign: List[Tuple[int, str]] = []
        try:
            dfd, name = self._parent(path, "read", foreign=foreign)
        except FileNotFoundError:
            _check_foreign(path, "read", foreign, None)
            return None
        except OSError as e:
            raise HostError("cannot stat %s: %s" % (path, e.strerror or e))
        try:
            try:
                st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
            except FileNotFoundError:
                _check_foreign(path, "read", foreign, None)
                return None
            except OSError as e:
                raise HostError("cannot stat %s: %s" % (path, e.strerror or e))
            _check_foreign(path, "read", foreign, st.st_uid)
            if stat.S_ISLNK(st.st_mode):
                return {"link": os.readlink(name, dir_fd=dfd)}
            if not stat.S_ISREG(st.st_mode):
                raise HostError("%s exists and is not a regular file" % path)
            try:
                fd = os.open(name, os.O_RDONLY | _FILE_FLAGS, dir_fd=dfd)
            except OSError as e:
                raise HostError("cannot read %s: %s" % (path, e.strerror or e))
        finally:
            os.close(dfd)
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

    def write_file(self, path: str, state: FileState) -> None:
        """Bring a file to ``state`` atomically (temp file, fsync, rename); None removes it.

        The replacement gets the state's bytes, owner (the running user when the state names
        none), SELinux label (when the state names one) and mode; every extended attribute of the
        file it replaces (ACLs, the label, ``user.*``) is carried over first, as ansible's
        ``atomic_move`` keeps them.  Missing parent directories are made with mode 0755.

        Every directory on the way is opened under the trust rule (:func:`open_dir`), and the temp
        file, rename and removal happen relative to the parent's descriptor: a directory or symbolic
        link another user controls (unless that user is the file's owner) is an UntrustedPath and
        nothing is written.
        """
        if state is None:
            self._remove_file(path)
            return
        wanted = None if "link" in state else _regular_spec(path, state)
        owner = wanted["uid"] if wanted is not None else None
        try:
            dfd, name = self._parent(path, "write", owner=owner, create=DIR_MODE)
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

    def _remove_file(self, path: str) -> None:
        foreign: List[Tuple[int, str]] = []
        try:
            dfd, name = self._parent(path, "remove", foreign=foreign)
        except (FileNotFoundError, NotADirectoryError):
            return
        except OSError as e:
            raise HostError("cannot remove %s: %s" % (path, e.strerror or e))
        try:
            try:
                st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
            except FileNotFoundError:
                return
            _check_foreign(path, "remove", foreign, st.st_uid)
            os.unlink(name, dir_fd=dfd)
            os.fsync(dfd)
        except OSError as e:
            raise HostError("cannot remove %s: %s" % (path, e.strerror or e))
        finally:
            os.close(dfd)

    @staticmethod
    def _fsync_dir(path: str) -> None:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def dir_writable(self, path: str, create: bool) -> Optional[str]:
        """None when ``path`` can hold our files; otherwise the reason it cannot.

        With ``create`` the directory is made (mode 0700) and a probe file written and removed, which
        is the only honest test as root (read-only mounts, /proc, a path through a file); without it
        (check mode) nothing is written and only existence and access bits are checked.
        """
        full = self.p(path)
        if not create:
            probe = full
            while not os.path.exists(probe):
                parent = os.path.dirname(probe)
                if parent == probe:
                    break
                probe = parent
            if not os.path.isdir(probe):
                return "%s is not a directory" % probe
            if not os.access(probe, os.W_OK | os.X_OK):
                return "%s is not writable" % probe
            return None
        try:
            os.makedirs(full, mode=0o700, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".probe-", dir=full)
            os.close(fd)
            os.unlink(tmp)
        except OSError as e:
            return os_reason(e)
        return None

    def mkdir(self, path: str, mode: int = 0o755) -> None:
        """Create one directory (its parent must exist) with exactly ``mode``, whatever the umask;
        an existing one is left as it is.  configfs makes its default groups itself.  The parent is
        reached under the trust rule (:func:`open_dir`)."""
        try:
            dfd, name = self._parent(path, "create directory")
        except OSError as e:
            raise HostError("cannot create directory %s: %s" % (path, os_reason(e)))
        try:
            try:
                os.mkdir(name, mode, dir_fd=dfd)
            except FileExistsError:
                return
            except OSError as e:
                raise HostError("cannot create directory %s: %s" % (path, os_reason(e)))
            try:
                _set_dir_mode(name, mode, dir_fd=dfd)
            except OSError as e:
                raise HostError("cannot set mode %04o on directory %s: %s" % (mode, path, e.strerror or e))
        finally:
            os.close(dfd)

    def rmdir(self, path: str) -> None:
        """Remove one empty directory (a configfs group counts as empty); absent is fine.  The parent
        is reached under the trust rule (:func:`open_dir`)."""
        foreign: List[Tuple[int, str]] = []
        try:
            dfd, name = self._parent(path, "remove directory", foreign=foreign)
        except (FileNotFoundError, NotADirectoryError):
            return
        except OSError as e:
            raise HostError("cannot remove directory %s: %s" % (path, e.strerror or e))
        try:
            try:
                st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
            except FileNotFoundError:
                return
            _check_foreign(path, "remove directory", foreign, st.st_uid)
            os.rmdir(name, dir_fd=dfd)
        except FileNotFoundError:
            pass
        except OSError as e:
            raise HostError("cannot remove directory %s: %s" % (path, e.strerror or e))
        finally:
            os.close(dfd)

    def lock(self, path: str, timeout: float = 60.0) -> "FileLock":
        return FileLock(self.p(path), timeout)

    # ------------------------------------------------------------------ commands
    def bin(self, name: str) -> str:
        if name not in self._bins:
            found = self._bin_path(name) if self._bin_path else None
            if not found:
                raise HostError("required command %r not found on the node (install it: "
                                "iproute2 provides ip, dcb and rdma, the ethtool package provides "
                                "ethtool, ibverbs-utils provides ibv_devinfo, NVIDIA's mlnx-tools "
                                "provides mlnx_qos)" % name)
            self._bins[name] = found
        return self._bins[name]

    def which(self, name: str) -> Optional[str]:
        """Path of a command on the node, or None (never raises)."""
        try:
            return self.bin(name)
        except HostError:
            return None

    def run(self, argv: List[str]) -> Tuple[int, str, str]:
        if self._runner is None:
            raise HostError("no command runner configured for %s" % argv[0])
        return self._runner([self.bin(argv[0])] + list(argv[1:]))

    def run_ok(self, argv: List[str]) -> str:
        rc, out, err = self.run(argv)
        if rc != 0:
            msg = (err or out).strip()
            raise command_error(argv, rc, msg, is_not_supported(msg))
        return out

    # ------------------------------------------------------------------ device nodes and node facts
    def node_perms(self, path: str) -> Optional[Dict[str, Any]]:
        """Group id and permission bits of a device node (or any file), None when absent."""
        try:
            st = os.stat(self.p(path))
        except FileNotFoundError:
            return None
        except OSError as e:
            raise HostError("cannot stat %s: %s" % (path, e.strerror or e))
        return {"gid": st.st_gid, "mode": "%04o" % stat.S_IMODE(st.st_mode)}

    def set_node_perms(self, path: str, gid: int, mode: str) -> None:
        """chgrp + chmod of a device node (owner unchanged)."""
        try:
            os.chown(self.p(path), -1, gid)
            os.chmod(self.p(path), int(mode, 8))
        except OSError as e:
            raise HostError("cannot set group %d mode %s on %s: %s" % (gid, mode, path, e.strerror or e))

    def ssh_connection(self) -> Optional[Tuple[str, str]]:
        """``(client address, node address)`` of the SSH connection Ansible uses, from
        ``SSH_CONNECTION`` (``CLIENT PORT NODE PORT``; a link-local address carries ``%IF``), if
        the environment has it: become through sudo's env_reset drops it (see _link's sshd walk)."""
        conn = self.environ.get("SSH_CONNECTION", "").split()
        return (conn[0], conn[2]) if len(conn) >= 4 else None

    def in_container(self) -> bool:
        """True inside a container, where kernel-global sysctls would change the host kernel."""
        if self.exists("/.dockerenv") or self.exists("/run/.containerenv"):
            return True
        env = self.read("/proc/1/environ") if self.exists("/proc/1/environ") else None
        if env and any(item.startswith("container=") for item in env.split("\0")):
            return True
        return (self.read("/run/systemd/container") or "").strip() != ""


def open_nofollow(path: str, flags: int, mode: int = 0o600) -> int:
    """``os.open`` that never follows a symbolic link in the last component (ELOOP instead) and
    never blocks on a FIFO; the descriptor is not inherited by commands."""
    return os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0), mode)


def untrusted_file(st: os.stat_result) -> Optional[str]:
    """Why a file of ours (lock, journal) cannot be trusted, or None: it must be a regular file
    of root (or the running user) that group and others cannot write."""
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if st.st_uid not in (0, os.geteuid()):
        return "owned by uid %d, not by root" % st.st_uid
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return "writable by group or others (mode %04o)" % stat.S_IMODE(st.st_mode)
    return None


class FileLock:
    """An exclusive flock on a file; concurrent runs on one node serialize on it."""

    def __init__(self, path: str, timeout: float) -> None:
        self.path = path
        self.timeout = timeout
        self._fd: Optional[int] = None
        self.created = False   # this run created the lock file (so a run that changes nothing removes it)

    def __enter__(self) -> "FileLock":
        deadline = time.monotonic() + self.timeout
        while True:
            self._open()
            self._flock(deadline)
            # a run that created the lock and failed having changed nothing removes it while holding it
            # (remove()): a waiter that got the flock of that unlinked file opens the path again
            try:
                same = os.stat(self.path, follow_symlinks=False)
                held = os.fstat(self._fd)
                if (same.st_dev, same.st_ino) == (held.st_dev, held.st_ino):
                    break
            except FileNotFoundError:
                pass
            self._close()
        try:
            os.ftruncate(self._fd, 0)
            _write_all(self._fd, ("%d\n" % os.getpid()).encode())
        except OSError as e:
            if self.created:
                self.remove()   # held: nobody else is inside it
            self._close()
            raise HostError("cannot write lock %s: %s" % (self.path, os_reason(e)))
        return self

    def _open(self) -> None:
        try:
            os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
            while True:
                try:
                    self._fd = open_nofollow(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
                    self.created = True
                    break
                except FileExistsError:
                    pass
                try:
                    self._fd = open_nofollow(self.path, os.O_RDWR)
                    self.created = False
                    break
                except FileNotFoundError:
                    continue   # removed in between: create it
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise HostError("lock %s is a symbolic link; refusing to follow it" % self.path)
            raise HostError("cannot open lock %s: %s" % (self.path, os_reason(e)))
        problem = untrusted_file(os.fstat(self._fd))
        if problem:
            self._close()
            raise HostError("lock %s is not trusted: %s" % (self.path, problem))

    def _flock(self, deadline: float) -> None:
        while True:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except OSError as e:
                if e.errno not in (errno.EAGAIN, errno.EACCES):
                    self._close()
                    raise HostError("cannot lock %s: %s" % (self.path, e.strerror))
                if time.monotonic() >= deadline:
                    self._close()
                    raise HostError("journal lock %s is held by another run for more than %ds"
                                    % (self.path, self.timeout))
                time.sleep(0.1)

    def _close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def remove(self) -> None:
        """Unlink the lock file while holding it (a waiter then opens the path again): for a run that
        created it and ends having changed nothing.  Best effort."""
        try:
            os.unlink(self.path)
        except OSError:
            pass

    def __exit__(self, *exc: Any) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            self._close()


def walk_files(host: Host, directory: str, suffix: str) -> Iterator[str]:
    """Node paths of files in ``directory`` ending in ``suffix``, sorted by name."""
    for name in host.listdir(directory):
        if name.endswith(suffix):
            yield directory.rstrip("/") + "/" + name
