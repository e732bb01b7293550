"""molecule `verify tests_bake` of the vm scenario: the first boot of vm2 from its baked disk
(bake.yml) applied what was baked, with nothing run from the controller (the VM was only booted).
Checks shared with the vm scenario's tuned checks are imported from ..; vm1 is not baked."""
import json
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

# pylint: disable=wrong-import-position,unused-import
from checks_tuned import MPI, assert_boot_unit_ran, sysctl_now  # noqa: E402,F401
from checks_irq_qos import (  # noqa: E402,F401
    test_boot_applier_reapplied_the_masks,
    test_irqbalance_skips_exactly_our_irqs,
    test_qos_boot_unit_reapplied_tos_and_mode,
)
from checks_stack import (  # noqa: E402,F401
    test_rdma_modules_are_loaded_and_persisted,
    test_rxe0_is_the_collections_soft_roce_device_on_data0,
)

testinfra_hosts = ["ansible://vm2"]    # bake.yml bakes vm2 only

LINK_FILE = "/etc/systemd/network/10-hpcnet-rdma-data0.link"
DATA_ID_PATH = "pci-0000:00:10.0"     # lab/lablib/vmrun.py DATA_ID_PATH; ../vars/bake.yml


@pytest.mark.parametrize("key, value", sorted(MPI.items()))
def test_sysctls_came_from_the_baked_sysctl_d(sysctl_now, key, value):
    assert sysctl_now.get(key) == " ".join(value.split())


def test_data0_took_mtu_and_rings_from_the_baked_link_file_by_its_slot(host):
    udev = dict(line.split("=", 1) for line in
                host.check_output("udevadm info -q property -p /sys/class/net/data0").splitlines() if "=" in line)
    assert udev["ID_PATH"] == DATA_ID_PATH
    assert udev["ID_NET_LINK_FILE"] == LINK_FILE
    text = host.file(LINK_FILE).content_string
    assert "Path=%s\n" % DATA_ID_PATH in text and "MACAddress" not in text
    assert host.file("/sys/class/net/data0/mtu").content_string.strip() == "9000"
    rings = host.check_output("ethtool -g data0").split("Current hardware settings:")[1]
    assert "RX:\t\t1024" in rings.replace(" ", "\t") or "RX:\t1024" in rings
    assert "TX:\t\t256" in rings.replace(" ", "\t") or "TX:\t256" in rings


def test_rxe_unit_created_rxe0_at_first_boot(host):
    assert_boot_unit_ran(host, "hpcnet-rdma-rxe.service")


def test_the_journal_holds_only_the_bakes_files(host):
    """Nothing ran on the booted VM: every journaled key is a file or directory the bake wrote."""
    journal = json.loads(host.file("/var/lib/hpcnet-rdma/journal.json").content_string)
    keys = set(journal["originals"]) | set(c["key"] for gen in journal["generations"] for c in gen["changes"])
    assert keys and all(k.split(":", 1)[0] in ("file", "dir") for k in keys), sorted(keys)
    assert len(set(gen.get("run") for gen in journal["generations"])) == 1   # the bake's one run


def test_the_qos_applier_found_data0_at_boot_and_logged_no_failure(host):
    """The image had no data0: the baked script found it at boot; virtio-net has no DCB, which is
    logged (on_unsupported warn), and rxe0's RDMA CM took ToS 106 / RoCE v2 (imported test)."""
    script = host.file("/usr/local/lib/hpcnet-rdma/roce-qos.sh").content_string
    assert "\nselect_nics name data0\n" in script
    log = host.check_output("journalctl -b -u hpcnet-rdma-qos.service --no-pager -o cat")
    assert "data0: dcb not supported here" in log and "failed" not in log, log
