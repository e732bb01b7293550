"""Testinfra checks of the nodes after the rdma_core role (molecule `verify`): read from the node."""
import json

import pytest

PACKAGES = ["rdma-core", "ibverbs-utils", "rdmacm-utils", "infiniband-diags", "perftest"]
FILES = {
    "/etc/modules-load.d/hpcnet-rdma.conf": ["ib_umad", "ib_uverbs", "rdma_ucm"],
    "/etc/modprobe.d/hpcnet-rdma.conf": ["options ib_core netns_mode=0"],
    "/etc/security/limits.d/90-hpcnet-rdma.conf": ["@rdma - memlock unlimited"],
    "/etc/systemd/system/ssh.service.d/90-hpcnet-rdma-memlock.conf": ["[Service]", "LimitMEMLOCK=infinity"],
    "/etc/udev/rules.d/92-hpcnet-rdma-access.rules": [
        'SUBSYSTEM=="infiniband_verbs", KERNEL=="uverbs*", GROUP="rdma", MODE="0660"',
        'SUBSYSTEM=="misc", KERNEL=="rdma_cm", GROUP="rdma", MODE="0660"',
        'SUBSYSTEM=="infiniband_mad", KERNEL=="umad*", GROUP="rdma", MODE="0660"'],
}
# memlock stays scoped (issue 16): no systemd-wide DefaultLimitMEMLOCK unless rdma_core_memlock_systemd: global
MANAGER_DROPIN = "/etc/systemd/system.conf.d/90-hpcnet-rdma.conf"


@pytest.mark.parametrize("name", PACKAGES)
def test_stack_packages_are_installed(host, name):
    assert host.package(name).is_installed


def test_verbs_tools_run(host):
    # libibverbs loads and answers; with no RDMA device (and no uverbs class) in a container it says
    # "Failed to get IB devices list: Function not implemented" (exit 255); perftest is installed
    out = host.run("ibv_devinfo")
    assert out.rc == 255 and "Failed to get IB devices list" in out.stderr
    assert host.file("/usr/bin/ib_write_bw").is_file and host.file("/usr/sbin/ibstat").is_file


def test_fabric_info_reports_no_rdma_device_here(host):
    facts = host.ansible("hpcnet.rdma.fabric_info", "", check=False)
    assert facts["changed"] is False and facts["devices"] == {} and facts["netns_mode"] is None
    # ib_core is not loaded here: the RDMA tools are not run (their netlink socket would load it)
    assert "ib_core is not loaded" in facts["tools"]["ibv_devinfo"]["skipped"]
    assert "ib_core is not loaded" in facts["tools"]["rdma"]["skipped"]
    assert facts["tools"]["nvidia-smi"] is None               # not installed
    assert facts["host"]["softnet"]["per_cpu"] and "retrans_segs" in facts["host"]["tcp"]


def test_only_new_packages_are_journaled(host):
    journal = json.loads(host.file("/var/lib/hpcnet-rdma/journal.json").content_string)
    pristine = json.loads(host.file("/root/hpcnet-snapshot-pristine.json.dpkg.json").content_string)["dpkg"]
    journaled = sorted(k[4:] for k in journal["originals"] if k.startswith("pkg:"))
    assert set(PACKAGES) <= set(journaled)
    for name in journaled:     # never a package that was installed before
        assert not pristine.get(name, "").endswith(" ii"), name
        assert journal["originals"]["pkg:" + name]["value"] == "absent"


@pytest.mark.parametrize("path, lines", sorted(FILES.items()))
def test_stack_files(host, path, lines):
    f = host.file(path)
    assert f.is_file and f.mode == 0o644
    text = f.content_string.splitlines()
    for line in lines:
        assert line in text


def test_memlock_reaches_no_service_but_the_named_one(host):
    assert not host.file(MANAGER_DROPIN).exists
    drop_ins = host.run("find /etc/systemd -name '*hpcnet-rdma*' -path '*.d/*'").stdout.split()
    assert drop_ins == ["/etc/systemd/system/ssh.service.d/90-hpcnet-rdma-memlock.conf"]
    journal = json.loads(host.file("/var/lib/hpcnet-rdma/journal.json").content_string)
    assert "file:" + MANAGER_DROPIN not in journal["originals"]


def test_group_rdma_exists(host):
    assert host.group("rdma").exists   # created by libibverbs1; the rules and limits name it


def test_no_kernel_module_was_touched(host):
    journal = json.loads(host.file("/var/lib/hpcnet-rdma/journal.json").content_string)
    assert not [k for k in journal["originals"] if k.split(":")[0] in ("kmod", "rxe", "rdma")]
