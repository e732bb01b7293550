# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fabric_app_config role's templates: the app files carry exactly the values the QoS uses."""
from __future__ import annotations

import os

import jinja2
import yaml

ROLE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles", "fabric_app_config")


def render(name, **overrides):
    with open(os.path.join(ROLE, "defaults", "main.yml"), encoding="utf-8") as f:
        values = yaml.safe_load(f)
    values.update(overrides)
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(os.path.join(ROLE, "templates")),
                             trim_blocks=True, undefined=jinja2.StrictUndefined)   # as the template lookup
    return env.get_template(name).render(**values)


def settings(text, sep="="):
    return dict(line.split(sep, 1) for line in text.splitlines() if line and not line.startswith("#"))


def test_app_files_carry_the_qos_values():
    v = dict(fabric_app_config_tos=98, fabric_app_config_hcas=["mlx5_0:1", "mlx5_1:1"],
             fabric_app_config_netdevs=["ens1f0np0"], fabric_app_config_gid_index=3, fabric_app_config_rdma_mtu=4096)
    assert settings(render("nccl.conf.j2", **v)) == {
        "NCCL_IB_HCA": "=mlx5_0:1,mlx5_1:1", "NCCL_IB_TC": "98", "NCCL_IB_GID_INDEX": "3",
        "NCCL_SOCKET_IFNAME": "=ens1f0np0"}
    assert settings(render("ucx.conf.j2", **v)) == {
        "UCX_NET_DEVICES": "mlx5_0:1,mlx5_1:1", "UCX_IB_TRAFFIC_CLASS": "98", "UCX_IB_GID_INDEX": "3",
        "UCX_IB_PATH_MTU": "4096"}
    assert settings(render("openmpi-mca-params.conf.j2", **v), " = ") == {
        "pml": "ucx", "osc": "ucx", "btl": "^openib,ofi", "pml_ucx_tls": "any", "pml_ucx_devices": "any"}


def test_app_files_leave_unknown_values_to_the_libraries():
    assert settings(render("nccl.conf.j2")) == {"NCCL_IB_TC": "106"}
    assert settings(render("ucx.conf.j2", fabric_app_config_ucx_extra={"UCX_TLS": "rc,sm"})) == {
        "UCX_IB_TRAFFIC_CLASS": "106", "UCX_TLS": "rc,sm"}
    # RoCE v1 has no v2 GID to pin
    assert "NCCL_IB_GID_INDEX" not in settings(render("nccl.conf.j2", fabric_app_config_roce_mode="v1",
                                                      fabric_app_config_gid_index=0))


def test_role_defaults_match_the_argument_specs():
    with open(os.path.join(ROLE, "meta", "argument_specs.yml"), encoding="utf-8") as f:
        spec = yaml.safe_load(f)["argument_specs"]["main"]["options"]
    with open(os.path.join(ROLE, "defaults", "main.yml"), encoding="utf-8") as f:
        defaults = yaml.safe_load(f)
    assert sorted(spec) == sorted(defaults)
    for name, opt in spec.items():
        assert name.startswith("fabric_app_config_")
        assert opt.get("default") == defaults[name], name
