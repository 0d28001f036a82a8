"""The `accelplane` command line: validate, render, schema, diff, report, merged.

One exit-code convention for every subcommand (docs/reference.md, "Commands"; tested for each):

* 0 — success;
* 1 — the answer is "no": an invalid spec (every finding printed as ``file: path: severity code:
  message``; warnings alone never fail, except ``validate --strict``), or for `diff` (which follows
  ``git diff --exit-code``) "the sides differ";
* 2 — the command could not answer: a usage error, an output that cannot be written, a git
  problem, and for `diff` also an invalid spec on either side (1 already means "different");
* 3 — `diff` only: the sides differ and the change is refused, an error-level day-2 finding (AP16xx:
  a Flink cluster moved without `migrateFrom`, a state `pulumi up` would stop in), for CI gates.

User mistakes and I/O failures (full or read-only disk, a file where a directory should be) never
produce a traceback; nothing is printed or half-written before the command knows it can finish.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from accelplane import __version__
from accelplane.display import escape_controls, plain_line
from accelplane.errors import SpecError, SpecErrors, UsageError
from accelplane.findings import ERROR, declare

if TYPE_CHECKING:
    import argparse

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2

STACK_FILE_WITHOUT_SPEC = declare(
    "AP1211", ERROR, "a Pulumi stack file does not name its cluster spec",
    fix="set config.accelplane:spec to the spec's path (relative to the project directory)",
)
STACK_SPEC_CONTROL_CHARACTER = declare(
    "AP1261", ERROR, "a Pulumi stack file's accelplane:spec holds a control character, so it names no file",
    fix="write the spec's path without control characters",
)
EXIT_DIFFERENT = 1
EXIT_REFUSED = 3  # `diff`: the sides differ and the change is refused (an AP16xx error, docs/diff.md)


def _say_error(text: object) -> None:
    """One ``accelplane: …`` line on stderr, control characters escaped (paths and messages may
    carry spec or file-name text)."""
    print(f"accelplane: {plain_line(str(text))}", file=sys.stderr)


def _print_errors(exc: SpecErrors) -> None:
    """Every finding (errors and the warnings found with them) and the summary, on stderr."""
    from accelplane.finding_output import text_report

    sys.stderr.write(text_report(exc.errors))


def _print_warnings(warnings: Sequence[SpecError]) -> None:
    """The warnings of a spec that passed (on stderr, with their summary); nothing when none."""
    if warnings:
        from accelplane.finding_output import text_report

        sys.stderr.write(text_report(warnings))


PULUMI_STACK_FILE = re.compile(r"Pulumi\.(?P<stack>.+)\.ya?ml")
PULUMI_PROJECT_FILE = re.compile(r"Pulumi\.ya?ml")


def _stack_spec(stack_file: str) -> str:
    """The cluster spec a Pulumi stack file names (``accelplane:spec``), as a path to show.

    The setting is relative to the project directory (the nearest directory up from the stack file
    that holds ``Pulumi.yaml``). Raises `SpecErrors` naming the stack file when it does not say.
    """
    from accelplane.errors import SpecError
    from accelplane.spec_loader import SPEC_FILE_UNREADABLE, SpecFileError, read_spec_text
    from accelplane.yaml_io import YamlSyntaxError, load_yaml_text

    try:
        doc = load_yaml_text(read_spec_text(stack_file), stack_file)
    except (SpecFileError, FileNotFoundError) as exc:
        raise SpecErrors(
            [SpecError(stack_file, "<root>", str(exc) or "file not found", SPEC_FILE_UNREADABLE)]
        ) from None
    except YamlSyntaxError as exc:
        raise SpecErrors([exc.error]) from None
    config = doc.get("config") if isinstance(doc, dict) else None
    spec = config.get("accelplane:spec") if isinstance(config, dict) else None
    if not isinstance(spec, str) or not spec:
        raise SpecErrors(
            [
                SpecError(
                    stack_file,
                    "config.accelplane:spec",
                    "missing: a stack file must name its cluster spec",
                    STACK_FILE_WITHOUT_SPEC,
                )
            ]
        )
    if "\x00" in spec or not spec.isprintable():
        from accelplane.display import short_repr

        raise SpecErrors(
            [
                SpecError(
                    stack_file,
                    "config.accelplane:spec",
                    f"{short_repr(spec)} holds a control character; no file name accepts a NUL, and a line "
                    "break is a typo; write the spec's path",
                    STACK_SPEC_CONTROL_CHARACTER,
                )
            ]
        )
    if os.path.isabs(spec):
        return spec
    directory = os.path.dirname(stack_file) or "."
    for _ in range(8):
        if os.path.isfile(os.path.join(directory, "Pulumi.yaml")):
            break
        directory = os.path.normpath(os.path.join(directory, os.pardir))
    else:
        directory = os.path.dirname(stack_file) or "."
    return os.path.normpath(os.path.join(directory, spec))


def _validate_targets(paths: list[str], quiet: bool) -> tuple[list[str], bool]:
    """The specs to validate for ``paths``: Pulumi stack files stand for the spec they name.

    ``validate stacks/*.yaml`` matches ``Pulumi.<stack>.yaml`` files too; each is replaced by its
    spec (once, however often it is named) with a note, and ``Pulumi.yaml`` is skipped with a note.
    Returns the specs and whether a stack file itself was broken.
    """
    specs: list[str] = []
    seen: set[str] = set()
    failed = False
    for path in paths:
        base = os.path.basename(path)
        target = path
        if PULUMI_PROJECT_FILE.fullmatch(base):
            if not quiet:
                print(plain_line(f"{path}: Pulumi project file, not a cluster spec (skipped)"))
            continue
        if PULUMI_STACK_FILE.fullmatch(base):
            try:
                target = _stack_spec(path)
            except SpecErrors as exc:
                _print_errors(exc)
                failed = True
                continue
            if not quiet:
                print(plain_line(f"{path}: Pulumi stack file for {target}"))
        key = os.path.realpath(target)
        if key not in seen:
            seen.add(key)
            specs.append(target)
    return specs, failed


def cmd_validate(args: argparse.Namespace) -> int:
    """Validate every spec given; report all findings of all files.

    Warnings are printed and pass, unless ``--strict``. ``--format json`` prints one JSON document
    on stdout (nothing else there), ``--format github`` one workflow command per finding.
    """
    from accelplane.finding_output import Lines, github_report, json_report, summary, text_report
    from accelplane.pipeline import load_validated
    from accelplane.spec_loader import keeping_texts

    fmt, strict = args.format, args.strict
    quiet = args.quiet or fmt != "text"
    with keeping_texts() as texts:  # lines of findings come from the text read, read once
        lines = Lines(texts)
        specs, failed = _validate_targets(args.specs, quiet)
        results: list[tuple[str, list[SpecError]]] = []
        for path in specs:
            try:
                found = list(load_validated(path).warnings)
            except SpecErrors as exc:
                found, failed = exc.errors, True
            else:
                failed = failed or (strict and bool(found))
            results.append((path, found))
            if fmt == "github":
                sys.stdout.write(github_report(found, lines))
            elif fmt == "text":
                if found:
                    sys.stderr.write(text_report(found))
                if not quiet and all(e.is_warning for e in found):
                    shown = plain_line(str(path))
                    if not found:
                        print(f"{shown}: ok")
                    elif strict:
                        print(f"{shown}: {summary(found)} (--strict: warnings fail)")
                    else:
                        print(f"{shown}: ok ({summary(found)})")
    if fmt == "json":
        sys.stdout.write(json_report(results, lines))
    return EXIT_INVALID if failed else EXIT_OK


def _io_error(exc: OSError, target: str) -> UsageError:
    """A clear one-line message for a failed write (full or read-only disk, a file in the way)."""
    import errno

    if exc.errno in (errno.EEXIST, errno.ENOTDIR):
        return UsageError(f"{target}: cannot write: a part of the path is a file, not a directory")
    detail = f" ({exc.filename})" if exc.filename else ""
    return UsageError(f"{target}: cannot write: {exc.strerror or exc}{detail}")


def cmd_render(args: argparse.Namespace) -> int:
    """Render one spec into an output directory (atomically)."""
    from accelplane.pipeline import render_spec
    from accelplane.render import write_tree

    rendered = render_spec(args.spec)
    _print_warnings(rendered.validated.warnings)
    files = rendered.files
    try:
        out = write_tree(files, args.out, force=args.force, note=_say_error)
    except OSError as exc:
        raise _io_error(exc, args.out) from None
    if not args.quiet:
        print(escape_controls(f"{args.spec}: rendered {len(files)} files into {out}", newlines=False))
    return EXIT_OK


def cmd_merged(args: argparse.Namespace) -> int:
    """Print the spec after ``extends``, each value annotated with the file it came from."""
    from accelplane.merged_view import render_merged
    from accelplane.spec_loader import load_document

    loaded = load_document(args.spec)
    sys.stdout.write(render_merged(loaded))
    if any(not e.is_warning for e in loaded.load_errors):
        raise SpecErrors(loaded.load_errors)
    _print_warnings(loaded.load_errors)
    return EXIT_OK


def cmd_schema(args: argparse.Namespace) -> int:
    """Print the spec JSON Schema."""
    if args.markdown:
        from accelplane.schema_docs import markdown_reference

        print(markdown_reference(), end="")
        return EXIT_OK
    import json

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
        old, new = load_side(args.old), load_side(args.new)
        _print_warnings([*old.warnings, *new.warnings])
        result = compare(old, new)
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
    if result.refused:
        return EXIT_REFUSED
    return EXIT_OK if result.equal else EXIT_DIFFERENT


def cmd_report(args: argparse.Namespace) -> int:
    """Print the GPU capacity report of a spec; optionally write the SVG chart."""
    from accelplane.pipeline import load_validated
    from accelplane.report.data import build_report
    from accelplane.report.svg import render_svg
    from accelplane.report.tables import render_report

    validated = load_validated(args.spec)
    _print_warnings(validated.warnings)
    report = build_report(validated.model, validated.warnings)
    text = render_report(report, args.format)
    if args.svg:  # written first: a failure prints nothing but the error
        try:
            with open(args.svg, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(render_svg(report))
        except OSError as exc:
            raise UsageError(f"{args.svg}: cannot write SVG: {exc.strerror or exc}") from None
    sys.stdout.write(text)
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for docs and tests)."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="accelplane",
        description="GPU-aware Flink platforms from one spec per cluster.",
    )
    parser.add_argument("--version", action="version", version=f"accelplane {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add_parser(name: str, **kwargs: Any) -> argparse.ArgumentParser:
        return sub.add_parser(name, **kwargs)

    p = add_parser(
        "validate",
        help="validate cluster specs (all errors at once)",
        description="Validate each SPEC with its bases. A Pulumi stack file (Pulumi.<stack>.yaml) "
        "stands for the spec its accelplane:spec names; Pulumi.yaml is skipped.",
    )
    p.add_argument("specs", nargs="+", metavar="SPEC")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    p.add_argument(
        "--strict", action="store_true", help="warnings fail too (exit 1), e.g. in CI (docs/findings.md)"
    )
    p.add_argument(
        "--format",
        "-f",
        choices=("text", "json", "github"),
        default="text",
        help="text: 'file: path: severity code: message' lines on stderr; json: one document on stdout; "
        "github: GitHub Actions annotations on stdout",
    )
    p.set_defaults(func=cmd_validate)

    p = add_parser("render", help="render every artifact of a spec into DIR")
    p.add_argument("spec", metavar="SPEC")
    p.add_argument("--out", "-o", required=True, metavar="DIR")
    p.add_argument(
        "--force",
        action="store_true",
        help="discard files in DIR that the last render did not write (or that were edited since)",
    )
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=cmd_render)

    p = add_parser("schema", help="print the spec JSON Schema")
    p.add_argument("--markdown", action="store_true", help="print the spec reference as a Markdown table")
    p.set_defaults(func=cmd_schema)

    p = add_parser(
        "diff",
        help="compare two specs / rendered directories / REV:path (exit 0 equal, 1 different, 2 error, 3 refused change)",
        description="Compare every rendered artifact of OLD and NEW. Each side is a spec file, a "
        "rendered directory, or REV:path (a spec at a git revision, rendered with its bases from that "
        "revision). Exit codes like `git diff --exit-code`: 0 equal, 1 different, 2 error (including "
        "an invalid spec on either side); 3 the change is refused (an AP16xx day-2 error: it would lose a "
        "running job's state or stop `pulumi up` half-way; docs/diff.md).",
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

    p = add_parser("report", help="GPU capacity per queue and Flink cluster (tables, optional SVG)")
    p.add_argument("spec", metavar="SPEC")
    p.add_argument("--format", "-f", choices=("text", "markdown", "json"), default="text")
    p.add_argument(
        "--svg", metavar="FILE", help="also write a chart of GPU shares and Flink GPU use per queue"
    )
    p.set_defaults(func=cmd_report)

    p = add_parser(
        "merged",
        help="print the spec after extends and flink.defaults, each value annotated with the file it came from",
        description="Print SPEC merged with its bases as YAML; every value ends with a comment naming "
        "the file (and the path in it, when different) it came from. No validation beyond loading.",
    )
    p.add_argument("spec", metavar="SPEC")
    p.set_defaults(func=cmd_merged)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code."""
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
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
    except OSError as exc:  # an environment failure the command did not expect: still no traceback
        print(f"accelplane: {exc.filename or args.command}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
