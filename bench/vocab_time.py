"""Times commands side by side in one run: each round runs every command once, in turn, so load
on the machine falls on all of them alike. Prints the median, min and max wall time (process
start included) and the median CPU time (user + system of the child, which load on a shared
machine inflates far less than wall time), each with its ratio to the first command's; the
median of the rounds' own ratios (each round's time over the first command's in that round:
the pairs of one moment of load); and the median peak RSS. Used by bench/vocab.sh,
bench/gguf_vocab.sh, bench/headline.sh and bench/check-scale.sh.

    python bench/vocab_time.py RUNS EXPECTED_EXIT NAME=COMMAND ...

A COMMAND may start with `cd=DIR ` to run in DIR.
"""

import os
import shlex
import shutil
import statistics
import subprocess
import sys
import time


def run_once(cmd, cwd):
    """Wall seconds, CPU seconds, peak RSS in KB and exit code of one run (`wait4` gives the
    child's own rusage, where RUSAGE_CHILDREN's would add up every child so far)."""
    start = time.perf_counter()
    child = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, child.returncode


def peak_rss(cmd, cwd):
    """Peak RSS in KB of one run under GNU time, or None without it."""
    gnu_time = shutil.which("time", path="/usr/bin")
    if gnu_time is None:
        return None
    out = subprocess.run([gnu_time, "-f", "%M", *cmd], cwd=cwd, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True).stderr.strip().splitlines()
    return int(out[-1]) if out and out[-1].isdigit() else None


def main(runs, expected, named):
    names = [n for n, _, _ in named]
    times = {n: [] for n in names}
    cpu = {n: [] for n in names}
    rss = {n: [] for n in names}
    for _ in range(runs):
        for name, cmd, cwd in named:
            wall, used, peak, code = run_once(cmd, cwd)
            times[name].append(wall)
            cpu[name].append(used)
            rss[name].append(peak)
            if code != expected:
                sys.exit(f"error: {name} exited {code}, expected {expected}: {shlex.join(cmd)}")
    for name, cmd, cwd in named:
        measured = [peak_rss(cmd, cwd) for _ in range(3)]
        if None not in measured:
            rss[name] = measured
    first = names[0]
    base = statistics.median(times[first])
    base_cpu = max(statistics.median(cpu[first]), 1e-3)
    print(f"load average before the last round: {os.getloadavg()[0]:.1f}")
    head = (f"{'command':<40} {'wall median':>12} {'min':>9} {'max':>9} {'ratio':>7} "
            f"{'pairs':>7} {'CPU median':>11} {'ratio':>7} {'pairs':>7} {'peak RSS':>9}")
    print(head)
    for name in names:
        t, c = times[name], statistics.median(cpu[name])
        med = statistics.median(t)
        pairs = statistics.median(a / b for a, b in zip(t, times[first]))
        cpu_pairs = statistics.median(a / max(b, 1e-3) for a, b in zip(cpu[name], cpu[first]))
        print(
            f"{name:<40} {med*1e3:>10.1f}ms {min(t)*1e3:>7.1f}ms {max(t)*1e3:>7.1f}ms "
            f"{med/base:>6.1f}x {pairs:>6.1f}x {c*1e3:>9.1f}ms {c/base_cpu:>6.1f}x "
            f"{cpu_pairs:>6.1f}x {statistics.median(rss[name])/1024:>7.1f}MB"
        )


def parse(arg):
    name, cmd = arg.split("=", 1)
    cwd = None
    if cmd.startswith("cd="):
        where, cmd = cmd[3:].split(" ", 1)
        cwd = where
    return name, shlex.split(cmd), cwd


if __name__ == "__main__":
    runs, expected = int(sys.argv[1]), int(sys.argv[2])
    main(runs, expected, [parse(a) for a in sys.argv[3:]])
