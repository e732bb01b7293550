"""Testinfra checks of the RDMA stack (rdma_core role: rdma_stack) on the VMs' real kernel: kernel
modules, soft-RoCE rxe0 on data0, memlock for group rdma, /dev/infiniband access, netns mode, and
verbs traffic between the two VMs; imported by the vm test modules."""
import json
import time
import warnings

import testinfra

from checks_tuned import assert_boot_unit_ran

MODULES = ["ib_umad", "rdma_ucm", "rdma_rxe"]
RXE_UNIT = "hpcnet-rdma-rxe.service"
# memlock stays scoped (issue 16): the rdma_core role writes no systemd-wide DefaultLimitMEMLOCK by default
MANAGER_DROPIN = "/etc/systemd/system.conf.d/90-hpcnet-rdma.conf"
SSH_DROPIN = "/etc/systemd/system/ssh.service.d/90-hpcnet-rdma-memlock.conf"
PEER = {"vm1": ("vm2", "10.77.0.2"), "vm2": ("vm1", "10.77.0.1")}
STACK_FILES = [
    "/etc/modules-load.d/hpcnet-rdma.conf",
    "/etc/modprobe.d/hpcnet-rdma.conf",
    "/etc/security/limits.d/90-hpcnet-rdma.conf",
    "/etc/systemd/system/ssh.service.d/90-hpcnet-rdma-memlock.conf",
    "/etc/udev/rules.d/92-hpcnet-rdma-access.rules",
    "/etc/systemd/system/" + RXE_UNIT,
]


def loaded(host):
    return set(line.split()[0] for line in host.file("/proc/modules").content_string.splitlines() if line)


def hostname(host):
    return host.check_output("hostname -s").strip()


def test_rdma_modules_are_loaded_and_persisted(host):
    assert set(MODULES) <= loaded(host)
    boot = host.file("/etc/modules-load.d/hpcnet-rdma.conf").content_string.split()
    assert set(MODULES) <= set(boot)


def test_rxe0_is_the_collections_soft_roce_device_on_data0(host):
    assert host.file("/sys/class/infiniband/rxe0/ports/1/gid_attrs/ndevs/0").content_string.strip() == "data0"
    assert "ACTIVE" in host.file("/sys/class/infiniband/rxe0/ports/1/state").content_string
    unit = host.file("/etc/systemd/system/" + RXE_UNIT).content_string
    assert "link add rxe0 type rxe netdev data0" in unit
    assert host.check_output("systemctl is-enabled %s" % RXE_UNIT) == "enabled"


def test_memlock_unlimited_for_group_rdma_only(host):
    assert host.check_output("runuser -l rdmauser -c 'ulimit -l'") == "unlimited"
    assert host.check_output("runuser -l plainuser -c 'ulimit -l'") != "unlimited"


def test_memlock_reaches_no_service_but_the_named_one(host):
    """limits.d for group rdma and a drop-in for ssh.service (named in converge.yml); nothing in
    /etc/systemd/system.conf.d, so systemd's default for every other service is not infinity."""
    assert not host.file(MANAGER_DROPIN).exists
    assert "LimitMEMLOCK=infinity" in host.file(SSH_DROPIN).content_string.splitlines()
    assert host.check_output("systemctl show -p DefaultLimitMEMLOCK --value") != "infinity"
    journal = json.loads(host.file("/var/lib/hpcnet-rdma/journal.json").content_string)
    assert "file:" + MANAGER_DROPIN not in journal["originals"]


def test_rdma_device_nodes_are_group_rdma_only(host):
    nodes = ("uverbs0", "rdma_cm", "umad0")
    # group and mode of the three nodes in one command (a missing node: no line, so no match below)
    out = host.run("stat -c '%%n %%G %%a' %s" % " ".join("/dev/infiniband/" + n for n in nodes)).stdout
    stat = dict((line.split()[0], line.split()[1:]) for line in out.splitlines() if len(line.split()) == 3)
    for node in nodes:
        assert stat.get("/dev/infiniband/" + node) == ["rdma", "660"], (node, out)
    member = host.run("runuser -u rdmauser -- ibv_devinfo -d rxe0")
    assert member.rc == 0 and "PORT_ACTIVE" in member.stdout, member.stderr
    other = host.run("runuser -u plainuser -- ibv_devinfo -d rxe0")
    assert other.rc != 0 and "Failed to open device" in other.stdout + other.stderr, other.stdout


