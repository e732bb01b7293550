# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A rollback does not silently discard a hand edit (issue 30): real module runs on a temp tree.
A managed file whose bytes are not what the tune wrote is kept beside the restored original as
``PATH.hpcnet-rdma-edited`` (with its mode and owner), the result lists it in ``kept_edits`` (check
mode predicts it and writes nothing), and a file nobody edited gets no copy."""
from __future__ import annotations

import json
import os

from rlib import ROLLBACK, TUNE, clone, forked, snapshot

NOBODY = 65534
UCX = "etc/ucx/ucx.conf"                          # created by the tune
LIMITS = "etc/security/limits.d/90-rdma.conf"     # replaced by the tune (nobody's, 0640, CRLF)


def _edit(node: str, rel: str, text: bytes) -> None:
    with open(os.path.join(node, rel), "ab") as f:
        f.write(text)


def test_rollback_keeps_each_hand_edited_file_beside_the_restored_original(pristine, work):
    node = clone(pristine, os.path.join(work, "node"))
    before = snapshot(node)
    status, results = forked(node, TUNE, os.path.join(work, "out.json"))
    assert [r["rc"] for r in results] == [0, 0]
    _edit(node, UCX, b"UCX_NET_DEVICES=mlx5_0:1  # the admin's\n")
    _edit(node, LIMITS, b"@hpc - stack unlimited\n")
    edited = snapshot(node)

    status, (predicted,) = forked(node, [dict(ROLLBACK[0], check_mode=True)], os.path.join(work, "out.json"))
    assert predicted["rc"] == 0, predicted
    expected = [{"key": "file:/" + LIMITS, "path": "/" + LIMITS, "copy": "/" + LIMITS + ".hpcnet-rdma-edited"},
                {"key": "file:/" + UCX, "path": "/" + UCX, "copy": "/" + UCX + ".hpcnet-rdma-edited"}]
    assert sorted(predicted["kept_edits"], key=lambda e: e["key"]) == expected
    assert snapshot(node) == edited                                     # check mode wrote nothing

    status, (done,) = forked(node, ROLLBACK, os.path.join(work, "out.json"))
    assert done["rc"] == 0, done.get("msg")
    assert sorted(done["kept_edits"], key=lambda e: e["key"]) == expected
    assert "rollback kept 2 file(s) edited by hand since the tune" in json.dumps(done["warnings"])
    now = snapshot(node)
    # the copies: the edited bytes, with the edited file's mode and owner
    assert now[UCX + ".hpcnet-rdma-edited"] == edited[UCX]
    assert now[LIMITS + ".hpcnet-rdma-edited"] == edited[LIMITS]
    assert now[LIMITS + ".hpcnet-rdma-edited"][2:4] == (NOBODY, NOBODY)
    # everything else is pristine: the limits file byte- and owner-exact, ucx.conf gone; /etc/ucx stays,
    # as it holds the kept copy (refused, not failed)
    assert now[LIMITS] == before[LIMITS] and UCX not in now
    assert [r["key"] for r in done["refused"]] == ["dir:/etc/ucx"]
    rest = dict((k, v) for k, v in now.items() if not k.endswith(".hpcnet-rdma-edited") and k != "etc/ucx")
    assert rest == before
    # the sysctl.d file was not edited: restored with no copy
    assert not any(k.startswith("etc/sysctl.d/") and k.endswith("-edited") for k in now)


def test_a_second_kept_edit_does_not_overwrite_the_first(pristine, work):
    node = clone(pristine, os.path.join(work, "node"))
    first = os.path.join(node, LIMITS + ".hpcnet-rdma-edited")
    with open(first, "w") as f:
        f.write("an edit kept by an earlier rollback\n")
    status, results = forked(node, TUNE, os.path.join(work, "out.json"))
    _edit(node, LIMITS, b"# again\n")
    status, (done,) = forked(node, ROLLBACK, os.path.join(work, "out.json"))
    assert done["rc"] == 0
    assert [e["copy"] for e in done["kept_edits"]] == ["/" + LIMITS + ".hpcnet-rdma-edited.1"]
    with open(first) as f:
        assert f.read() == "an edit kept by an earlier rollback\n"
    with open(os.path.join(node, LIMITS + ".hpcnet-rdma-edited.1"), "rb") as f:
        assert f.read().endswith(b"# again\n")
