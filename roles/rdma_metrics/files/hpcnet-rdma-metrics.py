# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""hpcnet-rdma-metrics: the RDMA fabric's health as a node_exporter textfile (python3 standard library only).

Run by hpcnet-rdma-metrics.timer (role hpcnet.rdma.rdma_metrics); writes, atomically (temp file + rename in
the same directory, as the textfile collector wants), OUTPUT (default
/var/lib/prometheus/node-exporter/hpcnet_rdma.prom) - only what node_exporter's own collectors do not export
(port counters/: infiniband, netdev statistics: netdev, softnet: softnet, TCP: netstat), in base units, clean
for `promtool check metrics`:

  hpcnet_rdma_port_state / _physical_state   per RDMA port (IB numbering: 4 = ACTIVE, 5 = LinkUp), labels state and
                                              netdev (node_exporter's node_infiniband_state_id has no netdev, and
                                              its infiniband collector drops every port when one device misreads)
  hpcnet_rdma_port_unreadable                 1 per RDMA port whose sysfs files could not be read (label reason);
                                              the other ports are still reported
  hpcnet_rdma_port_hw_stat_total              per port, sysfs hw_counters/ (RoCE: out_of_buffer, rnr_nak_retry_err,
                                              np_cnp_sent, ...; label counter)
  hpcnet_rdma_netdev_ethtool_total            per data netdev, ethtool -S error/drop/discard/pause counters
  hpcnet_rdma_irq_vectors, hpcnet_rdma_irq_cpus, hpcnet_rdma_irq_interrupts_total   the data NICs' queue IRQs and
                                              their CPUs
  hpcnet_rdma_profile_info                    the applied profile (/etc/hpcnet-rdma/profile.json) as labels
  hpcnet_rdma_bench_latency_seconds           summary: latency quantiles of the last stored bench run (with _count
                                              and _sum when the run kept the sample count and mean); the mpi test's
                                              have labels op (pingpong, allreduce) and size (bytes) besides test, pair
  hpcnet_rdma_bench_bandwidth_bytes_per_second, hpcnet_rdma_bench_timestamp_seconds   the last stored bench run
  hpcnet_rdma_bench_error                     1 per test and pair the last stored run holds an error for (a crashed
                                              or failed tool; label signal names a signal that killed it), with
  hpcnet_rdma_bench_attempts                  how many times that client ran (a tool killed by a signal is re-run once)
  hpcnet_rdma_collector_source_success        per source (label source): 0 when it could not be read, or when a value
                                              of it was not a number and was left out (the others are still written)
  hpcnet_rdma_collector_success, hpcnet_rdma_collector_duration_seconds,
  hpcnet_rdma_collector_timestamp_seconds     when this file was written (staleness: time() - it)

