# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""rdma_packages, rdma_stack and fabric_info run() on a fake node: check mode writes nothing,
idempotence, rollback exact, bad input untouched, container results, refusals.

``RdmaNode`` answers dpkg/apt, modprobe/rmmod, rdma and getent the way those tools behave
(documented output formats; the parsers are tested against recorded outputs in
test_ibtools.py, test_pkgtools.py and test_kmodfiles.py).  It is a simulation for unit tests; the Molecule scenario rdma_core runs
the real apt/dpkg, and the VM scenario the real kernel.
"""
from __future__ import annotations

import json
import os
import shutil

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.stack import _pkg
from ansible_collections.hpcnet.rdma.plugins.module_utils.stack import _config as _stack_config
from ansible_collections.hpcnet.rdma.plugins.modules import fabric_info, rdma_packages, rdma_stack, tuning_state

from ...conftest import FIXTURES, Failed, FakeModule, FakeNode, fixture, veth

KVER = "6.1.0-57-amd64"
GID = 4242
# name -> (version, depends); a small Debian-like repository
REPO = {
    "rdma-core": ("44.0-2", ["udev"]),
    "udev": ("252.39-1", []),
    "ibverbs-utils": ("44.0-2", ["libibverbs1"]),
    "libibverbs1": ("44.0-2", []),
    "perftest": ("4.5+0.17-1", ["libibverbs1", "librdmacm1", "libibumad3"]),
    "librdmacm1": ("44.0-2", ["libibverbs1"]),
    "libibumad3": ("44.0-2", []),
    "infiniband-diags": ("44.0-2", ["libibumad3"]),
}


class RdmaNode(FakeNode):
    def __init__(self, root):
        FakeNode.__init__(self, root)
        self.installed = {"iproute2": "installed"}   # name -> dpkg status
        self.upgrade = None                              # simulate "Inst X [old] (new)" for this name
        self.rxe = {}                                    # name -> netdev
        self.netns_busy = False
        self.status_file = False                         # dpkg's status file kept beside `installed`: read, not dpkg-query
        self.write("/usr/bin/apt-get", "", 0o755)
        self.write("/usr/bin/dpkg-query", "", 0o755)
        self.write("/etc/os-release", 'ID=debian\nVERSION_ID="12"\n')
        self.write("/proc/sys/kernel/osrelease", KVER + "\n")
        base = "/lib/modules/%s/" % KVER
        self.write(base + "modules.dep", fixture("modules.dep.6.1.0-57-amd64.captured.txt"))
        self.write(base + "modules.builtin", fixture("modules.builtin.6.1.0-57-amd64.captured-head.txt"))
        self.write(base + "modules.softdep", fixture("modules.softdep.6.1.0-57-amd64.captured.txt"))
        self.deps = dict((k, v) for k, v in _parse_dep().items())
        self.loaded = set()
        self._proc_modules()

    # ---- kernel modules
    def _mod_dir(self, name):
        return self.path("/sys/module/" + name)

    def load(self, name):
        for dep in reversed(self.deps.get(name, [])):
            self.load(dep)
        if name in self.loaded:
            return
        self.loaded.add(name)
        self._proc_modules()
        self.write("/sys/module/%s/initstate" % name, "live\n")
        self.write("/sys/module/%s/refcnt" % name, "0\n")
        os.makedirs(self._mod_dir(name) + "/holders", exist_ok=True)
        for dep in self.deps.get(name, []):
            self.write("/sys/module/%s/holders/%s" % (dep, name), "")
        if name == "ib_core":
            self.write("/sys/module/ib_core/parameters/netns_mode", "Y\n")

    def unload(self, name):
        holders = os.listdir(self._mod_dir(name) + "/holders")
        if holders:
            return 1, "", "rmmod: ERROR: Module %s is in use by: %s\n" % (name, " ".join(holders))
        shutil.rmtree(self._mod_dir(name))
        self.loaded.discard(name)
        self._proc_modules()
        for dep in self.deps.get(name, []):
            os.unlink(self.path("/sys/module/%s/holders/%s" % (dep, name)))
        return 0, "", ""

    def _proc_modules(self):
        self.write("/proc/modules", "".join("%s 16384 0 - Live 0x0000000000000000\n" % m for m in sorted(self.loaded)))

    # ---- packages
    def closure(self, names):
        out = []

        def visit(n):
            for d in REPO[n][1]:
                visit(d)
            if n not in out and self.installed.get(n) != "installed":
                out.append(n)
        for n in names:
            visit(n)
        return out

    WANTS = {"installed": "install ok", "config-files": "deinstall ok", "half-installed": "install reinstreq"}

    def sync_status(self):
        """/var/lib/dpkg/status as dpkg writes it for ``installed`` (with status_file; removed without)."""
        path = "/var/lib/dpkg/status"
        if not self.status_file:
            if os.path.exists(self.path(path)):
                os.unlink(self.path(path))
            return
        self.write(path, "\n".join("Package: %s\nStatus: %s %s\nPriority: optional\nVersion: %s\nDescription: %s\n" % (
            n, self.WANTS.get(st, "install ok"), st, REPO.get(n, ("1.0",))[0], n) for n, st in sorted(self.installed.items())))

    def host(self):
        self.sync_status()
        return FakeNode.host(self)

    def run(self, argv):
        try:
            return self._run(argv)
        finally:
            self.sync_status()

    def _run(self, argv):
        argv = [os.path.basename(argv[0])] + list(argv[1:])
        if argv[0] == "env":
            argv = [a for a in argv[1:] if "=" not in a]
        self.calls.append(argv)
        cmd = argv[0]
        if self.fail_on and self.fail_on in " ".join(argv):
            return 1, "", "simulated failure"
        if cmd == "dpkg-query":
            assert not self.status_file or os.listdir(self.path("/var/lib/dpkg/updates")), \
                "dpkg-query run although dpkg's status file answers"
            names = argv[4:]
            out = "".join("%s\t%s\n" % (n, self.installed[n]) for n in sorted(names) if n in self.installed)
            err = "".join("dpkg-query: no packages found matching %s\n" % n for n in names if n not in self.installed)
            return (1 if err else 0), out, err
        if argv[:2] == ["apt-cache", "policy"]:
            return 0, "".join("%s:\n  Installed: %s\n  Candidate: %s\n  Version table:\n" % (
                n, REPO[n][0] if self.installed.get(n) == "installed" else "(none)", REPO[n][0])
                for n in argv[2:] if n in REPO), ""
        if argv[:2] == ["apt-cache", "depends"]:
            return 0, "".join("%s\n" % n + "".join("  Depends: %s\n" % d for d in REPO[n][1]) for n in argv[3:]), ""
        if argv[:2] == ["apt-get", "install"] and "-s" in argv:
            names = [a for a in argv[2:] if not a.startswith("-")]
            # apt prints requested packages first, like the captured output: the planner must sort
            order = [n for n in names if n in self.closure(names)] + [n for n in self.closure(names) if n not in names]
            lines = ["Inst %s (%s Debian:12/stable [amd64])" % (n, REPO[n][0]) for n in order]
            if self.upgrade:
                lines.append("Inst %s [1.0] (2.0 Debian:12/stable [amd64])" % self.upgrade)
            return 0, "Reading package lists...\n" + "\n".join(lines) + "\n", ""
        if argv[:2] == ["apt-get", "install"]:
            for n in self.closure([argv[-1]]):
                self.installed[n] = "installed"
            return 0, "", ""
        if cmd == "dpkg" and argv[1] in ("--purge", "--remove"):
            name = argv[2]
            users = [n for n, s in self.installed.items() if s == "installed" and name in REPO.get(n, ("", []))[1]]
            if users:
                return 2, "", "dpkg: dependency problems prevent removal of %s:\n %s depends on %s.\n" % (
                    name, users[0], name)
            if argv[1] == "--purge":
                del self.installed[name]
            else:
                self.installed[name] = "config-files"
            return 0, "", ""
        if cmd == "modprobe":
            self.load(argv[1])
            return 0, "", ""
        if cmd == "rmmod":
            return self.unload(argv[1])
        if cmd == "getent":
            return (0, "rdma:x:%d:\n" % GID, "") if argv[2] == "rdma" else (2, "", "")
        if cmd == "rdma":
            return self._rdma(argv[1:])
        if cmd == "ethtool" and argv[1] == "-S":
            return 0, fixture("ethtool-S.veth.captured.txt"), ""
        return FakeNode.run(self, [os.path.join("/usr/sbin", argv[0])] + argv[1:])

    def _rdma(self, args):
        if args[:3] == ["-j", "link", "show"]:
            if "ib_core" not in self.loaded:
                return 1, "", "Failed to open NETLINK_RDMA socket\n"
            return 0, json.dumps([{"ifindex": i, "ifname": n, "port": 1, "state": "ACTIVE",
                                   "physical_state": "LINK_UP", "netdev": d, "netdev_index": 3}
                                  for i, (n, d) in enumerate(sorted(self.rxe.items()))]), ""
        if args[:2] == ["link", "add"]:
            if "rdma_rxe" not in self.loaded:
                return 1, "", "error: Operation not supported\n"
            self.rxe[args[2]] = args[6]
            node = "/dev/infiniband/uverbs%d" % (len(self.rxe) - 1)
            self.write(node, "", 0o666)                   # the kernel's default mode for uverbs
            for ulp in (self.read("/etc/rdma/modules/rdma.conf") or "").split():   # rdma-core's udev rules
                self.load(ulp)
            rule = self.read(_stack_config.UDEV_RULE) or ""
            if 'SUBSYSTEM=="infiniband_verbs"' in rule:   # what udevd does with the rule on the new device
                os.chown(self.path(node), -1, GID)
                os.chmod(self.path(node), 0o660)
            return 0, "", ""
        if args[:2] == ["link", "delete"]:
            idx = sorted(self.rxe).index(args[2])
            del self.rxe[args[2]]
            os.unlink(self.path("/dev/infiniband/uverbs%d" % idx))
            return 0, "", ""
        if args[:3] == ["system", "set", "netns"]:
            if self.netns_busy:
                return 1, "", "error: Device or resource busy\n"
            self.write("/sys/module/ib_core/parameters/netns_mode", "N\n" if args[3] == "exclusive" else "Y\n")
            return 0, "", ""
        return 1, "", "rdma: unexpected %r" % args


def _parse_dep():
    from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _kmodfiles
    return _kmodfiles.parse_modules_dep(fixture("modules.dep.6.1.0-57-amd64.captured.txt"))


@pytest.fixture(params=["dpkg-query", "status file"])
def rnode(tmp_path, request):
    """The packages' states from dpkg-query (a node without a status file) or from dpkg's status file."""
    n = RdmaNode(str(tmp_path / "root"))
    n.status_file = request.param == "status file"
    n.sync_status()
    n.add_nic(veth(addresses=[("10.77.0.1", 24)]))
    n.write("/dev/infiniband/rdma_cm", "", 0o666)
    n.write("/etc/security/limits.d/README", "keep\n")
    return n


def call(mod, node, check=False, **params):
    return mod.run(FakeModule(mod.ARGUMENT_SPEC, params, check_mode=check), node.host())


def rollback(node, check=False, scope="all"):
    return call(tuning_state, node, check, action="rollback", scope=scope)


def untouched(node, before):
    """The fake node equals ``before`` apart from the journal's own directory."""
    jdir = node.path("/var/lib/hpcnet-rdma")
    now = node.snapshot()
    return dict((k, v) for k, v in now["files"].items() if not k.startswith(jdir)) == \
        dict((k, v) for k, v in before["files"].items() if not k.startswith(jdir))


