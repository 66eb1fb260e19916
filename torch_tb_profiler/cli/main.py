"""``torch-tb-profiler``: the headless commands (``summary``, ``compare``, ``index``, ``serve``, ``mcp``), one module each."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from torch_tb_profiler.cli import compare, index, mcp_command, serve, summary


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="torch-tb-profiler", description="PyTorch profiler trace analysis.")
    sub = parser.add_subparsers(dest="command", required=True)
    summary.add_parser(sub)
    compare.add_parser(sub)
    index.add_parser(sub)
    serve.add_parser(sub)
    mcp_command.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse prints the reason; keep its status (2 for bad arguments)
        return int(exc.code or 0)
    commands = {
        "summary": summary.run,
        "compare": compare.run,
        "index": index.run,
        "serve": serve.run,
        "mcp": mcp_command.run,
    }
    return commands[args.command](args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
