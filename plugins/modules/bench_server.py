#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
module: bench_server
short_description: Start and stop benchmark servers (iperf3, sockperf, perftest) on a node, by PID
version_added: 0.2.0
author:
  - hpcnet.rdma contributors (@hpcnet)
description:
  - With O(state=started) starts each server of O(servers) in a session of its own, its output in
    C(RUN_DIR/NAME.log) and its PID and start time in C(RUN_DIR/NAME.pid), and waits until it listens
    on O(servers[].listen) (or, without a port, is still running after a second). If one cannot
    start, the ones this call started are stopped and the task fails naming the server and why
    (a tool that is not installed is named).
  - With O(state=stopped) stops every server recorded in O(run_dir) (SIGTERM to its process group while it
    still leads it, SIGKILL after O(grace) seconds), and with O(remove_dir) removes the pid and log files of
    those servers and then the directory, when nothing else is in it. Only what a pid file in O(run_dir)
    records is ever signalled, and only while that PID still has the recorded start time (field 22 of
    C(/proc/PID/stat)) and its command line still starts with the recorded tool; a PID the kernel reused for
    another process is never signalled, and a PID of O(pids) that no pid file records was not started here
    and is never signalled either (it is returned in RV(unknown), with a warning).
  - O(run_dir) must be trusted as the journal's directory is - owned by root, not writable by group or
    others, not a symbolic link, its parents writable only by root (or sticky, like C(/tmp)) - or the task
    fails naming why and nothing is started or signalled. The pid and log files are opened without following
    a symbolic link; a planted link fails the task and its target is left untouched.
  - The role C(hpcnet.rdma.rdma_bench) starts the servers of each test on the data addresses and stops
    them in an C(always) block, so a failed benchmark leaves no server running. Nothing is journaled
    (nothing persists).
requirements:
  - Linux with procfs; the server tools in C(PATH).
options:
  state:
    description: C(started) starts O(servers); C(stopped) stops O(pids) and every server recorded in O(run_dir).
    type: str
    choices: [started, stopped]
    required: true
  servers:
    description: The servers to start (O(state=started)).
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: A name for the log and pid files (letters, digits, C(_), C(.), C(-)), unique in O(run_dir).
        type: str
        required: true
      argv:
        description: The server's command line, argv only (no shell); its first word must be one of C(iperf3),
          C(sockperf), C(ib_write_bw), C(ib_send_lat), C(ib_write_lat) (or C(sleep), for tests).
        type: list
        elements: str
        required: true
      listen:
        description: The TCP port the server listens on when ready; null waits one second instead.
        type: int
  pids:
    description: PIDs to stop (O(state=stopped)); each must be recorded by a pid file in O(run_dir) (those servers
      are stopped anyway), a PID no pid file records is never signalled and is returned in RV(unknown).
    type: list
    elements: int
    default: []
  run_dir:
    description: Where the servers' pid and log files go (created with mode 0700; must be trusted, see above).
    type: path
    default: /run/hpcnet-rdma-bench
  timeout:
    description: Seconds to wait for a server to listen (1 to 120).
    type: float
    default: 15.0
  grace:
    description: Seconds between SIGTERM and SIGKILL (0 to 60).
    type: float
    default: 5.0
  remove_dir:
    description: With O(state=stopped), also remove the pid and log files of the servers recorded in O(run_dir), then
      O(run_dir) itself when nothing else is in it (any other file is left, and the directory with it).
    type: bool
    default: false
attributes:
  check_mode:
    details: Reports which servers would start or stop; starts and signals nothing.
  diff_mode:
    support: none
extends_documentation_fragment:
  - hpcnet.rdma.attributes
"""

EXAMPLES = r"""
- name: An iperf3 server on the data address
  hpcnet.rdma.bench_server:
    state: started
    servers:
      - name: iperf3.0
        argv: [iperf3, -s, -1, -B, 10.77.0.2, -p, "18500"]
        listen: 18500
  register: srv

- name: Stop it (and anything else recorded in the run directory)
  hpcnet.rdma.bench_server:
    state: stopped
    pids: "{{ srv.servers | map(attribute='pid') | list }}"