``--root`` prefixes every /sys and /proc path (tests use a fake tree).
"""
from __future__ import annotations

import argparse
import calendar
import json
import os
import re
import subprocess
import sys
import tempfile
import time

TROUBLE = re.compile(r"(err|drop|discard|miss|fifo|crc|over_?run|out_of_buffer|no_?buf|timeout|pause|pfc)", re.I)
SKIP_HW = ("lifespan",)


def _read(root, path):
    try:
        with open(root.rstrip("/") + path, encoding="utf-8", errors="replace") as f:
            return f.read().strip()
    except OSError:
        return None


def _ls(root, path):
    try:
        return sorted(os.listdir(root.rstrip("/") + path))
    except OSError:
        return []


def _esc(value):
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


class Metrics(object):
    """Families in order, each HELP and TYPE once, samples with escaped labels."""

    def __init__(self):
        self.families = {}
        self.order = []

    def add(self, name, kind, help_text, value, _suffix="", **labels):
        """One sample; ValueError (nothing added) when ``value`` is not a number, so rendering never fails.
        ``_suffix`` ("_sum", "_count") makes a summary's extra sample, written under the family's name."""
        if not _is_number(value) and not isinstance(value, bool):
            raise ValueError("%s%s%r: %r is not a number" % (name, _suffix, labels, value))
        if name not in self.families:
            self.families[name] = (kind, help_text, [])
            self.order.append(name)
        self.families[name][2].append((labels, value, _suffix))

    def render(self):
        out = []
        for name in self.order:
            kind, help_text, samples = self.families[name]
            out.append("# HELP %s %s" % (name, help_text))
            out.append("# TYPE %s %s" % (name, kind))
            for labels, value, suffix in samples:
                lab = ",".join('%s="%s"' % (k, _esc(v)) for k, v in sorted(labels.items()))
                out.append("%s%s%s %s" % (name, suffix, "{%s}" % lab if lab else "", _num(value)))
        return "\n".join(out) + "\n"


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _num(v):
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, int):
        return str(v)
    return repr(float(v))


def _int(text):
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


def rdma_ports(root):
    """(device, port, netdevs, base path) of every RDMA port."""
    out = []
    for dev in _ls(root, "/sys/class/infiniband"):
        for port in _ls(root, "/sys/class/infiniband/%s/ports" % dev):
            base = "/sys/class/infiniband/%s/ports/%s" % (dev, port)
            netdevs = sorted(set(n for n in (_read(root, "%s/gid_attrs/ndevs/%s" % (base, i))
                                             for i in _ls(root, base + "/gid_attrs/ndevs")) if n))
            out.append((dev, port, netdevs, base))
    return out


def collect_port(root, m, dev, port, netdevs, base):
    """One port's state and counters; raises ValueError naming the file when a state file is garbled."""
    labels = {"device": dev, "port": port, "netdev": ",".join(netdevs)}
    for name, kind in (("state", "state"), ("phys_state", "physical_state")):
        text = _read(root, "%s/%s" % (base, name))
        if text is None:
            continue
        number, _sep, word = text.partition(":")
        if _int(number.strip()) is None:
            raise ValueError("%s/%s reads %r, not 'N: NAME'" % (base, name, text[:40]))
        m.add("hpcnet_rdma_port_%s" % kind, "gauge",
              "RDMA port %s (IB numbering; the label names it)" % kind.replace("_", " "),
              _int(number.strip()), state=word.strip(), **labels)
    # counters/ (data, packets, symbol errors, link_downed, ...) is node_exporter's infiniband collector's
    # (node_infiniband_*, data already in bytes); hw_counters/ (RoCE congestion, retries, out_of_buffer) it lacks
    for counter in _ls(root, "%s/hw_counters" % base):
        value = _int(_read(root, "%s/hw_counters/%s" % (base, counter)))
        if value is None or counter in SKIP_HW:
            continue
        m.add("hpcnet_rdma_port_hw_stat_total", "counter", "RDMA port hw_counters/ statistic from sysfs (label counter)",
              value, counter=counter, device=dev, port=port)


def collect_ports(root, m):
    """Every port, each on its own: a port that cannot be read is reported as unreadable (with the reason)
    and the others are kept.  Returns True when every port was read."""
    ok = True
    for dev, port, netdevs, base in rdma_ports(root):
        try:
            collect_port(root, m, dev, port, netdevs, base)
        except Exception as e:  # one unreadable port must not hide the others
            ok = False
            m.add("hpcnet_rdma_port_unreadable", "gauge", "RDMA port whose sysfs files could not be read", 1,
                  device=dev, port=port, reason=str(e)[:200])
    return ok


def data_netdevs(root, given):
    if given:
        return [n for n in given if _ls(root, "/sys/class/net/%s" % n) or _read(root, "/sys/class/net/%s/mtu" % n)]
    found = []
    for _d, _p, netdevs, _b in rdma_ports(root):
        found += [n for n in netdevs if n not in found]
    return found


def collect_netdevs(root, m, netdevs, ethtool):
    # statistics/ (rx_errors, rx_dropped, ...) is node_exporter's netdev collector's (node_network_*); the driver's
    # own ethtool -S trouble counters (rx_discards_phy, pause, per-queue drops) are not exported by default
    for ifname in netdevs:
        for counter, value in sorted(ethtool(ifname).items()):
            if TROUBLE.search(counter):
                m.add("hpcnet_rdma_netdev_ethtool_total", "counter",
                      "Error, drop, discard and pause counters of the data netdev (ethtool -S)", value,
                      interface=ifname, counter=counter)