# ---------------------------------------------------------------- rdma_packages
PKGS = ["rdma-core", "ibverbs-utils", "perftest", "iproute2"]


def test_packages_check_install_idempotent_rollback_exact(rnode):
    pristine, status = rnode.snapshot(), dict(rnode.installed)
    predicted = call(rdma_packages, rnode, check=True, packages=PKGS)
    assert rnode.installed == status and rnode.snapshot() == pristine
    assert not any(c[:2] == ["apt-get", "install"] and "-s" not in c for c in rnode.calls)
    assert predicted["changed"] and predicted["already_installed"] == ["iproute2"]
    order = predicted["installed"]
    assert sorted(order) == ["ibverbs-utils", "libibumad3", "libibverbs1", "librdmacm1", "perftest", "rdma-core", "udev"]
    assert order.index("udev") < order.index("rdma-core") and order.index("librdmacm1") < order.index("perftest")
    assert sorted(predicted["dependencies"]) == ["libibumad3", "libibverbs1", "librdmacm1", "udev"]
    real = call(rdma_packages, rnode, packages=PKGS)
    assert real["changes"] == predicted["changes"] and real["current"] == predicted["current"]
    assert all(rnode.installed[n] == "installed" for n in order)
    assert call(rdma_packages, rnode, packages=PKGS)["changed"] is False
    rnode.installed["unrelated-later"] = "installed"      # something else installed after the tune
    assert rollback(rnode, check=True)["changed"] is True
    assert set(rnode.installed) == set(status) | set(order) | {"unrelated-later"}
    out = rollback(rnode)
    assert [c["key"] for c in out["changes"]] == ["pkg:" + n for n in reversed(order)]
    assert rnode.installed == dict(status, **{"unrelated-later": "installed"})   # exactly what was added is gone


