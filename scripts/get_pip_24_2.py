"""Offline stand-in for ansible-test's get-pip bootstrap script (pip 24.2).

ansible-test (`--venv`) runs ~/.ansible/test/cache/get_pip_24_2.py inside a new, pip-less
virtual environment as `python get_pip_24_2.py [pip options] pip==24.2 --no-setuptools --no-wheel`.
This script installs pip from the wheel that lies beside it, without any network access.
scripts/sanity.sh puts both files into the cache of the sanity HOME.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
WHEEL = os.path.join(HERE, "pip-24.2-py3-none-any.whl")


def main():
    if not os.path.isfile(WHEEL):
        sys.exit(f"get_pip_24_2.py: {WHEEL} is missing (pip download --no-deps pip==24.2 -d {HERE})")
    # --no-setuptools / --no-wheel are get-pip.py's own flags, not pip's: nothing extra is installed here anyway.
    args = [arg for arg in sys.argv[1:] if arg not in ("--no-setuptools", "--no-wheel")]
    if not [arg for arg in args if not arg.startswith("-")]:
        args.append("pip==24.2")
    sys.path.insert(0, WHEEL)  # pip runs from its own wheel, then installs it
    from pip._internal.cli.main import main as pip_main  # pylint: disable=import-outside-toplevel

    return pip_main(["install", "--no-index", "--find-links", HERE, "--force-reinstall", *args])


if __name__ == "__main__":
    sys.exit(main())