def ethtool_stats(ifname):
    try:
        proc = subprocess.run(["ethtool", "-S", ifname], capture_output=True, text=True, timeout=10,
                              env=dict(os.environ, LC_ALL="C"), check=False)
    except (OSError, subprocess.SubprocessError):
        return {}
    out = {}
    for line in proc.stdout.splitlines() if proc.returncode == 0 else []:
        name, sep, value = line.strip().rpartition(":")
        if sep and _int(value.strip()) is not None and name and not name.startswith("NIC statistics"):
            out[name.strip()] = _int(value.strip())
    return out


def _cpus(text):
    out = set()
    for part in (text or "").split(","):
        part = part.strip()
        if "-" in part:
            a, b = part.split("-", 1)
            if _int(a) is not None and _int(b) is not None:
                out.update(range(int(a), int(b) + 1))
        elif _int(part) is not None:
            out.add(int(part))
    return out


# How drivers name their MSI-X vectors: a copy of module_utils/irq/_domain.py's IRQ_NAMING and GENERIC_IRQ_NAMING (this
# script runs alone on the node and cannot import the collection; tests/unit/roles/rdma_metrics/test_collector.py
# fails when the copies differ).  Per driver: (queue patterns, non-queue patterns); "{if}" is the interface name.
IRQ_NAMING = {
    "mlx5_core": ([r"^mlx5_comp(?P<q>\d+)(?:@|$)"], [r"^mlx5_(?:async|pages|cmd|page_fault|fw)"]),
    "mlx4_en": ([r"^{if}-(?P<q>\d+)$", r"^mlx4-comp-(?P<q>\d+)@"], [r"^mlx4-async@"]),
    "ice": ([r"^ice-{if}-TxRx-(?P<q>\d+)(?:-\d+)?$"], [r":misc$", r":ctrl-TxRx-\d+$"]),
    "i40e": ([r"^i40e-{if}-TxRx-(?P<q>\d+)$"], [r":misc$", r":fdir-TxRx-\d+$"]),
    "ixgbe": ([r"^{if}-TxRx-(?P<q>\d+)$"], [r"^{if}$"]),
    "igb": ([r"^{if}-(?:TxRx|rx|tx)-(?P<q>\d+)$"], [r"^{if}$"]),
    "e1000e": ([r"^{if}-(?:rx|tx)-(?P<q>\d+)$"], [r"^{if}$"]),
    "bnxt_en": ([r"^{if}-(?:TxRx|rx|tx)-(?P<q>\d+)$"], []),
    "bnx2": ([r"^{if}-(?P<q>\d+)$"], []),
    "bnx2x": ([r"^{if}-fp-(?P<q>\d+)$"], [r"^{if}$"]),
    "tg3": ([r"^{if}-(?:txrx|tx|rx)-(?P<q>\d+)$"], [r"^{if}$"]),
    "ena": ([r"^{if}-Tx-Rx-(?P<q>\d+)$"], [r"^ena-mgmnt@"]),
    "gve": ([r"^gve-ntfy-blk(?P<q>\d+)@", r"-ntfy-block\.(?P<q>\d+)$"], [r"^gve-mgmnt@"]),
    "virtio_net": ([r"^virtio\d+-(?:input|output)\.(?P<q>\d+)$"], [r"^virtio\d+-(?:config|control)$"]),
}
GENERIC_IRQ_NAMING = (
    [r"(?:^|[-_])comp(?P<q>\d+)(?:@|$)", r"-TxRx-(?P<q>\d+)(?:-\d+)?$", r"-Tx-Rx-(?P<q>\d+)$",
     r"-(?:rx|tx|txrx|rxtx|fp)-(?P<q>\d+)$", r"-(?:input|output)\.(?P<q>\d+)$", r"ntfy-blk(?P<q>\d+)@",
     r"-ntfy-block\.(?P<q>\d+)$", r"^mlx4-comp-(?P<q>\d+)@", r"^{if}-(?P<q>\d+)$"],
    [r"[:-]misc$", r":fdir-", r":ctrl-", r":mbx$", r"^mlx5_(?:async|pages|cmd|page_fault|fw)", r"-mgmnt@", r"-async@",
     r"^virtio\d+-(?:config|control)$", r"^{if}$"],
)


