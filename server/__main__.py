"""``skill-eval-ls`` / ``skill-eval serve`` / ``python -m skill_eval.server``.

LSP over stdio by default, or ``--tcp [HOST:]PORT`` (host 127.0.0.1 unless
given; no authentication). pygls is imported only after the arguments are
parsed, so ``--version`` and usage errors stay fast.
"""

from __future__ import annotations

import argparse
import logging
import sys


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2
        self.exit(2, f"{self.prog}: {message} (see --help)\n")


LOOPBACK = "127.0.0.1"
"""Where ``--tcp PORT`` listens: this machine only."""


def _host_port(text: str) -> tuple[str, int]:
    """``PORT`` (on :data:`LOOPBACK`) or ``HOST:PORT``; port 0 picks a free port."""
    host, sep, port = text.rpartition(":")
    if not sep:
        host = LOOPBACK
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]  # [::1]:2087
    if not host or not port.isdigit() or not 0 <= int(port) < 65536:
        raise argparse.ArgumentTypeError(f"expected PORT or HOST:PORT (e.g. 2087 or 127.0.0.1:2087), got {text!r}")
    return host, int(port)


def build_parser(prog: str = "skill-eval-ls") -> argparse.ArgumentParser:
    parser = _Parser(prog=prog, description="The skill-eval language server (LSP). "
                                            "`skill-eval-ls` and `skill-eval serve` are the same command.")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--stdio", action="store_true", help="talk LSP over stdin/stdout (the default)")
    mode.add_argument(
        "--tcp",
        type=_host_port,
        metavar="[HOST:]PORT",
        help=(
            f"listen for one client on PORT of {LOOPBACK} (or of HOST; port 0: any free port, printed on stderr). "
            "There is NO AUTHENTICATION: any process that can connect is the client, and can have the server "
            "read files and run the agents a workspace's config names. Prefer stdio; never listen on a "
            "non-loopback HOST on a shared network."
        ),
    )
    parser.add_argument("--log-file", help="write the server's own log to this file")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    return parser


def main(argv: list[str] | None = None, prog: str = "skill-eval-ls") -> int:
    """Run the server with ``argv``; its help names it ``prog`` (``skill-eval
    serve`` when the umbrella command runs it)."""
    args = build_parser(prog).parse_args(sys.argv[1:] if argv is None else argv)
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
        return server.start_tcp(host, port)
    return server.start_io()


if __name__ == "__main__":
    raise SystemExit(main())
