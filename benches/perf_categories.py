#!/usr/bin/env python3
"""Where a TCP bulk sender's (or receiver's) CPU goes, from a `perf record -g` profile.

Each sample is put in the category of the innermost frame of its call chain that names
one (copy from or to user space, waking the peer, the peer's receive path that loopback
runs on the sender's CPU, ACK processing, transmit, ...). Shares are given of all
samples and per sample of the copy: the copy's cost per byte is the same for every tool
and every load, so "per copy" compares two tools' profiles taken under different loads.

    perf record -F 2000 -e cpu-clock -g -o nuttcp.perf -- \\
        taskset -c 0 nuttcp -fparse -T8 -P 5491 -l131072 127.0.0.1
    perf record -F 2000 -e cpu-clock -g -o dualperf.perf -- \\
        taskset -c 0 dualperf run 127.0.0.1 -f 4 -d 8 -t tcp-stream -s 131072
    python3 benches/perf_categories.py nuttcp.perf dualperf.perf

A server's threads start with each test, so profile its CPU instead and keep its
processes' samples: `perf record -a -C 1 -g ...` and `--comms nuttcp,dp-tcp-send,...`
before the files.

(cpu-clock, not cycles: a VM without a PMU has only the software clock. Samples taken
with interrupts off land where they are turned back on, so a category's share includes
the interrupt-off time of what it calls.)
"""

import collections
import subprocess
import sys

# Category -> frames that name it. The innermost named frame of a chain decides.
CATEGORIES = {
    "copy from user": ["_copy_from_iter", "copy_from_user_iter", "skb_copy_to_page_nocache"],
    "copy to user": ["_copy_to_iter", "skb_copy_datagram_iter"],
    "wake the peer": ["try_to_wake_up", "sock_def_readable", "sk_stream_write_space",
                      "__wake_up_common_lock", "__wake_up_sync_key"],
    "peer's receive path (softirq)": ["tcp_v4_rcv", "tcp_v6_rcv", "ip_rcv", "ipv6_rcv",
                                      "__netif_receive_skb_one_core", "process_backlog",
                                      "net_rx_action"],
    "ACK processing": ["tcp_ack"],
    "socket backlog": ["__release_sock"],
    "skb alloc/free": ["__alloc_skb", "tcp_stream_alloc_skb", "skb_release_data",
                       "__kfree_skb", "skb_page_frag_refill", "kfree_skbmem",
                       "skb_attempt_defer_free", "skb_defer_free_flush"],
    "scheduler": ["__schedule", "schedule", "schedule_timeout", "finish_task_switch.isra.0"],
    "transmit (tcp_write_xmit, pacing timer)": ["tcp_write_xmit", "__tcp_transmit_skb",
                                                "__tcp_push_pending_frames", "tcp_push"],
    "tcp_sendmsg": ["tcp_sendmsg_locked", "tcp_sendmsg"],
    "tcp_recvmsg": ["tcp_recvmsg", "tcp_recvmsg_locked", "tcp_cleanup_rbuf"],
    "syscall entry": ["entry_SYSCALL_64_after_hwframe", "do_syscall_64"],
}
FRAME = {f: cat for cat, frames in CATEGORIES.items() for f in frames}
DATA_THREADS = ("nuttcp", "dp-tcp-send", "dp-tcp-recv", "iperf3", "qperf")


def samples(path, comms=None):
    """(command, [frames leaf first]) per sample of a perf.data file."""
    only = ["--comms", comms] if comms else []
    out = subprocess.run(["perf", "script", "-i", path, "-F", "comm,ip,sym"] + only,
                         capture_output=True, text=True, check=True).stdout
    cur = None
    for line in out.splitlines():
        if not line.strip():
            if cur is not None:
                yield cur
            cur = None
        elif not line[0].isspace():
            cur = (line.split()[0], [])
        elif cur is not None:
            parts = line.split()
            if len(parts) >= 2:
                cur[1].append(parts[1])
    if cur is not None:
        yield cur


def categorise(path, comms=None):
    counts = collections.Counter()
    for comm, frames in samples(path, comms):
        cat = next((FRAME[f] for f in frames if f in FRAME), None)
        if cat is None:
            cat = "user space / other" if comm.startswith(DATA_THREADS) else f"thread {comm}"
        counts[cat] += 1
    return counts


def main():
    args = sys.argv[1:]
    comms = None
    if args[:1] == ["--comms"] and len(args) >= 2:
        comms, args = args[1], args[2:]
    if not args:
        sys.exit(__doc__)
    for path in args:
        c = categorise(path, comms)
        n = sum(c.values())
        copy = c["copy from user"] + c["copy to user"]
        print(f"{path}: {n} samples")
        for cat, v in c.most_common():
            per_copy = f"{v / copy:6.3f}" if copy else "     –"
            print(f"  {100 * v / n:5.1f} %  per copy {per_copy}  {cat}")


if __name__ == "__main__":
    main()
