"""The `accelplane` command line: validate, render, schema (and later diff, report).

Exit codes: 0 ok, 1 invalid spec (every error printed as ``file: path: message``), 2 usage error.
User mistakes never produce a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence

from components import __version__
from components.errors import SpecErrors, UsageError

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2


def _print_errors(exc: SpecErrors) -> None:
    for error in exc.errors:
        print(str(error), file=sys.stderr)
    n = len(exc.errors)
    print(f"accelplane: {n} error{'s' if n != 1 else ''}", file=sys.stderr)


def cmd_validate(args: argparse.Namespace) -> int:
    """Validate every spec given; report all errors of all files."""
    from components.pipeline import load_validated

    failed = False
    for path in args.specs:
        try:
            load_validated(path)
        except SpecErrors as exc:
            _print_errors(exc)
            failed = True
        else:
            if not args.quiet:
                print(f"{path}: ok")
    return EXIT_INVALID if failed else EXIT_OK


def cmd_render(args: argparse.Namespace) -> int:
    """Render one spec into an output directory (atomically)."""
    from components.builders import build_all
    from components.pipeline import load_validated
    from components.render import bundle_files, write_tree

    validated = load_validated(args.spec)
    files = bundle_files(build_all(validated.model))
    out = write_tree(files, args.out)
    if not args.quiet:
        print(f"{args.spec}: rendered {len(files)} files into {out}")
    return EXIT_OK


def cmd_schema(args: argparse.Namespace) -> int:
    """Print the spec JSON Schema."""
    if args.markdown:
        from components.schema_docs import markdown_reference

        print(markdown_reference(), end="")
        return EXIT_OK
    from components.schema import load_schema

    print(json.dumps(load_schema(), indent=2, ensure_ascii=False))
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for docs and tests)."""
    parser = argparse.ArgumentParser(
        prog="accelplane", description="GPU-aware Flink platforms from one spec per cluster."
    )
    parser.add_argument("--version", action="version", version=f"accelplane {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("validate", help="validate cluster specs (all errors at once)")
    p.add_argument("specs", nargs="+", metavar="SPEC")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("render", help="render every artifact of a spec into DIR")
    p.add_argument("spec", metavar="SPEC")
    p.add_argument("--out", "-o", required=True, metavar="DIR")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=cmd_render)

    p = sub.add_parser("schema", help="print the spec JSON Schema")
    p.add_argument("--markdown", action="store_true", help="print the spec reference as a Markdown table")
    p.set_defaults(func=cmd_schema)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        return func(args)
    except SpecErrors as exc:
        _print_errors(exc)
        return EXIT_INVALID
    except UsageError as exc:
        print(f"accelplane: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
