"""nbgrader's internals behind one door: everything that knows more of nbgrader 0.9.6 than
its commands and its `Gradebook` methods.

`make grade` writes and reads the gradebook faster than nbgrader's ORM would, and swaps
three of autograde's preprocessors for ones with less repeated work; each such shortcut
relies on nbgrader's tables, engines and preprocessor order. They live here, and only here:

- `rows`: raw INSERTs of a learner's first graded submission, raw SELECTs of a scratch
  gradebook's rows, and the copy of an assignment's definitions (table by table) into a
  worker's gradebook;
- `engines`: one SQLAlchemy engine per gradebook URL (`share_engines` patches
  `nbgrader.api.create_engine`), and a session whose commits wait (`CommitAtEnd`);
- `preprocessors`: CheckCellMetadata, OverwriteCells and SaveAutoGrades without their
  repeated work, and `use_in`, which puts them in Autograde's preprocessor lists;
- `new_gradebook`: the SQLAlchemy plugin that stamps a new SQLite gradebook with nbgrader's
  schema version in-process (nbgrader would run `alembic heads` as a process), and the same
  answer given to nbgrader's own lookup where a gradebook has nbgrader's default URL;
- `quiet`: the SQLAlchemy warning nbgrader's `add_submission` causes, silenced here only;
- `contract`: what all of the above relies on, declared once as data, and the check of it
  against the installed nbgrader (tests/test_nbgrader_contract.py): an nbgrader upgrade
  that changes a table, column, method or trait named there fails that test by name.

It imports nothing of coursekit but `core`; the grading machinery (cluster, autograde)
comes through it.
"""
