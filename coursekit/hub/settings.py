"""Where a hub keeps its state, and the names it uses; one JSON file shared by the
setup command and the config file JupyterHub loads."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from coursekit.roster import Learner

REPO = Path(__file__).resolve().parents[2]
COURSE_DIR_NAME = "transformer-peft"  # the instructor's copy of the course, in their home
SETTINGS_FILE = "hub.json"
TIMEZONE = "Asia/Seoul"


@dataclass
class HubSettings:
    root: str  # the hub's own folder: its database, config, exchange
    ip: str = "127.0.0.1"
    port: int = 8000
    prefix: str = "tp-"  # account names start with it, so they never clash with real users
    learners: int = 2
    venv: str = str(Path(sys.executable).parent.parent)  # the course environment every account runs
    repo: str = str(REPO)
    proxy: str = str(REPO / "build" / "hub" / "node_modules" / ".bin" / "configurable-http-proxy")
    hidden: list[dict] = field(default_factory=list)  # modes changed by `access`, to restore
    # The roster's learners (coursekit.roster.Learner fields); empty: numbered accounts.
    roster: list[dict] = field(default_factory=list)
    learner_locale: str = "ko_KR"  # learners' JupyterLab language ("" keeps English)

    @property
    def instructor(self) -> str:
        return f"{self.prefix}instructor"

    @property
    def learner_names(self) -> list[str]:
        if self.roster:
            return [Learner(**learner).account(self.prefix) for learner in self.roster]
        return [f"{self.prefix}learner{n:02d}" for n in range(1, self.learners + 1)]

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
        return self.home(self.instructor) / COURSE_DIR_NAME

    @property
    def url(self) -> str:
        return f"http://{self.ip}:{self.port}"

    def save(self) -> None:
        path = Path(self.root) / SETTINGS_FILE
        path.write_text(json.dumps(asdict(self), indent=2))
        path.chmod(0o600)

    @classmethod
    def load(cls, root: str | Path) -> HubSettings:
        return cls(**json.loads((Path(root) / SETTINGS_FILE).read_text()))