def test_packages_status_queries_dpkg_once_for_every_package(rnode):
    """status reads all journaled packages with one dpkg-query (the health check's drift stage ran one per
    package: five tool runs of ~65 ms on a lab VM), with the same values as one query per package."""
    call(rdma_packages, rnode, packages=PKGS)
    rnode.calls.clear()
    status = call(tuning_state, rnode, action="status")
    queries = [c for c in rnode.calls if c[0] == "dpkg-query"]
    if rnode.status_file:
        assert queries == []                                     # dpkg's status file answered: no tool run
    else:
        assert len(queries) == 1 and sorted(queries[0][4:]) == sorted(k[4:] for k in status["tuned"] if k.startswith("pkg:"))
        assert len(queries[0][4:]) == 7
    assert len([k for k in status["tuned"] if k.startswith("pkg:")]) == 7 and status["drift"] == []
    names = ["perftest", "udev", "no-such-package"]
    assert _pkg.read_values(rnode.host(), names) == dict((n, _pkg.read_value(rnode.host(), n)) for n in names)


def test_dpkg_query_answers_while_dpkg_has_updates_not_folded_into_its_status_file(tmp_path):
    rnode = RdmaNode(str(tmp_path / "root"))
    rnode.status_file = True
    rnode.sync_status()
    call(rdma_packages, rnode, packages=["libibverbs1"])
    rnode.write("/var/lib/dpkg/updates/0000", "Package: libibverbs1\nStatus: deinstall ok config-files\n")
    rnode.calls.clear()
    assert _pkg.read_values(rnode.host(), ["libibverbs1", "udev"]) == {"libibverbs1": "installed", "udev": "absent"}
    assert [c[0] for c in rnode.calls] == ["dpkg-query"]


def test_packages_config_files_state_is_restored(rnode):
    rnode.installed["libibverbs1"] = "config-files"
    call(rdma_packages, rnode, packages=["ibverbs-utils"])
    assert rnode.installed["libibverbs1"] == "installed"
    rollback(rnode)
    assert rnode.installed == {"iproute2": "installed", "libibverbs1": "config-files"}


def test_packages_rollback_refuses_to_break_a_later_dependent(rnode):
    call(rdma_packages, rnode, packages=["libibverbs1"])
    rnode.installed["ibverbs-utils"] = "installed"   # installed later by someone else, depends on it
    with pytest.raises(Failed, match="(?s)pkg:libibverbs1: .*ibverbs-utils depends on libibverbs1"):
        rollback(rnode)
    assert rnode.installed["libibverbs1"] == "installed"


@pytest.mark.parametrize("params, message", [
    ({"packages": ["rdma-core", "no-such-pkg"]}, "no-such-pkg not available for debian 12"),
    ({"packages": ["rdma-core=44.0"]}, "'rdma-core=44.0' is not a package name"),
    ({"packages": []}, "give at least one package name"),
    ({"packages": ["rdma-core"], "journal_dir": "/proc/x"}, "journal_dir: /proc/x cannot hold the journal"),
])
@pytest.mark.parametrize("check", [False, True])
def test_packages_bad_input_changes_nothing(rnode, params, message, check):
    before, status = rnode.snapshot(), dict(rnode.installed)
    if "journal_dir" in params:
        rnode.write("/proc/x", "a file, not a directory\n")
        before = rnode.snapshot()
    with pytest.raises(Failed, match=message):
        call(rdma_packages, rnode, check=check, **params)
    assert rnode.snapshot() == before and rnode.installed == status


def test_packages_refuse_an_upgrade_rollback_cannot_undo(rnode):
    rnode.upgrade = "libc6"
    with pytest.raises(Failed, match="would upgrade libc6 1.0 -> 2.0; rollback could not restore"):
        call(rdma_packages, rnode, packages=["rdma-core"])
    assert rnode.installed == {"iproute2": "installed"}


