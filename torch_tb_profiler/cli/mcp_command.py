"""``torch-tb-profiler mcp LOGDIR``: the MCP server for coding agents, over stdio (docs/agents.md).

Needs the ``[mcp]`` extra (the official ``mcp`` SDK, 2.x). Exit status: 0 when the client closes the
connection, 2 on bad arguments or a missing SDK. stdout is the protocol's: every message goes to stderr."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

from torch_tb_profiler.app.settings import Settings, check, define_flags
from torch_tb_profiler.cli.common import EXIT_BAD_ARGS, EXIT_OK


def add_parser(sub: Any) -> None:
    s = sub.add_parser("mcp", help="a read-only MCP server over stdio for coding agents (docs/agents.md)")
    s.add_argument("logdir", help="a logdir: local folder or URL (s3://, gs://, az://, …)")
    define_flags(s)


def run(args: argparse.Namespace) -> int:
    settings = Settings.from_flags(args.logdir, args)
    try:
        check(settings)
    except ValueError as e:
        print(f"torch-tb-profiler: {e}", file=sys.stderr)
        return EXIT_BAD_ARGS
    try:
        from torch_tb_profiler.agents.server import run_stdio
    except ImportError as e:
        print(
            f"torch-tb-profiler mcp needs the MCP SDK: pip install 'torch-tb-profiler[mcp]' ({e})",
            file=sys.stderr,
        )
        return EXIT_BAD_ARGS
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    run_stdio(settings)
    return EXIT_OK
