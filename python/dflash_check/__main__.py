"""`python -m dflash_check ARGS` runs the installed `dflash-check` binary with ARGS.

It replaces the Python process with the binary (exec), so the exit code and signals are the
binary's own.
"""

import os
import sys

from dflash_check import find_dflash_check_bin


def main() -> None:
    try:
        binary = os.fsdecode(find_dflash_check_bin())
    except FileNotFoundError as e:
        print(e, file=sys.stderr)
        sys.exit(2)
    if sys.platform == "win32":
        # No exec on Windows: run it and pass its exit code on.
        import subprocess

        sys.exit(subprocess.run([binary, *sys.argv[1:]]).returncode)
    os.execv(binary, [binary, *sys.argv[1:]])


if __name__ == "__main__":
    main()
