# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

import os
import re

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.sysctl import _domain as _sysctl
from ansible_collections.hpcnet.rdma.plugins.module_utils.sysctl import _keys as _sysctl_keys
from ansible_collections.hpcnet.rdma.plugins.modules import sysctl_tuning

from ....conftest import Failed, FakeModule

F = _sysctl_keys.DEFAULT_FILE
J = "/var/lib/hpcnet-rdma"


def obs(value=None, exists=True, writable=True):
    return {"exists": exists, "writable": writable and exists, "value": value}


# (desired, observed, mode, in_container, expected runtime changes, expected unsettable keys)
PLAN_CASES = [
    pytest.param({"net.ipv4.tcp_rmem": [4096, 87380, 268435456]}, {"net.ipv4.tcp_rmem": obs("4096 131072 6291456")},
                 "runtime", False, [("sysctl:net.ipv4.tcp_rmem", "4096 131072 6291456", "4096 87380 268435456")], [],
                 id="list-value-normalised"),
    pytest.param({"net.ipv4.tcp_rmem": "4096   131072\t6291456"}, {"net.ipv4.tcp_rmem": obs("4096 131072 6291456")},
                 "runtime", False, [], [], id="whitespace-equal-is-no-change"),
    pytest.param({"vm.swappiness": 10}, {"vm.swappiness": obs("60")}, "runtime", False,
                 [("sysctl:vm.swappiness", "60", "10")], [], id="int"),
    pytest.param({"vm.swappiness": 10}, {"vm.swappiness": obs("60")}, "runtime", True, [], ["vm.swappiness"],
                 id="global-in-container-unsettable"),
    pytest.param({"net.ipv4.tcp_sack": 0}, {"net.ipv4.tcp_sack": obs("1")}, "runtime", True,
                 [("sysctl:net.ipv4.tcp_sack", "1", "0")], [], id="netns-key-in-container-settable"),
    pytest.param({"net.core.netdev_max_backlog": 250000}, {"net.core.netdev_max_backlog": obs(exists=False)},
                 "runtime", False, [], ["net.core.netdev_max_backlog"], id="known-but-absent-in-netns"),
    pytest.param({"net.core.rmem_default": 1}, {"net.core.rmem_default": obs("212992", writable=False)},
                 "runtime", False, [], ["net.core.rmem_default"], id="read-only-in-child-netns"),
    pytest.param({"net.ipv4.tcp_congestion_control": "bbr"}, {"net.ipv4.tcp_congestion_control": obs("cubic")},
                 "runtime", False, [("sysctl:net.ipv4.tcp_congestion_control", "cubic", "bbr")], [], id="string"),
    pytest.param({"net.ipv4.tcp_sack": 0}, {"net.ipv4.tcp_sack": obs("1")}, "persist", False, [], [],
                 id="persist-only-touches-no-runtime"),
    pytest.param({"net/ipv4/tcp_sack": 0}, {"net.ipv4.tcp_sack": obs("1")}, "runtime", False,
                 [("sysctl:net.ipv4.tcp_sack", "1", "0")], [], id="slash-key"),
]


@pytest.mark.parametrize("desired, observed, mode, container, runtime, unsettable", PLAN_CASES)
def test_plan(desired, observed, mode, container, runtime, unsettable):
    desired = dict((_sysctl_keys.normalize_key(k), v) for k, v in desired.items())
    out = _sysctl.plan(desired, observed, mode, container, "warn", F, None, J)
    got = [(c.key, c.before, c.after) for c in out["plan"] if c.domain == "sysctl"]
    assert got == runtime
    assert [u["key"] for u in out["unsettable"]] == unsettable
    files = [c for c in out["plan"] if c.domain == "file"]
    if mode == "runtime":
        assert files == []
    else:
        assert len(files) == 1 and files[0].before is None
        for key, value in out["desired"].items():
            assert "%s = %s\n" % (key, value) in files[0].after["content"]


