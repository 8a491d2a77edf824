"""Where a course root is, and what its nbgrader_config.py says plainly, without running it.

Running the config (coursekit.core.course) imports nbgrader and the course's
preprocessors: about 2 CPU-seconds, too much for a process that only needs to
know which language to speak (coursekit.core.messages). `plain_setting` reads
one `c.Section.trait` from the file's syntax tree instead, and answers only
when the text alone decides the value, as running the file would:

- a module-level `c.Section.trait = "literal"` (the last one wins, as in
  traitlets), or no mention of the trait at all (`NOT_SET`: its default);
- anything else that could set it makes the answer `UNKNOWN`, and the caller
  runs the config: a computed value, an assignment inside a block, the
  section assigned, indexed or updated whole, the config object `c` used any
  other way than `c.Section.trait` or as an argument of a function imported
  from coursekit (whose configure helpers set no `CourseKit` trait: tests/
  test_messages.py), a second `get_config()`, `load_subconfig`, `exec`.

Nothing here imports more than the standard library.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

CONFIG_FILE = "nbgrader_config.py"

NOT_SET = object()  # the file never sets the trait: its default applies
UNKNOWN = object()  # the text does not decide: run the config to know


class NoCourseError(LookupError):
    """No course root: no nbgrader_config.py here or in any folder above."""


def find_root(given: str | Path | None = None) -> Path:
    """The course root every command works on: `given` (its --root), else the nearest
    folder from the working directory upward that holds nbgrader_config.py."""
    if given:
        return Path(given).resolve()
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / CONFIG_FILE).is_file():
            return folder
    raise NoCourseError(
        f"no {CONFIG_FILE} in {here} or any folder above it: run from the course or pass --root"
    )


def load_config(root: Path):
    """The course root's nbgrader_config.py, as nbgrader loads it (a traitlets Config)."""
    from traitlets.config.loader import PyFileConfigLoader  # only when a config is run

    return PyFileConfigLoader(CONFIG_FILE, path=str(root)).load_config()


def plain_setting(root: Path, section: str, trait: str):
    """`c.<section>.<trait>` as the root's config sets it: a literal, NOT_SET or UNKNOWN.
    FileNotFoundError when the root has no config."""
    config = Path(root) / CONFIG_FILE
    return _plain_setting(str(config), config.stat().st_mtime_ns, section, trait)


@functools.lru_cache(maxsize=32)
def _plain_setting(config: str, mtime_ns: int, section: str, trait: str):
    """Read once per version of the file (`_()` asks on every message)."""
    try:
        tree = ast.parse(Path(config).read_bytes(), filename=config)
    except (SyntaxError, ValueError, OSError):
        return UNKNOWN  # running it raises what nbgrader would
    return _setting_in(tree, section, trait)


_UNSAFE_CALLS = {"get_config", "load_subconfig", "exec", "eval", "globals", "vars", "setattr"}


def _setting_in(tree: ast.Module, section: str, trait: str):
    lines = [
        node
        for node in tree.body
        if isinstance(node, ast.Assign)
        and _is_call_of(node.value, "get_config")
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
    ]
    if len(lines) != 1:
        return UNKNOWN
    (line,) = lines
    config = line.targets[0].id
    value, settings = NOT_SET, set()  # the module-level `c.section.trait = "..."`, in order
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if _is_setting(target, config, section, trait):
                if not isinstance(node.value, ast.Constant):
                    return UNKNOWN
                value = node.value.value
                settings.add(id(target))
    from_coursekit = _names_imported_from_coursekit(tree)
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in _UNSAFE_CALLS and node is not line.value:
                return UNKNOWN
        elif isinstance(node, ast.Constant) and node.value in (section, trait):
            return UNKNOWN  # c["Section"], getattr(c.Section, "trait"), Config({...})
        elif isinstance(node, ast.keyword) and node.arg in (section, trait):
            return UNKNOWN  # Config(Section=...), c.Section.update(trait=...)
        elif (
            isinstance(node, ast.Attribute)
            and node.attr == trait
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == section
            and isinstance(node.ctx, ast.Store)
            and id(node) not in settings
        ):
            return UNKNOWN  # set inside a block, with `+=`, or on another Config merged later
        elif (
            _is_name(node, config)
            and node is not line.targets[0]
            and not _used_plainly(node, parents, from_coursekit)
        ):
            return UNKNOWN
    return value


def _used_plainly(name: ast.Name, parents: dict, from_coursekit: set[str]) -> bool:
    """`c` as `c.Section.trait` (stored, or read if it is not called: a section's method,
    say `c.CourseKit.update(...)`, is no trait), or as an argument of a function imported
    from coursekit."""
    parent = parents.get(id(name))
    if isinstance(parent, ast.Call):
        func = parent.func
        return name in parent.args and isinstance(func, ast.Name) and func.id in from_coursekit
    if not isinstance(parent, ast.Attribute):
        return False
    grandparent = parents.get(id(parent))
    if not isinstance(grandparent, ast.Attribute):
        return False
    if isinstance(grandparent.ctx, ast.Store):
        return True
    call = parents.get(id(grandparent))
    return not (isinstance(call, ast.Call) and call.func is grandparent)


def _is_setting(node, config: str, section: str, trait: str) -> bool:
    """`c.section.trait`."""
    return (
        isinstance(node, ast.Attribute)
        and node.attr == trait
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == section
        and _is_name(node.value.value, config)
    )


def _is_name(node, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _is_call_of(node, name: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name


def _names_imported_from_coursekit(tree: ast.Module) -> set[str]:
    return {
        alias.asname or alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
        and not node.level
        and (node.module or "").split(".")[0] == "coursekit"
        for alias in node.names
    }
