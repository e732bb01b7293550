"""molecule `verify tests_reboot`: after a reboot of the tuned VMs, with no module run since, the
persisted files alone brought the tuned state back (sysctl.d at boot, the .link file when udev
added data0).  reboot_tuned.yml already compared the whole node with the tuned snapshot."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# pylint: disable=wrong-import-position,unused-import
from checks_tuned import (  # noqa: E402,F401
    sysctl_d,
    sysctl_now,
    test_data0_mtu_and_rings,
    test_every_mpi_sysctl_is_persisted,
    test_every_mpi_sysctl_is_set_in_the_kernel,
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


def test_the_vm_really_rebooted(host):
    uptime = float(host.file("/proc/uptime").content_string.split()[0])
    assert uptime < 1800


def test_systemd_sysctl_applied_sysctl_d_this_boot(host):
    out = host.check_output("systemctl show -p ActiveState -p Result systemd-sysctl.service")
    assert out.splitlines() == ["Result=success", "ActiveState=active"]


def test_udev_applied_the_link_file_to_data0(host):
    out = host.check_output("udevadm info -q property -p /sys/class/net/data0")
    assert "ID_NET_LINK_FILE=/etc/systemd/network/10-hpcnet-rdma-data0.link" in out.splitlines()
