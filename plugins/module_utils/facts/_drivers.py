# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The driver table: per NIC driver, how its queue IRQs are named (and its non-queue vectors),
which ``ethtool -S`` counters are per queue, its DCB backend, and notes.

The IRQ columns live in ``_irq.IRQ_NAMING`` (the boot applier is _irq.py alone on the node) and
are read from there.  A driver not in the table is read by the generic rules and says so:
``profile(driver)`` is ``"generic"``; nothing is ever refused for lack of an entry.
docs/hardware.md is the same table for people, with the captures that prove each row.
"""
from __future__ import annotations

import re

from ansible_collections.hpcnet.rdma.plugins.module_utils.irq import _domain as _irq

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List, Optional, Tuple

# per-queue ethtool -S counter shapes: group q = queue index, group n = the counter's own name
_Q_BRACKET = r"^\[(?P<q>\d+)\]: (?P<n>.+)$"                              # bnxt_en, bnx2x: "[0]: rx_discards"
_Q_PREFIX = r"^(?P<d>rx|tx|ch|xdp)(?P<q>\d+)_(?P<n>.+)$"                 # mlx5/mlx4_en: rx0_packets, ch3_poll
_Q_QUEUE = r"^(?P<d>rx|tx)_queue_(?P<q>\d+)_(?P<n>.+)$"                  # ice, ixgbe, igb, virtio_net: rx_queue_0_packets
_Q_DOT = r"^(?P<d>rx|tx)-(?P<q>\d+)\.(?P<n>.+)$"                         # i40e, sfc: tx-0.tx_packets
_Q_ENA = r"^queue_(?P<q>\d+)_(?P<n>.+)$"                                 # ena: queue_0_tx_cnt
_Q_INDEX = r"^(?P<n>[a-z][a-z0-9_]*)\[(?P<q>\d+)\]$"                     # gve: rx_posted_desc[0]
_Q_IDPF = r"^(?P<d>rx|tx)_q-(?P<q>\d+)_(?P<n>.+)$"                       # idpf/iavf: tx_q-0_packets
GENERIC_QUEUE_COUNTERS = [_Q_BRACKET, _Q_PREFIX, _Q_QUEUE, _Q_DOT, _Q_ENA, _Q_INDEX, _Q_IDPF]

DCB_NONE = "none"
# driver -> counters per queue, DCB backends (first = preferred), notes
_TABLE = {
    "mlx5_core": ([_Q_PREFIX], ["mlnx_qos", "dcb"], "ConnectX-4 and later. Channels are combined only; ch/rx/tx/xdp<N>_ counters per "
                  "channel, *_phy and *_prio<N>_ per port. mlnx_qos (MLNX_OFED/DOCA mlnx-tools) or iproute2 dcb (DCBNL)."),
    "mlx4_en": ([_Q_PREFIX], ["mlnx_qos", "dcb"], "ConnectX-3. MLNX_OFED 2.x names one vector per ring <if>-<N>; upstream shares "
                "the mlx4-comp-<N>@pci EQs (both read as queues)."),
    "ice": ([_Q_QUEUE], ["dcb"], "E810. DCB through DCBNL only while the firmware LLDP agent is off "
            "(ethtool --set-priv-flags IF fw-lldp-agent off); with it on, the firmware owns DCB (willing mode)."),
    "i40e": ([_Q_DOT, _Q_QUEUE], ["dcb"], "X710/XL710. Same firmware LLDP caveat as ice (priv flag disable-fw-lldp). "
             "i40e-<bdf>:fdir-TxRx-<N> is the flow-director sideband vector, not a data queue."),
    "ixgbe": ([_Q_QUEUE], [DCB_NONE], "82599/X540/X550. <if>-TxRx-<N>; the bare <if> vector is link/other."),
    "igb": ([_Q_QUEUE], [DCB_NONE], "I350/82576/I211. Paired <if>-TxRx-<N>, or split <if>-rx-<N>/<if>-tx-<N> (same queue index)."),
    "e1000e": ([], [DCB_NONE], "Single queue; 82574 has <if>-rx-0/<if>-tx-0 vectors, others one legacy/MSI vector."),
    "bnxt_en": ([_Q_BRACKET], ["dcb", "bnxtqos"], "BCM573xx/575xx. Per-ring counters '[N]: name'. DCB via DCBNL when the "
                "firmware's agent is not managing it, or Broadcom's bnxtqos tool."),
    "bnx2x": ([_Q_BRACKET], [DCB_NONE], "BCM577xx/578xx. '[N]: name' per queue, <if>-fp-<N> vectors."),
    "bnx2": ([], [DCB_NONE], "BCM5709. <if>-<N> vectors."),
    "tg3": ([], [DCB_NONE], "BCM57xx/5719/5720. <if>-tx-<N>, <if>-rx-<N>, <if>-txrx-<N>."),
    "ena": ([_Q_ENA], [DCB_NONE], "AWS. <if>-Tx-Rx-<N> per queue pair, ena-mgmnt@pci:<bdf> for admin; "
            "*_allowance_exceeded are device counters (instance limits)."),
    "gve": ([_Q_INDEX], [DCB_NONE], "Google gVNIC. gve-ntfy-blk<N>@pci:<bdf> (kernel >= 6.3; earlier <if>-ntfy-block.<N>); "
            "the block number is not the queue number (TX blocks first, RX after)."),
    "virtio_net": ([_Q_QUEUE], [DCB_NONE], "virtio<K>-input.<N>/-output.<N>, virtio<K>-config; ring maxima set by the host."),
}


def _entry(driver: str, counters: List[str], dcb: List[str], notes: str) -> Dict[str, Any]:
    queue, other = _irq.IRQ_NAMING.get(driver, ([], []))
    return {"driver": driver, "irq_queue": list(queue), "irq_other": list(other), "queue_counters": list(counters),
            "dcb": list(dcb), "notes": notes}


DRIVERS = dict((d, _entry(d, *row)) for d, row in _TABLE.items())   # type: Dict[str, Dict[str, Any]]
_COMPILED = {}  # type: Dict[str, List[Any]]


def profile(driver: Optional[str]) -> str:
    """The table row that reads this driver: its own name, or "generic"."""
    return driver if driver in DRIVERS else "generic"


def entry(driver: Optional[str]) -> Dict[str, Any]:
    """The driver's row, or the generic rules (``driver: "generic"``, DCB ``none``)."""
    if driver in DRIVERS:
        return DRIVERS[driver]
    return {"driver": "generic", "irq_queue": list(_irq.GENERIC_IRQ_NAMING[0]), "irq_other": list(_irq.GENERIC_IRQ_NAMING[1]),
            "queue_counters": list(GENERIC_QUEUE_COUNTERS), "dcb": [DCB_NONE], "notes": "not in the driver table: generic rules"}


