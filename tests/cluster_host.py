"""A real multi-node Ray cluster on this machine for tests/test_cluster.py: a head node and one
more node (one worker CPU each, ``ray.cluster_utils.Cluster``), started inside the network
namespace the test made for it (``unshare -n``, loopback only: Ray binds 127.0.0.1 and can reach
nothing else). Small: no dashboard, a capped object store, logs in the temporary folder.

Protocol on stdin/stdout, one line each (answers start with ``bpcheck-host: ``): it prints ``address HOST:PORT`` when both nodes are up,
then answers ``remove-node`` (the non-head node is removed: its raylet and workers are killed),
``add-node`` (a new one-CPU node) and ``nodes`` (how many are alive) with ``ok ...``; ``quit`` or
the end of stdin stops the cluster."""

from __future__ import annotations

import os
import sys

PREFIX = "bpcheck-host: "  # its answers; Ray may print lines of its own on stdout too


def say(text: str) -> None:
    print(PREFIX + text, flush=True)


STORE = 150 * 2**20  # bytes of object store per node
# a removed node is declared dead within about a second, not after Ray's default 30 s or so
SYSTEM = {"health_check_period_ms": 300, "health_check_failure_threshold": 3, "health_check_timeout_ms": 300}


def main() -> int:
    import ray
    from ray.cluster_utils import Cluster

    node = {"num_cpus": 1, "object_store_memory": STORE, "node_ip_address": "127.0.0.1"}
    cluster = Cluster(initialize_head=True, head_node_args={**node, "include_dashboard": False, "_system_config": SYSTEM})
    extra = cluster.add_node(**node)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, logging_level="ERROR", log_to_driver=False)

    def alive() -> int:
        return sum(1 for n in ray.nodes() if n.get("Alive"))

    say(f"address {cluster.address}")
    try:
        for line in sys.stdin:
            cmd = line.strip()
            if cmd == "remove-node":
                cluster.remove_node(extra, allow_graceful=False)
                say("ok removed")
            elif cmd == "add-node":
                extra = cluster.add_node(**node)
                cluster.wait_for_nodes()
                say(f"ok added {alive()}")
            elif cmd == "nodes":
                say(f"ok {alive()}")
            elif cmd == "quit":
                break
            else:
                say(f"error unknown command {cmd!r}")
    finally:
        ray.shutdown()
        cluster.shutdown()
    return 0


if __name__ == "__main__":
    os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    raise SystemExit(main())
