"""What instructors and TAs see, with learner material kept inert.

`inert` renders learner notebooks and files with no script, beacon or live
content; `server` is the Jupyter server extension that gives every staff page
its content security policy; `report` is the TA report.
"""
