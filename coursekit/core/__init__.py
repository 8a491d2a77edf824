"""What every other folder shares, and nothing course-specific.

`cells` decides what a notebook cell is (answer, test, setup, drawing); `course`
is a course root on disk, its stock nbgrader commands and gradebook, and the one
`c.CourseKit` Configurable through which a course names its packages and time
zone; `root` finds a course root and reads a plain setting from its config's
text without running it; `gradebook_wal` is the SQLite gradebook's URL (WAL
mode, a patient writer); `incidents` is the one record of why a grading guard scored a cell 0;
`messages` is what coursekit says, through one gettext catalog in the course's
language; `templating` renders the HTML pages of `templates/`.
"""
