# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The textfile collector (roles/rdma_metrics/files/hpcnet-rdma-metrics.py) on a fake /sys + /proc tree:
each metric has the value of its source file, the output is valid exposition format (HELP and TYPE once
per family, counters end in _total), and a broken source does not hide the others."""
from __future__ import annotations

import importlib.util
import json
import os
import re

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.health import _metrics as _health_metrics
from ansible_collections.hpcnet.rdma.plugins.module_utils.irq import _domain as _irq

from ...fixtures.real.loader import real_capture
from ...plugins.module_utils.irq import test_irq_real

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles", "rdma_metrics", "files",
                      "hpcnet-rdma-metrics.py")
spec = importlib.util.spec_from_file_location("hpcnet_rdma_metrics", SCRIPT)
collector = importlib.util.module_from_spec(spec)
spec.loader.exec_module(collector)

TREE = {
    "sys/class/infiniband/rxe0/ports/1/state": "4: ACTIVE\n",
    "sys/class/infiniband/rxe0/ports/1/phys_state": "5: LinkUp\n",
    "sys/class/infiniband/rxe0/ports/1/gid_attrs/ndevs/0": "data0\n",
    "sys/class/infiniband/rxe0/ports/1/gid_attrs/ndevs/1": "data0\n",
    "sys/class/infiniband/rxe0/ports/1/counters/port_rcv_data": "1000\n",
    "sys/class/infiniband/rxe0/ports/1/counters/port_xmit_discards": "2\n",
    "sys/class/infiniband/rxe0/ports/1/hw_counters/out_of_buffer": "3\n",
    "sys/class/infiniband/rxe0/ports/1/hw_counters/rnr_nak_retry_err": "1\n",
    "sys/class/infiniband/rxe0/ports/1/hw_counters/packet_seq_err": "0\n",
    "sys/class/infiniband/rxe0/ports/1/hw_counters/lifespan": "10\n",
    "sys/class/net/data0/mtu": "9000\n",
    "sys/class/net/data0/statistics/rx_errors": "2\n",
    "sys/class/net/data0/statistics/rx_dropped": "5\n",
    "sys/class/net/data0/statistics/tx_dropped": "0\n",
    "sys/class/net/data0/device/msi_irqs/40": "msix\n",
    "sys/class/net/data0/device/msi_irqs/41": "msix\n",
    "proc/net/softnet_stat": ("0000a000 00000003 00000010 00000000 00000000 00000000 00000000 00000000 00000000 "
                              "00000000 00000000 00000000 00000000\n"
                              "0000b000 00000000 00000002 00000000 00000000 00000000 00000000 00000000 00000000 "
                              "00000000 00000000 00000000 00000001\n"),
    "proc/net/snmp": ("Ip: Forwarding DefaultTTL\nIp: 1 64\n"
                      "Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails EstabResets "
                      "CurrEstab InSegs OutSegs RetransSegs InErrs OutRsts InCsumErrors\n"
                      "Tcp: 1 200 120000 -1 10 5 0 0 2 5000 4000 12 0 3 0\n"),
    "proc/interrupts": ("           CPU0       CPU1\n"
                        "  0:         30          0   IO-APIC   2-edge      timer\n"
                        " 40:         10         20   PCI-MSI 524288-edge      data0-TxRx-0\n"
                        " 41:          0          7   PCI-MSI 524289-edge      data0-TxRx-1\n"
                        "NMI:          0          0   Non-maskable interrupts\n"),
    "proc/irq/40/effective_affinity_list": "0\n",
    "proc/irq/41/effective_affinity_list": "1\n",
    "etc/hpcnet-rdma/profile.json": json.dumps({"name": "mpi", "digest": "sha256:abc"}),
    "var/lib/hpcnet-rdma-bench/last.json": json.dumps({
        "schema": "hpcnet.rdma.bench/1", "run_id": "r1", "label": "mpi", "finished_at": "2026-12-04T15:00:00Z",
        "results": {"sockperf": {"n1->n2": {"count": 1000, "mean": 10.5,
                                            "percentiles": {"p50": 8.5, "p99": 40.0, "p99.9": 120.5}}},
                    "iperf3": {"n1->n2": {"gbits_received": 9.41}},
                    "ib_send_lat": {"n1->n2": {"error": "rc 1"}}}}),
}


def make_tree(tmp_path, tree):
    for rel, content in tree.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    return str(tmp_path)


def no_ethtool(_ifname):
    return {}


@pytest.fixture
def text(tmp_path):
    root = make_tree(tmp_path, TREE)
    return collector.collect(root, [], ethtool=lambda i: {"rx_pause": 4, "tx_pause": 1, "rx_bytes": 99,
                                                          "rx_discards_phy": 6} if i == "data0" else {})


@pytest.mark.parametrize("line", [
    'hpcnet_rdma_port_state{device="rxe0",netdev="data0",port="1",state="ACTIVE"} 4',
    'hpcnet_rdma_port_physical_state{device="rxe0",netdev="data0",port="1",state="LinkUp"} 5',
    'hpcnet_rdma_port_hw_stat_total{counter="out_of_buffer",device="rxe0",port="1"} 3',
    'hpcnet_rdma_port_hw_stat_total{counter="rnr_nak_retry_err",device="rxe0",port="1"} 1',
    'hpcnet_rdma_port_hw_stat_total{counter="packet_seq_err",device="rxe0",port="1"} 0',
    'hpcnet_rdma_netdev_ethtool_total{counter="rx_pause",interface="data0"} 4',
    'hpcnet_rdma_netdev_ethtool_total{counter="rx_discards_phy",interface="data0"} 6',
    'hpcnet_rdma_irq_vectors{interface="data0"} 2',
    'hpcnet_rdma_irq_cpus{interface="data0"} 2',
    'hpcnet_rdma_irq_interrupts_total{cpu="0",interface="data0"} 10',
    'hpcnet_rdma_irq_interrupts_total{cpu="1",interface="data0"} 27',
    'hpcnet_rdma_profile_info{digest="sha256:abc",profile="mpi"} 1',
    'hpcnet_rdma_bench_latency_seconds{pair="n1->n2",quantile="0.5",test="sockperf"} 8.5e-06',
    'hpcnet_rdma_bench_latency_seconds{pair="n1->n2",quantile="0.999",test="sockperf"} 0.0001205',
    'hpcnet_rdma_bench_latency_seconds_count{pair="n1->n2",test="sockperf"} 1000',
    'hpcnet_rdma_bench_latency_seconds_sum{pair="n1->n2",test="sockperf"} 0.0105',
    'hpcnet_rdma_bench_bandwidth_bytes_per_second{pair="n1->n2",test="iperf3"} 1176250000.0',
    'hpcnet_rdma_bench_timestamp_seconds{label="mpi",run_id="r1"} 1796396400',
    'hpcnet_rdma_bench_error{pair="n1->n2",signal="",test="ib_send_lat"} 1',
    'hpcnet_rdma_collector_source_success{source="bench"} 1',
    'hpcnet_rdma_collector_success 1',
])
def test_metric_lines(text, line):
    assert line in text.splitlines()


@pytest.mark.parametrize("absent", ["lifespan", "rx_bytes", "timer", 'latency_seconds{pair="n1->n2",quantile="0.5",test="ib_send_lat"}',
                                    # node_exporter's own collectors export these (infiniband, netdev, softnet,
                                    # netstat): not duplicated
                                    "port_rcv_data", "port_xmit_discards", "rx_errors", "rx_dropped", "softnet",
                                    "tcp_", "Retrans"])
def test_left_out(text, absent):
    assert absent not in text


SAMPLE = re.compile(r'^([a-z_:][a-z0-9_:]*)(\{([a-z_][a-z0-9_]*="([^"\\]|\\.)*",?)*\})? (-?[0-9.e+-]+|NaN)$')


def test_exposition_format(text):
    families = {}
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name = line.split()[2]
            assert name not in families, "HELP twice for %s" % name
            families[name] = None
        elif line.startswith("# TYPE "):
            _h, _t, name, kind = line.split()
            assert families.get(name, "x") is None, "TYPE of %s without HELP before it" % name
            families[name] = kind
            assert kind in ("counter", "gauge", "summary")
            assert name.endswith("_total") == (kind == "counter"), name
            assert name.startswith("hpcnet_rdma_")
        else:
            m = SAMPLE.match(line)
            assert m, line
            base = m.group(1)
            if base not in families and base.endswith(("_sum", "_count")):
                base = base.rsplit("_", 1)[0]
                assert families.get(base) == "summary", line
            assert base in families, "sample before its TYPE: %s" % line


def test_profile_missing_and_no_rdma(tmp_path):
    root = make_tree(tmp_path, {"proc/net/snmp": TREE["proc/net/snmp"]})
    text = collector.collect(root, [], ethtool=no_ethtool)
    assert 'hpcnet_rdma_profile_info{digest="",profile="none"} 0' in text.splitlines()
    assert "hpcnet_rdma_port_state" not in text and "hpcnet_rdma_collector_success 1" in text


def test_a_broken_source_does_not_hide_the_others(tmp_path):
    def broken_ethtool(_ifname):
        raise OSError("ethtool vanished")
    problems = []
    text = collector.collect(make_tree(tmp_path, TREE), [], ethtool=broken_ethtool, problems=problems)
    assert "hpcnet_rdma_collector_success 0" in text
    assert 'hpcnet_rdma_collector_source_success{source="netdevs"} 0' in text.splitlines()
    assert 'hpcnet_rdma_irq_vectors{interface="data0"} 2' in text
    assert problems == ["netdevs: OSError: ethtool vanished"]


def test_one_unreadable_port_keeps_the_other_ports(tmp_path):
    tree = dict(TREE)
    tree["sys/class/infiniband/mlx5_0/ports/1/state"] = "ACTIVE\n"     # garbled: no "N: " prefix
    tree["sys/class/infiniband/mlx5_0/ports/1/counters/port_rcv_data"] = "77\n"
    text = collector.collect(make_tree(tmp_path, tree), [], ethtool=no_ethtool)
    assert 'hpcnet_rdma_port_unreadable{device="mlx5_0",port="1",reason="/sys/class/infiniband/mlx5_0/ports/1/state ' \
        "reads 'ACTIVE', not 'N: NAME'\"} 1" in text
    assert 'hpcnet_rdma_port_state{device="rxe0",netdev="data0",port="1",state="ACTIVE"} 4' in text
    assert 'hpcnet_rdma_port_hw_stat_total{counter="out_of_buffer",device="rxe0",port="1"} 3' in text
    assert "hpcnet_rdma_collector_success 0" in text and 'hpcnet_rdma_irq_vectors{interface="data0"} 2' in text


@pytest.mark.parametrize("bench, lines, problem", [
    ({"results": {"sockperf": {"n1->n2": {"percentiles": {"p50": "fast", "p99": 40.0}}},
                  "iperf3": {"n1->n2": {"gbits_received": 9.41}}}},
     ['hpcnet_rdma_bench_latency_seconds{pair="n1->n2",quantile="0.99",test="sockperf"} 4e-05',
      'hpcnet_rdma_bench_bandwidth_bytes_per_second{pair="n1->n2",test="iperf3"} 1176250000.0'],
     "results.sockperf[n1->n2].percentiles.p50: 'fast'"),
    ({"results": {"iperf3": {"n1->n2": {"gbits_received": [1]}, "n3->n4": {"gbits_received": 2.5}}}},
     ['hpcnet_rdma_bench_bandwidth_bytes_per_second{pair="n3->n4",test="iperf3"} 312500000.0'],
     "results.iperf3[n1->n2].gbits_received: [1]"),
    ({"results": {"ib_send_lat": {"vm1->vm2": {"error": "ib_send_lat killed by SIGSEGV (rc -11)", "attempts": 2}}}},
     ['hpcnet_rdma_bench_error{pair="vm1->vm2",signal="SIGSEGV",test="ib_send_lat"} 1',
      'hpcnet_rdma_bench_attempts{pair="vm1->vm2",test="ib_send_lat"} 2',
      'hpcnet_rdma_collector_source_success{source="bench"} 1'], None),
    ({"results": {"mpi": {"n1->n2": {"series": [{"op": "pingpong"},
                                                {"op": "allreduce", "bytes": 8, "percentiles": {"p50": 1.5}}]}}}},
     ['hpcnet_rdma_bench_latency_seconds{op="allreduce",pair="n1->n2",quantile="0.5",size="8",test="mpi"} 1.5e-06'],
     "results.mpi[n1->n2].series[0]: no op and bytes"),
    ({"results": {"mpi": {"vm1->vm2": {"error": "MPI rank 1 on vm2 killed by SIGSEGV (mpirun rc 139)", "attempts": 2}}}},
     ['hpcnet_rdma_bench_error{pair="vm1->vm2",signal="SIGSEGV",test="mpi"} 1',
      'hpcnet_rdma_bench_attempts{pair="vm1->vm2",test="mpi"} 2'], None),
    ({"results": {"iperf3": "x"}}, [], "results.iperf3 is not an object"),
    ("not json", [], "not a stored benchmark run"),
])
def test_a_broken_bench_value_is_left_out_and_named(tmp_path, bench, lines, problem):
    tree = dict(TREE)
    tree["var/lib/hpcnet-rdma-bench/last.json"] = bench if isinstance(bench, str) else json.dumps(bench)
    problems = []
    text = collector.collect(make_tree(tmp_path, tree), [], ethtool=no_ethtool, problems=problems)
    for line in lines + ['hpcnet_rdma_irq_vectors{interface="data0"} 2']:
        assert line in text.splitlines()
    ok = "1" if problem is None else "0"
    assert 'hpcnet_rdma_collector_source_success{source="bench"} %s' % ok in text.splitlines()
    assert "hpcnet_rdma_collector_success %s" % ok in text.splitlines()
    assert 'hpcnet_rdma_collector_source_success{source="irqs"} 1' in text.splitlines()
    assert (problem is None and problems == []) or problem in problems[0]


def test_metrics_refuse_a_value_that_is_not_a_number():
    m = collector.Metrics()
    with pytest.raises(ValueError, match="hpcnet_rdma_x.*'fast' is not a number"):
        m.add("hpcnet_rdma_x", "gauge", "x", "fast", a="b")
    assert m.render() == "\n"


def test_named_interfaces_and_atomic_write(tmp_path):
    root = make_tree(tmp_path / "root", TREE)
    out = tmp_path / "textfile" / "hpcnet_rdma.prom"
    out.parent.mkdir()
    assert collector.main(["--root", root, "--interfaces", "data0,nosuch", "--output", str(out)]) == 0
    text = out.read_text()
    assert 'interface="nosuch"' not in text and 'hpcnet_rdma_irq_vectors{interface="data0"} 2' in text
    assert sorted(os.listdir(str(out.parent))) == ["hpcnet_rdma.prom"]
    assert oct(os.stat(str(out)).st_mode & 0o777) == "0o644"


def test_label_values_are_escaped():
    m = collector.Metrics()
    m.add("hpcnet_rdma_profile_info", "gauge", "x", 1, profile='a"b\\c\nd')
    assert 'profile="a\\"b\\\\c\\nd"' in m.render()


DASHBOARD = os.path.join(os.path.dirname(SCRIPT), "..", "..", "..", "examples", "grafana", "hpcnet-rdma.json")


# node_exporter's series the dashboard and the alert rules use beside ours (its infiniband, netdev, softnet and netstat
# collectors, all on by default): the README names these collectors
NODE_EXPORTER = {"node_infiniband_port_data_received_bytes_total", "node_infiniband_port_data_transmitted_bytes_total",
                 "node_infiniband_port_errors_received_total", "node_infiniband_port_discards_transmitted_total",
                 "node_infiniband_link_downed_total", "node_network_receive_errs_total", "node_network_transmit_errs_total",
                 "node_network_receive_drop_total", "node_network_transmit_drop_total", "node_softnet_dropped_total",
                 "node_softnet_times_squeezed_total", "node_netstat_Tcp_RetransSegs", "node_netstat_Tcp_OutSegs"}


def test_grafana_dashboard_queries_only_metrics_the_collector_writes(text):
    dash = json.load(open(DASHBOARD))
    written = set(line.split()[2] for line in text.splitlines() if line.startswith("# TYPE "))
    used, theirs = set(), set()
    for panel in dash["panels"]:
        for target in panel["targets"]:
            used |= set(re.findall(r"hpcnet_rdma_[a-z_]+", target["expr"]))
            theirs |= set(re.findall(r"node_[A-Za-z_]+", target["expr"]))
            # a legend per series, never the labels of every family run together
            assert target["legendFormat"] and "}}{{" not in target["legendFormat"], (panel["title"], target)
    assert used and used <= written, used - written
    assert theirs == NODE_EXPORTER
    # every family the collector writes is on the dashboard except these
    assert written - used == {"hpcnet_rdma_collector_duration_seconds", "hpcnet_rdma_bench_timestamp_seconds",
                              "hpcnet_rdma_bench_error", "hpcnet_rdma_collector_source_success"}
    assert len(set(p["id"] for p in dash["panels"])) == len(dash["panels"])
    state = [p for p in dash["panels"] if p["targets"][0]["expr"].startswith("hpcnet_rdma_port_state")][0]
    names = state["fieldConfig"]["defaults"]["mappings"][0]["options"]
    assert names["4"]["text"] == "ACTIVE" and names["1"]["text"] == "DOWN"
    assert any("time() - hpcnet_rdma_collector_timestamp_seconds" in t["expr"] for p in dash["panels"] for t in p["targets"])
    assert any("node_infiniband_port_data_received_bytes_total" in t["expr"] and p["fieldConfig"]["defaults"]["unit"] == "Bps"
               for p in dash["panels"] for t in p["targets"])


def test_alert_rules_query_only_metrics_that_exist(text):
    rules = open(os.path.join(os.path.dirname(SCRIPT), "hpcnet-rdma-alerts.yml")).read()
    health = _health_metrics.render([], True, [], 0.1, 0.0)      # hpcnet-rdma-check writes these (rdma_health)
    written = set(line.split()[2] for line in (text + health).splitlines() if line.startswith("# TYPE "))
    assert set(re.findall(r"hpcnet_rdma_[a-z_]+\b(?!\.prom)", rules)) <= written
    assert set(re.findall(r"node_[a-z]+_[A-Za-z_]+_total", rules)) <= NODE_EXPORTER


def test_virtio_queue_irqs_are_on_the_parent_pci_device(tmp_path):
    """virtio-net (the lab VMs): the netdev's device is the virtio device; its MSI-X vectors are on the
    parent PCI device, named virtioN-input.Q / -output.Q, with a config vector that is not a queue's."""
    tree = dict((k, v) for k, v in TREE.items() if "msi_irqs" not in k and not k.startswith("proc/"))
    tree.update({
        # device/.. is the directory msi_irqs is read from; in this flat tree that is the netdev's own
        "sys/class/net/data0/msi_irqs/31": "msix\n",
        "sys/class/net/data0/msi_irqs/32": "msix\n",
        "sys/class/net/data0/msi_irqs/33": "msix\n",
        "sys/class/net/data0/device/vendor": "0x1af4\n",
        "proc/interrupts": ("           CPU0       CPU1\n"
                            " 31:          0          0   PCI-MSI 262144-edge      virtio3-config\n"
                            " 32:        165          2   PCI-MSI 262145-edge      virtio3-input.0\n"
                            " 33:          6        915   PCI-MSI 262146-edge      virtio3-output.0\n"),
        "proc/irq/31/effective_affinity_list": "1\n",
        "proc/irq/32/effective_affinity_list": "0\n",
        "proc/irq/33/effective_affinity_list": "1\n",
    })
    text = collector.collect(make_tree(tmp_path, tree), ["data0"], ethtool=no_ethtool)
    assert 'hpcnet_rdma_irq_vectors{interface="data0"} 2' in text
    assert 'hpcnet_rdma_irq_cpus{interface="data0"} 2' in text
    assert 'hpcnet_rdma_irq_interrupts_total{cpu="0",interface="data0"} 171' in text
    assert 'hpcnet_rdma_irq_interrupts_total{cpu="1",interface="data0"} 917' in text


