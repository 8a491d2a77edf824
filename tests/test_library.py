"""coursekit is a library: installed, built alone, naming no course; the course uses it.

The course's packages (solutions, grader_tests, catalog, tests) and its settings reach
the library only through nbgrader_config.py (`c.CourseKit.*`, `c.CourseDirectory.*`).
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from coursekit import __main__ as cli
from coursekit.checks.declared import checks_of
from coursekit.cluster import bundle
from coursekit.core.course import Course, CourseKit, NoCourseError, find_root
from coursekit.core.environment import venv_environment
from coursekit.hub.settings import HubSettings

ROOT = Path(__file__).resolve().parent.parent
LIBRARY = ROOT / "coursekit"
COURSE_PACKAGES = {"tests", "catalog", "solutions", "grader_tests", "bench"}
IMPORTERS = {"import_module", "__import__"}


def course_imports(source: str) -> list[str]:
    """The course packages a module's source imports by name: import statements, and
    import_module / __import__ of a string (or an f-string) naming one."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Call) and node.args:
            function = node.func
            called = getattr(function, "attr", None) or getattr(function, "id", None)
            first = node.args[0]
            if isinstance(first, ast.JoinedStr) and first.values:
                first = first.values[0]
            if called in IMPORTERS and isinstance(first, ast.Constant):
                names = [str(first.value)]
        found += [name for name in names if re.split(r"[.]", name)[0] in COURSE_PACKAGES]
    return found


def library_files() -> list[Path]:
    return sorted(LIBRARY.rglob("*.py"))


def test_the_import_finder_finds_every_way_of_naming_a_course_package():
    source = (
        "import catalog\n"
        "from tests.course_harness import CourseHarness\n"
        "import importlib\n"
        "importlib.import_module(f'solutions.{name}')\n"
        "__import__('grader_tests.ch3')\n"
        "from coursekit import cells\n"
        "import_module(kit.checks_package)\n"
    )
    assert course_imports(source) == [
        "catalog",
        "tests.course_harness",
        "solutions.",
        "grader_tests.ch3",
    ]


def test_no_library_module_imports_a_course_package_by_name():
    offending = {
        str(path.relative_to(ROOT)): found
        for path in library_files()
        if (found := course_imports(path.read_text(encoding="utf-8")))
    }
    assert len(library_files()) > 50  # the walk reads the library, not an empty folder
    assert offending == {}


def test_the_library_holds_neither_the_course_id_nor_its_time_zone():
    course = Course(ROOT)
    literals = {course.course_id, course.kit.timezone}
    assert "UTC" not in literals  # the course sets its own; the library's default is UTC
    holding = {
        str(path.relative_to(ROOT)): sorted(x for x in literals if x in path.read_text("utf-8"))
        for path in library_files()
    }
    found = {path: found for path, found in holding.items() if found}
    assert found == {}


def course(folder: Path, config: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "nbgrader_config.py").write_text("c = get_config()\n" + config, encoding="utf-8")
    return folder


def test_the_course_root_is_the_given_one_else_the_nearest_with_a_config(tmp_path, monkeypatch):
    root = course(tmp_path / "course", "")
    (root / "source" / "a1").mkdir(parents=True)
    monkeypatch.chdir(root / "source" / "a1")
    assert find_root() == root
    assert find_root(tmp_path) == tmp_path  # --root wins, as given
    monkeypatch.chdir(tmp_path)
    with pytest.raises(NoCourseError, match=r"nbgrader_config\.py"):
        find_root()


def test_a_command_outside_any_course_says_so(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "coursekit", "report"],
        cwd=tmp_path,
        env=venv_environment(),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert "no nbgrader_config.py in" in done.stderr and "--root" in done.stderr


def test_a_second_course_names_its_own_packages_id_and_time_zone(tmp_path, monkeypatch):
    """Nothing of this course is assumed: another config, other package names."""
    root = course(
        tmp_path / "second",
        'c.CourseDirectory.course_id = "second-course"\n'
        'c.CourseKit.timezone = "Europe/Berlin"\n'
        'c.CourseKit.checks_package = "second_checks"\n'
        'c.CourseKit.solutions_package = "second_reference"\n',
    )
    for package, body in (
        ("second_checks", "CHECKS = 'declared in the second course'\n"),
        ("second_reference", "__all__ = ['only']\n"),
    ):
        (root / package).mkdir()
        (root / package / "__init__.py").write_text("")
        (root / package / "a1.py").write_text(body)
    monkeypatch.syspath_prepend(str(root))
    kit = CourseKit.of(root)
    assert checks_of("a1", kit) == "declared in the second course"
    assert kit.solutions("a1").__all__ == ["only"]
    assert bundle.course_folders(root) == ("source", "second_reference", "second_checks")
    hub = HubSettings(root=str(tmp_path / "hub"), repo=str(root))
    assert (hub.course_id, hub.timezone) == ("second-course", "Europe/Berlin")
    assert hub.course_root == Path("/home/tp-instructor/second-course")
    # A course that sets nothing gets the documented defaults.
    plain = CourseKit.of(course(tmp_path / "plain", ""))
    assert (plain.timezone, plain.secret_packages) == ("UTC", ("solutions", "grader_tests"))


