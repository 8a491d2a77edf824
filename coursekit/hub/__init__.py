"""A local JupyterHub for a trial class (`make hub`).

nbgrader's own demos (`demos/` in its repository) lay a class out like this:
one Linux account per learner and for the instructor, JupyterHub with
LocalProcessSpawner, a world-writable exchange, a system-wide nbgrader config,
and formgrader / Create Assignment enabled only in the instructor's account.
This package does the same for this course, without touching the course's
`.venv` settings (`make lab` and the tests keep their formgrader):

- `accounts`: the Linux accounts, with passwords generated per run;
- `access`: who may read what — the course environment for everyone, the
  references, hidden tests and course state for the instructors' group only,
  and the exchange;
- `files`: the hub's config, the class-wide Jupyter/nbgrader config, and the
  instructor's own config and copy of the course;
- `board_service`: `make live` and its TA board as a hub service, and its roles;
- `jupyterhub_config.py`: the config file JupyterHub loads;
- `trial_class`: the class set up (accounts, files, proxy, roster) and removed;
- `__main__`: `python -m coursekit.hub up|down`, argument parsing and printing.
"""
