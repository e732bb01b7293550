#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
module: nic_tuning
short_description: Tune NIC MTU, rings, channels and interrupt coalescing, live and persisted
version_added: 0.1.0
author:
  - hpcnet.rdma contributors (@hpcnet)
description:
  - Sets MTU, ring sizes, channel counts and interrupt coalescing of the selected interfaces in one
    call, at runtime (C(ip link), C(ethtool -G/-L/-C)) and persisted in one systemd C(.link) file
    per interface (C(/etc/systemd/network/10-hpcnet-rdma-IF.link)), which udev applies whenever the
    device appears.
  - Reads the NIC's capabilities first (C(ethtool -g/-l/-c) pre-set maximums, MTU range) and fails
    with the maximum in the message, or caps the value when O(cap=true).
  - An MTU below 1280 is refused on an interface with IPv6 addresses (the kernel would drop its IPv6
    configuration, and a rollback would not bring it back), and an MTU below 576 unless O(allow_low_mtu=true).
  - Lowering an interface's MTU lowers the VLAN, macvlan and ipvlan devices on it whose MTU is higher
    (the kernel does that); those are planned, journaled and rolled back as C(nic:DEV:mtu) keys of
    their own. A bridge or bond follows its ports by itself.
  - B(Management-link guard.) Runtime changes to the interfaces that carry the Ansible connection are
    refused unless O(allow_management_interface=true), because MTU, ring and channel changes reset the
    link on real NICs. Those interfaces are the ones holding the node's end of the SSH connection
    (C(SSH_CONNECTION), or when C(become) dropped it, the TCP connection of the sshd among the module's
    parent processes), the one the route back to the SSH client leaves through (C(ip route get)), the
    one holding O(management_address) (or, if the node does not hold it, the one the route to it
    leaves through), and every device under them - bridge and bond ports, the lower device of a VLAN
    or macvlan, a veth's peer. Addresses are compared as addresses (a C(%zone) suffix names the
    interface on the node's side and is ignored on the controller's side); host names are not
    resolved.
  - When none of that tells the path and O(management_connection=network), every runtime change is
    refused, naming what was tried (fail closed). Connections that do not use the node's network
    (C(local), C(docker), C(podman), C(chroot), ...) say so with O(management_connection=none);
    the hpcnet.rdma.tuning role derives it from C(ansible_connection) and passes C(ansible_host) as
    O(management_address).
  - How the C(.link) file matches its device is O(match) (per entry O(interfaces[].match)). V(auto)
    matches by udev's C(ID_PATH) and its driver (C(Path=), C(Driver=)), the same on every node with
    the same hardware layout; else by the permanent MAC address; else, for virtual devices, by
    C(OriginalName=). Never by the current MAC address, which VLANs and bonds share. A C(.link) file of
    someone else that sorts before it and matches the same device wins at boot, as udev applies only
    the first match; that is warned about.
  - B(Image bakes) (O(mode=persist)). The file must match on every node the image boots, never only
    the bake host, so a MAC address is never used - V(auto) fails where it would fall back to the
    permanent MAC, asking for O(match), and V(mac) is refused. An interface that is not present (in the
    usual bake, a chroot or container without the target NICs) can still be persisted when it is
    selected by O(interfaces[].name) or O(interfaces[].driver) with a O(match) that needs nothing from
    the device - V(original_name), V(path) with O(interfaces[].match_value), V(driver); its values are
    checked for their ranges only (udev applies what the NIC accepts at boot). O(interfaces[].glob)
    and O(interfaces[].subnet) need the interfaces themselves and fail when they select none.
  - Originals are recorded in the journal; roll back with M(hpcnet.rdma.tuning_state).
requirements:
  - C(ethtool) (rings, channels, coalescing, capabilities) and iproute2 (C(ip)) on the node.
  - systemd-udevd for the persisted C(.link) files.
