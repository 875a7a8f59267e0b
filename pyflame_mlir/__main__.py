"""``python -m pyflame_mlir <command>``: the library's command line.

    python -m pyflame_mlir cache info|clear|verify   # the disk caches (cache_cli.py)
"""

from __future__ import annotations

import sys

from . import cache_cli

COMMANDS = {"cache": cache_cli.main}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] not in COMMANDS:
        sys.stderr.write("usage: python -m pyflame_mlir {" + ",".join(COMMANDS) + "} ...\n"
                         "  cache info|clear [--backend B]|verify   the backends' disk caches\n")
        return 0 if args and args[0] in ("-h", "--help") else 2
    return COMMANDS[args[0]](args[1:])


if __name__ == "__main__":
    sys.exit(main())