@pytest.mark.parametrize("desired, observed, message", [
    ({"net.ipv4.tcp_rmme": 1}, {"net.ipv4.tcp_rmme": obs(exists=False)}, "unknown key 'net.ipv4.tcp_rmme'"),
    ({"vm.swappiness": "lots"}, {"vm.swappiness": obs("60")}, "vm.swappiness: value 'lots' is not numeric; allowed: one integer"),
    ({"net.ipv4.tcp_rmem": "4096 87380"}, {"net.ipv4.tcp_rmem": obs("4096 131072 6291456")},
     "has 2 number\\(s\\); allowed: 3 integers"),
    ({"net.ipv4.tcp_rmem": "a b c"}, {"net.ipv4.tcp_rmem": obs("4096 131072 6291456")}, "is not numeric"),
    ({"net.ipv4.conf.all.rp_filter": "x"}, {"net.ipv4.conf.all.rp_filter": obs("2")}, "not numeric"),
    ({"vm.swappiness": True}, {"vm.swappiness": obs("60")}, "is a boolean"),
    ({"vm.swappiness": ""}, {"vm.swappiness": obs("60")}, "value is empty"),
])
def test_bad_values_are_refused(desired, observed, message):
    with pytest.raises(ValueError, match=message):
        _sysctl.plan(desired, observed, "both", False, "warn", F, None, J)


@pytest.mark.parametrize("key", ["", "net..core", "net.core.rmem_max; reboot", "../../etc/passwd", 5])
def test_key_syntax(key):
    with pytest.raises(ValueError, match="is not a sysctl name"):
        _sysctl_keys.normalize_key(key)


def test_unsettable_fails_unless_warn():
    observed = {"vm.swappiness": obs("60"), "net.ipv4.tcp_sack": obs("1")}
    with pytest.raises(ValueError, match="not settable here: vm.swappiness"):
        _sysctl.plan({"vm.swappiness": 1, "net.ipv4.tcp_sack": 0}, observed, "both", True, "fail", F, None, J)


def test_unsettable_key_is_still_persisted_for_boot():
    out = _sysctl.plan({"vm.swappiness": 1}, {"vm.swappiness": obs("60")}, "both", True, "warn", F, None, J)
    assert "vm.swappiness = 1\n" in out["plan"].changes[0].after["content"]


@pytest.mark.parametrize("files, warned", [
    ({"/etc/sysctl.d/99-site.conf": "net.core.rmem_max = 212992\n"}, ["/etc/sysctl.d/99-site.conf"]),
    ({"/etc/sysctl.d/10-early.conf": "net.core.rmem_max = 212992\n"}, []),
    ({"/etc/sysctl.d/99-site.conf": "net.core.rmem_max = 268435456\n"}, []),
    ({"/etc/sysctl.conf": "net/core/rmem_max=1\n"}, ["/etc/sysctl.conf"]),
    ({"/usr/lib/sysctl.d/95-glob.conf": "-net.core.*mem_max = 1\n# net.core.rmem_max = 5\n"},
     ["/usr/lib/sysctl.d/95-glob.conf"]),
])
def test_boot_overrides(files, warned):
    warnings = _sysctl.boot_overrides(F, {"net.core.rmem_max": "268435456"}, files)
    assert [w.split(": ", 1)[1].split(" sets")[0] for w in warnings] == warned


def test_boot_files_follow_systemd_precedence(node):
    node.write("/usr/lib/sysctl.d/50-default.conf", "a = 1\n")
    node.write("/etc/sysctl.d/50-default.conf", "a = 2\n")     # shadows /usr/lib's file of the same name
    node.write("/run/sysctl.d/99-late.conf", "b = 1\n")
    node.write("/etc/sysctl.d/README", "not a conf\n")
    node.write("/etc/sysctl.conf", "c = 1\n")
    files = _sysctl.boot_files(node.host(), F)
    assert list(files) == ["/etc/sysctl.d/50-default.conf", "/run/sysctl.d/99-late.conf", "/etc/sysctl.conf"]


# --------------------------------------------------------------------------- the module: file, keys, values
def run(node, check=False, **params):
    params.setdefault("context", "host")
    return sysctl_tuning.run(FakeModule(sysctl_tuning.ARGUMENT_SPEC, params, check_mode=check), node.host())


