"""Times commands side by side in one run: each round runs every command once, in turn, so load
on the machine falls on all of them alike. Prints median, min and max wall time (process start
included) and each median's ratio to the first command's.

    python bench/vocab_time.py RUNS EXPECTED_EXIT NAME=COMMAND ...
"""

import shlex
import statistics
import subprocess
import sys
import time


def main(runs, expected, named):
    names = [n for n, _ in named]
    times = {n: [] for n in names}
    for _ in range(runs):
        for name, cmd in named:
            start = time.perf_counter()
            code = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
            times[name].append(time.perf_counter() - start)
            if code != expected:
                sys.exit(f"error: {name} exited {code}, expected {expected}: {shlex.join(cmd)}")
    base = statistics.median(times[names[0]])
    print(f"{'command':<44} {'median':>10} {'min':>10} {'max':>10} {'vs first':>9}")
    for name in names:
        t = times[name]
        med = statistics.median(t)
        print(f"{name:<44} {med*1e3:>8.1f}ms {min(t)*1e3:>8.1f}ms {max(t)*1e3:>8.1f}ms {med/base:>8.1f}x")


if __name__ == "__main__":
    runs, expected = int(sys.argv[1]), int(sys.argv[2])
    named = [(a.split("=", 1)[0], shlex.split(a.split("=", 1)[1])) for a in sys.argv[3:]]
    main(runs, expected, named)