def _naming(driver, ifname):
    """(queue regexes, non-queue regexes) for the driver: its own patterns first, then the generic ones (as _irq)."""
    own = IRQ_NAMING.get(driver, ([], []))
    return tuple([re.compile(r.replace("{if}", re.escape(ifname))) for r in own[i] + GENERIC_IRQ_NAMING[i]]
                 for i in (0, 1))


def _queue_irq(actions, naming):
    """Whether the last field of a /proc/interrupts row (the IRQ's name) is a queue vector's, as
    module_utils/irq/_domain.py's irq_role tells it: a non-queue pattern first (i40e's fdir-TxRx), then a queue one."""
    name = (actions.split() or [""])[-1]
    queue, other = naming
    if any(rx.search(name) for rx in other):
        return False
    return any(rx.search(name) for rx in queue)


def _driver(root, ifname):
    """The kernel driver bound to the netdev's device (basename of device/driver), None for a virtual one."""
    try:
        return os.path.basename(os.readlink(root.rstrip("/") + "/sys/class/net/%s/device/driver" % ifname))
    except OSError:
        return None


def collect_irqs(root, m, netdevs):
    interrupts = (_read(root, "/proc/interrupts") or "").splitlines()
    ncpu = len(interrupts[0].split()) if interrupts else 0
    rows = {}
    for line in interrupts[1:]:
        head, _sep, rest = line.partition(":")
        if head.strip().isdigit():
            fields = rest.split()
            rows[int(head)] = ([_int(x) or 0 for x in fields[:ncpu]], " ".join(fields[ncpu:]))
    for ifname in netdevs:
        # the device's MSI-X vectors (virtio-net: its parent PCI device's) and any IRQ named after the netdev,
        # queue vectors only - as hpcnet.rdma.irq_affinity picks them (module_utils/irq/_domain.py, per driver)
        naming = _naming(_driver(root, ifname), ifname)
        msi = _ls(root, "/sys/class/net/%s/device/msi_irqs" % ifname) or \
            _ls(root, "/sys/class/net/%s/device/../msi_irqs" % ifname)
        irqs = set(i for i in (_int(x) for x in msi) if i in rows and _queue_irq(rows[i][1], naming))
        irqs |= set(n for n, (_c, name) in rows.items()
                    if re.search(r"\b%s\b" % re.escape(ifname), name) and _queue_irq(name, naming))
        irqs = sorted(i for i in irqs if i in rows)
        cpus = set()
        per_cpu = [0] * ncpu
        for irq in irqs:
            cpus |= _cpus(_read(root, "/proc/irq/%d/effective_affinity_list" % irq)
                          or _read(root, "/proc/irq/%d/smp_affinity_list" % irq))
            per_cpu = [a + b for a, b in zip(per_cpu, rows[irq][0])]
        m.add("hpcnet_rdma_irq_vectors", "gauge", "Queue IRQs of the data netdev (MSI-X vectors, /proc/interrupts)",
              len(irqs), interface=ifname)
        m.add("hpcnet_rdma_irq_cpus", "gauge", "Distinct CPUs the data netdev's IRQs are delivered to "
              "(effective affinity)", len(cpus), interface=ifname)
        for cpu, count in enumerate(per_cpu):
            if count:
                m.add("hpcnet_rdma_irq_interrupts_total", "counter",
                      "Interrupts of the data netdev's IRQs handled per CPU (/proc/interrupts)", count,
                      interface=ifname, cpu=cpu)


def _json(root, path):
    text = _read(root, path) if path.startswith("/") else None
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return {"_error": "not JSON"}


def collect_profile(root, m, path):
    prof = _json(root, path)
    if isinstance(prof, dict) and prof.get("name") and "_error" not in prof:
        m.add("hpcnet_rdma_profile_info", "gauge", "The tuning profile applied on the node (from %s)" % path, 1,
              profile=prof.get("name"), digest=prof.get("digest") or "")
    else:
        m.add("hpcnet_rdma_profile_info", "gauge", "The tuning profile applied on the node (from %s)" % path, 0,
              profile="none", digest="")


