"""molecule `verify`: the tuned VMs (checks in ../checks_tuned.py)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# pylint: disable=wrong-import-position,unused-import
from checks_tuned import (  # noqa: E402,F401
    test_data0_mtu_and_rings,
    test_every_mpi_sysctl_is_persisted,
    test_every_mpi_sysctl_is_set_in_the_kernel,
    test_jumbo_frames_cross_the_data_link,
    test_journal_holds_the_originals,
    test_link_file_persists_mtu_and_rings,
    test_management_nic_is_untouched,
    test_soft_roce_port_is_active,
)