def test_packages_dnf_path(rnode):
    """RHEL family: repoquery for availability, the dnf transaction table, rpm -e on rollback."""
    os.unlink(rnode.path("/usr/bin/apt-get"))
    rnode.write("/usr/bin/dnf", "", 0o755)
    rnode.write("/usr/bin/rpm", "", 0o755)
    rpm = {"bash"}
    requires = {"perftest": ["libibverbs", "librdmacm"], "librdmacm": ["libibverbs"], "libibverbs": []}
    base_run = rnode.run

    def run(argv):
        argv = [os.path.basename(argv[0])] + list(argv[1:])
        if argv[0] == "rpm" and argv[1] == "-q":
            return (0 if argv[-1] in rpm else 1), "", ""
        if argv[0] == "rpm" and argv[1] == "-e":
            rpm.discard(argv[2])
            return 0, "", ""
        if argv[:3] == ["dnf", "-q", "repoquery"] and "--requires" in argv:
            return 0, "\n".join(requires[argv[-1]]) + "\n", ""
        if argv[:3] == ["dnf", "-q", "repoquery"]:
            return 0, "\n".join(n for n in argv[5:] if n in requires) + "\n", ""
        if argv[:3] == ["dnf", "install", "--assumeno"]:
            return 1, fixture("dnf-install-assumeno.rdma.el9.txt").replace(
                "infiniband-diags", "perftest-x").split("Installing:")[0] + (
                "Installing:\n perftest   x86_64  23.10-1.el9  appstream  210 k\n"
                "Installing dependencies:\n libibverbs  x86_64  48.0-1.el9  baseos  438 k\n"
                " librdmacm   x86_64  48.0-1.el9  baseos  71 k\n\nTransaction Summary\n"), "Operation aborted.\n"
        if argv[:2] == ["dnf", "install"]:
            rpm.add(argv[-1])
            return 0, "", ""
        return base_run(argv)

    rnode.run = run
    with pytest.raises(Failed, match="perftst not available for debian 12 .dnf repoquery"):
        call(rdma_packages, rnode, packages=["perftst"])
    out = call(rdma_packages, rnode, packages=["perftest", "bash"])
    assert out["manager"] == "dnf" and out["installed"] == ["libibverbs", "librdmacm", "perftest"]
    assert rpm == {"bash", "perftest", "libibverbs", "librdmacm"}
    rollback(rnode)
    assert rpm == {"bash"}


# ---------------------------------------------------------------- rdma_stack
STACK = {"modules": ["ib_umad", "rdma_ucm"], "soft_roce": [{"netdev": "data0"}],
         "memlock": {"group": "rdma", "systemd": "services", "services": ["slurmd.service"]},
         "device_access": {"group": "rdma"}, "netns_mode": "exclusive"}


def test_stack_check_apply_idempotent_rollback_exact(rnode):
    pristine = rnode.snapshot()
    predicted = call(rdma_stack, rnode, check=True, **STACK)
    assert rnode.snapshot() == pristine and rnode.loaded == set() and rnode.rxe == {}
    assert not [c for c in rnode.calls if c[0] == "rdma"]   # its netlink socket would load ib_core
    keys = [c["key"] for c in predicted["changes"]]
    assert [k for k in keys if not k.startswith("dir:")][0] == "file:" + _stack_config.MODPROBE_CONF  # before ib_core
    assert keys.index("dir:/etc/systemd/system/slurmd.service.d") < keys.index("file:" + _stack_config.SERVICE_DROPIN % "slurmd.service")
    kmods = [k[5:] for k in keys if k.startswith("kmod:")]
    assert kmods[0] == "ib_core" and set(kmods) >= {"ib_umad", "rdma_ucm", "rdma_rxe", "ib_uverbs", "udp_tunnel"}
    assert keys.index("kmod:rdma_rxe") < keys.index("rxe:rxe0")
    real = call(rdma_stack, rnode, **STACK)
    assert [c["key"] for c in real["changes"]] == keys and real["current"] == predicted["current"]
    assert rnode.loaded >= {"ib_core", "ib_umad", "rdma_ucm", "rdma_rxe"} and rnode.rxe == {"rxe0": "data0"}
    assert rnode.read("/sys/module/ib_core/parameters/netns_mode") == "N\n"
    assert rnode.read(_stack_config.LIMITS_CONF).endswith("@rdma - memlock unlimited\n")
    assert "LimitMEMLOCK=infinity" in rnode.read(_stack_config.SERVICE_DROPIN % "slurmd.service")
    assert not os.path.exists(rnode.path(_stack_config.SYSTEMD_MANAGER_DROPIN))
    assert "options ib_core netns_mode=0" in rnode.read(_stack_config.MODPROBE_CONF)
    load = rnode.read(_stack_config.MODULES_LOAD)
    assert load.splitlines()[-3:] == ["ib_umad", "rdma_ucm", "rdma_rxe"]
    rule = rnode.read(_stack_config.UDEV_RULE)
    assert 'SUBSYSTEM=="infiniband_verbs", KERNEL=="uverbs*", GROUP="rdma", MODE="0660"' in rule
    assert 'KERNEL=="rdma_cm", GROUP="rdma", MODE="0660"' in rule and "umad" not in rule
    unit = rnode.read(_stack_config.RXE_UNIT)
    assert "ExecStart=-/usr/sbin/rdma link add rxe0 type rxe netdev data0" in unit
    assert os.readlink(rnode.path(_stack_config.RXE_LINK)) == _stack_config.RXE_UNIT
    st = os.stat(rnode.path("/dev/infiniband/rdma_cm"))
    assert (st.st_gid, oct(st.st_mode & 0o777)) == (GID, "0o660")
    assert real["device_nodes"]["/dev/infiniband/rdma_cm"] == {"gid": GID, "mode": "0660"}
    assert real["reboot_required"] is False and real["not_possible"] == [] and real["refused"] == []
    again = call(rdma_stack, rnode, **STACK)
    assert again["changed"] is False and again["changes"] == []
    assert rollback(rnode, check=True)["changed"] is True
    rollback(rnode)
    assert rnode.loaded == set() and rnode.rxe == {}
    assert os.stat(rnode.path("/dev/infiniband/rdma_cm")).st_gid == os.stat(rnode.path("/dev/infiniband")).st_gid
    assert untouched(rnode, pristine)
    for d in ("/etc/modprobe.d", "/etc/systemd", "/etc/udev", "/etc/modules-load.d"):   # created, so removed
        assert not os.path.exists(rnode.path(d)), d
    assert os.path.isdir(rnode.path("/etc/security/limits.d"))                       # was there: stays