_SIGNAL = re.compile(r"killed by (SIG[A-Z0-9]+)")
LATENCY_HELP = "Latency quantiles of the last stored benchmark run (seconds, from its raw samples)"


def _latency(m, res, where, **labels):
    """One latency summary (seconds) from a result's percentiles (us), with _count and _sum when the run kept the
    sample count and mean; the values that are not numbers, named."""
    bad = []
    pct = res.get("percentiles") or {}
    quantiles = 0
    for key, value in sorted(pct.items()) if isinstance(pct, dict) else [("percentiles", pct)]:
        try:
            q = float(key[1:]) / 100.0
        except ValueError:
            q = None
        if q is None or not _is_number(value):
            bad.append("%s.percentiles.%s: %r" % (where, key, value))
            continue
        # the stored run is in microseconds; Prometheus wants seconds
        m.add("hpcnet_rdma_bench_latency_seconds", "summary", LATENCY_HELP, round(value / 1e6, 12),
              **dict(labels, quantile="%g" % q))
        quantiles += 1
    # _count and _sum only when the run kept both (raw samples); a summary of quantiles alone is valid
    if quantiles and _is_number(res.get("count")) and _is_number(res.get("mean")):
        m.add("hpcnet_rdma_bench_latency_seconds", "summary", LATENCY_HELP, res["count"], _suffix="_count", **labels)
        m.add("hpcnet_rdma_bench_latency_seconds", "summary", LATENCY_HELP,
              round(res["count"] * res["mean"] / 1e6, 9), _suffix="_sum", **labels)
    return bad


def collect_bench(root, m, path):
    """The last stored run; the values that are not numbers are left out and named (the source then counts as
    failed), every other value is written."""
    run = _json(root, path)
    if run is None:
        return []
    if not isinstance(run, dict) or not isinstance(run.get("results"), dict):
        return ["%s: not a stored benchmark run" % path]
    bad = []
    for test, pairs in sorted(run["results"].items()):
        if not isinstance(pairs, dict):
            bad.append("results.%s is not an object" % test)
            continue
        for pair, res in sorted(pairs.items()):
            if not isinstance(res, dict):
                bad.append("results.%s[%s] is not an object" % (test, pair))
                continue
            if _is_number(res.get("attempts")):
                m.add("hpcnet_rdma_bench_attempts", "gauge", "How many times the client of the last stored benchmark run "
                      "ran (a tool killed by a signal is re-run once)", res["attempts"], test=test, pair=pair)
            if "error" in res:
                sig = _SIGNAL.search(str(res["error"]))
                m.add("hpcnet_rdma_bench_error", "gauge", "1 when the last stored benchmark run holds an error for the "
                      "test and pair (label signal: the signal that killed the tool, if one did)", 1, test=test,
                      pair=pair, signal=sig.group(1) if sig else "")
                continue
            series = res.get("series")
            if isinstance(series, list):      # the mpi test: one summary per op and message size
                for i, fig in enumerate(series):
                    if not isinstance(fig, dict) or not isinstance(fig.get("op"), str) or not _is_number(fig.get("bytes")):
                        bad.append("results.%s[%s].series[%d]: no op and bytes" % (test, pair, i))
                        continue
                    bad += _latency(m, fig, "results.%s[%s].series[%d]" % (test, pair, i), test=test, pair=pair,
                                    op=fig["op"], size="%d" % fig["bytes"])
            else:
                bad += _latency(m, res, "results.%s[%s]" % (test, pair), test=test, pair=pair)
            for key in ("gbits_received", "gbits_average"):
                if key not in res:
                    continue
                if not _is_number(res[key]):
                    bad.append("results.%s[%s].%s: %r" % (test, pair, key, res[key]))
                    continue
                m.add("hpcnet_rdma_bench_bandwidth_bytes_per_second", "gauge",
                      "Bandwidth of the last stored benchmark run (bytes/s; the run stores Gbit/s)",
                      round(res[key] * 1e9 / 8.0, 3), test=test, pair=pair)
    finished = run.get("finished_at")
    if isinstance(finished, str):
        try:
            ts = calendar.timegm(time.strptime(finished, "%Y-%m-%dT%H:%M:%SZ"))
            m.add("hpcnet_rdma_bench_timestamp_seconds", "gauge", "When the last stored benchmark run finished", ts,
                  run_id=str(run.get("run_id") or ""), label=str(run.get("label") or ""))
        except ValueError:
            bad.append("finished_at: %r" % finished)
    return ["%s: not numbers, left out: %s" % (path, "; ".join(bad))] if bad else []


