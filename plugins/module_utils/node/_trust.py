# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The trust rule for every directory the collection writes through as root (the journal's and every
managed file's), and the walk that enforces it: :func:`open_dir` opens a directory one component at a
time, each checked on its descriptor; :func:`path_trust_problem` checks without opening (check mode);
:func:`open_parent` is the parent of a node path that :class:`_host.Host` reads, writes or removes
through.  Also the same rule for a file of ours (lock, journal): :func:`untrusted_file`."""
from __future__ import annotations

import errno
import os
import posixpath
import stat

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import List, Optional, Tuple

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
                    set_dir_mode(name, create, dir_fd=fd)   # whatever the umask
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


def set_dir_mode(full: str, mode: int, dir_fd: Optional[int] = None) -> None:
    """chmod a directory just made (the umask narrowed it), never through a symbolic link."""
    fd = os.open(full, _DIR_FLAGS, dir_fd=dir_fd)
    try:
        if stat.S_IMODE(os.fstat(fd).st_mode) != mode:
            os.fchmod(fd, mode)
    finally:
        os.close(fd)


def open_parent(real: str, path: str, verb: str, owner: Optional[int] = None, create: Optional[int] = None,
                foreign: Optional[List[Tuple[int, str]]] = None) -> Tuple[int, str]:
    """The open parent directory of the node path ``path`` (``real``: where it is under the host's
    root), reached under the trust rule (see :func:`open_dir`), and the file's name in it."""
    parent, name = posixpath.split(real)
    if not name:
        raise HostError("%s is not a file path" % path)
    try:
        return open_dir(parent, owner=owner, create=create, foreign=foreign), name
    except UntrustedPath as e:
        raise untrusted(path, verb, str(e))


def untrusted(path: str, verb: str, reason: str) -> UntrustedPath:
    return UntrustedPath("refusing to %s %s: %s; whoever can change a directory or symbolic link on the way could "
                         "point it anywhere (allowed: directories owned by root, or by the file's owner, not "
                         "writable by group or others unless sticky, and no other user's symbolic link)"
                         % (verb, path, reason))


def check_foreign(path: str, verb: str, foreign: List[Tuple[int, str]], uid: Optional[int]) -> None:
    """The components a reader let pass on their owner are fine only when they belong to the owner
    of the file itself (``uid``; None: the file is absent, so it would be root's)."""
    for owner, reason in foreign:
        if uid is None or owner != uid:
            raise untrusted(path, verb, reason)


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
