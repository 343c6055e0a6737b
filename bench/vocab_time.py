"""Times commands side by side in one run: each round runs every command once, in turn, so load
on the machine falls on all of them alike. Prints the median, min and max wall time (process
start included) and the median CPU time (user + system of the child, which load on a shared
machine inflates far less than wall time), each with its ratio to the first command's.

    python bench/vocab_time.py RUNS EXPECTED_EXIT NAME=COMMAND ...
"""

import os
import resource
import shlex
import statistics
import subprocess
import sys
import time


def main(runs, expected, named):
    names = [n for n, _ in named]
    times = {n: [] for n in names}
    cpu = {n: [] for n in names}
    for _ in range(runs):
        for name, cmd in named:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            code = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
            times[name].append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[name].append(
                (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            )
            if code != expected:
                sys.exit(f"error: {name} exited {code}, expected {expected}: {shlex.join(cmd)}")
    base = statistics.median(times[names[0]])
    base_cpu = max(statistics.median(cpu[names[0]]), 1e-3)
    print(f"load average before the last round: {os.getloadavg()[0]:.1f}")
    head = f"{'command':<40} {'wall median':>12} {'min':>9} {'max':>9} {'ratio':>7} {'CPU median':>11} {'ratio':>7}"
    print(head)
    for name in names:
        t, c = times[name], statistics.median(cpu[name])
        med = statistics.median(t)
        print(
            f"{name:<40} {med*1e3:>10.1f}ms {min(t)*1e3:>7.1f}ms {max(t)*1e3:>7.1f}ms "
            f"{med/base:>6.1f}x {c*1e3:>9.1f}ms {c/base_cpu:>6.1f}x"
        )


if __name__ == "__main__":
    runs, expected = int(sys.argv[1]), int(sys.argv[2])
    named = [(a.split("=", 1)[0], shlex.split(a.split("=", 1)[1])) for a in sys.argv[3:]]
    main(runs, expected, named)