def test_stack_journals_modules_the_new_device_made_the_system_load(rnode):
    """rdma-core's udev rules load ULPs (ib_iser, rpcrdma, ib_ipoib...) when an RDMA device appears:
    they hold rdma_cm/ib_cm in use, so they are journaled too and rollback unloads them first."""
    rnode.write("/etc/rdma/modules/rdma.conf", "ib_ipoib\n")
    pristine = rnode.snapshot()
    out = call(rdma_stack, rnode, soft_roce=[{"netdev": "data0"}], mode="runtime")
    assert out["loaded_as_a_consequence"] == ["ib_cm", "ib_ipoib"] and "ib_ipoib" in rnode.loaded
    assert out["changes"][-2:] == [{"key": "kmod:ib_cm", "before": "absent", "after": "loaded"},
                                   {"key": "kmod:ib_ipoib", "before": "absent", "after": "loaded"}]
    assert any("ib_cm, ib_ipoib" in n and "rollback unloads them" in n for n in out["notes"])
    status = call(tuning_state, rnode, action="status")
    assert status["generations"][-1]["keys"] == ["kmod:ib_cm", "kmod:ib_ipoib"]   # a second generation
    assert call(rdma_stack, rnode, soft_roce=[{"netdev": "data0"}], mode="runtime")["changed"] is False
    out = rollback(rnode)
    assert out["refused"] == [] and rnode.loaded == set() and rnode.rxe == {}
    assert untouched(rnode, pristine)


def test_stack_leaves_modules_that_were_loaded_before(rnode):
    rnode.load("ib_core")
    out = call(rdma_stack, rnode, modules=["ib_umad"])
    assert [c["key"] for c in out["changes"]] == ["dir:/etc/modules-load.d", "file:" + _stack_config.MODULES_LOAD,
                                                  "kmod:ib_umad"]
    assert out["modules"] == {"ib_core": "loaded", "ib_umad": "absent"}
    rollback(rnode)
    assert rnode.loaded == {"ib_core"}


def test_stack_rollback_leaves_a_module_in_use_loaded(rnode):
    call(rdma_stack, rnode, modules=["ib_core"], mode="runtime")
    rnode.load("ib_umad")                       # loaded later by someone else: ib_core is in use
    out = rollback(rnode)
    assert out["refused"] == [{"key": "kmod:ib_core", "reason": "kernel module ib_core is in use (refcnt 0, "
                                                                "used by ib_umad); left loaded"}]
    assert rnode.loaded == {"ib_core", "ib_umad"}


def test_stack_netns_busy_is_refused_and_needs_a_reboot(rnode):
    rnode.netns_busy = True
    out = call(rdma_stack, rnode, modules=["ib_core"], netns_mode="exclusive")
    assert [r["key"] for r in out["refused"]] == ["rdma:netns_mode"]
    assert "while other network namespaces exist" in out["refused"][0]["reason"]
    assert out["reboot_required"] is True
    assert "options ib_core netns_mode=0" in rnode.read(_stack_config.MODPROBE_CONF)


def test_stack_persist_only_touches_files(rnode):
    out = call(rdma_stack, rnode, mode="persist", **STACK)
    assert all(c["key"].startswith(("file:", "dir:")) for c in out["changes"]) and rnode.loaded == set()
    assert "DefaultLimitMEMLOCK" not in rnode.read(_stack_config.SERVICE_DROPIN % "slurmd.service")


def test_stack_in_a_container_is_a_named_result(rnode):
    rnode.write("/.dockerenv", "")
    shutil.rmtree(rnode.path("/lib/modules"))
    params = dict(STACK)
    params["memlock"] = {"group": "rdma"}
    with pytest.raises(Failed, match="kernel_modules, soft_roce, netns_mode: not possible in a container"):
        call(rdma_stack, rnode, **params)
    out = call(rdma_stack, rnode, on_not_possible="warn", **params)
    assert [n["part"] for n in out["not_possible"]] == ["kernel_modules", "soft_roce", "netns_mode"]
    assert "shares the host's kernel (%s)" % KVER in out["not_possible"][0]["reason"]
    assert any("module names were not checked" in n for n in out["notes"])
    assert rnode.loaded == set() and rnode.rxe == {}
    assert not [c for c in out["changes"] if c["key"].split(":")[0] in ("kmod", "rxe", "rdma")]
    assert rnode.read(_stack_config.LIMITS_CONF).endswith("@rdma - memlock unlimited\n")
    assert not os.path.exists(rnode.path(_stack_config.SYSTEMD_MANAGER_DROPIN))     # memlock stays with the group
    assert out["reboot_required"] is False


def test_stack_in_a_container_checks_module_names_before_not_possible(rnode):
    """A container with a modules tree: a misspelt module is the answer, not "not possible"."""
    rnode.write("/.dockerenv", "")
    before = rnode.snapshot()
    for on_not_possible in ("fail", "warn"):
        with pytest.raises(Failed, match="modules: kernel %s has no module 'rdma_rxee'" % KVER):
            call(rdma_stack, rnode, modules=["ib_umad", "rdma_rxee"], on_not_possible=on_not_possible)
        with pytest.raises(Failed, match=r"kernel_release: /lib/modules/5.4.0-1/modules.dep does not exist"):
            call(rdma_stack, rnode, modules=["ib_umad"], kernel_release="5.4.0-1", on_not_possible=on_not_possible)
    assert rnode.snapshot() == before


