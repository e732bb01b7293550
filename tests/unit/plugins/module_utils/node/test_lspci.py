# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""`lspci -vvv -s BDF` on verbatim captures of a real machine (tests/unit/fixtures/real/lspci/, source in each
header): the PCIe port type and the ACS bits the health check judges (pcie.acs)."""
from __future__ import annotations

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._lspci import LSPCI, parse_lspci_vvv, redirects
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import ParseError

from ....fixtures.real.loader import real_capture, real_header

ACS = "lspci/amd_matisse.downstream_port.0000_03_02.0.txt"
DENIED = "lspci/amd_matisse.access_denied.0000_03_05.0.txt"


def test_a_switch_downstream_port_with_acs_redirection():
    assert "lore.kernel.org" in real_header(ACS)["source"]
    dev = parse_lspci_vvv(real_capture(ACS))
    assert dev["slot"] == "03:02.0" and dev["port_type"] == "Downstream Port" and dev["driver"] == "pcieport"
    assert dev["capabilities_readable"] is True
    assert dev["acs_cap"] == {"SrcValid": True, "TransBlk": True, "ReqRedir": True, "CmpltRedir": True,
                              "UpstreamFwd": True, "EgressCtrl": False, "DirectTrans": True}
    assert dev["acs_ctl"]["ReqRedir"] is True and dev["acs_ctl"]["DirectTrans"] is False
    assert redirects(dev["acs_ctl"]) == ["ReqRedir", "CmpltRedir"]


def test_lspci_not_run_as_root_reads_no_capability():
    dev = parse_lspci_vvv(real_capture(DENIED))
    assert (dev["slot"], dev["capabilities_readable"], dev["port_type"], dev["acs_ctl"]) == ("03:05.0", False, None, None)
    assert redirects(dev["acs_ctl"]) == []


@pytest.mark.parametrize("text", ["", "\n", "lspci: -s: Invalid slot number\n"])
def test_no_device_is_a_parse_error(text):
    with pytest.raises(ParseError):
        parse_lspci_vvv(text)


def test_argv_is_a_table():
    assert LSPCI.argv("device", bdf="0000:03:02.0") == ["lspci", "-vvv", "-s", "0000:03:02.0"]
