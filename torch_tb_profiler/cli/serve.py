"""``torch-tb-profiler serve LOGDIR``: the profiler's page and routes without TensorBoard (docs/cli.md).

Exit status: 0 after SIGTERM/SIGINT, 2 on bad arguments (a bad flag value, a port in use)."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

from torch_tb_profiler.app.settings import Settings, check, define_flags
from torch_tb_profiler.cli.common import EXIT_BAD_ARGS, EXIT_OK
from torch_tb_profiler.serve.server import DEFAULT_THREADS, Server, normalize_prefix


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0..65535 (0: any free one), got {value}")
    return value


def _threads(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if not 1 <= value <= 256:
        raise argparse.ArgumentTypeError(f"must be 1..256, got {value}")
    return value


def add_parser(sub: Any) -> None:
    s = sub.add_parser("serve", help="serve the profiler's page and API without TensorBoard")
    s.add_argument("logdir", help="a logdir: local folder or URL (s3://, gs://, az://, …)")
    s.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    s.add_argument("--port", type=_port, default=6006, help="port (default 6006; 0: any free port)")
    s.add_argument(
        "--path-prefix",
        default="",
        metavar="P",
        help="serve everything under P (as /P/data/plugin/pytorch_profiler/…), for a reverse proxy",
    )
    s.add_argument(
        "--threads",
        type=_threads,
        default=DEFAULT_THREADS,
        help=f"request threads (default {DEFAULT_THREADS})",
    )
    define_flags(s)


def run(args: argparse.Namespace) -> int:
    settings = Settings.from_flags(args.logdir, args)
    try:
        check(settings)
        prefix = normalize_prefix(args.path_prefix)
    except ValueError as e:
        print(f"torch-tb-profiler: {e}", file=sys.stderr)
        return EXIT_BAD_ARGS
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        server = Server(settings, host=args.host, port=args.port, prefix=prefix, threads=args.threads)
    except OSError as e:  # the address is in use, or not this machine's
        print(f"torch-tb-profiler: cannot listen on {args.host}:{args.port}: {e}", file=sys.stderr)
        return EXIT_BAD_ARGS
    print(f"torch-tb-profiler serve: {args.logdir} at {server.url}", file=sys.stderr, flush=True)
    server.run()
    return EXIT_OK
