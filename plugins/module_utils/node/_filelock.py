# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The journal's lock: :class:`FileLock`, an exclusive flock on a trusted file of ours, which
concurrent runs on one node serialize on (:meth:`_host.Host.lock` hands it out)."""
from __future__ import annotations

import errno
import fcntl
import os
import time

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError, os_reason
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._filestate import write_all
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._trust import open_nofollow, untrusted_file

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Optional


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
            write_all(self._fd, ("%d\n" % os.getpid()).encode())
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
