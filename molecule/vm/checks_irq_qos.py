"""Testinfra checks for IRQ affinity (irq_affinity) and lossless RoCE (roce_qos, fabric_app_config)
on the VMs' real virtio-net data NIC and soft-RoCE rxe0; imported by the vm test modules."""
import json
import re

from checks_tuned import PEER, assert_boot_unit_ran

APPLIER_UNIT = "hpcnet-rdma-irq.service"
QOS_UNIT = "hpcnet-rdma-qos.service"
CONFIGFS = "/sys/kernel/config/rdma_cm/rxe0"


def data0_queue_irqs(host):
    """{name: irq} of data0's MSI-X queue vectors (virtio: msi_irqs of the parent PCI device)."""
    numbers = host.check_output("ls /sys/class/net/data0/device/../msi_irqs").split()
    out = {}
    for line in host.file("/proc/interrupts").content_string.splitlines():
        head, _sep, rest = line.partition(":")
        if head.strip() in numbers and re.search(r"-(input|output)\.\d+$", rest.split()[-1]):
            out[rest.split()[-1]] = int(head)
    return out


def affinity(host, irq, which="smp_affinity_list"):
    return host.file("/proc/irq/%d/%s" % (irq, which)).content_string.strip()


def test_data0_queue_irqs_are_pinned_numa_local(host):
    irqs = data0_queue_irqs(host)
    assert len(irqs) == 2, irqs           # input.0 and output.0 of the socket-backed virtio NIC
    local = host.file("/sys/class/net/data0/device/../local_cpulist").content_string.strip()
    assert local == "0-1"
    # spread-local: one queue per local CPU, round-robin in queue order
    names = sorted(irqs, key=lambda n: (int(n.rsplit(".", 1)[1]), n))
    for cpu, name in enumerate(names):
        assert affinity(host, irqs[name]) == str(cpu), name
    # x86 moves an MSI to its new CPU at its next interrupt: a queue idle since the mask was written
    # (a first boot) still shows its old CPU as effective.  Traffic on data0 makes both queues fire.
    host.run("ping -c 3 -i 0.2 -W 2 %s" % PEER[host.check_output("hostname").strip()])
    for cpu, name in enumerate(names):
        assert affinity(host, irqs[name], "effective_affinity_list") == str(cpu), name


def test_irqbalance_skips_exactly_our_irqs(host):
    irqs = data0_queue_irqs(host)
    assert "--policyscript=/usr/local/lib/hpcnet-rdma/irqbalance-policy" in host.file("/etc/default/irqbalance").content_string
    # the names tuned here, plus those the boot unit pinned at this boot (all of them in a baked
    # image, whose persistent list was written with no NIC present)
    with host.sudo():
        banned = host.run("cat /etc/hpcnet-rdma/irqbalance-banned /run/hpcnet-rdma/irqbalance-banned 2>/dev/null").stdout
    assert sorted(set(banned.split())) == sorted(irqs)
    for irq in irqs.values():
        out = host.check_output("/usr/local/lib/hpcnet-rdma/irqbalance-policy /sys/class/net/data0/device %d" % irq)
        assert out.strip() == "ban=true"
    other = host.check_output("awk '/config/ {sub(\":\",\"\",$1); print $1; exit}' /proc/interrupts")
    assert host.check_output("/usr/local/lib/hpcnet-rdma/irqbalance-policy /x %s" % other).strip() == ""
    assert host.service("irqbalance").is_running


def test_boot_applier_is_installed(host):
    assert host.check_output("systemctl is-enabled %s" % APPLIER_UNIT) == "enabled"


def test_boot_applier_reapplied_the_masks(host):
    assert_boot_unit_ran(host, APPLIER_UNIT)
    test_data0_queue_irqs_are_pinned_numa_local(host)


def test_roce_tos_and_mode_in_rdma_cm(host):
    assert host.file(CONFIGFS + "/ports/1/default_roce_tos").content_string.strip() == "106"
    assert host.file(CONFIGFS + "/ports/1/default_roce_mode").content_string.strip() == "RoCE v2"


def test_qos_boot_unit_is_installed(host):
    assert host.check_output("systemctl is-enabled %s" % QOS_UNIT) == "enabled"


def test_qos_boot_unit_reapplied_tos_and_mode(host):
    assert_boot_unit_ran(host, QOS_UNIT)
    test_roce_tos_and_mode_in_rdma_cm(host)


def test_virtio_has_no_dcb(host):
    r = host.run("dcb pfc show dev data0")
    assert r.rc != 0 and "Operation not supported" in r.stderr + r.stdout


def test_app_config_agrees_with_the_qos(host):
    nccl = host.file("/etc/nccl.conf").content_string
    assert "NCCL_IB_TC=106\n" in nccl and "rxe0" in nccl
    gid = re.search(r"NCCL_IB_GID_INDEX=(\d+)", nccl).group(1)
    assert host.file("/sys/class/infiniband/rxe0/ports/1/gid_attrs/types/%s" % gid).content_string.strip() == "RoCE v2"
    assert "UCX_IB_TRAFFIC_CLASS=106" in host.file("/etc/ucx/ucx.conf").content_string


def test_irq_tuning_is_gone(host):
    assert not host.file("/etc/hpcnet-rdma/irqbalance-banned").exists
    assert "policyscript" not in host.file("/etc/default/irqbalance").content_string
    assert host.run("systemctl cat %s" % APPLIER_UNIT).rc != 0
    assert host.run("systemctl cat %s" % QOS_UNIT).rc != 0
    assert host.service("irqbalance").is_running


def test_roce_qos_is_gone(host):
    assert not host.file(CONFIGFS).exists
    pristine = json.loads(host.file("/root/hpcnet-snapshot-pristine.json").content_string)["files"]
    for path in ("/etc/nccl.conf", "/etc/ucx/ucx.conf", "/etc/openmpi/openmpi-mca-params.conf"):
        assert host.file(path).exists == (path in pristine), path
