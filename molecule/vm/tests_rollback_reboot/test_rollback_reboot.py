"""molecule `verify tests_rollback_reboot`: after rollback and another reboot the VMs boot as
pristine - nothing of the collection is applied at boot any more (reboot_rolled_back.yml already
compared the whole node with the pristine snapshot).  vm1 only: reboot_rolled_back.yml reboots vm1 alone (vm2
goes on to the bake)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# pylint: disable=wrong-import-position,unused-import
from checks_rollback import (  # noqa: E402,F401
    test_created_files_are_gone,
    test_data0_is_back,
    test_data_link_is_back_to_standard_frames,
    test_every_mpi_sysctl_is_back,
)
from checks_irq_qos import (  # noqa: E402,F401
    test_irq_tuning_is_gone,
    test_roce_qos_is_gone,
)
from checks_stack import test_stack_is_gone  # noqa: E402,F401
from checks_tuned import pristine_snapshot, sysctl_now  # noqa: E402,F401

testinfra_hosts = ["ansible://vm1"]


def test_udev_applied_the_image_link_file_to_data0(host):
    out = host.check_output("udevadm info -q property -p /sys/class/net/data0")
    assert "ID_NET_LINK_FILE=/etc/systemd/network/50-lab-data0.link" in out.splitlines()
