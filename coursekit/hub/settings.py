"""Where a hub keeps its state, and the names it uses; one JSON file shared by the
setup command and the config file JupyterHub loads. The course's id and time zone come
from its nbgrader_config.py (`c.CourseDirectory.course_id`, `c.CourseKit.timezone`)."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from coursekit.core.course import Course, find_root
from coursekit.lms.roster import Learner

SETTINGS_FILE = "hub.json"
PROXY = Path("build") / "hub" / "node_modules" / ".bin" / "configurable-http-proxy"


def default_root(repo: str | Path | None = None) -> str:
    """The hub's state folder when none is given: named after the course."""
    return f"/srv/{Course(find_root(repo)).course_id}-hub"


@dataclass
class HubSettings:
    root: str  # the hub's own folder: its database, config, exchange
    ip: str = "127.0.0.1"
    port: int = 8000
    prefix: str = "tp-"  # account names start with it, so they never clash with real users
    learners: int = 2
    tas: int = 0  # TA accounts, in the hub's `tas` group (they may open the live board)
    live: bool = True  # `make live` (and its TA board) as a hub-managed service
    venv: str = str(Path(sys.executable).parent.parent)  # the course environment every account runs
    repo: str = ""  # the course root (default: the one find_root finds)
    proxy: str = ""  # default: under the course root's build/
    hidden: list[dict] = field(default_factory=list)  # modes changed by `access`, to restore
    # The roster's learners (coursekit.lms.roster.Learner fields); empty: numbered accounts.
    roster: list[dict] = field(default_factory=list)
    learner_locale: str = "ko_KR"  # learners' JupyterLab language ("" keeps English)
    # `--lti CONFIG`: the LMS's registration (coursekit.lms.lti.LtiConfig fields); the hub
    # then logs in by LTI 1.3 launches instead of passwords (coursekit/hub/lti.py).
    lti: dict = field(default_factory=dict)
    # From the course's config when not given: the instructor's copy of the course is
    # ~/<course_id>, and every account's server runs in the course's time zone.
    course_id: str = ""
    timezone: str = ""

    def __post_init__(self):
        self.repo = str(find_root(self.repo or None))
        self.proxy = self.proxy or str(Path(self.repo) / PROXY)
        if not (self.course_id and self.timezone):
            course = Course(Path(self.repo))
            self.course_id = self.course_id or course.course_id
            self.timezone = self.timezone or course.kit.timezone

    @property
    def instructor(self) -> str:
        return f"{self.prefix}instructor"

    @property
    def learner_names(self) -> list[str]:
        if self.roster:
            return [Learner(**learner).account(self.prefix) for learner in self.roster]
        return [f"{self.prefix}learner{n:02d}" for n in range(1, self.learners + 1)]

    @property
    def ta_names(self) -> list[str]:
        return [f"{self.prefix}ta{n:02d}" for n in range(1, self.tas + 1)]

    @property
    def group(self) -> str:
        """Members read the references, hidden tests and course state."""
        return f"{self.prefix}instructors"

    @property
    def exchange(self) -> Path:
        return Path(self.root) / "exchange"

    @property
    def class_config_dir(self) -> Path:
        """Jupyter config every account of the hub reads (on JUPYTER_CONFIG_PATH)."""
        return Path(self.root) / "etc" / "jupyter"

    @property
    def learner_lab_settings(self) -> Path:
        """JupyterLab's settings overrides for learners (their default language)."""
        return Path(self.root) / "etc" / "lab-settings-learners"

    def home(self, user: str) -> Path:
        return Path("/home") / user

    @property
    def course_root(self) -> Path:
        return self.home(self.instructor) / self.course_id

    @property
    def url(self) -> str:
        return f"http://{self.ip}:{self.port}"

    @property
    def lti_dir(self) -> Path:
        """The LTI config, the tool's key pair and the grades posted (root only)."""
        return Path(self.root) / "lti"

    def save(self) -> None:
        path = Path(self.root) / SETTINGS_FILE
        path.write_text(json.dumps(asdict(self), indent=2))
        path.chmod(0o600)

    @classmethod
    def load(cls, root: str | Path) -> HubSettings:
        return cls(**json.loads((Path(root) / SETTINGS_FILE).read_text()))
