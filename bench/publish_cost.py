#!/usr/bin/env python3
"""What `airlock publish` costs the intake: flood throughput of `airlock run`
alone, with the publisher running against a nats-server on loopback, and with
the publisher running while that server is down, in one invocation. Rounds
alternate (alone, publishing, server down, alone, ...) on one root so a
change in the machine's load falls on both alike; each figure is the median of
its rounds. Also reports how far the publisher was behind when a flood ended
and how long it took to catch up, and checks the stream holds each outcome once.

    python3 bench/publish_cost.py .build/release/airlock WORKDIR [OUT.md]

FLOOD_DROPS (default 1000) and RUNS (default 3 per side) as in bench/watch.py.
"""
import json
import os
import socket
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from watch import Airlock, drop, wait_for  # noqa: E402

FLOOD_DROPS = int(os.environ.get("FLOOD_DROPS", "1000"))
RUNS = int(os.environ.get("RUNS", "3"))
HERE = os.path.dirname(os.path.abspath(__file__))
CONSUMER = os.path.join(HERE, "..", "deploy", "nats-consumer.py")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stream_messages(url):
    out = subprocess.run([sys.executable, CONSUMER, "--server", url, "--stream", "AIRLOCK", "--info"],
                         capture_output=True, text=True)
    return json.loads(out.stdout)["messages"] if out.returncode == 0 else -1


def published_outcomes(binary, root):
    out = subprocess.run([binary, "events", "--root", root], capture_output=True, text=True, check=True)
    kinds = {"accepted", "rejected", "deferred", "released", "purged"}
    return sum(1 for line in out.stdout.split("\n") if line and json.loads(line).get("event") in kinds)


def flood(target, data, tag):
    before = target.finished()
    start = time.monotonic()
    for i in range(FLOOD_DROPS):
        drop(target.inbox, f"{tag}-{i}.zip", data)
    assert wait_for(lambda: target.finished() - before >= FLOOD_DROPS, 900)
    return FLOOD_DROPS / (time.monotonic() - start)


def main():
    binary, work = sys.argv[1], sys.argv[2]
    out = sys.argv[3] if len(sys.argv) > 3 else None
    data = open(os.path.join(HERE, "..", "fixtures", "archives", "zip-deflate-valid.zip"), "rb").read()
    port = free_port()
    url = f"nats://127.0.0.1:{port}"
    def start_server():
        return subprocess.Popen(["nats-server", "-a", "127.0.0.1", "-p", str(port), "-js", "-sd", os.path.join(work, "js")],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    server = start_server()
    airlock = Airlock(binary, work, 100)
    config_path = os.path.join(airlock.root, "airlock.json")
    config = json.load(open(config_path))
    config["publish"] = {"nats": {"servers": [url], "stream": "AIRLOCK", "create_stream": True, "instance": "bench"}}
    json.dump(config, open(config_path, "w"))
    alone, publishing, down, behind, catch_up = [], [], [], [], []
    try:
        for run in range(RUNS):
            alone.append(flood(airlock, data, f"alone{run}"))
            # Catch up on the rounds without a publisher first, so each publishing round
            # measures the publisher following the flood, not a backlog.
            publisher = subprocess.Popen([binary, "publish", "--root", airlock.root],
                                         stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "publisher.err"), "a"))
            expected = published_outcomes(binary, airlock.root)
            assert wait_for(lambda: stream_messages(url) >= expected, 300)
            publishing.append(flood(airlock, data, f"publishing{run}"))
            ended = time.monotonic()
            expected = published_outcomes(binary, airlock.root)
            behind.append(expected - stream_messages(url))
            assert wait_for(lambda: stream_messages(url) >= expected, 300)
            catch_up.append(time.monotonic() - ended)
            # The server down for a whole flood: the publisher keeps retrying beside the intake.
            server.terminate()
            server.wait(30)
            down.append(flood(airlock, data, f"down{run}"))
            server = start_server()
            expected = published_outcomes(binary, airlock.root)
            assert wait_for(lambda: stream_messages(url) >= expected, 300)
            publisher.terminate()
            publisher.wait(30)
        total = stream_messages(url)
        expected = published_outcomes(binary, airlock.root)
    finally:
        airlock.stop()
        server.terminate()
        server.wait(30)
    lines = ["## The publisher's cost on a flood", "",
             f"{FLOOD_DROPS} ZIP drops per round, {RUNS} rounds each, alternating; `airlock run` alone, with "
             "`airlock publish` to nats-server on loopback, and with `airlock publish` while the server is down (median drops/s).", "",
             "| intake alone (drops/s) | with the publisher | ratio | server down | ratio | behind when the flood ended (records) "
             "| caught up after (s) | stream / outcomes |",
             "|---|---|---|---|---|---|---|---|",
             f"| {statistics.median(alone):.0f} | {statistics.median(publishing):.0f} | "
             f"{statistics.median(publishing) / statistics.median(alone):.2f} | {statistics.median(down):.0f} | "
             f"{statistics.median(down) / statistics.median(alone):.2f} | {statistics.median(behind):.0f} | "
             f"{statistics.median(catch_up):.2f} | {total} / {expected} |", ""]
    text = "\n".join(lines)
    print(text)
    print("rounds alone:", [round(r) for r in alone], "with the publisher:", [round(r) for r in publishing],
          "server down:", [round(r) for r in down])
    if out:
        with open(out, "a") as f:
            f.write(text + "\n")
    if total != expected:
        sys.exit(f"the stream holds {total} messages for {expected} outcomes")


if __name__ == "__main__":
    main()