def test_queue_vectors_are_told_apart_as_the_irq_module_does():
    """The collector runs alone on the node (no collection there); its IRQ naming table is a copy of
    module_utils/irq/_domain's (IRQ_NAMING, GENERIC_IRQ_NAMING): a row added there and not here fails here."""
    assert collector.IRQ_NAMING == _irq.IRQ_NAMING
    assert collector.GENERIC_IRQ_NAMING == _irq.GENERIC_IRQ_NAMING


@pytest.mark.parametrize("path,driver,ifname,irqs,header,expected", test_irq_real.CASES,
                         ids=["%s-%s" % (c[0], c[1]) for c in test_irq_real.CASES])
def test_queue_vectors_of_real_captures_as_irq_affinity_sees_them(path, driver, ifname, irqs, header, expected):
    """On every vector of the real /proc/interrupts captures, with the driver and without it (generic rules),
    the collector takes as a queue exactly what _irq.irq_role does."""
    ints = _irq.parse_interrupts((header or "") + real_capture(path))
    names = [ints[n]["name"] for n in irqs if n in ints]
    assert names
    for drv in (driver, None):
        naming = collector._naming(drv, ifname)
        assert [collector._queue_irq(n, naming) for n in names] == [_irq.irq_role(n, drv, ifname)[0] == "queue"
                                                                    for n in names]