@pytest.fixture
def kernel(node):
    node.sysctl("net.ipv4.tcp_sack", "1")
    node.sysctl("net.ipv4.tcp_congestion_control", "cubic")
    node.sysctl("net.ipv4.tcp_available_congestion_control", "reno cubic", writable=False)
    node.sysctl("net.core.default_qdisc", "pfifo_fast")
    node.sysctl("kernel.osrelease", "6.1.0-test", writable=False)
    node.write("/lib/modules/6.1.0-test/modules.dep",
               "kernel/net/ipv4/tcp_bbr.ko.xz:\nkernel/net/ipv4/tcp_diag.ko.xz: kernel/net/ipv4/inet_diag.ko.xz\n"
               "kernel/net/sched/sch_fq.ko.xz:\n")
    node.write("/lib/modules/6.1.0-test/modules.builtin", "kernel/net/sched/sch_fq_codel.ko\n")
    node.write("/etc/passwd", "root:x:0:0:root:/root:/bin/bash\n")
    return node


@pytest.mark.parametrize("path, message", [
    ("/etc/sysctl.d/../../tmp/x/evil.conf", "has a '..'"),
    ("/etc/passwd", "is not in a sysctl.d directory"),
    ("/etc/sysctl.d/90-hpcnet", "does not end in .conf"),
    ("/etc/sysctl.d/sub/90-x.conf", "is not in a sysctl.d directory"),
    ("/usr/lib/sysctl.d/90-x.conf", "is not in a sysctl.d directory"),
    ("/run/sysctl.d/90-x.conf", "is not in a sysctl.d directory"),
    ("/etc/sysctl.d/.90-x.conf", "is hidden"),
    ("/etc/sysctl.d/90 x.conf", "is not a plain file name"),
    ("etc/sysctl.d/90-x.conf", "is not an absolute path"),
])
@pytest.mark.parametrize("check", [True, False])
def test_file_outside_sysctl_d_is_refused_before_anything(kernel, path, message, check):
    before = kernel.snapshot()
    with pytest.raises(Failed, match="^file: .*%s.*allowed: a NAME.conf directly in /etc/sysctl.d or "
                                     "/usr/local/lib/sysctl.d" % re.escape(message)):
        run(kernel, check=check, file=path, sysctls={"net.ipv4.tcp_sack": 0})
    assert kernel.snapshot() == before
    assert not os.path.exists(kernel.path("/tmp"))


def test_file_is_normalised(kernel):
    out = run(kernel, file="//etc/sysctl.d/./91-site.conf", sysctls={"net.ipv4.tcp_sack": 0})
    assert [c["key"] for c in out["changes"]] == [
        "sysctl:net.ipv4.tcp_sack", "dir:/etc/sysctl.d", "file:/etc/sysctl.d/91-site.conf"]
    assert kernel.read("/etc/sysctl.d/91-site.conf").endswith("net.ipv4.tcp_sack = 0\n")


@pytest.mark.parametrize("value", ["cubic\nkernel.panic=1", "cubic\r", "cu\tbic", "cubic\x00", "cubic\x7f"])
def test_control_characters_in_a_value_are_refused(kernel, value):
    before = kernel.snapshot()
    with pytest.raises(Failed, match=r"^sysctls.net.ipv4.tcp_congestion_control: value .* has a control character"):
        run(kernel, sysctls={"net.ipv4.tcp_congestion_control": value})
    assert kernel.snapshot() == before


def test_a_numeric_list_may_use_tabs_as_the_kernel_prints_it(kernel):
    kernel.sysctl("net.ipv4.tcp_rmem", "4096\t131072\t6291456")
    assert run(kernel, sysctls={"net.ipv4.tcp_rmem": "4096\t87380\t6291456"})["sysctls"] == {
        "net.ipv4.tcp_rmem": "4096 87380 6291456"}


@pytest.mark.parametrize("key, value, error", [
    ("net.ipv4.tcp_congestion_control", "bbr", None),         # tcp_bbr.ko: the kernel loads it on write
    ("net.ipv4.tcp_congestion_control", "reno", None),
    ("net.ipv4.tcp_congestion_control", "diag", "'diag' is not offered by this kernel; allowed: bbr, cubic, reno"),
    ("net.ipv4.tcp_congestion_control", "westwood", "'westwood' is not offered by this kernel; allowed: bbr, cubic, reno"),
    ("net.core.default_qdisc", "fq", None),
    ("net.core.default_qdisc", "fq_codel", None),
    ("net.core.default_qdisc", "pfifo_fast", None),
    ("net.core.default_qdisc", "cake", "'cake' is not offered by this kernel; allowed: bfifo, fq, fq_codel, mq, "),
])
def test_string_values_are_checked_against_what_the_kernel_offers(kernel, key, value, error):
    if error is None:
        assert run(kernel, sysctls={key: value})["sysctls"] == {key: value}
        assert kernel.read(_sysctl_keys.proc_path(key)).strip() == value
        return
    before = kernel.snapshot()
    with pytest.raises(Failed, match="^sysctls.%s: %s" % (re.escape(key), re.escape(error))):
        run(kernel, sysctls={key: value})
    assert kernel.snapshot() == before


