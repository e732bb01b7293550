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

import errno
import fcntl
import os
import stat
import tempfile
import time
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from ansible_collections.hpcnet.rdma.plugins.module_utils._parsing import is_not_supported

Runner = Callable[[List[str]], Tuple[int, str, str]]
BinPath = Callable[[str], Optional[str]]

# A file's state as the journal stores it: None means "absent".
FileState = Optional[Dict[str, Any]]


class HostError(Exception):
    """A node operation failed; the message names the path or command."""


class NotSupported(HostError):
    """The driver does not implement the operation (ethtool: Operation not supported)."""


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


class Host:
    def __init__(self, root: str = "/", runner: Optional[Runner] = None,
                 bin_path: Optional[BinPath] = None, environ: Optional[Dict[str, str]] = None) -> None:
        self.root = root
        self._runner = runner
        self._bin_path = bin_path
        self.environ = dict(os.environ if environ is None else environ)
        self._bins: Dict[str, str] = {}

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

    def write_proc(self, path: str, value: str) -> None:
        """Write one value to /proc or /sys (no temp file: these are not regular files)."""
        try:
            with open(self.p(path), "w", encoding="utf-8") as f:
                f.write(value)
        except OSError as e:
            raise HostError("cannot write %r to %s: %s" % (value, path, e.strerror or e))

    def proc_writable(self, path: str) -> bool:
        """True when the kernel offers the file for writing (sysctl files honour mode bits for root)."""
        try:
            mode = os.stat(self.p(path)).st_mode
        except OSError:
            return False
        return bool(mode & stat.S_IWUSR)

    def file_state(self, path: str) -> FileState:
        """Content and mode of a regular file, None when absent."""
        full = self.p(path)
        try:
            st = os.lstat(full)
        except FileNotFoundError:
            return None
        except OSError as e:
            raise HostError("cannot stat %s: %s" % (path, e.strerror or e))
        if stat.S_ISLNK(st.st_mode):
            return {"link": os.readlink(full)}
        if not stat.S_ISREG(st.st_mode):
            raise HostError("%s exists and is not a regular file" % path)
        text = self.read(path)
        return {"content": text, "mode": "%04o" % stat.S_IMODE(st.st_mode)}

    def write_file(self, path: str, state: FileState) -> None:
        """Bring a file to ``state`` atomically (temp file, fsync, rename); None removes it."""
        full = self.p(path)
        if state is None:
            try:
                os.unlink(full)
            except FileNotFoundError:
                pass
            except OSError as e:
                raise HostError("cannot remove %s: %s" % (path, e.strerror or e))
            return
        parent = os.path.dirname(full)
        try:
            os.makedirs(parent, exist_ok=True)
            if "link" in state:
                tmp = full + ".hpcnet-tmp"
                if os.path.lexists(tmp):
                    os.unlink(tmp)
                os.symlink(state["link"], tmp)
                os.replace(tmp, full)
            else:
                fd, tmp = tempfile.mkstemp(prefix=".hpcnet-", dir=parent)
                try:
                    with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as f:
                        f.write(state["content"])
                        f.flush()
                        os.fsync(f.fileno())
                    os.chmod(tmp, int(state.get("mode", "0644"), 8))
                    os.replace(tmp, full)
                except BaseException:
                    if os.path.exists(tmp):
                        os.unlink(tmp)
                    raise
            self._fsync_dir(parent)
        except OSError as e:
            raise HostError("cannot write %s: %s" % (path, e.strerror or e))

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
            return e.strerror or str(e)
        return None

    def mkdir(self, path: str) -> None:
        """Create one directory (its parent must exist); configfs makes its default groups itself."""
        try:
            os.mkdir(self.p(path), 0o755)
        except FileExistsError:
            pass
        except OSError as e:
            raise HostError("cannot create directory %s: %s" % (path, e.strerror or e))

    def rmdir(self, path: str) -> None:
        """Remove one empty directory (a configfs group counts as empty); absent is fine."""
        try:
            os.rmdir(self.p(path))
        except FileNotFoundError:
            pass
        except OSError as e:
            raise HostError("cannot remove directory %s: %s" % (path, e.strerror or e))

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

    def management_address(self) -> Optional[str]:
        """The node-side address of the SSH connection Ansible uses, if any."""
        conn = self.environ.get("SSH_CONNECTION", "").split()
        return conn[2] if len(conn) >= 4 else None

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

    def __enter__(self) -> "FileLock":
        try:
            os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
            self._fd = open_nofollow(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise HostError("lock %s is a symbolic link; refusing to follow it" % self.path)
            raise HostError("cannot open lock %s: %s" % (self.path, e.strerror or e))
        problem = untrusted_file(os.fstat(self._fd))
        if problem:
            os.close(self._fd)
            self._fd = None
            raise HostError("lock %s is not trusted: %s" % (self.path, problem))
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as e:
                if e.errno not in (errno.EAGAIN, errno.EACCES):
                    raise HostError("cannot lock %s: %s" % (self.path, e.strerror))
                if time.monotonic() >= deadline:
                    os.close(self._fd)
                    self._fd = None
                    raise HostError("journal lock %s is held by another run for more than %ds"
                                    % (self.path, self.timeout))
                time.sleep(0.1)
        os.ftruncate(self._fd, 0)
        os.write(self._fd, ("%d\n" % os.getpid()).encode())
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def walk_files(host: Host, directory: str, suffix: str) -> Iterator[str]:
    """Node paths of files in ``directory`` ending in ``suffix``, sorted by name."""
    for name in host.listdir(directory):
        if name.endswith(suffix):
            yield directory.rstrip("/") + "/" + name