def test_rdma_netns_mode_is_exclusive(host):
    assert "netns exclusive" in host.check_output("rdma system show")
    assert "options ib_core netns_mode=0" in host.file("/etc/modprobe.d/hpcnet-rdma.conf").content_string


def test_rxe_unit_recreated_rxe0_at_boot(host):
    assert_boot_unit_ran(host, RXE_UNIT)
    test_rxe0_is_the_collections_soft_roce_device_on_data0(host)


def test_sshd_runs_with_the_memlock_drop_in(host):
    pid = host.check_output("systemctl show -p MainPID --value ssh.service")
    limits = host.file("/proc/%s/limits" % pid).content_string
    assert [line for line in limits.splitlines() if line.startswith("Max locked memory") and "unlimited" in line]


def test_ib_write_bw_between_the_vms_as_a_member_of_rdma(host, request):
    """RDMA writes over rxe0 between the two VMs, as the unprivileged rdma group member (locked
    memory and /dev/infiniband access both needed), connected through the RDMA CM (-R: ToS 106)."""
    me = hostname(host)
    if me != "vm1":
        # The transfer runs once, vm1 -> vm2 (vm1's instance runs first): vm2 is the server side,
        # whose log the client's run left behind; the server must not be left running.
        log = host.file("/tmp/hpcnet-bw-server.log")
        assert log.exists and log.size > 0, "vm1's run left no ib_write_bw server log on %s" % me
        assert host.run("pgrep -x ib_write_bw").rc == 1, "an ib_write_bw server is still running on %s" % me
        return
    peer_name, peer_ip = PEER[me]
    peer = testinfra.get_host("ansible://" + peer_name, ansible_inventory=host.backend.ansible_inventory)
    args = "ib_write_bw -d rxe0 -R -F -n 200 -s 65536 --report_gbits"
    row = []
    for transfer in (1, 2):
        row, client, server = _one_write_bw(host, peer, peer_ip, args)
        request.node.add_report_section("call", "ib_write_bw transfer %d: client on %s" % (transfer, me),
                                        client.stdout + client.stderr)
        request.node.add_report_section("call", "ib_write_bw transfer %d: server on %s" % (transfer, peer_name),
                                        server)
        assert client.rc == 0, client.stdout + client.stderr
        assert row[:2] == ["65536", "200"], client.stdout
        if float(row[3]) > 0:
            break
        # The 200 writes completed, but perftest printed 0 Gbit/s: it could not measure its CPU clock (its
        # timing sample is too noisy under QEMU TCG; get_cpu_mhz() returns 0).  The same error, named, in
        # bench_run: retried once, like a perftest a signal killed.
        warnings.warn("ib_write_bw transfer %d: 200 writes completed but perftest could not measure its clock "
                      "(0 Gbit/s) - the transfer is run once more" % transfer)
    assert float(row[3]) > 0, "perftest measured no clock twice (0 Gbit/s): %s" % row


def _one_write_bw(host, peer, peer_ip, args):
    """One ib_write_bw transfer, the server started on the peer as rdmauser: (the client's result row, the
    client's command result, the server's log).  The server serves one client and exits."""
    peer.run("pkill -x ib_write_bw; rm -f /tmp/hpcnet-bw-server.log")
    peer.run("setsid nohup timeout 180 runuser -u rdmauser -- %s > /tmp/hpcnet-bw-server.log 2>&1 < /dev/null &"
             % args)
    try:
        for _attempt in range(20):
            time.sleep(2)
            client = host.run("timeout 150 runuser -u rdmauser -- %s %s" % (args, peer_ip))
            if client.rc == 0:
                break
    finally:
        server = peer.run("cat /tmp/hpcnet-bw-server.log; pkill -x ib_write_bw").stdout
    row = []
    if client.rc == 0 and "BW average" in client.stdout:
        row = client.stdout.split("BW average")[1].splitlines()[1].split()
    return row, client, server


def test_stack_is_gone(host):
    assert not host.file("/sys/class/infiniband/rxe0").exists
    pristine = set(json.loads(host.file("/root/hpcnet-snapshot-pristine.json").content_string)["modules"])
    assert not set(MODULES) & pristine       # so rollback had to unload every one of them
    assert not set(MODULES) & loaded(host)
    for path in STACK_FILES + [MANAGER_DROPIN]:
        assert not host.file(path).exists, path
    assert host.check_output("runuser -l rdmauser -c 'ulimit -l'") != "unlimited"
