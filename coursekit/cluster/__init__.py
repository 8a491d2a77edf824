"""`make grade`: a class graded on Dask into the stock gradebook.

One Dask task per submission (`task`; `submission`: plain data in and out),
graded by stock autograde in a worker's scratch course (`worker`, the course
brought once by `bundle`), written to the class gradebook and autograded/ by
the driver alone (`driver`, `gradebook`), on a LocalCluster here or a running
TLS cluster (`dask_cluster`), or on SLURM jobs (`slurm`). A `session`
(`GradingSession`) holds all of it for one run: `make grade` (`cli`, its lines
in `summary`) grades a class with it, and `make live` (coursekit.live.service)
each submission as it arrives; `distribute` says why grading stopped when the
cluster failed it.

Every reason a cell scored 0 because of a grading guard is a
`coursekit.core.incidents.Incident` that the grader writes into the cell's
metadata, shown as an error output with the kind's name and a text in the course's language,
so formgrader and the feedback show it; `reports/grading_incidents.json`,
`make grade`'s summary and the TA report read the records, never an error
output's name.
"""