def _counter_patterns(driver: Optional[str]) -> List[Any]:
    key = profile(driver)
    if key not in _COMPILED:
        own = DRIVERS[key]["queue_counters"] if key in DRIVERS else []
        _COMPILED[key] = [re.compile(p) for p in own + [p for p in GENERIC_QUEUE_COUNTERS if p not in own]]
    return _COMPILED[key]


def queue_counter(name: str, driver: Optional[str] = None) -> Optional[Tuple[int, str]]:
    """(queue index, counter name without the queue part) for a per-queue ``ethtool -S`` counter,
    None for a device/port counter.  The direction stays in the name: ``rx_queue_3_drops`` ->
    ``(3, "rx_drops")``, ``[2]: rx_discards`` -> ``(2, "rx_discards")``, ``queue_0_tx_cnt`` -> ``(0, "tx_cnt")``."""
    for rx in _counter_patterns(driver):
        m = rx.match(name)
        if m:
            direction = m.groupdict().get("d")
            own = m.group("n")
            return int(m.group("q")), ("%s_%s" % (direction, own) if direction and not own.startswith(direction + "_") else own)
    return None


def split_counters(stats: Dict[str, int], driver: Optional[str] = None) -> Dict[str, Any]:
    """``ethtool -S`` counters split into ``device`` ({name: value}) and ``queues``
    ({index: {name: value}}, names as :func:`queue_counter` gives them), with the ``driver_profile``."""
    device = {}  # type: Dict[str, int]
    queues = {}  # type: Dict[int, Dict[str, int]]
    for name, value in stats.items():
        q = queue_counter(name, driver)
        if q is None:
            device[name] = value
        else:
            queues.setdefault(q[0], {})[q[1]] = value
    return {"driver_profile": profile(driver), "device": device, "queues": queues}
