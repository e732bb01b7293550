"""molecule `verify tests_bake_rollback` of the vm scenario: after tuning_state rollback inside vm2
booted from its baked disk (bake_rollback.yml), every file the bake wrote or changed under /etc and
/usr/local is the image's own again (bake.yml recorded lab/run/molecule-vm/bake/pristine.json and
baked.json from the mounted disk)."""
import json
import os

import pytest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
RUN_DIR = os.path.join(ROOT, "lab", "run", "molecule-vm", "bake")
testinfra_hosts = ["ansible://vm2"]    # bake.yml bakes vm2 only


def _load(name):
    with open(os.path.join(RUN_DIR, name), encoding="utf-8") as f:
        return json.load(f)


PRISTINE = _load("pristine.json")
BAKED = _load("baked.json")
TOUCHED = sorted(p for p in set(PRISTINE) | set(BAKED) if PRISTINE.get(p) != BAKED.get(p))


def state(host, path):
    f = host.file(path)
    if f.is_symlink:
        return "-> " + host.check_output("readlink %s" % path).strip()
    if not f.exists:
        return None
    return host.check_output("sha256sum %s" % path).split()[0]


def test_the_bake_touched_something():
    assert "/etc/systemd/network/10-hpcnet-rdma-data0.link" in TOUCHED
    assert "/etc/sysctl.d/90-hpcnet-rdma.conf" in TOUCHED
    assert "/etc/systemd/system/hpcnet-rdma-qos.service" in TOUCHED


@pytest.mark.parametrize("path", TOUCHED)
def test_every_file_the_bake_touched_is_the_images_original(host, path):
    assert state(host, path) == PRISTINE.get(path)
