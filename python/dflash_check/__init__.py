"""dflash-check, installed from its wheel.

The wheel carries the `dflash-check` binary as a script; this package only finds it, for
`python -m dflash_check` (see `__main__.py`). There is no Python API beyond
`find_dflash_check_bin()`.

pip puts the binary in a scripts directory that depends on how the wheel was installed (a venv
or system install, `--user`, `--target`); the finder looks in each, in that order.
"""

import os
import sys
import sysconfig

__all__ = ["find_dflash_check_bin"]

EXE = "dflash-check" + (sysconfig.get_config_var("EXE") or "")


def _user_scheme() -> str:
    if sys.version_info >= (3, 10):
        return sysconfig.get_preferred_scheme("user")
    if os.name == "nt":
        return "nt_user"
    if sys.platform == "darwin" and getattr(sys, "_framework", None):
        return "osx_framework_user"
    return "posix_user"


def find_dflash_check_bin() -> str:
    """The path of the installed `dflash-check` binary; FileNotFoundError when there is none."""
    candidates = [
        # A venv or a system install: the interpreter's own scripts directory.
        os.path.join(sysconfig.get_path("scripts"), EXE),
        # `pip install --user`.
        os.path.join(sysconfig.get_path("scripts", scheme=_user_scheme()), EXE),
        # `pip install --target DIR`: DIR/bin beside the package.
        os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bin", EXE),
    ]
    for path in candidates:
        if os.path.isfile(path):
            return path
    raise FileNotFoundError(
        "dflash-check: the binary is not installed beside this package (looked in "
        + ", ".join(candidates)
        + "); reinstall the wheel: pip install --force-reinstall dflash-check"
    )
