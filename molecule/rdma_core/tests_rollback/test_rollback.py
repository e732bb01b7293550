"""Testinfra checks after rollback.yml (molecule `verify tests_rollback`): the stack is gone."""
import json

import pytest


def pristine_dpkg(host):
    return json.loads(host.file("/root/hpcnet-snapshot-pristine.json.dpkg.json").content_string)["dpkg"]


@pytest.mark.parametrize("name", ["rdma-core", "ibverbs-utils", "rdmacm-utils", "infiniband-diags", "perftest",
                                  "udev", "libibverbs1"])
def test_packages_are_gone_unless_they_were_there(host, name):
    was = pristine_dpkg(host).get(name, "").endswith(" ii")
    assert host.package(name).is_installed == was


def test_dpkg_status_equals_pristine(host):
    out = host.check_output("dpkg-query -W -f '${Package}\\t${Version}\\t${db:Status-Abbrev}\\n'")
    now = dict((f[0], f[1] + " " + f[2].strip()) for f in (line.split("\t") for line in out.splitlines()))
    assert now == pristine_dpkg(host)


@pytest.mark.parametrize("path", ["/etc/modules-load.d/hpcnet-rdma.conf", "/etc/modprobe.d/hpcnet-rdma.conf",
                                  "/etc/security/limits.d/90-hpcnet-rdma.conf",
                                  "/etc/systemd/system.conf.d/90-hpcnet-rdma.conf",     # never written now
                                  "/etc/systemd/system/ssh.service.d/90-hpcnet-rdma-memlock.conf",
                                  "/etc/udev/rules.d/92-hpcnet-rdma-access.rules",
                                  "/var/lib/hpcnet-rdma/journal.json"])
def test_created_files_are_gone(host, path):
    assert not host.file(path).exists
