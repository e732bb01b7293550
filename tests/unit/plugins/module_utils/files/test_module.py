# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""managed_files through run() on a fake tree (the fabric_app_config role's templates:
tests/unit/roles/fabric_app_config/)."""
from __future__ import annotations

import hashlib
import json
import os

import pytest

from ansible_collections.hpcnet.rdma.plugins.modules import managed_files, tuning_state

from ....conftest import Failed, FakeModule

MPI = "/etc/openmpi/openmpi-mca-params.conf"


def files(node, check=False, **params):
    params.setdefault("files", [
        {"path": "/etc/nccl.conf", "content": "NCCL_IB_TC=106\n"},
        {"path": "/etc/ucx/ucx.conf", "content": "UCX_IB_TRAFFIC_CLASS=106\n"},
        {"path": "/etc/ucx/more/x.conf", "content": "x\n", "mode": "600"},
        {"path": MPI, "content": "pml = ucx\n"},
    ])
    return managed_files.run(FakeModule(managed_files.ARGUMENT_SPEC, params, check_mode=check), node.host())


def state(node, **params):
    return tuning_state.run(FakeModule(tuning_state.ARGUMENT_SPEC, params), node.host())


@pytest.fixture
def etc(node):
    node.write(MPI, "# packaged by Debian\nbtl_base_warn_component_unused = 0\n", 0o640)
    node.write("/etc/hostname", "node1\n")
    return node


def outside_journal(node):
    jdir = node.path("/var/lib/hpcnet-rdma")
    return dict((k, v) for k, v in node.snapshot()["files"].items() if not k.startswith(jdir))


def test_check_mode_predicts_exactly_and_writes_nothing(etc):
    before = etc.snapshot()
    predicted = files(etc, check=True)
    assert etc.snapshot() == before
    assert [c["key"] for c in predicted["changes"]] == [
        "file:/etc/nccl.conf", "dir:/etc/ucx", "file:/etc/ucx/ucx.conf", "dir:/etc/ucx/more",
        "file:/etc/ucx/more/x.conf", "file:" + MPI]
    real = files(etc)
    assert real["changes"] == predicted["changes"] and real["current"] == predicted["current"]
    assert etc.read("/etc/ucx/more/x.conf") == "x\n"
    assert oct(os.stat(etc.path("/etc/ucx/more/x.conf")).st_mode & 0o777) == "0o600"
    assert files(etc)["changed"] is False


def test_rollback_restores_originals_and_removes_what_was_created(etc):
    pristine = outside_journal(etc)
    files(etc)
    files(etc, files=[{"path": "/etc/nccl.conf", "content": "NCCL_IB_TC=98\n"}])
    state(etc, action="rollback")
    assert outside_journal(etc) == pristine
    assert not os.path.exists(etc.path("/etc/ucx"))
    assert etc.read(MPI) == "# packaged by Debian\nbtl_base_warn_component_unused = 0\n"


def test_absent_removes_and_rollback_brings_it_back(etc):
    pristine = outside_journal(etc)
    out = files(etc, files=[{"path": MPI, "state": "absent"}])
    assert out["changes"][0]["after"] is None and not os.path.exists(etc.path(MPI))
    assert files(etc, files=[{"path": MPI, "state": "absent"}])["changed"] is False
    state(etc, action="rollback")
    assert outside_journal(etc) == pristine


@pytest.mark.parametrize("entries, message", [
    ([{"path": "etc/nccl.conf", "content": "x"}], r"files\[0\].path: 'etc/nccl.conf' is not an absolute file path"),
    ([{"path": "/etc/a", "content": "x"}, {"path": "/etc/a", "content": "y"}], r"files\[1\].path: /etc/a is given twice"),
    ([{"path": "/etc/a.conf", "content": "x"}, {"path": "//etc//a.conf", "content": "y"}],
     r"files\[1\].path: /etc/a.conf is given twice \(files\[0\].path '/etc/a.conf' and files\[1\].path '//etc//a.conf'\)"),
    ([{"path": "/etc/./ucx/a.conf", "content": "x"}, {"path": "/etc/ucx/a.conf", "state": "absent"}],
     r"files\[1\].path: /etc/ucx/a.conf is given twice \(files\[0\].path '/etc/./ucx/a.conf'"),
    ([{"path": "/etc/x/../passwd", "content": "x"}], r"files\[0\].path: '/etc/x/../passwd' is not an absolute file path \(no '..'"),
    ([{"path": "/etc/ucx/", "content": "x"}], r"files\[0\].path: '/etc/ucx/' is not an absolute file path"),
    ([{"path": "/etc/a", "content": "x", "mode": 644}], r"files\[0\].mode: 644 is the integer 644 \(octal 01204\), not a "
                                                        r"permission mode; quote octal modes: \"0644\""),
    ([{"path": "/etc/a", "content": "x", "mode": True}], r"files\[0\].mode: True is not an octal mode"),
    ([{"path": "/etc/a", "content": "x", "mode": "4755"}], r"files\[0\].mode: '4755' is not an octal mode"),
    ([{"path": "/etc/a", "content": "x", "mode": "rw-r--r--"}], r"files\[0\].mode: 'rw-r--r--' is not an octal mode"),
    ([{"path": "/etc/a"}], r"files\[0\].content: required for /etc/a with state present"),
    ([{"path": "/etc/a", "content": "x", "state": "gone"}], "value of state must be one of: present, absent"),
])
@pytest.mark.parametrize("check", [False, True])
def test_bad_input_changes_nothing(etc, entries, message, check):
    before = etc.snapshot()
    with pytest.raises(Failed, match=message):
        files(etc, check=check, files=entries)
    assert etc.snapshot() == before


@pytest.mark.parametrize("mode, expected", [(420, "0o644"), (0o600, "0o600"), ("644", "0o644"), ("0640", "0o640")])
def test_an_integer_mode_is_the_numeric_mode_as_ansible_file_modules_read_it(node, mode, expected):
    # `mode: 0644` unquoted is the YAML integer 420: the numeric mode 0644, never "420"
    files(node, files=[{"path": "/etc/a.conf", "content": "x\n", "mode": mode}])
    assert oct(os.stat(node.path("/etc/a.conf")).st_mode & 0o7777) == expected
    assert files(node, files=[{"path": "/etc/a.conf", "content": "x\n", "mode": mode}])["changed"] is False


def test_content_is_no_log_and_never_echoed(etc):
    assert managed_files.ARGUMENT_SPEC["files"]["options"]["content"]["no_log"] is True
    secret = "NCCL_IB_HCA=mlx5_0 # secret-ish\n"
    for check in (True, False):
        out = files(etc, check=check, files=[{"path": "/etc/nccl.conf", "content": secret},
                                             {"path": MPI, "content": "pml = ucx\n"}])
        shown = json.dumps(dict((k, v) for k, v in out.items() if k != "diff"))
        assert "secret-ish" not in shown and "pml = ucx" not in shown and "packaged by Debian" not in shown
        assert out["current"]["file:/etc/nccl.conf"] == {
            "mode": "0644", "size": len(secret), "sha1": hashlib.sha1(secret.encode()).hexdigest()}
        assert out["changes"][1]["before"]["size"] == len("# packaged by Debian\nbtl_base_warn_component_unused = 0\n")


def test_bytes_are_exact_through_apply_and_rollback(etc):
    with open(etc.path(MPI), "wb") as f:
        f.write(b"# \xe9dit\xe9 sous Windows\r\nbtl = ^openib\r\n")
    pristine = outside_journal(etc)
    out = files(etc, files=[{"path": MPI, "content": "pml = ucx\r\n"}])
    assert out["changed"] and open(etc.path(MPI), "rb").read() == b"pml = ucx\r\n"
    assert files(etc, files=[{"path": MPI, "content": "pml = ucx\r\n"}])["changed"] is False
    state(etc, action="rollback")
    assert outside_journal(etc) == pristine


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_a_replaced_file_keeps_its_owner_and_rollback_restores_it(etc):
    os.chown(etc.path(MPI), 65534, 65534)
    out = files(etc, files=[{"path": MPI, "content": "pml = ucx\n", "mode": "0644"}])
    st = os.stat(etc.path(MPI))
    assert (st.st_uid, st.st_gid, st.st_mode & 0o777) == (65534, 65534, 0o644)
    assert out["previous"]["file:" + MPI]["uid"] == 65534 and out["current"]["file:" + MPI]["uid"] == 65534
    assert files(etc, files=[{"path": MPI, "content": "pml = ucx\n", "mode": "0644"}])["changed"] is False
    os.unlink(etc.path(MPI))          # gone in between: rollback still brings back owner and mode
    state(etc, action="rollback")
    st = os.stat(etc.path(MPI))
    assert (st.st_uid, st.st_gid, st.st_mode & 0o777) == (65534, 65534, 0o640)
