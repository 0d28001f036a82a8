"""The `accelplane` command line: validate, render, schema, diff, report.

Exit codes: 0 ok, 1 invalid spec (every error printed as ``file: path: message``), 2 usage error.
Exception: `diff` follows ``git diff --exit-code``: 0 equal, 1 different, 2 error (an invalid spec
on either side is an error there, so it exits 2 after printing the same ``file: path: message``).
User mistakes never produce a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence

from accelplane import __version__
from accelplane.display import escape_controls
from accelplane.errors import SpecErrors, UsageError

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2
EXIT_DIFFERENT = 1


def _say_error(text: object) -> None:
    """One ``accelplane: …`` line on stderr, control characters escaped (paths and messages may
    carry spec or file-name text)."""
    print(f"accelplane: {escape_controls(str(text), newlines=False)}", file=sys.stderr)


def _print_errors(exc: SpecErrors) -> None:
    for error in exc.errors:
        print(str(error), file=sys.stderr)
    n = len(exc.errors)
    print(f"accelplane: {n} error{'s' if n != 1 else ''}", file=sys.stderr)


def cmd_validate(args: argparse.Namespace) -> int:
    """Validate every spec given; report all errors of all files."""
    from accelplane.pipeline import load_validated

    failed = False
    for path in args.specs:
        try:
            load_validated(path)
        except SpecErrors as exc:
            _print_errors(exc)
            failed = True
        else:
            if not args.quiet:
                print(f"{escape_controls(str(path), newlines=False)}: ok")
    return EXIT_INVALID if failed else EXIT_OK


def cmd_render(args: argparse.Namespace) -> int:
    """Render one spec into an output directory (atomically)."""
    from accelplane.pipeline import render_spec
    from accelplane.render import write_tree

    files = render_spec(args.spec).files
    out = write_tree(files, args.out, force=args.force, note=_say_error)
    if not args.quiet:
        print(escape_controls(f"{args.spec}: rendered {len(files)} files into {out}", newlines=False))
    return EXIT_OK


def cmd_schema(args: argparse.Namespace) -> int:
    """Print the spec JSON Schema."""
    if args.markdown:
        from accelplane.schema_docs import markdown_reference

        print(markdown_reference(), end="")
        return EXIT_OK
    from accelplane.schema_document import load_schema

    print(json.dumps(load_schema(), indent=2, ensure_ascii=False))
    return EXIT_OK


def use_color(choice: str) -> bool:
    """``--color``: always, never, or auto (a TTY on stdout and ``NO_COLOR`` unset or empty)."""
    if choice == "always":
        return True
    if choice == "never":
        return False
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def cmd_diff(args: argparse.Namespace) -> int:
    """Compare two sides (spec, rendered directory or REV:path); exit 0 equal, 1 different, 2 error."""
    from accelplane.diff import compare
    from accelplane.diff.changes import DiffInputError
    from accelplane.diff.formats import render
    from accelplane.diff.trees import load_side

    try:
        result = compare(load_side(args.old), load_side(args.new))
    except SpecErrors as exc:
        _print_errors(exc)
        return EXIT_USAGE
    except DiffInputError as exc:
        _say_error(exc)
        return EXIT_USAGE
    except OSError as exc:
        _say_error(exc)
        return EXIT_USAGE
    color = args.format == "text" and use_color(args.color)
    sys.stdout.write(render(result, args.format, color=color))
    return EXIT_OK if result.equal else EXIT_DIFFERENT


def cmd_report(args: argparse.Namespace) -> int:
    """Print the GPU capacity report of a spec; optionally write the SVG chart."""
    from accelplane.pipeline import load_validated
    from accelplane.report import build_report, render_report, render_svg

    report = build_report(load_validated(args.spec).model)
    sys.stdout.write(render_report(report, args.format))
    if args.svg:
        try:
            with open(args.svg, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(render_svg(report))
        except OSError as exc:
            raise UsageError(f"{args.svg}: cannot write SVG: {exc.strerror or exc}") from None
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
    p.add_argument(
        "--force",
        action="store_true",
        help="discard files in DIR that the last render did not write (or that were edited since)",
    )
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=cmd_render)

    p = sub.add_parser("schema", help="print the spec JSON Schema")
    p.add_argument("--markdown", action="store_true", help="print the spec reference as a Markdown table")
    p.set_defaults(func=cmd_schema)

    p = sub.add_parser(
        "diff",
        help="compare two specs / rendered directories / REV:path (exit 0 equal, 1 different, 2 error)",
        description="Compare every rendered artifact of OLD and NEW. Each side is a spec file, a "
        "rendered directory, or REV:path (a spec at a git revision, rendered with its bases from that "
        "revision). Exit codes like `git diff --exit-code`: 0 equal, 1 different, 2 error (including "
        "an invalid spec on either side).",
    )
    p.add_argument("old", metavar="OLD")
    p.add_argument("new", metavar="NEW")
    p.add_argument("--format", "-f", choices=("text", "markdown", "json"), default="text")
    p.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="ANSI colour in text output (auto: only on a terminal and when NO_COLOR is unset)",
    )
    p.set_defaults(func=cmd_diff)

    p = sub.add_parser("report", help="GPU capacity per queue and Flink cluster (tables, optional SVG)")
    p.add_argument("spec", metavar="SPEC")
    p.add_argument("--format", "-f", choices=("text", "markdown", "json"), default="text")
    p.add_argument("--svg", metavar="FILE", help="also write a bar chart of GPU shares per queue")
    p.set_defaults(func=cmd_report)
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
        _say_error(exc)
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
