# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils import _sysctl

F = _sysctl.DEFAULT_FILE
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
    desired = dict((_sysctl.normalize_key(k), v) for k, v in desired.items())
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
        _sysctl.normalize_key(key)


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