options:
  defaults:
    description:
      - Settings every selection in O(interfaces) starts from (a workload profile's NIC values);
        an entry's own settings override them per field.
      - A setting that only O(defaults) gives and that the interface's driver does not offer (no
        coalescing, no channels, a ring it lacks) is skipped for that interface, with a warning and an
        entry in RV(unsupported), so one profile serves every NIC; the same setting given in an
        O(interfaces) entry is an error naming the driver.
      - Takes O(interfaces[].mtu), O(interfaces[].rings), O(interfaces[].channels) and O(interfaces[].coalesce).
    type: dict
    default: {}
    # The same settings as each entry of interfaces has (merged there with <<: *settings).
    suboptions: &settings
      mtu:
        description: MTU in bytes, within the device's min/max MTU.
        type: int
      rings:
        description: Ring sizes (C(ethtool -G)).
        type: dict
        suboptions:
          rx:
            description: RX ring entries.
            type: int
          rx_mini:
            description: RX mini ring entries.
            type: int
          rx_jumbo:
            description: RX jumbo ring entries.
            type: int
          tx:
            description: TX ring entries.
            type: int
      channels:
        description: Channel counts (C(ethtool -L)).
        type: dict
        suboptions:
          rx:
            description: RX-only channels.
            type: int
          tx:
            description: TX-only channels.
            type: int
          other:
            description: Other channels.
            type: int
          combined:
            description: Combined RX/TX channels.
            type: int
      coalesce:
        description: Interrupt coalescing (C(ethtool -C)).
        type: dict
        suboptions:
          adaptive_rx:
            description: Adaptive RX coalescing.
            type: bool
          adaptive_tx:
            description: Adaptive TX coalescing.
            type: bool
          rx_usecs:
            description: RX interrupt delay in microseconds (0 or more).
            type: int
          tx_usecs:
            description: TX interrupt delay in microseconds (0 or more).
            type: int
          rx_frames:
            description: RX frames per interrupt (0 or more).
            type: int
          tx_frames:
            description: TX frames per interrupt (0 or more).
            type: int
  interfaces:
    description:
      - Interface selections with their wanted settings. Each entry selects with exactly one of
        O(interfaces[].name), O(interfaces[].glob), O(interfaces[].driver) or O(interfaces[].subnet).
      - When several entries select one interface, an entry selecting it by O(interfaces[].name)
        overrides, per setting, what earlier O(interfaces[].glob), O(interfaces[].driver) or
        O(interfaces[].subnet) entries set; any other two entries giving it one setting different
        values are an error naming both entries.
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description: Exact interface name; it must exist.
        type: str
      glob:
        description: Shell-style pattern of interface names, for example C(ens*f0np0).
        type: str
      driver:
        description: Kernel driver of the interface, for example C(mlx5_core), C(ice), C(virtio_net), C(veth).
        type: str
      subnet:
        description: Select interfaces holding an address inside this network, for example C(10.10.0.0/16).
        type: str
      match:
        description:
          - How this entry's C(.link) files match their device; unset, O(match). An entry selecting by
            O(interfaces[].name) overrides a broader entry's; two other entries disagreeing fail.
        type: str
        version_added: 0.2.0
        choices: [auto, path, driver, original_name, mac]
      match_value:
        description:
          - What O(interfaces[].match) matches instead of what is read from the device - for V(path) udev's
            C(ID_PATH) on the target nodes (C(pci-0000:3b:00.0), see C(udevadm info -q property
            /sys/class/net/IF)), for V(driver) the driver (C(mlx5_core)), for V(original_name) the
            kernel's name of the device (C(eth1)) when it differs from the selected name.
          - Needed in O(mode=persist) for V(path) when the interface is not present here.
        type: str
        version_added: 0.2.0
      <<: *settings
  match:
    description:
      - How each persisted C(.link) file matches its device at boot, unless the entry says
        (O(interfaces[].match)).
      - V(auto) - C(Path=) udev's C(ID_PATH) and C(Driver=) for a bus device that is the only netdev of
        its bus device; else C(PermanentMACAddress=) (refused with O(mode=persist), an image bake, as that
        address is only this node's); else C(OriginalName=) for virtual devices.
      - V(path) - C(Path=) the bus position (and C(Driver=) when known), the same slot on every node
        with the same hardware layout.
      - V(driver) - C(Driver=), one file for every NIC of the driver
        (C(/etc/systemd/network/20-hpcnet-rdma-driver-DRIVER.link)), sorting after the per-interface
        files (an interface's own file wins) and naming no device (the distribution's naming policy
        is kept); every interface it covers must want the same values.
      - V(original_name) - C(OriginalName=) the kernel's name of the device (C(eth1) with
        C(net.ifnames=0), a virtual device's name); not a predictable name such as C(ens1f0np0), which
        udev gives later.
      - V(mac) - C(PermanentMACAddress=), this node's NIC only; refused with O(mode=persist).
    type: str
    version_added: 0.2.0
    choices: [auto, path, driver, original_name, mac]
    default: auto
  cap:
    description: Cap values above the hardware maximum to the maximum (reported in RV(capped)) instead of failing.
    type: bool
    default: false
  allow_management_interface:
    description:
      - Allow runtime changes to the interfaces that carry the Ansible connection, and runtime changes
        when that path cannot be told.
    type: bool
    default: false
  management_address:
    description:
      - The address Ansible connects to, as the controller sees it (C(ansible_host)), an IPv4 or IPv6
        address. The interface holding it is protected; if the node does not hold it (NAT, a
        forwarded port), the interface the node's route to it leaves through. A loopback address
        (a tunnel or a forwarded port on the controller) and a host name tell nothing and are noted.
      - Used together with what the node itself sees of the SSH connection.
    type: str
  management_connection:
    description:
      - V(network) - the Ansible connection reaches this node over its network, so the interfaces
        carrying it must be found; if they cannot be, runtime changes are refused.
      - V(none) - the connection does not use this node's network (C(local), C(docker), C(podman),
        C(chroot) connections). No interface needs protecting then, unless the node still shows an
        SSH connection, which is protected as usual.
    type: str
    choices: [network, none]
    default: network
  allow_low_mtu:
    description:
      - Allow an MTU below 576, the smallest datagram every IPv4 host must accept (RFC 791).
        An MTU below 1280 on an interface with IPv6 addresses is refused regardless.
    type: bool
    default: false
