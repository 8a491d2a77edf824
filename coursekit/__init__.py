"""Course tooling that plugs into nbgrader: preprocessors and maintenance commands."""
