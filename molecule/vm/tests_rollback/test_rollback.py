"""molecule `verify tests_rollback`: right after rollback-rdma.yml the originals are back."""
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