def test_the_wheel_holds_coursekit_its_templates_catalogs_and_the_server_entry_only(tmp_path):
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            str(ROOT),
            "-w",
            str(tmp_path),
        ],
        env=venv_environment(),
        cwd=tmp_path,
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("coursekit-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names}
    version = importlib.metadata.version("coursekit")
    assert tops == {"coursekit", f"coursekit-{version}.dist-info", f"coursekit-{version}.data"}
    modules = {str(p.relative_to(ROOT)) for p in library_files()}
    assert {n for n in names if n.endswith(".py")} == modules
    templates = {str(p.relative_to(ROOT)) for p in (LIBRARY / "core" / "templates").glob("*.j2")}
    assert templates and templates <= set(names)
    catalogs = {str(p.relative_to(ROOT)) for p in (LIBRARY / "locale").glob("*/LC_MESSAGES/*.mo")}
    assert len(catalogs) >= 2 and catalogs <= set(names)  # ko and en, compiled
    extension = (
        f"coursekit-{version}.data/data/share/jupyter/labextensions/@coursekit/learner-panel"
    )
    assert f"{extension}/package.json" in names
    assert {
        f"{extension}/static/{p.name}" for p in (LIBRARY / "labextension" / "static").iterdir()
    } <= set(names)
    entry = "etc/jupyter/jupyter_server_config.d/coursekit.json"
    assert f"coursekit-{version}.data/data/{entry}" in names
    assert (Path(sys.prefix) / entry).read_bytes() == (
        ROOT / "jupyter-config" / entry[12:]
    ).read_bytes()


def test_coursekit_is_installed_with_one_console_script_for_every_command():
    (script,) = [
        e
        for e in importlib.metadata.distribution("coursekit").entry_points
        if e.group == "console_scripts"
    ]
    assert (script.name, script.value) == ("coursekit", "coursekit.__main__:main")
    for module, _ in cli.COMMANDS.values():
        assert callable(importlib.import_module(module).main), module
    done = subprocess.run(
        [str(Path(sys.executable).with_name("coursekit")), "--help"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    assert all(f"  {name}" in done.stdout for name in cli.COMMANDS)


def test_every_make_target_calls_the_console_script_not_a_module():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.findall(r"-m coursekit\b\S*", makefile) == []
    called = set(re.findall(r"\$\(BIN\)/coursekit ([a-z-]+)", makefile))
    assert called and called <= set(cli.COMMANDS)


def test_the_top_level_is_folders_by_role_and_at_most_four_modules():
    modules = sorted(path.name for path in LIBRARY.glob("*.py"))
    assert len(modules) <= 4, modules
    folders = [path for path in LIBRARY.rglob("*") if path.is_dir() and path.name != "__pycache__"]
    packages = [folder for folder in folders if any(folder.glob("*.py"))]
    assert len(packages) >= 12
    for folder in packages:
        init = folder / "__init__.py"
        assert init.exists(), f"{folder.relative_to(ROOT)} is no package"
        docstring = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert docstring and len(docstring) > 80, f"{init.relative_to(ROOT)} says what it holds"


def test_the_code_that_runs_in_the_sandbox_imports_nothing_of_coursekit_outside_it():
    """Its modules are sent into the sandbox as source text, where there is no coursekit."""
    inside = LIBRARY / "sandbox" / "inside"
    found = {}
    for path in sorted(inside.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""] if node.level == 0 else ["(relative)"]
            outside = [
                n
                for n in names
                if n == "(relative)"
                or (n.split(".")[0] == "coursekit" and not n.startswith("coursekit.sandbox.inside"))
            ]
            if outside:
                found.setdefault(path.name, []).extend(outside)
    assert len(list(inside.glob("*.py"))) >= 5
    assert found == {}
