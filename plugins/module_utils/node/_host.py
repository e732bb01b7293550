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

Below Host, in files of their own: its errors (``_errors``), the trust rule for the directories it
writes through (``_trust``), a file's state and its atomic replacement (``_filestate``), the
journal's lock (``_filelock``) and the sockets it talks to systemd and the kernel through (``_sockets``).
"""
from __future__ import annotations

import json
import os
import stat
import threading

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError, command_error, os_reason
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _sockets
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._filelock import FileLock
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._filestate import read_state, read_states, write_state
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import is_not_supported
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._trust import check_foreign, open_parent, set_dir_mode

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple
    from ansible_collections.hpcnet.rdma.plugins.module_utils.node._filestate import FileState
    Runner = Callable[[List[str]], Tuple[int, str, str]]
    BinPath = Callable[[str], Optional[str]]


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
        # What this call learned about the node's tools, so it is not asked again within the call
        # (e.g. "ethtool_no_json": this ethtool has no --json for -g/-c).  Lives as long as the call.
        self.tool_facts: Dict[str, Any] = {}
        # Tool runs of independent reads may go side by side (run_all: the nic domain's ethtool runs, where
        # the kernel's netlink did not answer): set only by a caller whose runner is safe in threads (the
        # health check's); a module's run_command is not asked to be.
        self.concurrent_reads = False
        # Called between the parts of a long read (checkpoint): the health check's raises once its budget is spent.
        self.on_checkpoint: Optional[Callable[[], None]] = None

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
        """Text of a file, or None when it does not exist.  Newlines as open()'s text mode gives them.

        os.open/os.read, not open(): a text-mode file object costs 2-4 times the read of a small sysfs
        file, and a node is read file by file - a soft-RoCE port's GID table alone is 1024 files, which took
        0.6 s of the health check on a lab VM (benchmarks/health_check.py)."""
        try:
            fd = os.open(self.p(path), os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            return None
        except OSError as e:
            raise HostError("cannot read %s: %s" % (path, e.strerror or e))
        chunks = []
        try:
            while True:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                chunks.append(chunk)
        except OSError as e:
            raise HostError("cannot read %s: %s" % (path, e.strerror or e))
        finally:
            os.close(fd)
        text = b"".join(chunks).decode("utf-8", "surrogateescape")
        return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text

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

    def file_state(self, path: str) -> FileState:
        """A regular file's bytes, mode, owner (when not the running user's) and SELinux label;
        ``{"link": TARGET}`` for a symbolic link; None when absent (see :data:`_filestate.FileState`).

        Read through its directories under the trust rule (:func:`_trust.open_dir`): a directory or link on
        the way that another user controls is an error (UntrustedPath) unless that user owns the file."""
        return read_state(self.p(path), path)

    def file_states(self, paths: List[str]) -> Dict[str, Any]:
        """``{path: file_state(path)}``, a ``HostError`` in place of a state that could not be read; each
        parent directory walked once for all of its files (:func:`_filestate.read_states`), a
        :meth:`checkpoint` before each."""
        return read_states([(self.p(path), path) for path in paths], self.checkpoint)

    def checkpoint(self) -> None:
        """Between the parts of a long read (each domain of the journal, each directory of its files): the
        caller's ``on_checkpoint``, if any - the health check's ends the read there once its budget is spent,
        as its runner refuses a command then (file reads never ask the runner)."""
        if self.on_checkpoint is not None:
            self.on_checkpoint()

    def write_file(self, path: str, state: FileState) -> None:
        """Bring a file to ``state`` atomically (temp file, fsync, rename); None removes it.

        The replacement gets the state's bytes, owner (the running user when the state names
        none), SELinux label (when the state names one) and mode; every extended attribute of the
        file it replaces (ACLs, the label, ``user.*``) is carried over first, as ansible's
        ``atomic_move`` keeps them.  Missing parent directories are made with mode 0755.

        Every directory on the way is opened under the trust rule (:func:`_trust.open_dir`), and the temp
        file, rename and removal happen relative to the parent's descriptor: a directory or symbolic
        link another user controls (unless that user is the file's owner) is an UntrustedPath and
        nothing is written.
        """
        write_state(self.p(path), path, state)

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
            import tempfile  # here, not at the top: it imports shutil and random, ~40 ms of the health check's start on a lab VM
            fd, tmp = tempfile.mkstemp(prefix=".probe-", dir=full)
            os.close(fd)
            os.unlink(tmp)
        except OSError as e:
            return os_reason(e)
        return None

    def mkdir(self, path: str, mode: int = 0o755) -> None:
        """Create one directory (its parent must exist) with exactly ``mode``, whatever the umask;
        an existing one is left as it is.  configfs makes its default groups itself.  The parent is
        reached under the trust rule (:func:`_trust.open_dir`)."""
        try:
            dfd, name = open_parent(self.p(path), path, "create directory")
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
                set_dir_mode(name, mode, dir_fd=dfd)
            except OSError as e:
                raise HostError("cannot set mode %04o on directory %s: %s" % (mode, path, e.strerror or e))
        finally:
            os.close(dfd)

    def rmdir(self, path: str) -> None:
        """Remove one empty directory (a configfs group counts as empty); absent is fine.  The parent
        is reached under the trust rule (:func:`_trust.open_dir`)."""
        foreign: List[Tuple[int, str]] = []
        try:
            dfd, name = open_parent(self.p(path), path, "remove directory", foreign=foreign)
        except (FileNotFoundError, NotADirectoryError):
            return
        except OSError as e:
            raise HostError("cannot remove directory %s: %s" % (path, e.strerror or e))
        try:
            try:
                st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
            except FileNotFoundError:
                return
            check_foreign(path, "remove directory", foreign, st.st_uid)
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

    def converse(self, path: str, hello: bytes, payload: bytes, feed: Callable[[bytes], bool],
                 timeout: float = 2.0) -> None:
        """A unix stream socket's conversation (node/_sockets.converse) at node path ``path``."""
        _sockets.converse(self.p(path), hello, payload, feed, timeout)

    def netlink(self, protocol: int, dialog: Callable[[Callable[[bytes], Any], Callable[[], bytes]], Any],
                timeout: float = 2.0) -> Any:
        """``dialog(send, recv)`` on a netlink socket of the running kernel (node/_sockets.netlink).  Only
        for the node itself: under another root (a test's tree) the kernel is not that node's - HostError."""
        if self.root not in ("", "/"):
            raise HostError("netlink reads the running kernel, not the tree under %s" % self.root)
        return _sockets.netlink(protocol, dialog, timeout)

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


def run_all(calls: Sequence[Callable[[], Any]], concurrent: bool) -> List[Any]:
    """Each call's result, in order.  With ``concurrent``, the first runs in this thread and each other in a
    thread of its own, all at once, so one's tool runs and file reads overlap the others' Python; after all
    have returned, the first exception (in the calls' order) is raised.  Without, one after the other.  For
    reads only: the calls must not depend on each other."""
    if not concurrent or len(calls) < 2:
        return [call() for call in calls]
    results: List[Any] = [None] * len(calls)
    errors: List[Optional[BaseException]] = [None] * len(calls)

    def one(i: int) -> None:
        try:
            results[i] = calls[i]()
        except BaseException as e:  # noqa: BLE001 - raised in the caller's thread below
            errors[i] = e
    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(1, len(calls))]
    for t in threads:
        t.start()
    one(0)
    for t in threads:
        t.join()
    for e in errors:
        if e is not None:
            raise e
    return results


def walk_files(host: Host, directory: str, suffix: str) -> Iterator[str]:
    """Node paths of files in ``directory`` ending in ``suffix``, sorted by name."""
    for name in host.listdir(directory):
        if name.endswith(suffix):
            yield directory.rstrip("/") + "/" + name