attributes:
  diff_mode:
    details: Shows runtime values before and after, and each C(.link) file.
extends_documentation_fragment:
  - hpcnet.rdma.attributes
  - hpcnet.rdma.journal
  - hpcnet.rdma.run
  - hpcnet.rdma.mode
"""

EXAMPLES = r"""
- name: Jumbo frames, big rings and fixed coalescing on every ConnectX port
  hpcnet.rdma.nic_tuning:
    interfaces:
      - driver: mlx5_core
        mtu: 9000
        rings: {rx: 8192, tx: 8192}
        channels: {combined: 16}
        coalesce: {adaptive_rx: false, rx_usecs: 8}

- name: The data network by subnet, capping to what the NIC supports
  hpcnet.rdma.nic_tuning:
    cap: true
    interfaces:
      - subnet: 10.10.0.0/16
        rings: {rx: 65536}

- name: Image bake - only write the .link files; the NICs need not be present
  hpcnet.rdma.nic_tuning:
    mode: persist
    interfaces:
      - name: ens1f0np0
        match: path
        match_value: pci-0000:3b:00.0
        mtu: 9000
      - driver: ice   # every E810 port: one file for the driver (names kept)
        match: driver
        mtu: 9000
        rings: {rx: 4096, tx: 4096}

- name: Tell the guard how Ansible reaches the node (as the hpcnet.rdma.tuning role does)
  hpcnet.rdma.nic_tuning:
    management_address: "{{ ansible_host | default(inventory_hostname) }}"
    # local and container connections do not use the node's network
    management_connection: "{{ 'none' if ansible_connection | default('ssh') in ['local', 'community.docker.docker'] else 'network' }}"
    interfaces:
      - driver: mlx5_core
        mtu: 9000
"""

RETURN = r"""
changes:
  description: Every change planned (check mode) or made, in order. Keys are C(nic:IF:SETTING) and C(file:PATH).
  returned: always
  type: list
  elements: dict
  sample: [{"key": "nic:data0:mtu", "before": 1500, "after": 9000}]
previous:
  description: Value of every managed key before this call; C(null) for an absent file.
  returned: always
  type: dict
  sample: {"nic:data0:mtu": 1500}
current:
  description: Value of every managed key after this call, read back from the node (predicted in check mode).
  returned: always
  type: dict
  sample: {"nic:data0:mtu": 9000}
interfaces:
  description:
    - Selected interfaces with the values applied, the selectors that chose them, and the stacked
      devices (VLAN, macvlan) whose MTU is lowered with theirs (C(nic:DEV:mtu) keys of their own).
  returned: always
  type: dict
  sample: {"data0": {"driver": "veth", "selected_by": ["driver=veth"], "values": {"mtu": 9000}, "lowered_with_it": []}}
management:
  description:
    - What the management-link guard found - the interfaces carrying the Ansible connection, each
      with why; whether the path could be told at all; notes on what told nothing.
  returned: when the interfaces were read (not on bad input)
  type: dict
  sample: {"interfaces": {"mgmt0": "holds 10.0.2.15 (SSH_CONNECTION: the node's end)"}, "determined": true, "notes": []}
capped:
  description: Values lowered to the hardware maximum because O(cap=true).
  returned: always
  type: list
  elements: dict
  sample: [{"interface": "eth1", "setting": "rings.rx", "requested": 65536, "applied": 8192}]
unsupported:
  description: Settings from O(defaults) skipped on an interface whose driver does not offer them.
  returned: always
  type: list
  elements: dict
  sample: [{"interface": "data0", "setting": "coalesce.adaptive_rx", "reason": "coalesce not supported by driver virtio_net"}]
generation:
  description: Journal generation recorded by this call.
  returned: when changed and not in check mode
  type: int
  sample: 2
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hpcnet.rdma.plugins.module_utils.nic._module import ARGUMENT_SPEC, run
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    module.exit_json(**run(module, Host.from_module(module)))


if __name__ == "__main__":
    main()
