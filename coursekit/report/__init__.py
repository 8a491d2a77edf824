"""The TA report: per learner and class-wide, from the gradebook and the autograded notebooks."""