@pytest.mark.parametrize("driver, vectors, queues", [
    # gve: the notify blocks are not named after the netdev; the management vector is not a queue
    ("gve", {24: "gve-mgmnt@pci:0000:00:04.0", 25: "gve-ntfy-blk0@pci:0000:00:04.0", 26: "gve-ntfy-blk1@pci:0000:00:04.0"}, 2),
    # ixgbe: the bare data0 vector (link/other) is named after the netdev but is not a queue
    ("ixgbe", {66: "data0-TxRx-0", 67: "data0-TxRx-1", 68: "data0"}, 2),
    # ENA: Tx-Rx queue pairs, ena-mgmnt is not a queue
    ("ena", {27: "ena-mgmnt@pci:0000:00:05.0", 28: "data0-Tx-Rx-0", 29: "data0-Tx-Rx-1"}, 2),
    # upstream mlx4_en: shared mlx4-comp-N EQs are its queue vectors, mlx4-async is not
    ("mlx4_en", {90: "mlx4-async@pci:0000:04:00.0", 91: "mlx4-comp-0@pci:0000:04:00.0", 92: "mlx4-comp-1@pci:0000:04:00.0"}, 2),
])
def test_irq_count_is_the_queue_vectors_of_the_driver(tmp_path, driver, vectors, queues):
    tree = dict((k, v) for k, v in TREE.items() if "msi_irqs" not in k and not k.startswith("proc/"))
    tree["proc/interrupts"] = "           CPU0       CPU1\n" + "".join(
        " %d:          1          2   PCI-MSI %d-edge      %s\n" % (n, 524288 + n, name) for n, name in sorted(vectors.items()))
    for n in vectors:
        tree["sys/class/net/data0/device/msi_irqs/%d" % n] = "msix\n"
    root = make_tree(tmp_path, tree)
    os.makedirs(os.path.join(root, "sys/bus/pci/drivers", driver))
    os.symlink(os.path.join(root, "sys/bus/pci/drivers", driver), os.path.join(root, "sys/class/net/data0/device/driver"))
    text = collector.collect(root, ["data0"], ethtool=no_ethtool)
    assert 'hpcnet_rdma_irq_vectors{interface="data0"} %d' % queues in text


