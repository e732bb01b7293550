"""molecule `verify tests_verify`, after the verify_faults.yml side effect: every injected fault is
undone and the VMs are as tuned - data0 at 9000, no route left that caps the path, the queue IRQs on
their tuned CPUs, rxe0 back on data0 with its RDMA CM ToS and mode and its device nodes' access
(checks in ../checks_*.py, shared with the tuned tier)."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# pylint: disable=wrong-import-position,unused-import
from checks_tuned import (  # noqa: E402,F401
    PEER,
    test_data0_mtu_and_rings,
    test_jumbo_frames_cross_the_data_link,
    test_soft_roce_port_is_active,
)
from checks_irq_qos import (  # noqa: E402,F401
    test_data0_queue_irqs_are_pinned_numa_local,
    test_roce_tos_and_mode_in_rdma_cm,
)
from checks_stack import (  # noqa: E402,F401
    test_rxe0_is_the_collections_soft_roce_device_on_data0,
    test_rdma_device_nodes_are_group_rdma_only,
)


def test_no_route_caps_the_path_to_the_peer(host):
    """Fault 5's /32 route with `mtu lock 1500` is gone: the route to the peer is data0's subnet route."""
    me = host.check_output("hostname").strip()
    with host.sudo():
        out = host.check_output("ip -4 route show %s/32" % PEER[me])
        get = host.check_output("ip -4 route get %s" % PEER[me])
    assert out.strip() == ""
    assert "mtu" not in get and "dev data0" in get


def test_verify_reports_were_written_for_every_run():
    """The role (and the gate's playbook run) wrote its reports on the controller for the clean run,
    each run of faults and the last run."""
    base = os.path.join(os.environ.get("MOLECULE_EPHEMERAL_DIRECTORY", "/tmp"), "verify-reports")
    for run in ("clean", "mtu-gate", "irq-no-rxe", "irqbalance-path-mtu-app", "after"):
        for name in ("rdma-verify.json", "rdma-verify.md", "rdma-verify.html"):
            assert os.path.getsize(os.path.join(base, run, name)) > 0, (run, name)
    # the incoherent ucx.conf of fault 6 is in that run's report, and in no other
    for run, app in (("irqbalance-path-mtu-app", [("app.tc", ["vm2"])]), ("clean", []), ("after", [])):
        with open(os.path.join(base, run, "rdma-verify.json"), encoding="utf-8") as f:
            report = json.load(f)
        assert [(x["id"], x["nodes"]) for x in report["findings"] if x["id"].startswith("app.")] == app, run
