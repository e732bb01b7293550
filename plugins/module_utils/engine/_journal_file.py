# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Where and how the journal is kept: :class:`JournalFile` finds ``journal.json`` and ``lock`` in the
journal directory, checks the trust of both, and reads, writes and removes ``journal.json``
(what it may hold: ``_journal_schema``; what it records: :class:`_journal.Journal`).

Trust: whoever can write ``journal.json`` steers what rollback does as root, so the journal
directory and every directory above it must be owned by root (or the running user) and not be
writable by group or others; a directory above it may be world-writable only with the sticky bit
(``/tmp``), because then nobody else can rename or replace the entry below it, which must be ours.
``journal.json`` and ``lock`` are opened with ``O_NOFOLLOW`` and must be regular files of root
(or the running user) that group and others cannot write.

Writes are atomic (temp file, fsync, rename, fsync of the directory); a journal with no original
and no generation left is removed rather than written empty.  A corrupt, foreign or untrusted
journal is a :class:`JournalError` and is never rewritten or reset.
"""
from __future__ import annotations

import errno
import json
import os
import posixpath

from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._journal_schema import SCHEMA, Checker, JournalError, empty
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import os_reason
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._trust import path_trust_problem, untrusted_file

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List, Optional, Sequence

DEFAULT_DIR = "/var/lib/hpcnet-rdma"
JOURNAL_FILE = "journal.json"
LOCK_FILE = "lock"
TEMP_PREFIX = ".journal-"
TEMP_SUFFIX = ".tmp"
PROBE_PREFIX = ".probe-"   # Host.dir_writable's probe file


# ---------------------------------------------------------------------- trust of the directory
# The rule is node/_trust's (one place for every directory the collection writes through): the journal
# directory itself may not be writable by group or others even with the sticky bit.
def _file_problem(path: str, st: os.stat_result) -> Optional[str]:
    problem = untrusted_file(st)
    return "%s is %s" % (path, problem) if problem else None


def trust_problem(path: str) -> Optional[str]:
    """Why the directory ``path`` (a real path, absolute) cannot be trusted to hold the journal,
    or None (:func:`_trust.path_trust_problem`; the part that does not exist yet is created by root
    with mode 0700 and checked again once it exists)."""
    return path_trust_problem(path, strict_last=True)


class JournalFile(object):
    """``journal.json`` of one journal directory on the node, and the directory's lock path."""

    def __init__(self, host: Host, directory: str = DEFAULT_DIR) -> None:
        self.host = host
        self.directory = directory.rstrip("/") or "/"
        self.path = self.directory + "/" + JOURNAL_FILE
        self.lock_path = self.directory + "/" + LOCK_FILE
        self._data: Optional[Dict[str, Any]] = None
        self.made: List[str] = []   # the directories (full paths) the last make_dir created

    def _full(self, path: str) -> str:
        return self.host.p(path)

    # ------------------------------------------------------------------ trust
    def check_trust(self) -> None:
        """JournalError when the journal directory (or a directory above it) is not trusted."""
        full = self._full(self.directory)
        problem = trust_problem(full)
        if problem:
            raise JournalError("journal_dir %s is not trusted: %s. Whoever can change it steers what "
                               "rollback does as root; use a directory owned by root, mode 0700, whose "
                               "parents only root can write (or sticky, like /tmp)" % (self.directory, problem))

    def make_dir(self) -> Optional[str]:
        """Create the missing part of the journal directory, one level at a time, mode 0700 (the
        process umask can only narrow it).  When a level cannot be made, the levels made before it
        are removed again and the reason is returned (None when the directory is there)."""
        full = self._full(self.directory)
        missing = []
        while full and not os.path.lexists(full):
            missing.append(full)
            parent = posixpath.dirname(full)
            if parent == full:
                break
            full = parent
        made: List[str] = []
        self.made = made
        for path in reversed(missing):
            try:
                os.mkdir(path, 0o700)
                made.append(path)
            except FileExistsError:
                pass
            except OSError as e:
                for done in reversed(made):
                    try:
                        os.rmdir(done)
                    except OSError:
                        break
                del made[:]
                return os_reason(e)
        return None

    def on_disk(self) -> bool:
        """Whether ``journal.json`` exists (a journal with nothing in it is removed, not written)."""
        return os.path.lexists(self._full(self.path))

    def remove_made(self, made: Sequence[str]) -> None:
        """Remove the directories a :meth:`make_dir` created, innermost first, while they are empty
        (a call that failed having changed nothing leaves no tree behind).  Best effort."""
        for path in reversed(list(made)):
            try:
                os.rmdir(path)
            except OSError:
                return

    # ------------------------------------------------------------------ loading
    def load(self) -> Dict[str, Any]:
        """Check the directory's trust, then read and validate the journal (absent is empty)."""
        self.check_trust()
        raw = self._read()
        if raw is None:
            self._data = empty()
            return self._data
        try:
            data = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError) as e:
            raise JournalError(
                "journal %s is corrupt (%s); it was left untouched: move it aside to start a new "
                "journal, or restore it from a backup" % (self.path, e))
        Checker("journal %s" % self.path).journal(data)
        data["schema"] = SCHEMA          # written back as the current schema
        data.setdefault("targets", {})
        self._data = data
        return data

    def _read(self) -> Optional[bytes]:
        full = self._full(self.path)
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(full, flags)
        except FileNotFoundError:
            return None
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise JournalError("journal %s is a symbolic link; refusing to follow it (left untouched)"
                                   % self.path)
            raise JournalError("cannot read journal %s: %s" % (self.path, e.strerror or e))
        try:
            problem = _file_problem(self.path, os.fstat(fd))
            if problem:
                raise JournalError("journal %s is not trusted: %s; left untouched" % (self.path, problem))
            chunks = []
            while True:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
            return b"".join(chunks)
        except OSError as e:
            raise JournalError("cannot read journal %s: %s" % (self.path, e.strerror or e))
        finally:
            os.close(fd)

    @property
    def data(self) -> Dict[str, Any]:
        if self._data is None:
            return self.load()
        return self._data

    def is_empty(self) -> bool:
        return not self.data["originals"] and not self.data["generations"] and not self.data["targets"]

    # ------------------------------------------------------------------ writing
    def _save(self) -> None:
        """Write the journal atomically; a journal with nothing in it is removed instead."""
        if self.is_empty():
            self._remove()
            return
        text = json.dumps(self.data, indent=1, sort_keys=True) + "\n"
        try:
            self._write(text.encode("utf-8"))
        except OSError as e:
            raise JournalError("cannot write journal %s: %s" % (self.path, os_reason(e)))

    def _write(self, data: bytes) -> None:
        full = self._full(self.path)
        parent = posixpath.dirname(full)
        if not os.path.isdir(parent):
            self.make_dir()
            self.check_trust()
        import tempfile  # here, not at the top: it imports shutil and random, ~40 ms of the health check's start on a lab VM
        fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=TEMP_SUFFIX, dir=parent)  # O_EXCL|O_NOFOLLOW, 0600
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
            os.close(fd)
            fd = -1
            os.replace(tmp, full)
        except BaseException:
            if fd >= 0:
                os.close(fd)
            if os.path.lexists(tmp):
                os.unlink(tmp)
            raise
        _fsync_dir(parent)

    def _remove(self) -> None:
        full = self._full(self.path)
        try:
            os.unlink(full)
        except FileNotFoundError:
            return
        except OSError as e:
            raise JournalError("cannot remove journal %s: %s" % (self.path, e.strerror or e))
        _fsync_dir(posixpath.dirname(full))

    def sweep(self, dry: bool = False) -> List[str]:
        """The temp files a killed run left in the journal directory (journal writes, and the
        writability probe the engine makes under the lock); removed unless ``dry``.  Only under
        the lock, where no live run can be writing them."""
        full = self._full(self.directory)
        found = []
        try:
            names = sorted(os.listdir(full))
        except OSError:
            return found
        for name in names:
            if (name.startswith(TEMP_PREFIX) and name.endswith(TEMP_SUFFIX)) or name.startswith(PROBE_PREFIX):
                try:
                    if not dry:
                        os.unlink(posixpath.join(full, name))
                    found.append(name)
                except OSError:
                    pass
        return found


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
