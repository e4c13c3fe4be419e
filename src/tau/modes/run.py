"""Entry for ``tau [options] [messages...]``: the agent run modes."""

from __future__ import annotations

import argparse
import sys


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tau", description="tau: a coding agent compatible with pi 1.6.")
    parser.add_argument("--version", "-v", action="store_true", help="print the version and exit")
    parser.add_argument("--list-models", nargs="?", const="", metavar="QUERY", help="list known models")
    parser.add_argument("messages", nargs="*", help="prompts to run")
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if args.list_models is not None:
        from tau.llm.registry import print_models

        return print_models(args.list_models)
    print(
        "tau: the agent loop is not available yet; try `tau session context FILE`.",
        file=sys.stderr,
    )
    return 2