def test_the_mpi_test_s_quantiles_per_op_and_message_size(tmp_path):
    """A stored run's mpi result as bench_run stores it, parsed from the real capture of the mpi program."""
    from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _benchrun
    with open(os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "mpi-bench.loopback.captured.txt"),
              encoding="utf-8") as f:
        stdout = "".join(line for line in f if not line.startswith("# "))
    res = _benchrun.parse_client("mpi", {"rc": 0, "stdout": stdout, "stderr": ""}, None)
    tree = dict(TREE)
    tree["var/lib/hpcnet-rdma-bench/last.json"] = json.dumps({"results": {"mpi": {"vm1->vm2": dict(res, attempts=1)}}})
    text = collector.collect(make_tree(tmp_path, tree), [], ethtool=no_ethtool).splitlines()
    for line in ['hpcnet_rdma_bench_latency_seconds{op="pingpong",pair="vm1->vm2",quantile="0.5",size="8",test="mpi"} '
                 '5.63e-07',
                 'hpcnet_rdma_bench_latency_seconds{op="allreduce",pair="vm1->vm2",quantile="0.99",size="65536",'
                 'test="mpi"} 3.029e-05',
                 'hpcnet_rdma_bench_latency_seconds_count{op="pingpong",pair="vm1->vm2",size="1024",test="mpi"} 1000',
                 'hpcnet_rdma_bench_attempts{pair="vm1->vm2",test="mpi"} 1',
                 'hpcnet_rdma_collector_source_success{source="bench"} 1']:
        assert line in text
    assert len([x for x in text if x.startswith("hpcnet_rdma_bench_latency_seconds{")]) == 6 * 4
    assert len([x for x in text if x.startswith("hpcnet_rdma_bench_latency_seconds_sum{")]) == 6
    test_exposition_format("\n".join(text))
