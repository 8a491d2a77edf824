"""The config files of a hub class: one Jupyter config for every account, the
instructor's own additions, and the instructor's copy of the course.

nbgrader's demos disable formgrader, Create Assignment and the course list for
everyone and enable them in the instructor's `~/.jupyter` (`--user` level).
Here the class-wide half lives in the hub's folder, which every single-user
server reads through JUPYTER_CONFIG_PATH (set by the hub's spawner), so the
course's own `.venv` (and `make lab`) keeps its formgrader.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
from pathlib import Path

from jupyterlab.commands import get_app_dir

from coursekit.core.course import Course
from coursekit.hub.settings import HubSettings
from coursekit.learner.lab_language import write_overrides

INSTRUCTOR_ONLY_LAB = [
    "@jupyter/nbgrader:formgrader",
    "@jupyter/nbgrader:create-assignment",
    "@jupyter/nbgrader:course-list",
]
# No "get notified about Jupyter news?" prompt: the class has no use for it.
QUIET_LAB = {"@jupyterlab/apputils-extension:announcements": True}
INSTRUCTOR_ONLY_SERVER = [
    "nbgrader.server_extensions.formgrader",
    "nbgrader.server_extensions.course_list",
]

CLASS_NBGRADER_CONFIG = '''\
"""nbgrader settings for every account of the class: learners need no setup."""

from coursekit.learner.feedback_link import configure as configure_feedback_link
from coursekit.exchange import configure as configure_safe_exchange
from coursekit.learner.validation import configure as configure_validate

c = get_config()  # noqa: F821

c.CourseDirectory.course_id = {course_id!r}
c.Exchange.root = {exchange!r}
# Times as the class lives them: submissions (learners' list) and formgrader's tables.
c.Exchange.timezone = {timezone!r}
c.NbGraderAPI.timezone = {timezone!r}
c.Execute.timeout = {timeout!r}  # the course's limit per cell, also Validate's

# Validate (the notebook's button and `nbgrader validate`) speaks the course's language.
configure_validate(c)

# The Assignments tab's "(view feedback)" selects the feedback page, not its folder.
configure_feedback_link(c)

# Fetch and submit hand over plain files only: no link followed, no FIFO read.
configure_safe_exchange(c)
'''

INSTRUCTOR_NBGRADER_CONFIG = '''\
"""The instructor's course: formgrader and the nbgrader commands find it from anywhere."""

c = get_config()  # noqa: F821
load_subconfig({course_config!r})  # noqa: F821 -- the course's own nbgrader_config.py
'''


def _write(path: Path, text: str, owner: str | None = None, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)
    if owner:
        _chown_tree(path.parent, owner)


def _json(data) -> str:
    return json.dumps(data, indent=2) + "\n"


def _chown_tree(path: Path, owner: str) -> None:
    entry = pwd.getpwnam(owner)
    home = Path(entry.pw_dir)
    # Only inside the owner's home: never hand a shared folder to one account.
    assert path == home or home in path.parents, path
    for folder, dirs, files in os.walk(path):
        os.chown(folder, entry.pw_uid, entry.pw_gid)
        for name in dirs + files:
            os.chown(os.path.join(folder, name), entry.pw_uid, entry.pw_gid, follow_symlinks=False)


def write_class_config(settings: HubSettings) -> Path:
    """Jupyter and nbgrader config that every account reads (learners' only config)."""
    course = Course(Path(settings.repo))
    folder = settings.class_config_dir
    folder.mkdir(parents=True, exist_ok=True)
    for part in (folder, folder.parent):
        part.chmod(0o755)
    _write(
        folder / "nbgrader_config.py",
        CLASS_NBGRADER_CONFIG.format(
            course_id=course.course_id,
            exchange=str(settings.exchange),
            timezone=settings.timezone,
            timeout=course.config.Execute.timeout,
        ),
    )
    _write(
        folder / "jupyter_server_config.json",
        _json({"ServerApp": {"jpserver_extensions": dict.fromkeys(INSTRUCTOR_ONLY_SERVER, False)}}),
    )
    _write(
        folder / "labconfig" / "page_config.json",
        _json({"disabledExtensions": {**dict.fromkeys(INSTRUCTOR_ONLY_LAB, True), **QUIET_LAB}}),
    )
    (folder / "labconfig").chmod(0o755)
    # Learners' JupyterLab opens in their language (the pinned language pack): JupyterLab's
    # settings overrides as defaults, so a learner may still pick another in Settings.
    lab = {}
    if settings.learner_locale:
        overrides = write_overrides(settings.learner_lab_settings, settings.learner_locale)
        overrides.chmod(0o755)
        lab = {"LabApp": {"app_settings_dir": str(overrides)}}
    _write(folder / "jupyter_lab_config.json", _json(lab))
    return folder


def write_instructor_files(settings: HubSettings) -> Path:
    """A copy of the course in the instructor's home, and formgrader turned back on there."""
    user, course_root = settings.instructor, settings.course_root
    course_root.mkdir(parents=True, exist_ok=True)
    shutil.copy(Path(settings.repo) / "nbgrader_config.py", course_root / "nbgrader_config.py")
    if not (course_root / "source").exists():
        shutil.copytree(Path(settings.repo) / "source", course_root / "source")
    config = settings.home(user) / ".jupyter"
    config.mkdir(parents=True, exist_ok=True)
    _write(
        config / "nbgrader_config.py",
        INSTRUCTOR_NBGRADER_CONFIG.format(course_config=str(course_root / "nbgrader_config.py")),
    )
    # coursekit.staff.server needs no entry here: the environment enables it for every server.
    extensions = dict.fromkeys(INSTRUCTOR_ONLY_SERVER, True)
    _write(
        config / "jupyter_server_config.json",
        _json({"ServerApp": {"jpserver_extensions": extensions}}),
    )
    _write(
        config / "labconfig" / "page_config.json",
        _json({"disabledExtensions": {**dict.fromkeys(INSTRUCTOR_ONLY_LAB, False), **QUIET_LAB}}),
    )
    # The instructor keeps JupyterLab's own settings folder (English unless changed there).
    default_settings = os.path.join(get_app_dir(), "settings")
    _write(
        config / "jupyter_lab_config.json",
        _json({"LabApp": {"app_settings_dir": default_settings}}),
    )
    _chown_tree(settings.home(user), user)
    return course_root