@pytest.mark.parametrize("mode", ["persist", "both"])
@pytest.mark.parametrize("soft_roce, message", [
    ([{"netdev": "a-very-long-ifname0"}],
     r"^soft_roce\[0\].netdev: 'a-very-long-ifname0' is not a network interface "
     r"name \(allowed: 1 to 15 characters, not . or ..\)$"),
    ([{"netdev": ".."}], r"^soft_roce\[0\].netdev: '..' is not a network interface name"),
    ([{"netdev": "data0", "name": "x" * 64}], r"^soft_roce\[0\].name: 'x+' is longer than an RDMA device name"),
    ([{"netdev": "data0"}, {"netdev": "eth1", "name": "rxe1"}, {"netdev": "data0", "name": "rxe2"}],
     r"^soft_roce\[0\] and soft_roce\[2\] both put a soft-RoCE device on data0 \(rxe0, rxe2\); the kernel allows "
     r"one per interface$"),
])
def test_stack_soft_roce_names_are_checked_in_every_mode(rnode, mode, soft_roce, message):
    before = rnode.snapshot()
    for check in (True, False):
        with pytest.raises(Failed, match=message):
            call(rdma_stack, rnode, check=check, mode=mode, soft_roce=soft_roce)
    assert rnode.snapshot() == before and rnode.loaded == set()


def test_stack_rxe_unit_waits_for_the_escaped_device_unit(rnode):
    """systemd names the device unit of enp1s0-v1 sys-subsystem-net-devices-enp1s0\\x2dv1.device."""
    call(rdma_stack, rnode, mode="persist", soft_roce=[{"netdev": "enp1s0-v1"}, {"netdev": "data0", "name": "rxe9"}])
    unit = rnode.read(_stack_config.RXE_UNIT)
    devices = "sys-subsystem-net-devices-enp1s0\\x2dv1.device sys-subsystem-net-devices-data0.device"
    assert "\nWants=%s\n" % devices in unit
    assert "\nAfter=systemd-modules-load.service network-pre.target %s\n" % devices in unit
    assert "ExecStart=-/usr/sbin/rdma link add rxe0 type rxe netdev enp1s0-v1\n" in unit


# ---------------------------------------------------------------- rdma_stack: memlock stays scoped (issue 16, item 2)
def test_stack_memlock_default_is_the_group_and_the_named_services_only(rnode):
    pristine = rnode.snapshot()
    m = FakeModule(rdma_stack.ARGUMENT_SPEC, {"memlock": {"group": "rdma", "services": ["slurmd.service"]}})
    out = rdma_stack.run(m, rnode.host())
    assert [c["key"] for c in out["changes"] if c["key"].startswith("file:")] == [
        "file:" + _stack_config.LIMITS_CONF, "file:" + _stack_config.SERVICE_DROPIN % "slurmd.service"]
    assert rnode.read(_stack_config.LIMITS_CONF).endswith("@rdma - memlock unlimited\n")
    assert rnode.read(_stack_config.SERVICE_DROPIN % "slurmd.service").endswith("[Service]\nLimitMEMLOCK=infinity\n")
    assert not os.path.exists(rnode.path("/etc/systemd/system.conf.d"))
    assert m.warnings == [] and out["reboot_required"] is False
    rollback(rnode)
    assert untouched(rnode, pristine)


def test_stack_memlock_global_is_an_explicit_opt_in_that_warns(rnode):
    pristine = rnode.snapshot()
    m = FakeModule(rdma_stack.ARGUMENT_SPEC, {"memlock": {"group": "rdma", "systemd": "global", "limit": "1048576"}})
    out = rdma_stack.run(m, rnode.host())
    assert rnode.read(_stack_config.SYSTEMD_MANAGER_DROPIN).endswith("[Manager]\nDefaultLimitMEMLOCK=1073741824\n")
    assert out["reboot_required"] is True
    assert len(m.warnings) == 1 and m.warnings[0].startswith(
        "memlock.systemd: global sets DefaultLimitMEMLOCK=1073741824 in /etc/systemd/system.conf.d/90-hpcnet-rdma.conf "
        "for every systemd service; sshd, getty and user@.service pass it to every login session, so every user - not "
        "only the members of group rdma - may lock that much memory")
    rollback(rnode)
    assert untouched(rnode, pristine) and not os.path.exists(rnode.path("/etc/systemd"))


def test_stack_memlock_on_a_login_service_warns(rnode):
    m = FakeModule(rdma_stack.ARGUMENT_SPEC, {"memlock": {"group": "rdma", "services": [
        "slurmd.service", "ssh.service", "serial-getty@ttyS0.service"]}}, check_mode=True)
    rdma_stack.run(m, rnode.host())
    assert m.warnings == ["memlock.services: ssh.service, serial-getty@ttyS0.service start login sessions; every "
                          "login through them inherits LimitMEMLOCK=infinity, not only the members of group rdma"]


