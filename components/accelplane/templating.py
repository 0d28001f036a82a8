"""Jinja2 environment for file templates: strict undefined, XML autoescape, safe filters.

Templates format; they never decide. Values from a spec reach a template only through filters that
escape them for the target syntax (XML autoescape, `yaml_scalar`, `shell_quote`).
"""

from __future__ import annotations

import json
import shlex
from functools import cache
from typing import Any

import jinja2
import yaml

from accelplane.package_data import data_dir


def _yaml_scalar(value: Any) -> str:
    """A YAML flow scalar for ``value`` (quoted when needed), never a multi-line document."""
    text = yaml.safe_dump(value, default_flow_style=True, allow_unicode=True, width=2**31 - 1).strip()
    return text.removesuffix("\n...").removesuffix("...").strip()


@cache
def environment() -> jinja2.Environment:
    """The shared template environment (built once per process)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(data_dir("templates"))),
        undefined=jinja2.StrictUndefined,
        autoescape=jinja2.select_autoescape(enabled_extensions=("xml", "xml.j2"), default_for_string=False),
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["yaml_scalar"] = _yaml_scalar
    env.filters["shell_quote"] = shlex.quote
    env.filters["json"] = lambda v: json.dumps(v, sort_keys=True, ensure_ascii=False)
    return env


def render_template(name: str, **context: Any) -> str:
    """Render ``templates/<name>`` with ``context``; output always ends with one newline."""
    text = environment().get_template(name).render(**context)
    return text.rstrip("\n") + "\n"
