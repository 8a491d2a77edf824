"""What an instructor runs on their own notebooks before learners see them.

`sync` copies the reference bodies of the course's solutions package into the
source notebooks' solution regions; `release` regenerates release/ from source/
with stock `nbgrader generate_assignment`. Neither runs learner code.
"""
