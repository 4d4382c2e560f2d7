"""Render Verilog from the Jinja2 templates shipped in the `hw_templates` package.

Templates are deliberately dumb text with holes: every name, width and constant is computed in
Python and passed in the context, so the hardware generators stay testable as plain Python and the
templates stay readable as Verilog.  `StrictUndefined` turns a forgotten context variable into an
error at render time instead of silently emitting broken Verilog (an empty module name, say).
"""

from __future__ import annotations

import functools
from pathlib import Path

import jinja2

import hw_templates

__all__ = ["template_dir", "environment", "render", "render_to_file"]


def template_dir() -> Path:
    """Directory of the `hw_templates` package (templates ship as package data)."""
    return Path(hw_templates.__file__).resolve().parent


@functools.lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The shared Jinja2 environment (cached: template compilation is the slow part of rendering).

    `trim_blocks`/`lstrip_blocks` keep control tags from leaving blank lines and stray indentation
    in the output; `keep_trailing_newline` keeps files POSIX-terminated, which some lint tools want.
    """
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(template_dir())),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )


def render(template_name: str, **context: object) -> str:
    """Render *template_name* (e.g. ``"fifo.v.j2"``) with *context*; missing variables raise."""
    return environment().get_template(template_name).render(**context)


def render_to_file(path: Path, template_name: str, **context: object) -> Path:
    """Render into *path* (parents created) and return it, for handing straight to a simulator."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(template_name, **context))
    return path
