"""molecule `verify`: the tuned VMs (checks in ../checks_tuned.py)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# pylint: disable=wrong-import-position,unused-import
from checks_tuned import (  # noqa: E402,F401
    sysctl_d,
    sysctl_now,
    test_data0_mtu_and_rings,
    test_data1_e1000e_mtu_rings_and_coalescing,
    test_every_mpi_sysctl_is_persisted,
    test_every_mpi_sysctl_is_set_in_the_kernel,
    test_jumbo_frames_cross_the_data_link,
    test_journal_holds_the_originals,
    test_link_file_persists_mtu_and_rings,
    test_management_nic_is_untouched,
    test_soft_roce_port_is_active,
)
from checks_irq_qos import (  # noqa: E402,F401
    test_data0_queue_irqs_are_pinned_numa_local,
    test_irqbalance_skips_exactly_our_irqs,
    test_boot_applier_is_installed,
    test_roce_tos_and_mode_in_rdma_cm,
    test_qos_boot_unit_is_installed,
    test_virtio_has_no_dcb,
    test_app_config_agrees_with_the_qos,
)
from checks_stack import (  # noqa: E402,F401
    test_rdma_modules_are_loaded_and_persisted,
    test_rxe0_is_the_collections_soft_roce_device_on_data0,
    test_memlock_unlimited_for_group_rdma_only,
    test_memlock_reaches_no_service_but_the_named_one,
    test_rdma_device_nodes_are_group_rdma_only,
    test_rdma_netns_mode_is_exclusive,
    test_ib_write_bw_between_the_vms_as_a_member_of_rdma,
)
