"""``skill-eval-ls`` / ``skill-eval serve`` / ``python -m skill_eval.server``.

LSP over stdio by default, or ``--tcp HOST:PORT``. pygls is imported only
after the arguments are parsed, so ``--version`` and usage errors stay fast.
"""

from __future__ import annotations

import argparse
import logging
import sys


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2
        self.exit(2, f"skill-eval-ls: {message} (see --help)\n")


def _host_port(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT (e.g. 127.0.0.1:2087), got {text!r}")
    return host, int(port)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="skill-eval-ls", description="The skill-eval language server (LSP).")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--stdio", action="store_true", help="talk LSP over stdin/stdout (the default)")
    mode.add_argument("--tcp", type=_host_port, metavar="HOST:PORT", help="listen for one client on HOST:PORT")
    parser.add_argument("--log-file", help="write the server's own log to this file")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    if args.version:
        from skill_eval import __version__

        print(f"skill-eval-ls {__version__}")
        return 0
    if args.log_file:
        logging.basicConfig(filename=args.log_file, level=logging.INFO)
    try:
        from .server import create_server
    except ImportError as error:
        print(f"skill-eval-ls: {error}; install the server extra: pip install 'skill-eval[server]'", file=sys.stderr)
        return 2
    server = create_server()
    if args.tcp:
        host, port = args.tcp
        server.start_tcp(host, port)
    else:
        server.start_io()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