@pytest.mark.parametrize("params, message", [
    ({"modules": ["ib_umad", "rdma_rxee"]}, "kernel %s has no module 'rdma_rxee'" % KVER),
    ({"modules": ["ib_umad; reboot"]}, "is not a kernel module name"),
    ({"soft_roce": [{"netdev": "eth9"}]}, "soft_roce: no interface eth9"),
    ({"memlock": {"group": "rdma", "limit": "lots"}}, "memlock.limit: 'lots' is not allowed"),
    ({"memlock": {"group": "rdma", "services": ["slurmd"]}}, "must be systemd service names ending in .service"),
    ({"memlock": {"group": "rdma", "systemd": "none", "services": ["slurmd.service"]}},
     r"memlock.services: slurmd.service given with memlock.systemd: none, which leaves systemd alone"),
    ({"memlock": {"group": "rdma", "systemd": "default"}},
     "value of systemd must be one of: services, global, none, got: default"),
    ({"device_access": {"group": "rdma", "mode": "0666"}}, "gives access to every user"),
    ({"device_access": {"group": "rdma", "mode": "rw"}}, "is not an octal mode"),
    ({"device_access": {"group": "rdma", "devices": ["gpu"]}}, "value of devices must be one or more of"),
    ({"netns_mode": "private"}, "value of netns_mode must be one of"),
    ({"modules": ["ib_umad"], "kernel_release": "5.4.0-1"}, "kernel_release: /lib/modules/5.4.0-1/modules.dep does not exist"),
    ({}, "nothing to do"),
])
@pytest.mark.parametrize("check", [False, True])
def test_stack_bad_input_changes_nothing(rnode, params, message, check):
    before = rnode.snapshot()
    with pytest.raises(Failed, match=message):
        call(rdma_stack, rnode, check=check, **params)
    assert rnode.snapshot() == before and rnode.loaded == set()


def test_stack_missing_kernel_tree_fails_before_changing(rnode):
    shutil.rmtree(rnode.path("/lib/modules"))
    before = rnode.snapshot()
    with pytest.raises(Failed, match="running kernel %s has no /lib/modules" % KVER):
        call(rdma_stack, rnode, modules=["ib_umad"], memlock={"group": "rdma"})
    assert rnode.snapshot() == before


def test_stack_failed_apply_reverts_this_call(rnode):
    rnode.fail_on = "link add"
    before = rnode.snapshot()
    with pytest.raises(Failed, match="rxe:rxe0: .*simulated failure; reverted"):
        call(rdma_stack, rnode, **STACK)
    assert rnode.loaded == set() and untouched(rnode, before)


# ---------------------------------------------------------------- pure planner tables
@pytest.mark.parametrize("norm_in, kinds", [
    ({"modules": ["ib_umad"]}, ["file:" + _stack_config.MODULES_LOAD]),
    ({"memlock": {"group": "hpc", "limit": "1048576", "systemd": "global"}},
     ["file:" + _stack_config.LIMITS_CONF, "file:" + _stack_config.SYSTEMD_MANAGER_DROPIN]),
    ({"memlock": {"group": "hpc", "systemd": "none"}}, ["file:" + _stack_config.LIMITS_CONF]),
    ({"memlock": {"group": "hpc"}}, ["file:" + _stack_config.LIMITS_CONF]),                      # the default: the group only
    ({"memlock": {"group": "hpc", "services": ["a.service"]}},
     ["file:" + _stack_config.LIMITS_CONF, "file:" + _stack_config.SERVICE_DROPIN % "a.service"]),
    ({"netns_mode": "shared"}, ["file:" + _stack_config.MODPROBE_CONF]),
    ({"device_access": {"group": "rdma", "devices": ["umad"]}}, ["file:" + _stack_config.UDEV_RULE]),
])
def test_planned_files(norm_in, kinds):
    norm = _stack_config.normalize(norm_in)
    files = _stack_config.planned_files(norm, "/usr/bin/rdma")
    assert ["file:" + p for p, _s in files] == kinds
    text = "".join(s["content"] for _p, s in files)
    if norm_in.get("memlock", {}).get("limit") == "1048576":
        assert "@hpc - memlock 1048576\n" in text and "DefaultLimitMEMLOCK=1073741824\n" in text
    if "netns_mode" in norm_in:
        assert "options ib_core netns_mode=1\n" in text


# the table checked against systemd-escape --path (systemd 252): what udev's device units are named after
@pytest.mark.parametrize("path, escaped", [
    ("/sys/subsystem/net/devices/enp1s0-v1", "sys-subsystem-net-devices-enp1s0\\x2dv1"),
    ("/sys/subsystem/net/devices/enp1s0.100", "sys-subsystem-net-devices-enp1s0.100"),
    ("/sys/subsystem/net/devices/br-lan_1", "sys-subsystem-net-devices-br\\x2dlan_1"),
    ("/sys/subsystem/net/devices/data0", "sys-subsystem-net-devices-data0"),
    ("/waldo/", "waldo"), ("//x//", "x"), ("/waldo//hallo", "waldo-hallo"), ("/", "-"), ("/a/./b", "a-b"),
    ("/./foo", "foo"), ("/waldo/.bar", "waldo-.bar"), ("/.x", "\\x2ex"), ("/-x", "\\x2dx"),
    ("/foo bar", "foo\\x20bar"), ("/tab\tx", "tab\\x09x"), ("/a\\b", "a\\x5cb"), ("/a%b", "a\\x25b"),
    ("/A~b", "A\\x7eb"), ("/a:b_c.d", "a:b_c.d"), ("/\u00fc", "\\xc3\\xbc"),
])
def test_systemd_escape_path(path, escaped):
    assert _stack_config.systemd_escape_path(path) == escaped


@pytest.mark.parametrize("path", ["/..", "/x/..", "/foo/../bar"])
def test_systemd_escape_path_refuses_what_systemd_refuses(path):
    with pytest.raises(ValueError, match="is not a normalized path"):
        _stack_config.systemd_escape_path(path)