"""

RETURN = r"""
servers:
  description: The servers started (O(state=started)), each with its PID, start time, argv and log file.
  returned: always
  type: list
  elements: dict
  sample: [{"name": "iperf3.0", "pid": 4242, "start_time": "81234", "argv": ["iperf3", "-s"],
            "log": "/run/hpcnet-rdma-bench/iperf3.0.log"}]
stopped:
  description: PIDs that were running and were stopped (O(state=stopped)).
  returned: always
  type: list
  elements: int
gone:
  description: PIDs that had already exited (or now belong to another process) and were left alone.
  returned: always
  type: list
  elements: int
unknown:
  description: PIDs of O(pids) that no pid file in O(run_dir) records, never signalled (O(state=stopped)).
  returned: always
  type: list
  elements: int
removed:
  description: The files (and the directory) O(remove_dir) removed, or would remove in check mode.
  returned: always
  type: list
  elements: str
"""

import re

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hpcnet.rdma.plugins.module_utils.bench import _server as _benchproc

ARGUMENT_SPEC = dict(
    state=dict(type="str", choices=["started", "stopped"], required=True),
    servers=dict(type="list", elements="dict", default=[], options=dict(
        name=dict(type="str", required=True),
        argv=dict(type="list", elements="str", required=True),
        listen=dict(type="int"),
    )),
    pids=dict(type="list", elements="int", default=[]),
    run_dir=dict(type="path", default="/run/hpcnet-rdma-bench"),
    timeout=dict(type="float", default=15.0),
    grace=dict(type="float", default=5.0),
    remove_dir=dict(type="bool", default=False),
)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")


def validate(params: dict) -> list:
    errors = []
    names = []
    for i, srv in enumerate(params["servers"]):
        if not _NAME.match(srv["name"]):
            errors.append("servers[%d].name: %r - letters, digits, '_', '.', '-'" % (i, srv["name"]))
        if srv["name"] in names:
            errors.append("servers[%d].name: %r is given twice" % (i, srv["name"]))
        names.append(srv["name"])
        if not srv["argv"] or srv["argv"][0] not in _benchproc.SERVER_TOOLS:
            errors.append("servers[%d].argv: %r - the first word must be one of %s"
                          % (i, srv["argv"][:1], ", ".join(_benchproc.SERVER_TOOLS)))
        if srv["listen"] is not None and not 1 <= srv["listen"] <= 65535:
            errors.append("servers[%d].listen: %r is outside 1..65535" % (i, srv["listen"]))
    if not 1 <= params["timeout"] <= 120:
        errors.append("timeout: %r is outside 1..120 seconds" % params["timeout"])
    if not 0 <= params["grace"] <= 60:
        errors.append("grace: %r is outside 0..60 seconds" % params["grace"])
    if params["state"] == "started" and not params["servers"]:
        errors.append("servers: state=started needs at least one server")
    return errors


def run(module) -> dict:
    p = module.params
    errors = validate(p)
    if errors:
        module.fail_json(msg="; ".join(errors), errors=errors)
    if p["state"] == "started":
        try:
            if module.check_mode:
                _benchproc.check_run_dir(p["run_dir"])
                return dict(changed=True, servers=[], stopped=[], gone=[], unknown=[], removed=[])
            started = _benchproc.start(p["run_dir"], p["servers"], p["timeout"])
        except (RuntimeError, OSError) as e:
            module.fail_json(msg=str(e), servers=[], stopped=[], gone=[], unknown=[], removed=[])
        return dict(changed=True, servers=started, stopped=[], gone=[], unknown=[], removed=[])
    try:
        res = _benchproc.stop(p["run_dir"], p["pids"], grace=p["grace"], check=module.check_mode,
                              remove_dir=p["remove_dir"])
    except (RuntimeError, OSError) as e:
        module.fail_json(msg=str(e), servers=[], stopped=[], gone=[], unknown=[], removed=[])
    if res["unknown"]:
        module.warn("pids %s: no pid file in %s records them - not started by bench_server there, never signalled"
                    % (res["unknown"], p["run_dir"]))
    return dict(changed=bool(res["stopped"] or res["removed"]), servers=[], **res)


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    module.exit_json(**run(module))


if __name__ == "__main__":
    main()
