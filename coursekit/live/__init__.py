"""`make live`: each submission graded as it arrives, its feedback released at once.

A service beside the exchange, run as the instructor (`service`): it notices
every entry of the exchange's inbound folder (`inbound`: watchdog, and a full
rescan as a safety net), collects that one submission by the safe exchange's
rules, grades it on a long-lived Dask cluster as `make grade` does (the same
plugin, sandbox, roles and checks; the driver alone writes the gradebook),
makes and releases the learner's feedback page (`feedback`), and records the
attempt (`attempts`: the record the TA board reads). The attempt policy of
`nbgrader_config.py` (`policy`) decides which submits are graded; the others
are kept and get a short note as their feedback. The TA live board (`board`:
what it shows, from the records only; `board_server`: the page, on loopback
with a token or behind the hub's OAuth) runs beside it. `coursekit live` is
`__main__`.
"""