def test_without_the_module_list_an_unknown_string_is_written_and_reported_unchecked(kernel):
    os.unlink(kernel.path("/lib/modules/6.1.0-test/modules.dep"))
    m = FakeModule(sysctl_tuning.ARGUMENT_SPEC, {"sysctls": {"net.core.default_qdisc": "cake"}, "context": "host"})
    sysctl_tuning.run(m, kernel.host())
    assert kernel.read("/proc/sys/net/core/default_qdisc").strip() == "cake"
    assert sorted(set(w for w in m.warnings if "not checked" in w)) == [
        "sysctl net.core.default_qdisc: 'cake' not checked against the kernel: /lib/modules/6.1.0-test/modules.dep "
        "is not readable, so which modules could provide it is unknown; the kernel refuses it when written if "
        "it has none"]


def test_persist_mode_only_warns_about_a_value_the_running_kernel_lacks(kernel):
    m = FakeModule(sysctl_tuning.ARGUMENT_SPEC, {"sysctls": {"net.core.default_qdisc": "cake"}, "context": "host",
                                                 "mode": "persist"})
    sysctl_tuning.run(m, kernel.host())
    assert kernel.read(_sysctl_keys.DEFAULT_FILE).endswith("net.core.default_qdisc = cake\n")
    assert any("'cake' is not offered by the running kernel" in w and "the kernel this file boots" in w
               for w in m.warnings)


@pytest.mark.parametrize("sysctls, names", [
    ({"net.ipv4.tcp_sack": 0, "net/ipv4/tcp_sack": 1}, "'net.ipv4.tcp_sack' and 'net/ipv4/tcp_sack'"),
    ({"net/ipv4/tcp_sack": 0, "net.ipv4.tcp_sack": 0}, "'net/ipv4/tcp_sack' and 'net.ipv4.tcp_sack'"),
])
def test_one_sysctl_in_dotted_and_slash_form_names_both(kernel, sysctls, names):
    with pytest.raises(Failed, match="^sysctls: %s are the same sysctl net.ipv4.tcp_sack; give it once"
                                     % re.escape(names)):
        run(kernel, sysctls=sysctls)


@pytest.mark.parametrize("key, canonical, path", [
    ("net/ipv4/conf/eth0.100/rp_filter", "net.ipv4.conf.eth0/100.rp_filter", "/proc/sys/net/ipv4/conf/eth0.100/rp_filter"),
    ("net.ipv4.conf.eth0/100.rp_filter", "net.ipv4.conf.eth0/100.rp_filter", "/proc/sys/net/ipv4/conf/eth0.100/rp_filter"),
    ("net/ipv4/tcp_sack", "net.ipv4.tcp_sack", "/proc/sys/net/ipv4/tcp_sack"),
])
def test_slash_form_swaps_dots_and_slashes_as_sysctl_d_says(key, canonical, path):
    assert _sysctl_keys.normalize_key(key) == canonical
    assert _sysctl_keys.proc_path(canonical) == path


@pytest.mark.parametrize("key, code, words", [
    ("net.ipv4.ip_default_ttl", 22, "(EINVAL: Invalid argument): out of the range or set of values it allows; "
                                    "allowed: 1-255; it still holds '64'"),
    ("net.core.somaxconn", 34, "(ERANGE: Numerical result out of range): out of the range or set of values it "
                               "allows; it still holds '64'"),
])
def test_a_refused_value_names_key_value_errno_and_the_known_range(key, code, words):
    msg = _sysctl.refused_message(key, "0", code, "64")
    assert msg == "the kernel refused '0' for %s %s" % (key, words)
