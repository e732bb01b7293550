"""molecule `verify tests_switch`: after mpi -> offpeak (switch_profile.yml) and a reboot, the kernel
holds offpeak's values, the keys only mpi set are at their pre-tuning originals, and the boot-time
files carry offpeak.

This reboot is also the scenario's reboot of a tuned node (there is no separate one of the mpi node:
the checks below that are not about the profile were its `tests_reboot/`, and they hold the same for
either profile): with no module run since the reboot, the persisted files alone brought everything
back - sysctl.d at boot, the .link files when udev added the NICs, the soft-RoCE, IRQ and QoS boot
units, the kernel modules, memlock.  switch_reboot.yml compared the whole node with the switched
snapshot; that mpi's own values (the kernel-global keys too) come back from sysctl.d at boot is
tests_bake/'s first boot of the baked vm2."""
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# pylint: disable=wrong-import-position,unused-import
from checks_tuned import (  # noqa: E402,F401
    MPI_ONLY,
    OFFPEAK,
    pristine_snapshot,
    sysctl_d,
    sysctl_now,
    test_data0_mtu_and_rings,
    test_jumbo_frames_cross_the_data_link,
    test_journal_holds_the_originals,
    test_link_file_persists_mtu_and_rings,
    test_management_nic_is_untouched,
    test_soft_roce_port_is_active,
)
from checks_irq_qos import (  # noqa: E402,F401
    test_boot_applier_reapplied_the_masks,
    test_irqbalance_skips_exactly_our_irqs,
    test_app_config_agrees_with_the_qos,
    test_qos_boot_unit_reapplied_tos_and_mode,
)
from checks_stack import (  # noqa: E402,F401
    test_rdma_modules_are_loaded_and_persisted,
    test_rxe_unit_recreated_rxe0_at_boot,
    test_memlock_unlimited_for_group_rdma_only,
    test_memlock_reaches_no_service_but_the_named_one,
    test_rdma_device_nodes_are_group_rdma_only,
    test_rdma_netns_mode_is_exclusive,
    test_sshd_runs_with_the_memlock_drop_in,
    test_ib_write_bw_between_the_vms_as_a_member_of_rdma,
)


def test_the_vm_rebooted_after_the_switch(host):
    assert float(host.file("/proc/uptime").content_string.split()[0]) < 900


@pytest.mark.parametrize("key, value", sorted(OFFPEAK.items()))
def test_offpeak_values_came_back_at_boot(sysctl_now, sysctl_d, key, value):
    assert sysctl_now.get(key) == value
    assert "%s = %s" % (key, value) in sysctl_d["text"]


@pytest.mark.parametrize("key", MPI_ONLY)
def test_keys_only_mpi_set_are_at_their_originals(sysctl_now, sysctl_d, pristine_snapshot, key):
    assert sysctl_now.get(key) == " ".join(pristine_snapshot["sysctl"][key].split())
    assert key + " =" not in sysctl_d["text"]


def test_the_record_names_offpeak(host):
    record = json.loads(host.file("/etc/hpcnet-rdma/profile.json").content_string)
    assert record["name"] == "offpeak" and record["digest"].startswith("sha256:")


def test_data0_keeps_jumbo_frames(host):
    assert host.file("/sys/class/net/data0/mtu").content_string.strip() == "9000"


def test_systemd_sysctl_applied_sysctl_d_this_boot(host):
    out = host.check_output("systemctl show -p ActiveState -p Result systemd-sysctl.service")
    assert out.splitlines() == ["Result=success", "ActiveState=active"]


def test_udev_applied_the_link_file_to_data0(host):
    out = host.check_output("udevadm info -q property -p /sys/class/net/data0")
    assert "ID_NET_LINK_FILE=/etc/systemd/network/10-hpcnet-rdma-data0.link" in out.splitlines()