SOURCES = ("ports", "netdevs", "irqs", "profile", "bench")


def collect(root="/", interfaces=None, profile_file="/etc/hpcnet-rdma/profile.json",
            bench_file="/var/lib/hpcnet-rdma-bench/last.json", ethtool=ethtool_stats, problems=None, now=time.time):
    """The exposition text.  A source that raises, or returns problems, is marked failed
    (hpcnet_rdma_collector_source_success 0, and collector_success 0); the other sources are still written.
    ``problems`` (a list) receives what went wrong, for the log."""
    start = time.monotonic()
    m = Metrics()
    problems = [] if problems is None else problems
    try:
        netdevs = data_netdevs(root, interfaces or [])
    except Exception as e:  # noqa: BLE001 - one broken source must not hide the others
        netdevs = []
        problems.append("netdevs: %s" % e)
    steps = {"ports": lambda: [] if collect_ports(root, m) else ["a port could not be read (hpcnet_rdma_port_unreadable)"],
             "netdevs": lambda: collect_netdevs(root, m, netdevs, ethtool),
             "irqs": lambda: collect_irqs(root, m, netdevs), "profile": lambda: collect_profile(root, m, profile_file),
             "bench": lambda: collect_bench(root, m, bench_file)}
    ok = {}
    for name in SOURCES:
        try:
            found = steps[name]() or []
        except Exception as e:  # noqa: BLE001 - one broken source must not hide the others
            found = ["%s: %s: %s" % (name, type(e).__name__, e)]
        problems.extend(found)
        ok[name] = not found
    for name in SOURCES:
        m.add("hpcnet_rdma_collector_source_success", "gauge", "Whether a source of hpcnet-rdma-metrics was read "
              "whole (0: it failed, or a value of it was not a number and was left out)", ok[name], source=name)
    m.add("hpcnet_rdma_collector_success", "gauge", "Whether every source of hpcnet-rdma-metrics was read",
          all(ok.values()))
    m.add("hpcnet_rdma_collector_duration_seconds", "gauge", "How long hpcnet-rdma-metrics took",
          round(time.monotonic() - start, 6))
    m.add("hpcnet_rdma_collector_timestamp_seconds", "gauge", "When hpcnet-rdma-metrics wrote this file (Unix time; "
          "time() minus it is how stale the metrics are)", round(now(), 3))
    return m.render()


def write_atomic(path, text):
    d = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(prefix=".hpcnet_rdma.", suffix=".tmp", dir=d)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def main(argv=None):
    p = argparse.ArgumentParser(prog="hpcnet-rdma-metrics", description="RDMA fabric metrics for node_exporter's "
                                "textfile collector")
    p.add_argument("--output", default="/var/lib/prometheus/node-exporter/hpcnet_rdma.prom")
    p.add_argument("--root", default="/", help="prefix of /sys and /proc (tests)")
    p.add_argument("--interfaces", default="", help="data netdevs, comma-separated (default: those under RDMA ports)")
    p.add_argument("--profile-file", default="/etc/hpcnet-rdma/profile.json")
    p.add_argument("--bench-file", default="/var/lib/hpcnet-rdma-bench/last.json")
    p.add_argument("--stdout", action="store_true", help="print instead of writing --output")
    a = p.parse_args(argv)
    problems = []
    text = collect(a.root, [i for i in a.interfaces.split(",") if i], a.profile_file, a.bench_file, problems=problems)
    for problem in problems:
        sys.stderr.write("hpcnet-rdma-metrics: %s\n" % problem)
    if a.stdout:
        sys.stdout.write(text)
    else:
        write_atomic(a.output, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