# ---------------------------------------------------------------- fabric_info
def _rxe_sysfs(node):
    base = "/sys/class/infiniband/rxe0"
    node.write(base + "/parent", "data0\n")
    node.write(base + "/fw_ver", "0.0.0\n")
    node.write(base + "/node_type", "1: CA\n")
    node.write(base + "/node_guid", "5054:00ff:fe12:3401\n")
    p = base + "/ports/1"
    node.write(p + "/state", "4: ACTIVE\n")
    node.write(p + "/phys_state", "5: LinkUp\n")
    node.write(p + "/rate", "2.5 Gb/sec (1X SDR)\n")
    node.write(p + "/link_layer", "Ethernet\n")
    node.write(p + "/gids/0", "fe80:0000:0000:0000:5054:00ff:fe12:3401\n")
    node.write(p + "/gids/1", "0000:0000:0000:0000:0000:ffff:0a4d:0001\n")
    node.write(p + "/gids/2", "0000:0000:0000:0000:0000:0000:0000:0000\n")
    for i in (0, 1):
        node.write(p + "/gid_attrs/types/%d" % i, "RoCE v2\n")
        node.write(p + "/gid_attrs/ndevs/%d" % i, "data0\n")
    node.write("/sys/class/net/data0/statistics/rx_dropped", "7\n")
    node.write("/sys/class/net/data0/operstate", "up\n")
    with open(os.path.join(FIXTURES, "softnet_stat.2cpu.captured.txt"), encoding="utf-8") as f:
        node.write("/proc/net/softnet_stat", f.read())
    node.write("/proc/net/snmp", "Tcp: OutSegs RetransSegs\nTcp: 1000 5\n")
    node.write("/proc/interrupts", "           CPU0       CPU1\n  1:  9  0  IO-APIC  1-edge  i8042\n")


def test_fabric_info_reads_sysfs_and_tools(rnode):
    _rxe_sysfs(rnode)
    rnode.load("rdma_rxe")
    base_run = rnode.run

    def run(argv):
        if os.path.basename(argv[0]) == "ibv_devinfo":
            return 0, fixture("ibv_devinfo-v.rxe.txt"), ""
        return base_run(argv)

    rnode.run = run
    before = rnode.snapshot()
    out = call(fabric_info, rnode, tools=["ibv_devinfo", "rdma"])
    assert rnode.snapshot() == before and out["changed"] is False
    port = out["devices"]["rxe0"]["ports"][1]
    assert out["devices"]["rxe0"]["driver"] == "rdma_rxe" and out["devices"]["rxe0"]["parent"] == "data0"
    assert (port["state"], port["phys_state"], port["rate_gbps"], port["link_layer"]) == ("ACTIVE", "LinkUp", 2.5, "Ethernet")
    assert [g["index"] for g in port["gids"]] == [0, 1] and port["roce_versions"] == ["RoCE v2"]
    assert port["netdevs"] == ["data0"] and port["active_mtu"] == 4096
    nd = out["netdevs"]["data0"]
    assert nd["mtu"] == 1500 and nd["counters"]["rx_dropped"] == 7 and nd["rings"] is None
    assert nd["channels"]["max"]["rx"] == 2 and "rx_queue_0_drops" not in (nd["ethtool_counters"] or {})
    assert out["host"]["softnet"]["dropped"] == 0 and out["host"]["tcp"]["retrans_segs"] == 5
    assert out["tools"]["rdma"] == []
    assert out["netns_mode"] == "shared" and "rdma_rxe" in out["modules"] and "ib_core" in out["modules"]
    assert "data0: non-zero error/drop/pause counters: rx_dropped=7" in out["findings"]
    assert any(f.startswith("TCP retransmitted 5 of 1000") for f in out["findings"])


def test_fabric_info_without_rdma_and_bad_interface(rnode):
    out = call(fabric_info, rnode)
    assert out["tools"]["rdma"] == {"skipped": "ib_core is not loaded (no RDMA device); running rdma would load it"}
    assert "skipped" in out["tools"]["ibv_devinfo"] and "skipped" in out["tools"]["ibstat"]
    assert not [c for c in rnode.calls if c[0] in ("rdma", "ibv_devinfo", "ibstat")] and rnode.loaded == set()
    out = call(fabric_info, rnode, tools=[], ethtool=False)
    assert out["devices"] == {} and out["netdevs"] == {} and out["modules"] == [] and out["netns_mode"] is None
    with pytest.raises(Failed, match="unknown interface 'ib0'"):
        call(fabric_info, rnode, interfaces=["ib0"])


def test_pkg_names_helpers():
    with pytest.raises(ValueError, match="'../x.deb' is not a package name"):
        _pkg.validate_names(["../x.deb"])
    assert _pkg.topo_order(["a", "b", "c"], {"a": ["c"], "c": ["b"]}) == ["b", "c", "a"]
    assert _pkg.topo_order(["a", "b"], {"a": ["b"], "b": ["a"]}) in (["b", "a"], ["a", "b"])


def test_modules_loaded_in_consequence_are_not_released_by_the_next_call(rnode):
    """With a release_scope (the tuning role's), the follow-up generation of the modules udev loaded
    is not claimed by the scope: the next call cannot plan them, so it must leave them loaded (and
    not release what the first generation set either): idempotent; rollback still unloads them."""
    rnode.write("/etc/rdma/modules/rdma.conf", "ib_ipoib\n")
    pristine = rnode.snapshot()
    params = dict(soft_roce=[{"netdev": "data0"}], mode="runtime", release_scope="tuning.stack")
    out = call(rdma_stack, rnode, journal_run="r1", **params)
    assert out["loaded_as_a_consequence"] == ["ib_cm", "ib_ipoib"]
    gens = call(tuning_state, rnode, action="status")["generations"]
    assert [g.get("scope") for g in gens] == ["tuning.stack", None] and {g["run"] for g in gens} == {"r1"}
    again = call(rdma_stack, rnode, journal_run="r2", **params)
    assert again["changed"] is False and "ib_ipoib" in rnode.loaded and "rdma_rxe" in rnode.loaded
    rollback(rnode)
    assert rnode.loaded == set() and untouched(rnode, pristine)
