"""molecule `verify tests_metrics`, after the prometheus.yml side effect: the collector's timer runs on
each VM, node_exporter serves the hpcnet_rdma_* metrics, and the real Prometheus on the host read both
VMs' metrics back through its HTTP query API (prometheus-queries.json, written by prometheus.yml)."""
import json
import os
import shutil
import subprocess

import pytest

QUERIES = os.path.join(os.environ.get("MOLECULE_EPHEMERAL_DIRECTORY", "/tmp"), "prometheus-queries.json")
VMS = {"vm1", "vm2"}


def test_collector_timer_is_active(host):
    assert host.service("hpcnet-rdma-metrics.timer").is_running
    # the unit whose stop (rollback) removes the textfile; active, and started at boot
    textfile = host.service("hpcnet-rdma-metrics-textfile.service")
    assert textfile.is_running and textfile.is_enabled


def test_textfile_is_written_with_help_and_type(host):
    with host.sudo():
        text = host.file("/var/lib/prometheus/node-exporter/hpcnet_rdma.prom").content_string
    assert "# TYPE hpcnet_rdma_port_state gauge" in text
    assert "# TYPE hpcnet_rdma_collector_timestamp_seconds gauge" in text
    assert "hpcnet_rdma_collector_success 1" in text


def test_node_exporter_serves_the_metrics(host):
    out = host.check_output("python3 -c \"import urllib.request; "
                            "print(urllib.request.urlopen('http://127.0.0.1:9100/metrics', timeout=10).read().decode())\"")
    assert 'hpcnet_rdma_profile_info{digest=' in out and 'profile="mpi"} 1' in out


def test_promtool_passes_the_real_collector_output(host):
    """Prometheus's own linter (`promtool check metrics`, Debian's prometheus on the host) on what the collector
    wrote on this real kernel (rxe0 on virtio-net, its hw_counters, the IRQs, the bench run it published), and
    on the hpcnet_rdma families as node_exporter serves them to the scrape."""
    promtool = shutil.which("promtool")
    assert promtool, "promtool is not installed on the host (Debian's prometheus; scripts/ospkgs.sh group base)"
    with host.sudo():
        text = host.file("/var/lib/prometheus/node-exporter/hpcnet_rdma.prom").content_string
    served = host.check_output("python3 -c \"import urllib.request; "
                               "print(urllib.request.urlopen('http://127.0.0.1:9100/metrics', timeout=10).read()"
                               ".decode())\"")
    ours = "".join(line + "\n" for line in served.splitlines()
                   if line.startswith(("hpcnet_rdma_", "# HELP hpcnet_rdma_", "# TYPE hpcnet_rdma_")))
    for what, exposition in (("the collector's textfile", text), ("node_exporter's hpcnet_rdma families", ours)):
        assert "hpcnet_rdma_bench_" in exposition and "hpcnet_rdma_port_state" in exposition, what
        done = subprocess.run([promtool, "check", "metrics"], input=exposition, capture_output=True, text=True,
                              timeout=60, check=False)
        assert done.returncode == 0, "%s: promtool check metrics exit %d: %s%s" % (
            what, done.returncode, done.stdout, done.stderr)


@pytest.fixture(scope="module")
def answers():
    with open(QUERIES, encoding="utf-8") as f:
        return json.load(f)


def vms(result):
    return set(r["metric"].get("vm") for r in result)


@pytest.mark.parametrize("query", ["port_state", "profile", "collector", "hw_counters", "retransmits", "irq_cpus",
                                   "bench_lat", "bench_bw"])
def test_prometheus_has_both_vms(answers, query):
    assert vms(answers[query]) == VMS, answers[query]


def test_prometheus_values(answers):
    assert all(float(r["value"][1]) == 4 for r in answers["port_state"])          # ACTIVE
    assert all(float(r["value"][1]) >= 1 for r in answers["irq_cpus"])


@pytest.mark.parametrize("query, test, value_metric", [
    ("bench_lat", "ib_send_lat", "hpcnet_rdma_bench_latency_seconds"),
    ("bench_bw", "iperf3", "hpcnet_rdma_bench_bandwidth_bytes_per_second"),
])
def test_prometheus_has_what_the_run_stored(host, answers, query, test, value_metric):
    """Each pair of the run this VM published (rdma_bench_publish_file) is in Prometheus as what it is:
    a value > 0, or - where the tool failed (a crash is retried once) - hpcnet_rdma_bench_error 1 and no value."""
    with host.sudo():
        run = json.loads(host.file("/var/lib/hpcnet-rdma-bench/last.json").content_string)
    vm = host.backend.get_hostname()
    stored = run["results"][test]
    assert stored, run
    mine = [r for r in answers[query] if r["metric"].get("vm") == vm]
    for pair, res in stored.items():
        series = {r["metric"]["__name__"]: float(r["value"][1]) for r in mine if r["metric"].get("pair") == pair}
        if "error" in res:
            assert series == {"hpcnet_rdma_bench_error": 1.0}, (pair, res, mine)
        else:
            assert set(series) == {value_metric} and series[value_metric] > 0, (pair, res, mine)
