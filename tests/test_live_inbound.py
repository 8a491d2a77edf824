"""The live service's view of inbound: an entry still being written is looked at again
soon (Inbound.writing), whether or not a notice of its secret's write ever comes."""

from __future__ import annotations

import threading
from pathlib import Path

from traitlets.config import Config

from coursekit.live.inbound import SECRET, Inbound, Watch

ASSIGNMENT = "ch3_multihead"
WAKE_BOUND = 30  # seconds: a bound on a notice, never a measurement


def inbound_of(tmp_path: Path) -> tuple[Inbound, Path]:
    config = Config()
    config.Exchange.root = str(tmp_path / "exchange")
    config.CourseDirectory.root = str(tmp_path / "course")
    config.CourseDirectory.course_id = "course"
    config.ExchangeCollect.check_owner = False  # the test runs as a staff account
    folder = tmp_path / "exchange" / "course" / "inbound"
    folder.mkdir(parents=True)
    return Inbound(tmp_path / "course", config, [ASSIGNMENT]), folder


def test_an_entry_without_its_secret_is_waited_for_and_looked_at_again_soon(tmp_path):
    inbound, folder = inbound_of(tmp_path)
    entry = folder / f"ana+{ASSIGNMENT}+2026-12-07 06:00:00.000000 UTC+abc"
    entry.mkdir()
    (entry / "multihead.ipynb").write_text("{}")
    (entry / SECRET).touch()  # created, not written yet: submit is still at work

    assert inbound.pending() == [] and inbound.writing

    (entry / SECRET).write_text("0" * 128)
    (found,) = inbound.pending()
    assert (found.name, found.learner, found.assignment) == (entry.name, "ana", ASSIGNMENT)
    assert not inbound.writing


def test_a_complete_or_empty_inbound_is_not_being_written(tmp_path):
    inbound, folder = inbound_of(tmp_path)
    assert inbound.pending() == [] and not inbound.writing
    (folder / "ana+another_assignment+2026-12-07 06:00:00.000000 UTC").mkdir()
    assert inbound.pending() == [] and not inbound.writing  # not one the service grades


def test_the_watch_starts_once_inbound_is_made_and_then_wakes_the_service(tmp_path):
    wake = threading.Event()
    inbound = tmp_path / "exchange" / "course" / "inbound"
    with Watch(inbound, wake) as watch:  # the service starts before the first release
        assert not watch.start_when_there()
        inbound.mkdir(parents=True)
        assert watch.start_when_there()
        (inbound / f"ana+{ASSIGNMENT}+2026-12-07 06:00:00.000000 UTC").mkdir()
        assert wake.wait(WAKE_BOUND), "no notice of a submission made after the watch began"
